// Seeds for fuzz_stream_decoder: every golden data frame (valid and invalid), all of them back to
// back, and every golden control frame. The harness reads its first byte as the chunk size.
export default function seeds({ read, b64 }) {
  const frames = read('fixtures/wire/data_frames.json');
  const messages = read('fixtures/wire/messages.json');
  const out = [];
  for (const v of [...frames.vectors, ...frames.invalid]) {
    out.push(Buffer.concat([Buffer.of(v.name.length), b64(v.frame_b64)]));
  }
  out.push(Buffer.concat([Buffer.of(0), ...frames.vectors.map((v) => b64(v.frame_b64))]));
  for (const v of messages.valid) out.push(Buffer.concat([Buffer.of(3), b64(v.control_frame_b64)]));
  return out;
}
