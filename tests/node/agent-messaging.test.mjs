// `tether agent` end to end: real sidecar processes in a room on a real ws relay (127.0.0.1),
// driven through the real CLI. Sidecars are stopped by PID when a test ends, pass or fail.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { startRoomServer } from '../e2e/lib/room_server.mjs';
import { Harness, roomSecretOption, waitFor } from './lib/agent-harness.mjs';

async function room(t) {
  const server = await startRoomServer();
  t.after(() => server.close());
  return server;
}

const texts = (msgs) => msgs.map((m) => m.envelope.payload.text);

test("three sidecars: send, broadcast, read, peers and history (other peers' directs filtered)", async (t) => {
  const server = await room(t);
  const h = new Harness(t);
  const [A, B, C] = ['alice', 'bob', 'carol'].map((n) => h.dir(n));
  await h.join(A, 'alice', server.url);
  await h.join(B, 'bob', server.url);
  await h.join(C, 'carol', server.url);
  await waitFor('alice sees both with handoff-v1', async () => {
    const p = (await h.ok(A, ['peers'])).peers;
    return p.length === 2 && p.every((x) => x.open && x.skills.includes('handoff-v1'));
  });

  const s1 = await h.ok(A, ['send', 'bob', 'hello', 'bob']);
  assert.equal(s1.state, 'sent');
  const s2 = await h.ok(C, ['send', 'bob', 'carol', 'to', 'bob', 'privately']);
  const bc = await h.ok(C, ['broadcast', 'all', 'hands']);
  assert.deepEqual(bc.delivered.sort(), ['alice', 'bob']);
  await waitFor('bob has 3 messages', async () => (await h.ok(B, ['notify'])).unread === 3);

  const read = await h.ok(B, ['read']);
  assert.deepEqual(texts(read.messages), ['hello bob', 'carol to bob privately', 'all hands']);
  const [m1, m2, m3] = read.messages.map((m) => m.envelope);
  assert.equal(m1.id, s1.id);
  assert.equal(m1.from.streamId, 'alice');
  assert.equal(m1.to, 'bob');
  assert.equal(m2.id, s2.id);
  assert.equal(m3.to, null);
  assert.equal((await h.ok(B, ['read'])).messages.length, 0, 'read consumed them');
  assert.equal((await h.ok(B, ['notify'])).unread, 0);

  await waitFor('alice has the broadcast', async () => (await h.ok(A, ['notify'])).unread === 1);
  assert.deepEqual(texts((await h.ok(A, ['read'])).messages), ['all hands']);

  // Dave joins late and asks bob for history: the broadcast he missed arrives (into his inbox),
  // never the directs between other peers.
  const D = h.dir('dave');
  await h.join(D, 'dave', server.url);
  await waitFor('dave sees bob', async () =>
    (await h.ok(D, ['peers'])).peers.some((p) => p.id === 'bob' && p.open),
  );
  const hist = await h.ok(D, ['history', 'bob', '--count', '10']);
  assert.deepEqual(
    hist.replayed.map((m) => m.id),
    [bc.id],
    'only the broadcast',
  );
  const dr = (await h.ok(D, ['read'])).messages.map((m) => m.envelope);
  assert.deepEqual(
    dr.map((e) => [e.id, e.from.streamId, e.payload.text]),
    [[bc.id, 'carol', 'all hands']],
  );
  assert.equal((await h.run(A, ['history', 'bob', '--count', '201'])).code, 2);
  await h.ok(D, ['leave']);

  // A reply from bob reaches alice with bob's identity.
  await h.ok(B, [
    'send',
    'alice',
    're: hello',
    '--type',
    'command_response',
    '--payload-json',
    JSON.stringify({ requestId: s1.id, ok: true, result: null }),
  ]);
  await waitFor('alice has the reply', async () => (await h.ok(A, ['notify'])).unread === 1);
  const receipt = await h.ok(A, ['receipt', 'bob', s1.id]);
  assert.equal(receipt.receipts.length, 1);
  assert.equal(receipt.receipts[0].failed, false);
  assert.equal((await h.ok(A, ['notify'])).unread, 1, 'receipt consumes nothing');

  // Bob restarts and asks alice: her direct to him (it left from her disk outbox) is in her
  // history beside the broadcast she received; carol's direct to bob is not hers to replay.
  await h.ok(B, ['leave']);
  await h.join(B, 'bob', server.url);
  await waitFor('bob sees alice again', async () =>
    (await h.ok(B, ['peers'])).peers.some((p) => p.id === 'alice' && p.open),
  );
  const hb = await h.ok(B, ['history', 'alice', '--count', '10']);
  assert.deepEqual(
    hb.replayed.map((m) => [m.id, m.from.streamId]),
    [
      [s1.id, 'alice'],
      [bc.id, 'carol'],
    ],
  );

  for (const d of [A, B, C]) await h.ok(d, ['leave']);
});

