// Seeds for fuzz_swarm_node: a flags byte, then control-lane texts one per line: every golden
// swarm message wrapped in an envelope from each of the harness's peers (and one from a forger),
// and the golden frames.
export default function seeds({ read, b64 }) {
  const messages = read('fixtures/swarm/messages.json');
  const frames = read('fixtures/swarm/frames.json');
  const envelope = (from, m) =>
    JSON.stringify({
      v: 1,
      id: `${from}.1`,
      type: m.type,
      from: { streamId: from, role: 'peer', name: from, instanceId: `${from}.i` },
      to: null,
      topic: null,
      ts: 1,
      payload: m.payload,
    });
  const valid = messages.valid.map((v) => JSON.parse(v.text));
  const out = [];
  for (const flags of [0x00, 0x81, 0x92]) {
    const lines = [];
    for (const m of valid) for (const p of ['alice', 'bob', 'eve']) lines.push(envelope(p, m));
    out.push(Buffer.concat([Buffer.from([flags]), Buffer.from(lines.join('\n'))]));
  }
  for (const v of messages.invalid)
    out.push(Buffer.concat([Buffer.from([0x80]), Buffer.from(v.text)]));
  for (const f of frames.frames) out.push(Buffer.concat([Buffer.from([0x81]), b64(f.frame_b64)]));
  return out;
}
