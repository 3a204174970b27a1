// Seeds for fuzz_decode: the golden decode vectors and the compat costmaps, each behind the
// harness's 4-byte selector (encoding, w, h, meta shape).
const ENCODINGS = ['costmap.zlib.v1', 'voxels.zlib.v1', 'jpeg.v1', 'pose.json.v1', 'stats.json.v1'];

export default function seeds({ read, b64 }) {
  const v = read('fixtures/decode/vectors.json');
  const out = [];
  const frame = (encoding, w, h, shape, payload) =>
    Buffer.concat([
      Buffer.of(ENCODINGS.indexOf(encoding), (w - 1) % 64, (h - 1) % 64, shape),
      payload,
    ]);
  for (const c of v.costmaps)
    out.push(frame('costmap.zlib.v1', c.meta.w, c.meta.h, 0, b64(c.payload_b64)));
  for (const c of v.voxels)
    out.push(frame('voxels.zlib.v1', Math.max(1, c.meta.n), 1, 1, b64(c.payload_b64)));
  for (const c of v.invalid) {
    const i = Math.max(0, ENCODINGS.indexOf(c.encoding));
    out.push(Buffer.concat([Buffer.of(i, 7, 7, i === 1 ? 1 : 0), b64(c.payload_b64)]));
  }
  for (const c of read('fixtures/compat/dimos-v5/costmap_frames.json').vectors) {
    out.push(frame('costmap.zlib.v1', c.meta.w, c.meta.h, 0, b64(c.payload_b64)));
  }
  return out;
}
