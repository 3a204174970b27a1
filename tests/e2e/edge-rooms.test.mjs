// The edge relay under real workerd (Miniflare): rooms converge, late joiners get a snapshot,
// reconnecting clients a delta, identity comes only from a signed ticket (401 before any
// WebSocket), and a hostile envelope is ejected while the room keeps serving everyone else.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { mintTicket, verifyTicket } from '../../web/edge/tickets.js';
import { Peer, SECRET, startEdge, ticketFor, until, upgradeAnswer } from './lib/edge.mjs';

let edge;
before(async () => {
  edge = await startEdge();
});
after(async () => {
  await edge?.stop();
});

const allAcked = (peers) => peers.every((p) => p.client.unacked === 0 && p.client.welcomed);
const same = (peers) => new Set(peers.map((p) => JSON.stringify(p.client.value()))).size === 1;

test(
  'edge: concurrent writers converge; a late joiner gets a snapshot, a reconnect a delta',
  { timeout: 60_000 },
  async () => {
    const room = 'converge';
    const peers = [0, 1, 2, 3].map((i) => new Peer(edge.wsUrl, room, { writer: `w${i}` }));
    await Promise.all(peers.map((p) => p.ready));
    await until(() => peers.every((p) => p.client.welcomed), 'welcomes');
    assert.ok(peers[0].write([{ kind: 'set', path: [], next: { title: 'doc', k: {} } }]));
    await until(() => allAcked(peers) && same(peers), 'the seed');
    for (let n = 0; n < 40; n++)
      peers[n % 4].write([{ kind: 'set', path: ['k', `n${n % 6}`], next: n }]);
    await until(() => allAcked(peers) && same(peers), 'convergence');
    const value = peers[0].client.value();
    assert.equal(value.title, 'doc');
    assert.deepEqual(Object.keys(value.k).sort(), ['n0', 'n1', 'n2', 'n3', 'n4', 'n5']);
    assert.equal((await edge.hook('info', room)).seq, 41);

    // A late joiner: the journal tail (1000) covers it, but a fresh client has seq 0, so the
    // relay answers with a snapshot.
    const late = new Peer(edge.wsUrl, room, { writer: 'late' });
    await until(() => late.client.welcomed, 'late welcome');
    assert.deepEqual(late.welcomes, ['snapshot']);
    assert.deepEqual(late.client.value(), value);

    // A reconnect with the same client (it keeps its seq and instance): delta.
    await peers[1].close();
    peers[0].write([{ kind: 'set', path: ['k', 'after'], next: 'x' }]);
    await until(() => peers[0].client.unacked === 0, 'the write while away');
    const back = new Peer(edge.wsUrl, room, { writer: 'w1', client: peers[1].client });
    await until(() => back.welcomes.length === 1 && same([back, peers[0]]), 'the reconnect');
    assert.deepEqual(back.welcomes, ['delta']);
    const delta = back.messages.find((m) => m.t === 'welcome');
    assert.deepEqual(
      delta.envs.map((e) => e.seq),
      [42],
    );
    for (const p of [...peers, late, back]) await p.close();
  },
);

test(
  'edge: a bad, expired, foreign-room or missing ticket gets HTTP 401 before any WebSocket',
  { timeout: 30_000 },
  async () => {
    const room = 'tickets';
    const good = await ticketFor(room, 'alice');
    const tampered = good.slice(0, -2) + (good.endsWith('AA') ? 'BA' : 'AA');
    const expired = await mintTicket(SECRET, {
      room,
      writer: 'alice',
      ttlSeconds: 1,
      nowMs: Date.now() - 10_000,
    });
    const otherRoom = await ticketFor('elsewhere', 'alice');
    const otherSecret = await mintTicket('x'.repeat(40), { room, writer: 'alice' });
    const cases = { tampered, expired, otherRoom, otherSecret, empty: '', junk: 'not-a-ticket' };
    for (const [name, ticket] of Object.entries(cases)) {
      const res = await upgradeAnswer(
        `${edge.url}/rooms/${room}?ticket=${encodeURIComponent(ticket)}`,
      );
      assert.equal(res.status, 401, name);
      const body = res.body;
      assert.match(body, /^(signature|expired|room|missing|malformed): /, `${name}: ${body}`);
    }
    // Through a real WebSocket client too: the upgrade is refused, no socket opens.
    const p = new Peer(edge.wsUrl, room, { writer: 'alice', ticket: tampered });
    await p.ready;
    await until(() => p.closed, 'refusal');
    assert.equal(p.httpStatus, 401);
    // The same room still serves a good ticket.
    const ok = new Peer(edge.wsUrl, room, { writer: 'alice', ticket: good });
    await until(() => ok.client.welcomed, 'welcome with a good ticket');
    await ok.close();
    // The helper's own checks.
    assert.deepEqual(
      await verifyTicket(SECRET, good, { room }).then((v) => [v.ok, v.writer, v.kind]),
      [true, 'alice', 'human'],
    );
    await assert.rejects(mintTicket('short', { room, writer: 'a' }), /at least 32 characters/);
    await assert.rejects(
      mintTicket(SECRET, { room, writer: 'a', kind: 'robot' }),
      /kind must be one of/,
    );
  },
);

