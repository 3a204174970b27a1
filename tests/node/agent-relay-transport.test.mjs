// The explicit relay transport (web/peer/relay-transport.js) against a real ws room relay on
// 127.0.0.1 (tests/e2e/lib/room_server.mjs over tether/relay): roster, open/close, ordered text
// both ways, refusals that leave the caller owning the message, foreign signals ignored,
// reconnect after a signaling outage, and a restarted peer's lane reset.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import WebSocket from 'ws';
import { startRoomServer } from '../e2e/lib/room_server.mjs';
import { createRelayTransport } from '../../web/peer/relay-transport.js';
import { waitFor } from './lib/agent-harness.mjs';

function peer(server, id, extra = {}) {
  const t = createRelayTransport({
    url: `${server.url}?writer=${id}&kind=agent`,
    room: 'lab',
    selfId: id,
    WebSocket,
    reconnectMinMs: 20,
    reconnectMaxMs: 200,
    ...extra,
  });
  const log = { open: [], close: [], text: [], roster: [], reconnect: 0 };
  t.subscribe({
    open: (p) => log.open.push(p),
    close: (p) => log.close.push(p),
    text: (p, s) => log.text.push([p, s]),
    roster: (r) => log.roster.push([...r].sort()),
    reconnect: () => log.reconnect++,
  });
  return { t, log };
}

test('relay transport: roster, ordered text both ways, refusals, foreign signals, outage and restart', async (t) => {
  const server = await startRoomServer();
  const transports = [];
  t.after(async () => {
    for (const x of transports) await x.close();
    await server.close();
  });
  const a = peer(server, 'alice');
  transports.push(a.t);
  await a.t.ready;
  assert.deepEqual(a.t.openPeers(), []);
  assert.equal(a.t.send('bob', 'x'), false, 'no such member: not accepted');

  const b = peer(server, 'bob');
  transports.push(b.t);
  await b.t.ready;
  await waitFor('alice to see bob', () => a.log.open.includes('bob'));
  assert.deepEqual(b.t.openPeers(), ['alice']);
  assert.deepEqual(a.log.roster.at(-1), ['bob']);
  assert.equal(a.t.hasBinary('bob'), false);
  assert.equal(a.t.sendBinary('bob', new Uint8Array(4)), false);

  // 200 messages each way arrive complete and in order, with the sender's origin.
  for (let i = 0; i < 200; i++) {
    assert.equal(a.t.send('bob', JSON.stringify({ n: i, s: 'é"\\\n' })), true);
    assert.equal(b.t.send('alice', `b${i}`), true);
  }
  await waitFor(
    '200 messages each way',
    () => b.log.text.length === 200 && a.log.text.length === 200,
  );
  assert.deepEqual(
    b.log.text.map(([p, s]) => [p, JSON.parse(s).n]),
    Array.from({ length: 200 }, (_, i) => ['alice', i]),
  );
  assert.equal(JSON.parse(b.log.text[0][1]).s, 'é"\\\n');
  assert.deepEqual(
    a.log.text.map(([, s]) => s),
    Array.from({ length: 200 }, (_, i) => `b${i}`),
  );

  // Over the message bound, or over the frame bound once escaped: refused, not truncated.
  assert.equal(a.t.send('bob', 'x'.repeat(256 * 1024 + 1)), false);
  const small = peer(server, 'carol', { maxFrameBytes: 200 });
  transports.push(small.t);
  await small.t.ready;
  assert.equal(
    small.t.send('alice', '"'.repeat(90)),
    false,
    '90 quotes escape to 180 bytes plus the frame',
  );
  assert.equal(small.t.send('alice', 'ok'), true);
  await waitFor('carol text', () => a.log.text.some(([p, s]) => p === 'carol' && s === 'ok'));
  await small.t.close();
  await waitFor('carol gone', () => a.log.close.includes('carol'));
  assert.deepEqual(a.log.roster.at(-1), ['bob']);

  // Somebody else's signaling (a WebRTC offer) and hostile shapes are ignored, not delivered.
  const raw = new WebSocket(`${server.url}?writer=mallory`);
  await new Promise((r) => raw.once('open', r));
  raw.send(
    JSON.stringify({ t: 'hello', room: 'lab', origin: 'mallory', proto: 3, policyVersion: 1 }),
  );
  await waitFor('mallory joined', () => b.t.roster().includes('mallory'));
  const before = b.log.text.length;
  raw.send(
    JSON.stringify({ t: 'signal', room: 'lab', to: 'bob', data: { type: 'offer', sdp: 'v=0' } }),
  );
  raw.send(
    JSON.stringify({ t: 'signal', room: 'lab', to: 'bob', data: { k: 'tether-env', text: 42 } }),
  );
  raw.send(
    JSON.stringify({
      t: 'signal',
      room: 'lab',
      to: 'bob',
      data: { k: 'tether-env', text: 'from mallory' },
    }),
  );
  await waitFor('mallory text', () => b.log.text.length > before);
  assert.deepEqual(b.log.text.slice(before), [['mallory', 'from mallory']]);
  assert.equal(b.t.stats.ignored, 2);
  raw.close();
  await waitFor('mallory gone', () => !b.t.roster().includes('mallory'));

  // A signaling outage: both sides see close, then the transport reconnects on its own.
  const opensBefore = a.log.open.length;
  let duringOutage = null;
  const off = a.t.subscribe({
    close: (p) =>
      p === 'bob' && duringOutage === null && (duringOutage = a.t.send('bob', 'during outage')),
  });
  server.dropAll();
  await waitFor('close on outage', () => a.log.close.includes('bob'));
  off();
  assert.equal(duringOutage, false, 'nothing accepted while the link is down');
  await waitFor(
    'both reconnected',
    () =>
      a.log.reconnect >= 1 &&
      b.log.reconnect >= 1 &&
      a.t.openPeers().includes('bob') &&
      b.t.openPeers().includes('alice'),
  );
  assert.ok(a.log.open.length > opensBefore);
  assert.equal(a.t.send('bob', 'after outage'), true);
  await waitFor('text after reconnect', () => b.log.text.some(([, s]) => s === 'after outage'));
  assert.ok(!b.log.text.some(([, s]) => s === 'during outage'));

  // A peer restarts under the same origin while its old socket lingers: the relay displaces the
  // old socket without a `gone`, and alice sees that lane reset (close, then open again).
  const old = new WebSocket(`${server.url}?writer=dave`);
  await new Promise((r) => old.once('open', r));
  old.send(JSON.stringify({ t: 'hello', room: 'lab', origin: 'dave', proto: 3, policyVersion: 1 }));
  await waitFor('old dave joined', () => a.log.open.includes('dave'));
  const oldClosed = new Promise((r) => old.once('close', r));
  const dave = peer(server, 'dave');
  transports.push(dave.t);
  await dave.t.ready;
  await oldClosed;
  await waitFor('alice reset dave', () => a.log.open.filter((p) => p === 'dave').length === 2);
  assert.equal(a.log.close.filter((p) => p === 'dave').length, 1);
  assert.equal(a.t.send('dave', 'hello again'), true);
  await waitFor('new dave gets text', () =>
    dave.log.text.some(([p, s]) => p === 'alice' && s === 'hello again'),
  );

  await a.t.close();
  assert.equal(a.t.send('bob', 'closed'), false);
  assert.deepEqual(a.t.openPeers(), []);
});

