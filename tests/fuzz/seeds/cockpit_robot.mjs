// Seeds for fuzz_cockpit_robot: the robot conversations of fixtures/cockpit/clients.json turned
// into the harness's steps (`op | u16-LE len | bytes`, see the harness), so mutations start from a
// welcomed robot with wanted channels, publishes and a lease.
const OPS = {
  start: 0,
  connected: 1,
  disconnected: 2,
  datagram: 3,
  carrier: 4,
  ws: 5,
  timeout: 6,
  send: 7,
  ack: 8,
  nack: 9,
  stop: 10,
};
const CHANNELS = ['cam', 'log', 'say', '@control', 'ghost'];

const step = (op, flag, body = Buffer.alloc(0)) => {
  const head = Buffer.alloc(3);
  head[0] = (flag << 4) | op;
  head.writeUInt16LE(body.length, 1);
  return Buffer.concat([head, body]);
};

function body(s, b64) {
  const ch = Math.max(0, CHANNELS.indexOf(s.ch));
  switch (s.in) {
    case 'datagram':
    case 'carrier':
    case 'ws':
      return [0, b64(s.b64)];
    case 'connected':
      return [s.lane === 'websocket' ? 1 : 0, Buffer.alloc(0)];
    case 'disconnected':
      return [0, Buffer.from(s.detail)];
    case 'timeout':
      return [1, Buffer.alloc(0)];
    case 'send':
      return [ch, b64(s.payload_b64)];
    case 'ack':
    case 'nack':
      return [ch, Buffer.from(s.id)];
    default:
      return [0, Buffer.alloc(0)];
  }
}

export default function seeds({ read, b64 }) {
  const file = read('fixtures/cockpit/clients.json');
  return file.robot.map((script) =>
    Buffer.concat(
      script.steps.map((s) => {
        const [flag, b] = body(s, b64);
        return step(OPS[s.in], flag, b);
      }),
    ),
  );
}