test(
  'edge: writer comes from the ticket, a connection cannot name another room',
  { timeout: 30_000 },
  async () => {
    const room = 'identity';
    const honest = new Peer(edge.wsUrl, room, { writer: 'bob' });
    await until(() => honest.client.welcomed, 'welcome');
    // A client that claims another writer in its envelope is a writer-mismatch: ejected.
    const liar = new Peer(edge.wsUrl, room, { writer: 'mallory' });
    await until(() => liar.client.welcomed, 'liar welcome');
    const env = JSON.parse(liar.client.write([{ kind: 'set', path: ['x'], next: 1 }]));
    env.env.writer = 'bob';
    liar.send(JSON.stringify(env));
    await until(() => liar.closed, 'liar ejected');
    assert.equal(liar.closed.code, 1008);
    assert.ok(
      liar.messages.some((m) => m.t === 'eject' && m.reason === 'writer-mismatch'),
      JSON.stringify(liar.messages),
    );
    // A connection bound by its ticket to `identity` naming another room: closed 1007, other-room.
    const sneaky = new Peer(edge.wsUrl, room, { writer: 'sam' });
    await until(() => sneaky.client.welcomed, 'sneaky welcome');
    sneaky.send(
      JSON.stringify({ t: 'hello', room: 'converge', origin: 'sam', proto: 3, policyVersion: 1 }),
    );
    await until(() => sneaky.closed, 'sneaky closed');
    assert.equal(sneaky.closed.code, 1007);
    assert.match(sneaky.closed.reason, /^other-room/);
    assert.ok(!sneaky.messages.some((m) => m.room === 'converge'));
    // bob was never disturbed.
    assert.ok(honest.write([{ kind: 'set', path: [], next: { ok: true } }]));
    await until(() => honest.client.unacked === 0, 'bob writes on');
    await honest.close();
  },
);

test(
  'edge: an agent may seed an empty room but not replace its root afterwards (default policy)',
  { timeout: 30_000 },
  async () => {
    const room = 'agents';
    const agent = new Peer(edge.wsUrl, room, { writer: 'bot', kind: 'agent' });
    const human = new Peer(edge.wsUrl, room, { writer: 'hana' });
    await until(() => agent.client.welcomed && human.client.welcomed, 'welcomes');
    agent.write([{ kind: 'set', path: [], next: { plan: 'seeded by the agent' } }]);
    await until(() => agent.client.unacked === 0 && human.client.value()?.plan, 'the seed');
    agent.write([{ kind: 'set', path: ['notes'], next: 'leaf writes are fine' }]);
    await until(() => agent.client.unacked === 0, 'leaf write');
    agent.write([{ kind: 'set', path: [], next: { flattened: true } }]);
    await until(() => agent.closed, 'agent ejected');
    assert.equal(agent.closed.code, 1008);
    assert.ok(agent.messages.some((m) => m.t === 'eject' && m.reason === 'can-write'));
    // The room keeps serving: the human still writes, and the root was not replaced.
    human.write([{ kind: 'set', path: ['done'], next: true }]);
    await until(() => human.client.unacked === 0, 'human write');
    assert.deepEqual(human.client.value(), {
      plan: 'seeded by the agent',
      notes: 'leaf writes are fine',
      done: true,
    });
    await human.close();
  },
);

test(
  'edge: ROOM_POLICY rules from configuration gate writes by principal kind',
  { timeout: 60_000 },
  async () => {
    const policy = {
      rules: [
        { prefix: ['notes'], allow: ['human', 'agent'] },
        { prefix: ['plan'], allow: ['human'] },
      ],
      agentRoot: 'never',
    };
    const own = await startEdge({ bindings: { ROOM_POLICY: JSON.stringify(policy) } });
    try {
      const room = 'configured';
      const human = new Peer(own.wsUrl, room, { writer: 'hana' });
      const agent = new Peer(own.wsUrl, room, { writer: 'bot', kind: 'agent' });
      await until(() => human.client.welcomed && agent.client.welcomed, 'welcomes');
      human.write([{ kind: 'set', path: ['plan'], next: 'human plan' }]);
      agent.write([{ kind: 'set', path: ['notes'], next: 'agent note' }]);
      await until(() => human.client.unacked === 0 && agent.client.unacked === 0, 'allowed writes');
      agent.write([{ kind: 'set', path: ['plan'], next: 'agent plan' }]);
      await until(() => agent.closed, 'agent ejected');
      assert.equal(agent.closed.code, 1008);
      assert.ok(agent.messages.some((m) => m.t === 'eject' && m.reason === 'can-write'));
      await until(() => human.client.value()?.notes === 'agent note', 'human sees the note');
      assert.deepEqual(human.client.value(), { plan: 'human plan', notes: 'agent note' });
      await human.close();
    } finally {
      await own.stop();
    }
  },
);
