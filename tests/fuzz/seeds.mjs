// Writes libFuzzer seed corpora from the golden vectors in fixtures/ (and shared/compat when it
// is there), so every harness starts from real frames, messages and manifests.
// Usage: node tests/fuzz/seeds.mjs <corpus-root>
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;
const out = process.argv[2];
const read = (p) => JSON.parse(readFileSync(p, 'utf8'));
const b64 = (s) => Buffer.from(s, 'base64');

const seeds = { stream_decoder: [], message: [], manifest: [] };
const frames = read(join(root, 'fixtures/wire/data_frames.json'));
for (const v of [...frames.vectors, ...frames.invalid]) {
  // The harness takes its first byte as the chunk size.
  seeds.stream_decoder.push(Buffer.concat([Buffer.of(v.name.length), b64(v.frame_b64)]));
}
seeds.stream_decoder.push(Buffer.concat([Buffer.of(0), ...frames.vectors.map((v) => b64(v.frame_b64))]));
const messages = read(join(root, 'fixtures/wire/messages.json'));
for (const v of [...messages.valid, ...messages.invalid]) {
  const text = b64(v.text_b64);
  if (text.length <= 4096) seeds.message.push(text);
  if (v.control_frame_b64) seeds.stream_decoder.push(Buffer.concat([Buffer.of(3), b64(v.control_frame_b64)]));
}
for (const v of read(join(root, 'fixtures/wire/manifests.json')).vectors) {
  seeds.manifest.push(Buffer.from(JSON.stringify(v.manifest)));
}
const compat = join(root, '../shared/compat/dimos-v5');
if (existsSync(compat)) {
  for (const f of ['control_frames.json', 'datagrams.json']) {
    for (const v of read(join(compat, f)).vectors) {
      seeds.message.push(Buffer.from(JSON.stringify(v.message)));
      if (v.message.manifest) seeds.manifest.push(Buffer.from(JSON.stringify(v.message.manifest)));
    }
  }
}
for (const [harness, list] of Object.entries(seeds)) {
  const dir = join(out, harness);
  mkdirSync(dir, { recursive: true });
  list.forEach((bytes, i) => writeFileSync(join(dir, `seed-${String(i).padStart(3, '0')}`), bytes));
  console.log(`[fuzz] ${list.length} seeds for ${harness}`);
}
