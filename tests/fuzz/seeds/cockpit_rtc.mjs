// Seeds for fuzz_cockpit_rtc: the golden brokering conversations (fixtures/cockpit/rtc.json) as
// harness scripts (see the harness for the format), plus scripts that reach stalls, retries, lost
// sessions and the bounds, so mutations start from deep states. The first byte is the TURN flag.
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
    { ch: 'front', encoding: 'video.webrtc.v1' },
    { ch: 'rear', encoding: 'video.webrtc.v1' },
    { ch: 'cam', encoding: 'jpeg.v1' },
  ],
};
const hello = {
  t: 'hello',
  v: 7,
  role: 'robot',
  robot: { id: 'r1', name: 'R', model: 'm' },
  manifest,
};
const robotOffer = {
  t: 'rtc_offer',
  sdp: 'v=0\r\n',
  tracks: [
    { mid: '0', ch: 'front' },
    { mid: '1', ch: 'rear' },
  ],
};

// A fixture conversation as a script: sessions are opened in the script's order, so the relay's
// session ids (1, 2, ...) are the harness's targets (0, 1, ...); results answer the oldest call.
function fromFixture(script) {
  const parts = [Buffer.from([script.turn ? 1 : 0])];
  let last = 0;
  for (const s of script.steps) {
    const body = s.b64 ? Buffer.from(s.b64, 'base64') : Buffer.alloc(0);
    const target = ((s.session ?? 1) - 1) & 15;
    if (s.in === 'open')
      parts.push(
        step(
          {
            'robot webtransport': 0,
            'viewer webtransport': 1,
            'robot websocket': 2,
            'viewer websocket': 3,
          }[`${s.role} ${s.lane}`],
          0,
        ),
      );
    else if (s.in === 'control') parts.push(step(4, target, body));
    else if (s.in === 'datagram') parts.push(step(5, target, body));
    else if (s.in === 'stream') parts.push(step(6, target, body));
    else if (s.in === 'ws') parts.push(step(7, target, body));
    else if (s.in === 'sfu') parts.push(step(8, 0, json(s.result)));
    else if (s.in === 'closed') parts.push(step(13, target));
    else if (s.in === 'timeout')
      parts.push(step(12, 0, Buffer.alloc(Math.min(65535, Math.ceil((s.now - last) / 250)))));
    last = s.now;
  }
  return Buffer.concat(parts);
}

export default function seeds({ read }) {
  const file = read('fixtures/cockpit/rtc.json');
  const fixtures = file.relay.map(fromFixture);
  const base = [
    step(0, 0),
    step(6, 0, ctl(hello)),
    step(1, 0),
    step(4, 1, control({ t: 'hello', v: 7, role: 'viewer' })),
    step(4, 1, control({ t: 'watch', robotId: 'r1' })),
    step(4, 1, control({ t: 'sub', ch: 'front' })),
    step(6, 0, ctl(robotOffer)),
    step(9, 0),
    step(9, 0),
    step(4, 1, control({ t: 'rtc_offer', sdp: 'v=0\r\n' })),
    step(9, 0),
    step(9, 0, Buffer.from('a')),
    step(4, 1, control({ t: 'rtc_answer', sdp: 'v=0\r\n' })),
    step(9, 0),
  ];
  const stall = [
    step(6, 0, ctl({ t: 'rtc_stalled', ch: 'front' })),
    step(9, 0),
    step(9, 0),
    step(9, 0),
  ];
  const failures = [
    step(4, 1, control({ t: 'unsub', ch: 'front' })),
    step(10, 0, Buffer.from([0xf7, 0x01])), // 503
    step(12, 0, Buffer.from([1, 1])),
    step(10, 0, Buffer.from([0x9a, 0x01])), // 410
    step(12, 0, Buffer.alloc(70)), // past the call timeout
    step(11, 0, Buffer.from([1, 0, 0, 0, 0, 0, 0, 0])),
  ];
  const bounds = [
    step(4, 1, control({ t: 'rtc_offer', sdp: 'v'.repeat(48 * 1024) })),
    step(
      6,
      0,
      ctl({
        ...robotOffer,
        tracks: Array.from({ length: 9 }, (_, i) => ({ mid: String(i), ch: 'front' })),
      }),
    ),
    step(14, 1, Buffer.from('not video')),
    step(8, 0, Buffer.from('{"ok":true,"status":200,"body":{"sessionId":7}}')),
  ];
  return [
    ...fixtures,
    Buffer.concat([Buffer.from([0]), ...base]),
    Buffer.concat([Buffer.from([0]), ...base, ...stall]),
    Buffer.concat([Buffer.from([1]), ...base, ...failures]),
    Buffer.concat([Buffer.from([0]), ...base, ...bounds, step(13, 1), step(13, 0)]),
  ];
}
