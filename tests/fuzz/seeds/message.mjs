// Seeds for fuzz_message: golden messages, valid and invalid, and the v5 compat messages.
import { join } from 'node:path';

export default function seeds({ read, readAbsolute, b64, shared, exists }) {
  const messages = read('fixtures/wire/messages.json');
  const out = [...messages.valid, ...messages.invalid]
    .map((v) => b64(v.text_b64))
    .filter((text) => text.length <= 4096);
  const compat = join(shared, 'compat/dimos-v5');
  if (exists(compat)) {
    for (const f of ['control_frames.json', 'datagrams.json']) {
      for (const v of readAbsolute(join(compat, f)).vectors) out.push(Buffer.from(JSON.stringify(v.message)));
    }
  }
  return out;
}
