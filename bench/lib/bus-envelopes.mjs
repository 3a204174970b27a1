// The envelopes the bus benches receive (bench/bus.bench.mjs, bench/bus-ab.mjs): one sender, the
// i-th message's id and ts.
const from = { streamId: 'agent-7', role: 'agent', name: 'Builder', instanceId: 'f3a9c1' };

export const envelopeText = (type, to, payload, i = 0) =>
  JSON.stringify({
    v: 1,
    id: `m${i}-abcdefghijkl`,
    type,
    from,
    to,
    topic: null,
    ts: 1700000000000 + i,
    payload,
  });
