// Seeds for fuzz_cockpit_viewer: the viewer conversations of fixtures/cockpit/clients.json turned
// into the harness's steps (`op | u16-LE len | bytes`, see the harness), so mutations start from a
// welcomed, watching, driving session.
const OPS = {
  start: 0,
  connected: 1,
  disconnected: 2,
  control: 3,
  ws: 4,
  timeout: 5,
  watch: 6,
  want: 7,
  teleop_start: 8,
  teleop_stop: 9,
  drive: 10,
  estop: 11,
  publish: 12,
  stop: 13,
};

const step = (op, flag, body = Buffer.alloc(0)) => {
  const head = Buffer.alloc(3);
  head[0] = (flag << 4) | op;
  head.writeUInt16LE(body.length, 1);
  return Buffer.concat([head, body]);
};

function body(s, b64) {
  switch (s.in) {
    case 'control':
    case 'ws':
      return [0, b64(s.b64)];
    case 'connected':
      return [s.lane === 'websocket' ? 1 : 0, Buffer.alloc(0)];
    case 'disconnected':
      return [0, Buffer.from(s.detail)];
    case 'watch':
      return [0, Buffer.from(s.robotId)];
    case 'want':
      return [0, Buffer.from(s.channels.join(','))];
    case 'timeout':
      return [1, Buffer.alloc(0)];
    case 'drive': {
      const b = Buffer.alloc(24);
      [s.vx, s.vy, s.wz].forEach((v, i) => b.writeDoubleLE(v, i * 8));
      return [0, b];
    }
    case 'publish':
      return [
        Math.min(15, Math.ceil(s.ch.length / 4)),
        Buffer.concat([
          Buffer.from(s.ch.padEnd(Math.ceil(s.ch.length / 4) * 4, ' ')),
          Buffer.from(s.id),
          b64(s.payload_b64),
        ]),
      ];
    default:
      return [0, Buffer.alloc(0)];
  }
}

export default function seeds({ read, b64 }) {
  const file = read('fixtures/cockpit/clients.json');
  return file.viewer.map((script) =>
    Buffer.concat(
      script.steps.map((s) => {
        const [flag, b] = body(s, b64);
        return step(OPS[s.in], flag, b);
      }),
    ),
  );
}
