// What keeping a socket's read state through a hibernation costs under local workerd (Miniflare):
// the room object writes each socket's attachment (identity, hello, read state; docs/rooms.md §
// The slow-reader rule, Across a hibernation) once per turn that sent to it. Measured against what
// the same turn already does for that socket, one ws.send of a small echo, in the same object and
// the same run: N calls of each inside one request, timed from Node, less an empty loop of N.
// The real send path costs more than ws.send alone (the admission core and the relay run too), so
// the ratio printed overstates the attachment's share.
//   node bench/edge-attachment.bench.mjs [--quick]
import { Miniflare } from 'miniflare';
import WebSocket from 'ws';

const QUICK = process.argv.includes('--quick');
const N = QUICK ? 20_000 : 200_000;
const ROUNDS = QUICK ? 2 : 5;

// An attachment as the room object writes it, with a read state of 8 marks (the most it holds).
const HELLO = JSON.stringify({
  t: 'hello',
  room: 'lab',
  origin: 'o_5b0c2f3e9a1d4c6b',
  policyVersion: 1,
  schemaVersion: 0,
  proto: 1,
});
const READ = JSON.stringify({
  sent: 123456789012,
  acked: 123455000000,
  claimed: true,
  marks: [1, 2, 3, 4, 5, 6, 7, 8].map((i) => 123455000000 + i * 1048576),
});
const ECHO = JSON.stringify({
  t: 'env',
  room: 'lab',
  env: { seq: 1234, writer: 'u_81f2', ops: [{ kind: 'set', path: ['n'], next: 42 }] },
});

const script = `
const HELLO = ${JSON.stringify(HELLO)};
const READ = ${JSON.stringify(READ)};
const ECHO = ${JSON.stringify(ECHO)};
export class Bench {
  constructor(ctx) { this.ctx = ctx; }
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === '/ws') {
      const [client, server] = Object.values(new WebSocketPair());
      this.ctx.acceptWebSocket(server);
      server.serializeAttachment({ writer: 'u_81f2', kind: 'human', room: 'lab' });
      return new Response(null, { status: 101, webSocket: client });
    }
    const n = Number(url.searchParams.get('n'));
    const mode = url.searchParams.get('mode');
    const [ws] = this.ctx.getWebSockets();
    const attachment = { writer: 'u_81f2', kind: 'human', room: 'lab', hello: HELLO, read: READ };
    let x = 0;
    if (mode === 'attach') for (let i = 0; i < n; i++) { attachment.read = READ; ws.serializeAttachment(attachment); }
    else if (mode === 'send') for (let i = 0; i < n; i++) ws.send(ECHO);
    else for (let i = 0; i < n; i++) x += i;
    return new Response(String(x));
  }
  webSocketMessage() {}
}
export default { fetch: (request, env) => env.BENCH.get(env.BENCH.idFromName('b')).fetch(request) };
`;

const mf = new Miniflare({
  modules: true,
  script,
  compatibilityDate: '2025-01-01',
  durableObjects: { BENCH: { className: 'Bench', useSQLite: true } },
  host: '127.0.0.1',
  port: 0,
  cf: false,
});
try {
  const url = (await mf.ready).toString().replace(/\/$/, '');
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`);
  let received = 0;
  ws.on('message', () => received++);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const time = async (mode) => {
    const t0 = process.hrtime.bigint();
    const res = await fetch(`${url}/run?mode=${mode}&n=${N}`);
    await res.text();
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const best = { empty: Infinity, attach: Infinity, send: Infinity };
  for (let r = 0; r < ROUNDS; r++) {
    for (const mode of Object.keys(best)) best[mode] = Math.min(best[mode], await time(mode));
    // Let the client drain the echoes before the next round.
    const want = (r + 1) * N;
    for (let i = 0; i < 4000 && received < want; i++) await new Promise((r2) => setTimeout(r2, 5));
  }
  const per = (mode) => ((best[mode] - best.empty) * 1000) / N; // µs per call
  const bytes = JSON.stringify({
    writer: 'u_81f2',
    kind: 'human',
    room: 'lab',
    hello: HELLO,
    read: READ,
  }).length;
  console.log(
    `edge attachment under local workerd (Miniflare): ${N} calls per mode, best of ${ROUNDS}; attachment ~${bytes} B of JSON text, echo ${ECHO.length} B`,
  );
  console.log(`  serializeAttachment  ${per('attach').toFixed(3)} µs per call`);
  console.log(`  ws.send (the echo)   ${per('send').toFixed(3)} µs per call`);
  console.log(`  attachment / send    ${(per('attach') / per('send')).toFixed(2)}x`);
  ws.terminate();
} finally {
  await mf.dispose();
}
