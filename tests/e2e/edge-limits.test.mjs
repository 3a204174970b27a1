// Abuse limits of the edge relay under real workerd (Miniflare): each limit answers with its
// documented close code (web/edge/limits.js) before the relay core parses anything, and the room
// keeps serving everyone else. Small limits, so the floods stay small.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { CLOSE } from '../../web/edge/limits.js';
import { Peer, startEdge, ticketFor, until, upgradeAnswer } from './lib/edge.mjs';

let edge;
before(async () => {
  edge = await startEdge({
    bindings: {
      ROOM_LIMITS: JSON.stringify({
        maxFrameBytes: 4096,
        connectionMessagesPerSecond: 5,
        connectionBurst: 20,
        principalMessagesPerSecond: 5,
        principalBurst: 30,
        cooldownMs: 60_000,
        maxConnectionsPerRoom: 4,
      }),
    },
  });
});
after(async () => {
  await edge?.stop();
});

async function bystander(room) {
  const p = new Peer(edge.wsUrl, room, { writer: `bystander-${room}` });
  await until(() => p.client.welcomed, 'bystander welcome');
  return p;
}
async function stillServes(p, n) {
  p.write([{ kind: 'set', path: ['still'], next: n }]);
  await until(() => p.client.unacked === 0, 'the bystander is still served');
  assert.equal(p.closed, null);
}

test(
  'edge: an oversize frame closes 1009 before parsing; a binary frame 1003',
  { timeout: 30_000 },
  async () => {
    const room = 'oversize';
    const by = await bystander(room);
    const big = new Peer(edge.wsUrl, room, { writer: 'big' });
    await until(() => big.client.welcomed, 'welcome');
    // Not even JSON: the size check must answer before anything parses it.
    big.send('x'.repeat(5000));
    await until(() => big.closed, 'close');
    assert.deepEqual(
      [big.closed.code, big.closed.reason],
      [CLOSE.TOO_BIG, 'frame larger than 4096 bytes; split the write'],
    );
    // Multi-byte text under the limit in UTF-16 units but over it in UTF-8 bytes.
    const wide = new Peer(edge.wsUrl, room, { writer: 'wide' });
    await until(() => wide.client.welcomed, 'welcome');
    wide.send('€'.repeat(1500)); // 1500 units, 4500 bytes
    await until(() => wide.closed, 'close');
    assert.equal(wide.closed.code, CLOSE.TOO_BIG);
    const bin = new Peer(edge.wsUrl, room, { writer: 'bin' });
    await until(() => bin.client.welcomed, 'welcome');
    bin.ws.send(Buffer.from([1, 2, 3]));
    await until(() => bin.closed, 'close');
    assert.equal(bin.closed.code, CLOSE.BINARY);
    await stillServes(by, 1);
    await by.close();
  },
);

test('edge: a message flood closes 4008; a garbage frame 1007', { timeout: 30_000 }, async () => {
  const room = 'flood';
  const by = await bystander(room);
  const flood = new Peer(edge.wsUrl, room, { writer: 'flood' });
  await until(() => flood.client.welcomed, 'welcome');
  const presence = JSON.stringify({ t: 'presence', room, data: { cursor: 1 } });
  for (let i = 0; i < 60; i++) flood.send(presence);
  await until(() => flood.closed, 'close');
  assert.equal(flood.closed.code, CLOSE.RATE);
  assert.match(flood.closed.reason, /more than 5 messages\/s on one connection/);
  const junk = new Peer(edge.wsUrl, room, { writer: 'junk' });
  await until(() => junk.client.welcomed, 'welcome');
  junk.send('{"t":"env",');
  await until(() => junk.closed, 'close');
  assert.equal(junk.closed.code, CLOSE.INVALID);
  assert.match(junk.closed.reason, /^unparseable: /);
  await stillServes(by, 2);
  await by.close();
});

