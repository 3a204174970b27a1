// Writes libFuzzer seed corpora from the golden vectors, so every harness starts from real
// frames, messages and manifests. Each harness fuzz_<name>.cpp has a seed module
// seeds/<name>.mjs whose default export returns a list of Buffers.
// Usage: node tests/fuzz/seeds.mjs <corpus-root>
import { mkdirSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;
const out = process.argv[2];
const helpers = {
  root,
  read: (p) => JSON.parse(readFileSync(join(root, p), 'utf8')),
  b64: (s) => Buffer.from(s, 'base64'),
};

const dir = new URL('./seeds/', import.meta.url);
for (const file of readdirSync(dir)
  .filter((f) => f.endsWith('.mjs'))
  .sort()) {
  const harness = file.slice(0, -4);
  const { default: seeds } = await import(new URL(file, dir));
  const list = await seeds(helpers);
  const target = join(out, harness);
  mkdirSync(target, { recursive: true });
  list.forEach((bytes, i) =>
    writeFileSync(join(target, `seed-${String(i).padStart(4, '0')}`), bytes),
  );
  console.log(`[fuzz] ${list.length} seeds for ${harness}`);
}
