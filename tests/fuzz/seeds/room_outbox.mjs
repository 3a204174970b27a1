// Seeds for fuzz_room_outbox: a flags byte, then lines: 'O' + an outbox entry, 'W' + the ops of a
// write, or a server message (welcomes of every mode, envs, drops, settled).
export default function seeds() {
  const env = (version, p, extra = {}) => ({
    proto: 3,
    instance: 'g1',
    origin: 'me',
    writer: 'w',
    version,
    hlc: { p, l: 0 },
    policyVersion: 0,
    ops: [{ kind: 'set', path: ['a'], next: version, cites: [], epoch: 0 }],
    ...extra,
  });
  const out = (e) => 'O' + JSON.stringify({ t: 'env', room: 'r', env: e });
  const welcome = (mode, extra = {}) =>
    JSON.stringify({
      t: 'welcome',
      room: 'r',
      seq: 1,
      instance: 'g1',
      schemaVersion: 0,
      mode,
      peers: [],
      members: [],
      ...extra,
    });
  const lines = [
    out(env(1, 500)),
    out(env(2, 501)),
    welcome('up-to-date', { seq: 0 }),
    'W[{"kind":"set","path":["doc","x"],"next":1}]',
    welcome('delta', { envs: [{ ...env(1, 9e6, { origin: 'fast' }), seq: 1 }] }),
    'W[{"kind":"delete","path":["a"],"prev":1}]',
    welcome('snapshot', {
      registers: [
        {
          path: [],
          siblings: [
            {
              kind: 'set',
              writer: 'x',
              origin: 'fast',
              hlc: { p: 1e7, l: 3 },
              epoch: 0,
              value: {},
            },
          ],
          water: { z: { p: 2e7, l: 0 } },
        },
      ],
      wm: {},
    }),
    'W[{"kind":"set","path":["b"],"next":2}]',
    JSON.stringify({ t: 'env', room: 'r', env: { ...env(3, 1), seq: 2 } }),
    JSON.stringify({ t: 'drop', room: 'r', origin: 'me', version: 2, reason: 'duplicate' }),
    JSON.stringify({ t: 'drop', room: 'r', origin: 'me', version: 3, reason: 'order' }),
    JSON.stringify({ t: 'settled', room: 'r', settled: { me: { p: 600, l: 0 } } }),
  ];
  return [
    Buffer.from([0, ...Buffer.from(lines.join('\n'))]),
    Buffer.from([4 | 1, ...Buffer.from(lines.join('\n'))]),
    Buffer.from([
      2,
      ...Buffer.from([out(env(2, 1)), out(env(1, 2)), ...lines.slice(2)].join('\n')),
    ]),
  ];
}
