// The explicit relay transport and the agent sidecar, on loopback (one run, one table):
//  1. envelope-sized messages (1 KiB) through the relay transport, one way, vs. the same bytes
//     as raw ws frames straight to the room server's peer (the physical limit of this path);
//  2. the agent path end to end: `tether agent send` until the message is in the peer's inbox
//     on disk (a CLI process start + HTTP to the sidecar + relay + atomic write), median of 20.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { startRoomServer } from '../tests/e2e/lib/room_server.mjs';
import { createRelayTransport } from '../web/peer/relay-transport.js';
import { Harness, waitFor } from '../tests/node/lib/agent-harness.mjs';

const N = 20_000;
const MSG = JSON.stringify({
  v: 1,
  id: 'x'.repeat(16),
  type: 'chat',
  payload: { text: 'y'.repeat(900) },
});

async function transportRate(server) {
  const a = createRelayTransport({ url: server.url, room: 'bench', selfId: 'a', WebSocket });
  const b = createRelayTransport({ url: server.url, room: 'bench', selfId: 'b', WebSocket });
  await Promise.all([a.ready, b.ready]);
  await waitFor('a sees b', () => a.openPeers().includes('b'));
  let got = 0;
  let done;
  const all = new Promise((r) => (done = r));
  b.subscribe({ text: () => ++got === N && done() });
  const t0 = performance.now();
  let sent = 0;
  while (sent < N) {
    if (a.send('b', MSG)) sent++;
    else await new Promise((r) => setTimeout(r, 1));
    if (sent % 500 === 0) await new Promise((r) => setImmediate(r));
  }
  await all;
  const ms = performance.now() - t0;
  await a.close();
  await b.close();
  return ms;
}

async function rawRate(server) {
  // The same frames a transport would send, written by hand: the relay + ws cost alone.
  const open = (id) =>
    new Promise((resolve) => {
      const ws = new WebSocket(server.url);
      ws.on('open', () =>
        ws.send(
          JSON.stringify({ t: 'hello', room: 'raw', origin: id, proto: 3, policyVersion: 1 }),
        ),
      );
      ws.on('message', function first(d) {
        if (JSON.parse(String(d)).t === 'welcome') {
          ws.off('message', first);
          resolve(ws);
        }
      });
    });
  const a = await open('a');
  const b = await open('b');
  let got = 0;
  let done;
  const all = new Promise((r) => (done = r));
  b.on('message', (d) => {
    if (JSON.parse(String(d)).t === 'signal' && ++got === N) done();
  });
  const frame = JSON.stringify({
    t: 'signal',
    room: 'raw',
    to: 'b',
    data: { k: 'tether-env', text: MSG },
  });
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    a.send(frame);
    if (i % 500 === 0) await new Promise((r) => setImmediate(r));
  }
  await all;
  const ms = performance.now() - t0;
  a.close();
  b.close();
  return ms;
}

async function cliLatency(server) {
  const h = new Harness({ after: () => {} });
  try {
    const A = h.dir('a');
    const B = h.dir('b');
    await h.join(A, 'alice', server.url);
    await h.join(B, 'bob', server.url);
    const inbox = path.join(B, 'inbox');
    const times = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      await h.ok(A, ['send', 'bob', `ping ${i}`]);
      await waitFor('arrival', () => fs.readdirSync(inbox).length === i + 1, { everyMs: 2 });
      times.push(performance.now() - t0);
    }
    const t1 = performance.now();
    await h.ok(B, ['read', '--take', '20']);
    const readMs = performance.now() - t1;
    times.sort((x, y) => x - y);
    return { median: times[10], readMs };
  } finally {
    await h.cleanup();
  }
}

const server = await startRoomServer();
try {
  const raw = await rawRate(server);
  const tr = await transportRate(server);
  const cli = await cliLatency(server);
  const rate = (ms) => (N / ms) * 1000;
  console.log(
    `agent relay path on loopback (${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(2)}), ${N} x ${MSG.length} B messages`,
  );
  console.log('| path | msgs/s | MB/s | throughput vs raw |');
  console.log('|---|---|---|---|');
  console.log(
    `| raw ws signal frames (limit) | ${rate(raw).toFixed(0)} | ${((rate(raw) * MSG.length) / 1e6).toFixed(1)} | 1.00 |`,
  );
  console.log(
    `| relay transport | ${rate(tr).toFixed(0)} | ${((rate(tr) * MSG.length) / 1e6).toFixed(1)} | ${(raw / tr).toFixed(2)} |`,
  );
  console.log(
    `tether agent send -> peer inbox on disk: median ${cli.median.toFixed(0)} ms (a CLI process per send); read --take 20: ${cli.readMs.toFixed(0)} ms`,
  );
} finally {
  await server.close();
}