test('an offline peer gets its queued directs in order after it joins; the outbox survives a sender restart with ids and identity', async (t) => {
  const server = await room(t);
  const h = new Harness(t);
  const A = h.dir('alice');
  const B = h.dir('bob');
  await h.join(A, 'alice', server.url);
  const instance1 = (await h.ok(A, ['status'])).instanceId;
  const sent = [];
  for (let i = 0; i < 5; i++) {
    const r = await h.ok(A, ['send', 'bob', `msg ${i}`]);
    assert.equal(r.state, 'queued');
    sent.push(r.id);
  }
  assert.deepEqual((await h.ok(A, ['notify'])).queuedBy, { bob: 5 });
  // Too big for any transport: refused up front (by the bus core, before an envelope is made),
  // never queued in front of the rest.
  const big = await h.run(A, ['send', 'bob', '-'], { json: false, input: 'x'.repeat(300_000) });
  assert.equal(big.code, 2);
  assert.match(
    big.stderr,
    /the text is 300000 bytes, and one message carries at most 262144 bytes of JSON in all: send less, or send it as a file or swarm transfer \(`tether agent swarm offer PATH`\)/,
  );
  // Under that alone but over the envelope's bound with the rest of the envelope: the core's
  // envelope check refuses it.
  const near = await h.run(A, ['send', 'bob', '-'], { json: false, input: 'x'.repeat(262_100) });
  assert.equal(near.code, 2);
  assert.match(
    near.stderr,
    /too_large: the envelope is \d+ bytes; the limit is 262144 \(send large data as a file or swarm transfer\)/,
  );
  assert.equal((await h.ok(A, ['notify'])).queued, 5);
  // One sidecar per state dir; its identity is fixed.
  assert.equal((await h.ok(A, ['join'])).already, true);
  const other = await h.run(A, ['join', '--id', 'mallory'], { json: false });
  assert.equal(other.code, 2);
  assert.match(other.stderr, /holds the state of 'alice', not 'mallory'; use another --dir/);
  const moved = await h.run(A, ['join', '--room', 'elsewhere'], { json: false });
  assert.match(moved.stderr, /already runs for .*; run `tether agent leave --dir/);

  // The sender crashes and restarts: the outbox is still there, same ids.
  await h.crash(A);
  await h.join(A, 'alice', server.url);
  const instance2 = (await h.ok(A, ['status'])).instanceId;
  assert.notEqual(instance1, instance2, 'a new process has a new instance id');
  assert.equal((await h.ok(A, ['notify'])).queued, 5);
  sent.push((await h.ok(A, ['send', 'bob', 'msg 5'])).id);

  await h.join(B, 'bob', server.url);
  await waitFor('alice flushed', async () => (await h.ok(A, ['notify'])).queued === 0);
  await waitFor('bob has all six', async () => (await h.ok(B, ['notify'])).unread === 6);
  const got = (await h.ok(B, ['read'])).messages.map((m) => m.envelope);
  assert.deepEqual(
    got.map((e) => e.id),
    sent,
    'in order, with the ids given at send time',
  );
  assert.deepEqual(
    got.map((e) => e.payload.text),
    ['msg 0', 'msg 1', 'msg 2', 'msg 3', 'msg 4', 'msg 5'],
  );
  assert.deepEqual(
    got.map((e) => e.from.instanceId),
    [...Array(5).fill(instance1), instance2],
    'sender identity as it was when queued',
  );
  assert.ok(got.every((e) => e.from.streamId === 'alice'));

  // Bob restarts: his inbox keeps the ids and identities too (peek, then restart, then read).
  await h.ok(A, ['send', 'bob', 'after']);
  await waitFor('bob has it', async () => (await h.ok(B, ['notify'])).unread === 1);
  const peeked = (await h.ok(B, ['read', '--peek'])).messages[0].envelope;
  await h.crash(B);
  await h.join(B, 'bob', server.url);
  const again = (await h.ok(B, ['read'])).messages.map((m) => m.envelope);
  assert.deepEqual(again, [peeked]);
});

test('a handoff survives the receiver restarting and is stored exactly once; an unanswered one expires on time', async (t) => {
  const server = await room(t);
  const h = new Harness(t);
  const A = h.dir('alice');
  const B = h.dir('bob');
  const C = h.dir('carol');
  await h.join(A, 'alice', server.url);
  // Bob stores handoffs but (test switch) never acks them, so alice's bus keeps retrying the envelope.
  const noAcks = { env: { TETHER_AGENT_TEST_DROP_HANDOFF_ACKS: '1' } };
  await h.join(B, 'bob', server.url, [], noAcks);
  const announced = (d, id) => async () =>
    (await h.ok(d, ['peers'])).peers.some(
      (p) => p.id === id && p.open && p.skills.includes('handoff-v1'),
    );
  await waitFor('bob announced handoff-v1', announced(A, 'bob'));
  const ho = await h.ok(A, ['handoff', 'bob', 'review', 'PR', '42', '--expires-in', '10m']);
  await waitFor('bob stored it', async () => (await h.ok(B, ['notify'])).unreadHandoffs === 1);
  await waitFor('alice retried', async () => (await h.ok(A, ['handoffs'])).handoffs[0].sends >= 2, {
    timeoutMs: 60_000,
  });
  assert.equal((await h.ok(A, ['handoffs'])).handoffs[0].state, 'pending');
  assert.equal((await h.ok(B, ['notify'])).unread, 1, 'retries are deduplicated');

  // Bob reads it (it moves to the archive), crashes, and comes back acking.
  const r1 = await h.ok(B, ['read']);
  assert.equal(r1.messages.length, 1);
  assert.equal(r1.messages[0].envelope.id, ho.id);
  assert.equal(r1.messages[0].envelope.payload.request, 'review PR 42');
  await h.crash(B);
  await h.join(B, 'bob', server.url);
  await waitFor(
    'alice has the stored receipt',
    async () => (await h.ok(A, ['handoffs'])).handoffs[0].state === 'stored',
    { timeoutMs: 90_000 },
  );
  const rec = await h.ok(A, ['receipt', 'bob', ho.id]);
  assert.equal(rec.receipts.find((r) => r.type === 'handoff').state, 'stored');
  assert.equal(
    (await h.ok(B, ['notify'])).unread,
    0,
    'not stored a second time after read + restart',
  );
  assert.equal(fs.readdirSync(path.join(B, 'archive')).length, 1);
  assert.equal(fs.readdirSync(path.join(B, 'handoffs', 'received')).length, 1);

  // No current handoff-v1 announcement (never joined, or a plain room peer): refused, naming why.
  const ghost = await h.run(A, ['handoff', 'ghost', 'never', 'done'], { json: false });
  assert.equal(ghost.code, 2);
  assert.match(ghost.stderr, /'ghost' has no current handoff-v1 announcement/);

  // Carol stores it, never acks, and never comes back: the handoff expires at its expiresAt.
  await h.join(C, 'carol', server.url, [], noAcks);
  await waitFor('carol announced handoff-v1', announced(A, 'carol'));
  const lost = await h.ok(A, ['handoff', 'carol', 'lost', 'work', '--expires-in', '3s']);
  await waitFor('carol stored it', async () => (await h.ok(C, ['notify'])).unreadHandoffs === 1);
  await h.crash(C);
  await waitFor(
    'expired',
    async () =>
      (await h.ok(A, ['handoffs'])).handoffs.find((x) => x.id === lost.id).state === 'expired',
  );
  const g = (await h.ok(A, ['handoffs'])).handoffs.find((x) => x.id === lost.id);
  assert.equal(g.expiresAt, lost.expiresAt);
  assert.ok(g.expiredAt >= g.expiresAt, 'not before its time');
  const n = await h.ok(A, ['notify']);
  assert.deepEqual(n.handoffs, { pending: 0, stored: 1, expired: 1 });
});

test('hostile input over the relay (not JSON, bad envelopes, a forged identity, a bad handoff) is refused; the room keeps working', async (t) => {
  const server = await room(t);
  const h = new Harness(t);
  const B = h.dir('bob');
  await h.join(B, 'bob', server.url);
  const { default: WebSocket } = await import('ws');
  const { createRelayTransport } = await import('../../web/peer/relay-transport.js');
  const m = createRelayTransport({
    url: `${server.url}?writer=mallory`,
    room: 'lab',
    selfId: 'mallory',
    WebSocket,
    ...roomSecretOption(), // a hostile member that holds the secret: the bus still refuses
  });
  t.after(() => m.close());
  await m.ready;
  await waitFor('bob open to mallory', () => m.openPeers().includes('bob'));
  const env = (over) =>
    JSON.stringify({
      v: 1,
      id: `id-${Math.random()}`,
      type: 'chat',
      from: { streamId: 'mallory', role: 'agent', name: 'M', instanceId: 'i1' },
      to: 'bob',
      topic: null,
      ts: Date.now(),
      payload: { text: 'hi' },
      ...over,
    });
  const hostile = [
    'not json',
    '[]',
    env({ v: 2 }),
    env({ id: 'x'.repeat(129) }),
    env({ from: { streamId: 'alice', role: 'agent', name: 'A', instanceId: 'i1' } }), // forged identity
    env({ to: 'carol' }),
    env({ ts: 'soon' }),
    env({ type: 'handoff', payload: { request: 'x', expiresAt: Date.now() + 2 * 86_400_000 } }), // over 24 h
    env({ type: 'handoff', topic: 't', payload: { request: 'x', expiresAt: Date.now() + 1000 } }),
  ];
  for (const text of hostile) assert.equal(m.send('bob', text), true);
  assert.equal(m.send('bob', env({ payload: { text: 'the honest one' } })), true);
  await waitFor(
    'bob stored the honest message',
    async () => (await h.ok(B, ['notify'])).unread === 1,
  );
  const st = await h.ok(B, ['status']);
  assert.equal(st.hostile, hostile.length);
  assert.ok(st.connected);
  const got = (await h.ok(B, ['read'])).messages;
  assert.deepEqual(
    got.map((x) => [x.envelope.from.streamId, x.envelope.payload.text]),
    [['mallory', 'the honest one']],
  );
});
