// Seeds for fuzz_cockpit_relay: scripts of session events (see the harness for the format) that
// register a robot, bring viewers in, subscribe, drive, publish and stream frames, so mutations
// start from deep states.
const step = (op, target, body = Buffer.alloc(0)) => {
  const head = Buffer.alloc(3);
  head[0] = (target << 4) | op;
  head.writeUInt16LE(body.length, 1);
  return Buffer.concat([head, body]);
};
const json = (o) => Buffer.from(JSON.stringify(o));
const control = (o) => {
  const j = json(o);
  const p = Buffer.alloc(4);
  p.writeUInt32LE(j.length);
  return Buffer.concat([p, j]);
};
const frame = (header, payload) => {
  const h = json(header);
  const p = Buffer.alloc(8);
  p.writeUInt32LE(h.length, 0);
  p.writeUInt32LE(payload.length, 4);
  return Buffer.concat([p, h, payload]);
};
const ctl = (o) => frame({ ch: '@control', seq: 0, ts: 0, delivery: 'reliable' }, json(o));

const manifest = {
  version: 1,
  channels: [
    { ch: 'cam', encoding: 'jpeg.v1' },
    { ch: 'log', encoding: 'json.v1', delivery: 'reliable' },
    { ch: 'say', dir: 'tx', encoding: 'text.json.v1', delivery: 'reliable', publish: true },
  ],
};
const hello = {
  t: 'hello',
  v: 7,
  role: 'robot',
  robot: { id: 'r1', name: 'R', model: 'm' },
  manifest,
};

export default function seeds() {
  const base = [
    step(0, 0), // session 0: robot (WebTransport)
    step(6, 0, ctl(hello)),
    step(1, 0), // session 1: viewer
    step(4, 1, control({ t: 'hello', v: 7, role: 'viewer' })),
    step(4, 1, control({ t: 'watch', robotId: 'r1' })),
    step(4, 1, control({ t: 'sub', ch: 'cam' })),
    step(4, 1, control({ t: 'sub', ch: 'log' })),
  ];
  const frames = [
    step(6, 0, frame({ ch: 'cam', seq: 1, ts: 0, delivery: 'latest' }, Buffer.from('jpeg'))),
    step(6, 0, frame({ ch: 'log', seq: 1, ts: 0, delivery: 'reliable' }, Buffer.from('{}'))),
    step(10, 0),
    step(10, 0),
    step(11, 0),
    step(13, 0, Buffer.alloc(60)),
    step(6, 0, frame({ ch: 'cam', seq: 2, ts: 0, delivery: 'latest' }, Buffer.from('jpeg2'))),
  ];
  const teleop = [
    step(4, 1, control({ t: 'teleop_start' })),
    step(5, 1, json({ t: 'twist', vx: 1, vy: 0, wz: 0, seq: 1, ts: 0 })),
    step(5, 0, json({ t: 'ping', n: 1, ts: 0 })),
  ];
  const publish = [
    step(
      6,
      1,
      frame(
        { ch: 'say', seq: 1, ts: 0, delivery: 'reliable', meta: { id: 'a' } },
        json({ text: 'hi' }),
      ),
    ),
    step(6, 0, ctl({ t: 'pub_ack', ch: 'say', id: 'r1' })),
    step(13, 0, Buffer.alloc(600)),
  ];
  const ws = [
    step(2, 0),
    step(9, 0, ctl(hello)),
    step(3, 0),
    step(9, 1, ctl({ t: 'hello', v: 7, role: 'viewer' })),
    step(9, 1, ctl({ t: 'watch', robotId: 'r1' })),
    step(9, 1, ctl({ t: 'sub', ch: 'cam' })),
    step(9, 0, frame({ ch: 'cam', seq: 1, ts: 0, delivery: 'latest' }, Buffer.from('x'))),
  ];
  // A viewer asks for the fleet's link figures; the robot reports its rtt; time passes past the
  // push interval.
  const fleet = [
    step(4, 1, control({ t: 'fleet', link: true })),
    step(5, 0, json({ t: 'ping', n: 2, ts: 0, rttMs: 35 })),
    step(13, 0, Buffer.alloc(60)),
    step(6, 0, frame({ ch: 'cam', seq: 3, ts: 0, delivery: 'latest' }, Buffer.from('jpeg3'))),
    step(13, 0, Buffer.alloc(600)),
    step(4, 1, control({ t: 'fleet', link: false })),
  ];
  return [
    Buffer.concat(base),
    Buffer.concat([...base, ...fleet]),
    Buffer.concat([...base, ...frames]),
    Buffer.concat([...base, ...teleop, step(14, 1)]),
    Buffer.concat([...base, ...publish, step(15, 0)]),
    Buffer.concat(ws),
  ];
}
