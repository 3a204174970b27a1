// The relay transport's failure-report hook (web/peer/relay-transport.js options.onFailure): once
// per attempt that did not reach the room, with what the other end actually answered. Real
// sockets on 127.0.0.1: nothing listening, an HTTP refusal of the upgrade, a relay that closes
// before its welcome, and one that rejects our hello.
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import { createRelayTransport } from '../../web/peer/relay-transport.js';
import { waitFor } from './lib/agent-harness.mjs';
import { freePort } from './lib/rooms-relay.mjs';

function transport(t, url, got) {
  const tr = createRelayTransport({
    url,
    room: 'lab',
    selfId: 'a',
    WebSocket,
    reconnectMinMs: 20,
    reconnectMaxMs: 40,
    onFailure: (f) => got.push(f),
  });
  tr.ready.catch(() => {});
  t.after(() => tr.close());
  return tr;
}

async function listen(t, server) {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  return server.address().port;
}

test('nothing listening: stage connect, ECONNREFUSED, once per attempt, attempts counted', async (t) => {
  const got = [];
  transport(t, `ws://127.0.0.1:${await freePort()}/`, got);
  await waitFor('three attempts', () => got.length >= 3);
  assert.deepEqual(
    got.slice(0, 3).map((f) => [f.attempt, f.stage, f.code]),
    [
      [1, 'connect', 'ECONNREFUSED'],
      [2, 'connect', 'ECONNREFUSED'],
      [3, 'connect', 'ECONNREFUSED'],
    ],
  );
});

test('an HTTP answer to the upgrade: its status, the start of its body and Retry-After', async (t) => {
  const server = http.createServer((req, res) => {
    res.writeHead(req.url.includes('busy') ? 503 : 401, { 'retry-after': '7' });
    res.end(req.url.includes('big') ? 'x'.repeat(100_000) : 'expired: the ticket has expired\n');
  });
  const port = await listen(t, server);
  const got = [];
  transport(t, `ws://127.0.0.1:${port}/rooms/lab?ticket=t`, got);
  await waitFor('a report', () => got.length >= 1);
  assert.deepEqual(got[0], {
    attempt: 1,
    stage: 'upgrade',
    status: 401,
    body: 'expired: the ticket has expired\n',
    retryAfter: '7',
  });
  const big = [];
  transport(t, `ws://127.0.0.1:${port}/big`, big);
  await waitFor('a report', () => big.length >= 2);
  assert.equal(big[0].body.length, 2048, 'a huge body is cut, and the attempt still ends');
  assert.equal(big[1].attempt, 2, 'it reconnects as before');
});

test('a relay that closes before its welcome, and one that rejects our hello (then no more attempts)', async (t) => {
  const closer = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => closer.once('listening', r));
  t.after(() => closer.close());
  closer.on('connection', (ws) => ws.close(4009, 'cooling down'));
  const got = [];
  transport(t, `ws://127.0.0.1:${closer.address().port}/`, got);
  await waitFor('a report', () => got.length >= 1);
  assert.deepEqual(got[0], { attempt: 1, stage: 'closed', code: 4009, reason: 'cooling down' });

  const rejecter = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => rejecter.once('listening', r));
  t.after(() => rejecter.close());
  let hellos = 0;
  rejecter.on('connection', (ws) =>
    ws.on('message', () => {
      hellos++;
      ws.send(
        JSON.stringify({ t: 'reject', room: 'lab', reason: 'version_mismatch', expected: 9 }),
      );
      ws.close();
    }),
  );
  const rej = [];
  transport(t, `ws://127.0.0.1:${rejecter.address().port}/`, rej);
  await waitFor('a report', () => rej.length >= 1);
  assert.equal(rej[0].stage, 'rejected');
  assert.equal(rej[0].reason, 'version_mismatch');
  assert.match(rej[0].message, /rejected our hello \(version_mismatch, expected 9\)/);
  await new Promise((r) => setTimeout(r, 200)); // several reconnect periods (20-40 ms)
  assert.equal(rej.length, 1, 'one report: the close after a rejection is not a second one');
  assert.equal(hellos, 1, 'a rejected hello is not retried');
});
