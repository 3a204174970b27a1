// Where a WASM module's code bytes go (bench/README.md § Module size): reads the code section's
// function bodies and the name section's function names of a module linked with
// `--profiling-funcs`, and prints the code bytes per group (namespace or library) and the largest
// functions. Without a name section every function is unnamed.
//
//   node tools/wasm-sizes.mjs FILE.wasm [--top 30]
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--'));
if (!file) {
  console.error('usage: node tools/wasm-sizes.mjs FILE.wasm [--top N]');
  process.exit(2);
}
const top = Number(args[args.indexOf('--top') + 1]) || 30;
const bytes = readFileSync(file);

let pos = 8; // after the magic and the version
const leb = () => {
  let result = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[pos++];
    result += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) return result;
  }
};
let imported = 0;
const bodies = [];
const names = new Map();
const sections = [];
while (pos < bytes.length) {
  const id = bytes[pos++];
  const size = leb();
  const end = pos + size;
  if (id === 2) {
    // imports: count the functions, which come first in the function index space
    for (let n = leb(); n > 0; n--) {
      pos += leb(); // module name
      pos += leb(); // field name
      const kind = bytes[pos++];
      if (kind === 0) {
        leb();
        imported++;
      } else if (kind === 1) {
        pos++;
        const flags = leb();
        leb();
        if (flags & 1) leb();
      } else if (kind === 2) {
        const flags = leb();
        leb();
        if (flags & 1) leb();
      } else if (kind === 3) {
        pos += 2;
      } else if (kind === 4) {
        pos++;
        leb();
      }
    }
  } else if (id === 10) {
    for (let n = leb(); n > 0; n--) {
      const len = leb();
      bodies.push(len);
      pos += len;
    }
  } else if (id === 0) {
    const nameLen = leb();
    const name = bytes.subarray(pos, pos + nameLen).toString();
    pos += nameLen;
    if (name === 'name') {
      while (pos < end) {
        const sub = bytes[pos++];
        const subSize = leb();
        const subEnd = pos + subSize;
        if (sub === 1) {
          for (let n = leb(); n > 0; n--) {
            const index = leb();
            const l = leb();
            names.set(index, bytes.subarray(pos, pos + l).toString());
            pos += l;
          }
        }
        pos = subEnd;
      }
    }
  }
  sections.push({ id, size });
  pos = end;
}

const group = (name) => {
  if (!name) return '(unnamed: link with --profiling-funcs)';
  if (/nlohmann/.test(name)) return 'nlohmann';
  if (/emscripten|embind|_EmBind|__embind/i.test(name)) return 'Embind';
  const ns = /^(?:\w+ )?tether::(\w+)(?:::(\w+))?/.exec(name);
  if (ns) return `tether::${ns[1]}${ns[2] && /^[a-z_]+$/.test(ns[2]) ? `::${ns[2]}` : ''}`;
  if (/^(?:\w+ )?std::/.test(name) || /^void std::|^std::/.test(name)) return 'libc++';
  if (/^operator (new|delete)|^__cxa|^__cxx|^_Unwind/.test(name)) return 'libc++abi';
  return 'libc and the rest';
};
const groups = new Map();
const fns = bodies.map((size, i) => ({ size, name: names.get(i + imported) ?? '' }));
for (const f of fns) groups.set(group(f.name), (groups.get(group(f.name)) ?? 0) + f.size);
const code = fns.reduce((n, f) => n + f.size, 0);
const data = sections.filter((s) => s.id === 11).reduce((n, s) => n + s.size, 0);
console.log(
  `${file}: ${bytes.length} bytes; code ${code} in ${fns.length} functions; data ${data}`,
);
for (const [g, n] of [...groups].sort((a, b) => b[1] - a[1]))
  console.log(`  ${String(n).padStart(8)}  ${((100 * n) / code).toFixed(1).padStart(5)}%  ${g}`);
console.log(`the ${top} largest functions:`);
for (const f of [...fns].sort((a, b) => b.size - a.size).slice(0, top))
  console.log(`  ${String(f.size).padStart(8)}  ${f.name.slice(0, 150)}`);