test('relay transport: options are validated with the fix named', () => {
  assert.throws(
    () => createRelayTransport({ url: 'http://x', room: 'r', selfId: 'a', WebSocket }),
    /ws:\/\/ or wss:\/\//,
  );
  assert.throws(
    () => createRelayTransport({ url: 'ws://127.0.0.1:1/', room: 'r', selfId: '', WebSocket }),
    /selfId/,
  );
  assert.throws(
    () =>
      createRelayTransport({
        url: 'ws://127.0.0.1:1/',
        room: 'r',
        selfId: 'x'.repeat(129),
        WebSocket,
      }),
    /at most 128 bytes/,
  );
  assert.throws(
    () =>
      createRelayTransport({
        url: 'ws://127.0.0.1:1/',
        room: 'r',
        selfId: 'a',
        WebSocket,
        reconnectMinMs: 0,
      }),
    /reconnectMinMs/,
  );
});

test('relay transport: tsc type-checks a consumer of relay-transport.d.ts', async () => {
  const { spawnSync } = await import('node:child_process');
  const root = new URL('../../', import.meta.url).pathname;
  const r = spawnSync(
    process.execPath,
    [
      `${root}node_modules/.bin/tsc`,
      '--noEmit',
      '-p',
      'tests/node/tsconfig.relay-transport-types.json',
    ],
    { cwd: root, encoding: 'utf8' },
  );
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
});

test('relay transport: a refused hello rejects `ready` naming the fix, and it stops reconnecting', async (t) => {
  const server = await startRoomServer();
  t.after(() => server.close());
  const errors = [];
  const x = createRelayTransport({
    url: server.url,
    room: 'lab',
    selfId: 'old',
    WebSocket,
    policyVersion: 7, // the relay runs policy version 1
    reconnectMinMs: 5,
    onError: (e) => errors.push(e.message),
  });
  t.after(() => x.close());
  await assert.rejects(
    x.ready,
    /rejected our hello \(policy-version, expected 1\); check the policyVersion option/,
  );
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(errors.length, 1, 'one refusal, no retry loop');
  assert.equal(x.isConnected(), false);
});

// docs/rooms.md § Policy and the tripwire: with ejection 'writer' (createRelay's default) the
// relay sends the eject to the whole room. A transport that knows its writer hears only of its own.
test('relay transport: another writer ejected under ejection "writer" is not our error', async (t) => {
  const server = await startRoomServer();
  const errors = [];
  const a = peer(server, 'alice', { writer: 'alice', onError: (e) => errors.push(e.message) });
  t.after(async () => {
    await a.t.close();
    await server.close();
  });
  await a.t.ready;
  // mallory sends a malformed envelope: a tripwire, and the relay bans its writer.
  const mallory = new WebSocket(`${server.url}?writer=mallory&kind=agent`);
  const seen = [];
  mallory.on('message', (d) => seen.push(JSON.parse(String(d))));
  await new Promise((r) => mallory.once('open', r));
  mallory.send(
    JSON.stringify({ t: 'hello', room: 'lab', origin: 'm1', proto: 3, policyVersion: 1 }),
  );
  await waitFor('mallory welcomed', () => seen.some((m) => m.t === 'welcome'));
  await waitFor('alice sees mallory', () => a.log.roster.at(-1)?.includes('m1'));
  mallory.send(JSON.stringify({ t: 'env', room: 'lab', env: { proto: 3, policyVersion: 1 } }));
  await waitFor('mallory ejected', () => seen.some((m) => m.t === 'eject'));
  await waitFor('alice sees mallory go', () => !a.log.roster.at(-1)?.includes('m1'));
  assert.deepEqual(errors, [], 'the eject named mallory, not us');
  assert.equal(a.t.isConnected(), true);
  assert.equal(a.t.stats.ignored, 1, 'counted as an eject that was not ours');
});
