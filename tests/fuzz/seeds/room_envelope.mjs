// Seeds for fuzz_room_envelope: a flags byte, then newline-separated client messages from a
// member of room "r" ($I stands for the room's instance): valid envelopes, every malformed shape
// the validator names, drops, presence, signals and hellos.
export default function seeds() {
  const env = (version, ops, extra = {}) =>
    JSON.stringify({
      t: 'env',
      room: 'r',
      env: {
        proto: 3,
        instance: '$I',
        origin: 'oa',
        writer: 'w',
        version,
        hlc: { p: version, l: 0 },
        policyVersion: 0,
        ops,
        ...extra,
      },
    });
  const op = (path, extra = {}) => ({
    kind: 'set',
    path,
    next: { v: [1, 'x'] },
    cites: [],
    epoch: 0,
    ...extra,
  });
  const valid = [
    env(1, [op([])]),
    env(2, [
      op(['a', 1], { cites: [{ origin: 'oa', hlc: { p: 1, l: 0 } }] }),
      { kind: 'clear', path: ['b'], cites: [], epoch: 1 },
    ]),
    env(3, [
      {
        kind: 'delete',
        path: ['a', 1],
        prev: 2,
        cites: [{ origin: 'ob', hlc: { p: 9, l: 1 } }],
        epoch: 2,
      },
    ]),
    env(4, [op(['x'])], { schemaVersion: 1 }),
    env(2, [op(['dup'])]),
    JSON.stringify({ t: 'presence', room: 'r', data: { cursor: [1, 2] } }),
    JSON.stringify({ t: 'signal', room: 'r', to: 'ob', data: { sdp: 'v=0' } }),
    JSON.stringify({ t: 'hello', room: 'r', origin: 'oa', proto: 3, policyVersion: 0, seq: 2 }),
  ];
  const malformed = [
    env(1, 'x'),
    env(0, []),
    env(1.5, []),
    env(1, [op(['a\u0001'])]),
    env(1, [op(['__proto__'])]),
    env(1, [{ kind: 'clear', path: [], cites: [], epoch: 0 }]),
    env(1, [op(['a'], { epoch: -1 })]),
    env(1, [op(['a'], { cites: [{ origin: '' }] })]),
    env(1, [op([1]), op(['1'])]),
    '{"t":"env","room":"r","env":null}',
    '{"t":"env","room":"r","env":{"proto":3,"instance":"$I","seq":5,"origin":"oa","writer":"w","version":9,"hlc":{"p":1,"l":0},"policyVersion":0,"ops":[]}}',
    '{"t":"env","room":"r","env":{"\\u0070roto":3}}',
    '[1,2,3]',
    '{"t":"hello","room":"r","origin":"","proto":3}',
  ];
  return [
    Buffer.from([0, ...Buffer.from(valid.join('\n'))]),
    Buffer.from([1 | 4 | 64, ...Buffer.from(valid.join('\n'))]),
    Buffer.from([2 | 8 | 128, ...Buffer.from([...valid, ...malformed].join('\n'))]),
    Buffer.from([16 | 32, ...Buffer.from(malformed.join('\n'))]),
    ...valid.map((v) => Buffer.from([0, ...Buffer.from(v)])),
  ];
}
