// Seeds for fuzz_swarm_message: every golden swarm message (valid and invalid) and frame, and
// every ninja-p2p-order bitfield announce (partial last bytes, sparse holdings).
export default function seeds({ read, b64 }) {
  const messages = read('fixtures/swarm/messages.json');
  const frames = read('fixtures/swarm/frames.json');
  const bitfields = read('fixtures/swarm/bitfields.json');
  return [
    ...bitfields.bitfields.map((v) => Buffer.from(v.announce)),
    ...messages.valid.map((v) => Buffer.from(v.text)),
    ...messages.invalid.map((v) => Buffer.from(v.text)),
    ...frames.frames.map((v) => b64(v.frame_b64)),
    ...frames.ignored.map((v) => b64(v.frame_b64)),
  ];
}