test(
  'edge: a principal budget outlives reconnects: 4009, then HTTP 429 while cooling down',
  { timeout: 30_000 },
  async () => {
    const room = 'budget';
    const by = await bystander(room);
    // Each connection stays under its own rate (20 burst), but together they spend the writer's 30.
    const closes = [];
    for (let round = 0; round < 3 && closes.every((c) => c !== CLOSE.BUDGET); round++) {
      const p = new Peer(edge.wsUrl, room, { writer: 'greedy' });
      await until(() => p.client.welcomed || p.closed, 'welcome');
      for (let i = 0; i < 15; i++) p.send(JSON.stringify({ t: 'presence', room, data: i }));
      await new Promise((r) => setTimeout(r, 200));
      await until(() => p.closed || p.messages.length > 0, 'answers');
      closes.push(p.closed?.code ?? null);
      await p.close();
    }
    assert.ok(closes.includes(CLOSE.BUDGET), `closes: ${closes}`);
    // Reconnecting does not refill it: the next upgrade is refused with 429 and Retry-After.
    const t = await ticketFor(room, 'greedy');
    const res = await upgradeAnswer(`${edge.url}/rooms/${room}?ticket=${encodeURIComponent(t)}`);
    assert.equal(res.status, 429);
    assert.ok(Number(res.headers['retry-after']) > 0);
    assert.match(res.body, /spent its message budget/);
    await stillServes(by, 3);
    await by.close();
  },
);

test(
  'edge: a full room answers 503 to the next connection; the members keep working',
  { timeout: 30_000 },
  async () => {
    const room = 'full';
    const members = [];
    for (let i = 0; i < 4; i++) {
      const p = new Peer(edge.wsUrl, room, { writer: `m${i}` });
      await until(() => p.client.welcomed, 'welcome');
      members.push(p);
    }
    const extra = new Peer(edge.wsUrl, room, { writer: 'extra' });
    await until(() => extra.closed, 'refused');
    assert.equal(extra.httpStatus, 503);
    assert.match(extra.httpBody, /maximum of 4 connections/);
    await stillServes(members[0], 4);
    await members[3].close();
    // A freed slot admits again.
    const later = await until(async () => {
      const p = new Peer(edge.wsUrl, room, { writer: 'extra' });
      await until(() => p.closed || p.client.welcomed, 'admission');
      return p.client.welcomed ? p : null;
    }, 'a free slot');
    for (const p of [...members.slice(0, 3), later]) await p.close();
  },
);

test(
  'edge: a hostile envelope is ejected (1008) and the room serves on',
  { timeout: 30_000 },
  async () => {
    const room = 'hostile';
    const by = await bystander(room);
    by.write([{ kind: 'set', path: [], next: { safe: true } }]);
    await until(() => by.client.unacked === 0, 'seed');
    const h = new Peer(edge.wsUrl, room, { writer: 'hostile' });
    await until(() => h.client.welcomed, 'welcome');
    const msg = JSON.parse(h.client.write([{ kind: 'set', path: ['x'], next: 1 }]));
    msg.env.ops = 'not a list';
    h.send(JSON.stringify(msg));
    await until(() => h.closed, 'ejected');
    assert.equal(h.closed.code, CLOSE.EJECTED);
    const eject = h.messages.find((m) => m.t === 'eject');
    assert.deepEqual(
      [eject?.writer, eject?.reason],
      ['hostile', 'malformed'],
      JSON.stringify(h.messages),
    );
    await stillServes(by, 5);
    assert.equal(by.client.value().safe, true);
    await by.close();
  },
);

test(
  'edge: the upgrade path refuses plain HTTP and unknown paths',
  { timeout: 30_000 },
  async () => {
    const t = await ticketFor('plain', 'p');
    assert.equal((await fetch(`${edge.url}/rooms/plain?ticket=${t}`)).status, 426);
    assert.equal((await fetch(`${edge.url}/elsewhere`)).status, 404);
    const ws = new WebSocket(`${edge.wsUrl}/nope`);
    const status = await new Promise((r) => {
      ws.on('unexpected-response', (req, res) => r(res.statusCode));
      ws.on('error', () => {});
    });
    assert.equal(status, 404);
  },
);
