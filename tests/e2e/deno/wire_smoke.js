// Deno side of tests/e2e/deno.test.mjs: loads the one WASM module through the shared glue (which
// reads the bytes with Deno.readFile), round-trips every data-frame vector and prints one JSON
// line. Run with --allow-read on the repo.
import { loadWire } from '../../../web/glue/wire.js';
import { runVectors } from '../lib/wire_smoke.js';

const repo = new URL('../../../', import.meta.url);
const readJson = async (url) => JSON.parse(await Deno.readTextFile(url));

const wire = await loadWire();
const results = runVectors(wire, {
  golden: await readJson(new URL('fixtures/wire/data_frames.json', repo)),
  compat: await readJson(new URL('fixtures/compat/dimos-v5/data_frames.json', repo)),
});

console.log(
  JSON.stringify({
    runtime: 'deno',
    deno: Deno.version.deno,
    limits: wire.limits,
    results,
    allValidSameBytes: results.filter((r) => r.kind === 'valid').every((r) => r.sameBytes),
  }),
);
