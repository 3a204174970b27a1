// Seeds for fuzz_manifest: every golden manifest and the v5 compat manifests.
export default function seeds({ read }) {
  const out = read('fixtures/wire/manifests.json').vectors.map((v) =>
    Buffer.from(JSON.stringify(v.manifest)),
  );
  for (const v of read('fixtures/compat/dimos-v5/control_frames.json').vectors) {
    if (v.message.manifest) out.push(Buffer.from(JSON.stringify(v.message.manifest)));
  }
  return out;
}
