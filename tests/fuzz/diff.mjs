// The WASM build against the native one, fed the same inputs (`make fuzz-diff`, and
// tests/node/fuzz-diff.test.mjs in make test): every file under the given directories goes to
// build/native/tether_fuzz_diff (tests/fuzz/diff_native.cpp) and to the WASM module's pure
// parsers (busSerializeEnvelope, roomValidateEnvelope, roomReplayMessage), piece by piece as
// diff_native.cpp splits them, and the answers must agree byte for byte. Inputs cross into WASM as
// bytes (Embind takes a Uint8Array for std::string), so invalid UTF-8 reaches both builds alike.
// Usage: node tests/fuzz/diff.mjs <tether_fuzz_diff> <dir>... ; exits 1 naming each disagreement.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadTetherModule } from '../../web/glue/load.js';

const MAX_PIECES = 64; // as diff_native.cpp

/** Every file under `dirs`, sorted. */
export function inputFiles(dirs) {
  const out = [];
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(p);
    }
  };
  for (const d of dirs) walk(d);
  return out;
}

function pieces(bytes) {
  const out = [bytes];
  if (!bytes.includes(0x0a)) return out;
  let at = 0;
  while (out.length <= MAX_PIECES) {
    const nl = bytes.indexOf(0x0a, at);
    out.push(bytes.subarray(at, nl < 0 ? bytes.length : nl));
    if (nl < 0) break;
    at = nl + 1;
  }
  return out;
}

// The native answer as JavaScript receives a std::string from Embind (UTF-8 decoded; an answer
// that is valid UTF-8, as every answer should be, is compared byte for byte).
const asJs = (hexText) => Buffer.from(hexText, 'hex').toString('utf8');

/**
 * Compares the two builds over `files`; returns {compared, disagreements: [{file, piece, parser,
 * native, wasm}]}.
 */
export async function differential(nativeTool, files) {
  const mod = await loadTetherModule({}, 'room');
  const native = new Map();
  // In batches: a corpus can name more files than one command line holds.
  for (let i = 0; i < files.length; i += 200) {
    const out = execFileSync(nativeTool, files.slice(i, i + 200), {
      maxBuffer: 1 << 30,
      encoding: 'utf8',
    });
    for (const line of out.split('\n')) {
      if (!line) continue;
      const [file, piece, parser, answer] = line.split('\t');
      native.set(`${file}\t${piece}\t${parser}`, answer);
    }
  }
  const disagreements = [];
  let compared = 0;
  for (const file of files) {
    pieces(new Uint8Array(readFileSync(file))).forEach((bytes, piece) => {
      const wasm = {
        bus: mod.busSerializeEnvelope(bytes),
        room: mod.roomValidateEnvelope(bytes),
        replay: mod.roomReplayMessage('r', bytes),
      };
      for (const [parser, answer] of Object.entries(wasm)) {
        compared++;
        const theirs = native.get(`${file}\t${piece}\t${parser}`);
        const nativeText = theirs === undefined ? '(no answer)' : asJs(theirs);
        if (nativeText !== answer)
          disagreements.push({ file, piece, parser, native: nativeText, wasm: answer });
      }
    });
  }
  return { compared, disagreements };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [tool, ...dirs] = process.argv.slice(2);
  if (!tool || dirs.length === 0) {
    console.error('usage: node tests/fuzz/diff.mjs <build/native/tether_fuzz_diff> <dir>...');
    process.exit(2);
  }
  const files = inputFiles(dirs);
  const { compared, disagreements } = await differential(tool, files);
  for (const d of disagreements.slice(0, 20))
    console.error(
      `[fuzz-diff] ${d.parser} disagrees on ${d.file} (piece ${d.piece}):\n  native: ${d.native.slice(0, 300)}\n  wasm:   ${d.wasm.slice(0, 300)}`,
    );
  if (disagreements.length) {
    console.error(
      `[fuzz-diff] ${disagreements.length} of ${compared} answers differ between the native and the WASM build; reproduce one with ${tool} <file> and the module's function of that name`,
    );
    process.exit(1);
  }
  console.log(
    `[fuzz-diff] ${files.length} inputs, ${compared} answers: the native and WASM builds agree byte for byte`,
  );
}
