// Seeds for fuzz_manifest: every golden manifest and the v5 compat manifests.
import { join } from 'node:path';

export default function seeds({ read, readAbsolute, shared, exists }) {
  const out = read('fixtures/wire/manifests.json').vectors.map((v) => Buffer.from(JSON.stringify(v.manifest)));
  const compat = join(shared, 'compat/dimos-v5/control_frames.json');
  if (exists(compat)) {
    for (const v of readAbsolute(compat).vectors) {
      if (v.message.manifest) out.push(Buffer.from(JSON.stringify(v.message.manifest)));
    }
  }
  return out;
}
