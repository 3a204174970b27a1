// The encrypted relay transport over its HTTP form beside its WebSocket form, in one run, through
// the same self-hosted relay (the Deno host, web/host/rooms.js, on loopback): sealed 1 KiB texts
// per second one way, alice -> bob, at most 32 in flight: both on WebSockets (the reference), alice sending over HTTP
// (a POST per frame, one in flight), and bob receiving over HTTP (long-polls, each answer carrying
// what queued meanwhile). The ratio HTTP / WebSocket is the cost of the form; the WebSocket row is the
// reference, and raw loopback is far above both (the sealing and the relay are the limits).
// Figures need a quiet machine (the load average is printed with them).
//   node bench/relay-http.bench.mjs [--quick]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { createRelayTransport } from '../web/peer/relay-transport.js';
import { waitFor } from '../tests/node/lib/agent-harness.mjs';
import { startDenoRooms, ticketFor } from '../tests/e2e/lib/edge.mjs';

const QUICK = process.argv.includes('--quick');
const N = QUICK ? 300 : 3000;
const WINDOW = 32;
const SECRET = 'the relay-http bench room secret, out of band';
const MSG = JSON.stringify({
  v: 1,
  id: 'x'.repeat(16),
  type: 'chat',
  payload: { text: 'y'.repeat(900) },
});

async function member(deno, room, id, transport) {
  const ticket = await ticketFor(room, id, 'agent', { ttlSeconds: 3600 });
  const t = createRelayTransport({
    url: `${deno.wsUrl}/rooms/${room}?ticket=${encodeURIComponent(ticket)}`,
    room,
    selfId: id,
    secret: SECRET,
    WebSocket,
    ...(transport === 'http' ? { transport: 'http' } : {}),
  });
  await t.ready;
  return t;
}

// Sealed texts/s from alice (over `from`) to bob (over `to`), until bob has all N.
async function rate(deno, from, to) {
  const room = `bench-${from}-${to}`;
  const a = await member(deno, room, 'alice', from);
  const b = await member(deno, room, 'bob', to);
  try {
    await waitFor(
      'linked',
      () => a.openPeers().includes('bob') && b.openPeers().includes('alice'),
      {
        timeoutMs: 30_000,
      },
    );
    let got = 0;
    let done;
    const all = new Promise((r) => (done = r));
    b.subscribe({ text: () => ++got === N && done() });
    const t0 = performance.now();
    let sent = 0;
    while (sent < N) {
      // At most WINDOW texts in flight, as a sender waiting on confirmations keeps them: a flood
      // past the relay's and the lane's bounds would measure losses, not the path.
      if (sent - got < WINDOW && a.send('bob', MSG)) sent++;
      else await new Promise((r) => setTimeout(r, 1));
    }
    await Promise.race([
      all,
      new Promise((_, rej) =>
        setTimeout(
          () => rej(new Error(`${from} -> ${to}: ${N - got} of ${N} texts never arrived`)),
          60_000,
        ).unref(),
      ),
    ]);
    return performance.now() - t0;
  } finally {
    await a.close();
    await b.close();
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tether-bench-http-'));
// The room's abuse limits (50 messages/s per connection, docs/rooms.md § Limits) would cap both
// paths far below what they carry, and close the sender (4008): lifted, to measure the path.
const LIFTED = {
  connectionMessagesPerSecond: 1e6,
  connectionBurst: 1e6,
  principalMessagesPerSecond: 1e6,
  principalBurst: 1e6,
};
const deno = await startDenoRooms({
  dir,
  db: path.join(dir, 'rooms.sqlite'),
  args: ['--limits', JSON.stringify(LIFTED)],
});
try {
  const load = os.loadavg()[0].toFixed(2);
  const ws = await rate(deno, 'websocket', 'websocket');
  const httpSend = await rate(deno, 'http', 'websocket');
  const httpRecv = await rate(deno, 'websocket', 'http');
  const perS = (ms) => (N / ms) * 1000;
  console.log(
    `sealed relay transport through the Deno relay on loopback (${os.cpus().length} cores, load ${load}), ${N} x ${MSG.length} B texts${QUICK ? ' (--quick)' : ''}`,
  );
  console.log('| alice -> bob | sealed texts/s | MB/s | vs WebSocket |');
  console.log('|---|---|---|---|');
  for (const [name, ms] of [
    ['WebSocket -> WebSocket (reference)', ws],
    ['HTTP (a POST per frame) -> WebSocket', httpSend],
    ['WebSocket -> HTTP (long-poll receive)', httpRecv],
  ])
    console.log(
      `| ${name} | ${perS(ms).toFixed(0)} | ${((perS(ms) * MSG.length) / 1e6).toFixed(2)} | ${(ws / ms).toFixed(2)} |`,
    );
} finally {
  await deno.kill();
  fs.rmSync(dir, { recursive: true, force: true });
}
