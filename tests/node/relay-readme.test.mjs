// The reference's README recipes run unchanged against tether/relay (the room-relay spec:
// the ws adapter, pathPrefixAcl, the root rule, onCommit with checkpoints, hydrate), the JSON-text
// fast path agrees with the object API, and every place where we deliberately differ from the
// reference package is pinned here by name.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as reference from '@mmstack/mesh-protocol';
import { WebSocket, WebSocketServer } from 'ws';

import { createRelay, pathPrefixAcl } from '@tether-rt/tether/relay';

const hello = (room, origin, extra = {}) => ({
  t: 'hello',
  room,
  origin,
  proto: 3,
  policyVersion: 0,
  ...extra,
});
const op = (path, next, extra = {}) => ({ kind: 'set', path, next, cites: [], epoch: 0, ...extra });
function envelope(relay, room, origin, writer, version, ops, extra = {}) {
  return {
    t: 'env',
    room,
    env: {
      proto: 3,
      instance: relay.room(room).instance,
      origin,
      writer,
      version,
      hlc: { p: 1000 + version, l: 0 },
      policyVersion: 0,
      ops,
      ...extra,
    },
  };
}
function pair(relay, writer, kind) {
  const inbox = [];
  const conn = relay.connect(
    { send: (m) => inbox.push(m), close: () => inbox.push('closed') },
    { writer, kind },
  );
  return { inbox, conn, last: () => inbox.at(-1) };
}

test('README: the Node ws adapter recipe, over a real socket on 127.0.0.1', async () => {
  const relay = createRelay({ policyVersion: 1 });
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => wss.once('listening', resolve));
  wss.on('connection', (ws, req) => {
    const writer = new URL(req.url, 'http://x').searchParams.get('writer'); // stands in for auth
    const conn = relay.connect(
      { send: (m) => ws.send(JSON.stringify(m)), close: () => ws.close() },
      { writer },
    );
    ws.on('message', (data) => conn.receive(JSON.parse(String(data))));
    ws.on('close', () => conn.disconnect());
  });
  const client = new WebSocket(`ws://127.0.0.1:${wss.address().port}/?writer=alice`);
  try {
    const messages = [];
    let wake;
    client.on('message', (d) => {
      messages.push(JSON.parse(String(d)));
      wake?.();
    });
    const next = async (n) => {
      while (messages.length < n) await new Promise((r) => (wake = r));
      return messages[n - 1];
    };
    await new Promise((resolve) => client.once('open', resolve));
    client.send(
      JSON.stringify({ t: 'hello', room: 'doc', origin: 'tab-1', proto: 3, policyVersion: 1 }),
    );
    const welcome = await next(1);
    assert.equal(welcome.t, 'welcome');
    assert.equal(welcome.mode, 'up-to-date');
    const env = {
      proto: 3,
      instance: welcome.instance,
      origin: 'tab-1',
      writer: 'alice',
      version: 1,
      hlc: { p: 1, l: 0 },
      policyVersion: 1,
      ops: [op([], { title: 'hi' })],
    };
    client.send(JSON.stringify({ t: 'env', room: 'doc', env }));
    assert.deepEqual(await next(2), { t: 'env', room: 'doc', env: { ...env, seq: 1 } });
  } finally {
    client.close();
    await new Promise((resolve) => wss.close(resolve));
  }
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(relay.room('doc').members, 0);
});

test('README: pathPrefixAcl grants by prefix and principal, deny by default', () => {
  const relay = createRelay({
    policy: pathPrefixAcl([
      { prefix: ['notes'], allow: () => true },
      { prefix: ['cases', '*', 'plan'], allow: (ctx) => ctx.kind !== 'agent' },
    ]),
  });
  const human = pair(relay, 'dr-a', 'human');
  const agent = pair(relay, 'bot', 'agent');
  human.conn.receive(hello('r', 'h1'));
  agent.conn.receive(hello('r', 'a1'));
  human.conn.receive(envelope(relay, 'r', 'h1', 'dr-a', 1, [op(['cases', 7, 'plan'], 'rest')]));
  agent.conn.receive(envelope(relay, 'r', 'a1', 'bot', 1, [op(['notes', 'n1'], 'ok')]));
  assert.equal(relay.room('r').seq, 2);
  agent.conn.receive(envelope(relay, 'r', 'a1', 'bot', 2, [op(['cases', 7, 'plan'], 'override')]));
  assert.deepEqual(agent.inbox.at(-2), {
    t: 'eject',
    room: 'r',
    writer: 'bot',
    reason: 'can-write',
  });
  assert.equal(agent.last(), 'closed');
  assert.equal(relay.room('r').seq, 2);
});

test('README: the root rule sees info.seq, so an agent may seed an empty room but not flatten a live one', () => {
  const violations = [];
  const relay = createRelay({
    policy: {
      canWrite: (ctx, path, room, info) =>
        path.length > 0 || ctx.kind !== 'agent' || info?.seq === 0,
    },
    onViolation: (room, v) => violations.push(v),
  });
  const agent = pair(relay, 'bot', 'agent');
  agent.conn.receive(hello('r', 'a1'));
  agent.conn.receive(envelope(relay, 'r', 'a1', 'bot', 1, [op([], { seeded: true })]));
  assert.equal(relay.room('r').seq, 1);
  agent.conn.receive(envelope(relay, 'r', 'a1', 'bot', 2, [op([], {})]));
  assert.deepEqual(violations, [{ writer: 'bot', reason: 'can-write', path: [] }]);
});

test('README: onCommit with checkpoints, then hydrate after a restart answers a delta', () => {
  const journal = [];
  let saved;
  const options = {
    onCommit: (room, env, state) => {
      journal.push(env);
      if (state.seq % 2 === 0) saved = { ...state, registers: state.checkpoint() };
    },
  };
  const first = createRelay(options);
  const a = pair(first, 'alice');
  a.conn.receive(hello('doc', 'tab'));
  for (let v = 1; v <= 5; v++)
    a.conn.receive(envelope(first, 'doc', 'tab', 'alice', v, [op(['k', v], v)]));
  assert.equal(saved.seq, 4);
  assert.deepEqual(saved.ranges, { tab: [[1, 4]] });
  const instance = first.room('doc').instance;

  const second = createRelay(options);
  assert.equal(
    second.hydrate('doc', { ...saved, journal: journal.filter((e) => e.seq <= saved.seq) }),
    true,
  );
  assert.equal(second.room('doc').instance, instance);
  const b = pair(second, 'alice');
  b.conn.receive(hello('doc', 'tab', { seq: 2 }));
  const welcome = b.last();
  assert.equal(welcome.mode, 'delta');
  assert.deepEqual(
    welcome.envs.map((e) => e.seq),
    [3, 4],
  );
  // The resend of version 5, lost with the old process, is sequenced again; 4 is an ack.
  b.conn.receive(envelope(second, 'doc', 'tab', 'alice', 4, [op(['k', 4], 4)]));
  assert.deepEqual(b.last(), {
    t: 'drop',
    room: 'doc',
    origin: 'tab',
    version: 4,
    reason: 'duplicate',
  });
  b.conn.receive(envelope(second, 'doc', 'tab', 'alice', 5, [op(['k', 5], 5)]));
  assert.equal(b.last().env.seq, 5);
  assert.equal(second.hydrate('doc', saved), false); // refused once the room has state
});

test('README: a promise from onCommit holds the echo; a rejection stalls the room once', async () => {
  const failures = [];
  let settle;
  const relay = createRelay({
    onCommit: () => new Promise((resolve, reject) => (settle = { resolve, reject })),
    onDurabilityFailed: (room, env, cause) => failures.push([room, env.seq, cause.message]),
  });
  const a = pair(relay, 'alice');
  a.conn.receive(hello('r', 'o'));
  a.conn.receive(envelope(relay, 'r', 'o', 'alice', 1, [op(['x'], 1)]));
  assert.equal(a.inbox.length, 1);
  settle.resolve();
  await new Promise((r) => setImmediate(r));
  assert.equal(a.last().env.seq, 1);
  a.conn.receive(envelope(relay, 'r', 'o', 'alice', 2, [op(['x'], 2)]));
  settle.reject(new Error('disk full'));
  await new Promise((r) => setImmediate(r));
  assert.equal(relay.room('r').stalled, true);
  assert.deepEqual(failures, [['r', 2, 'disk full']]);
  assert.equal(relay.unload('r', { discard: true }), false); // a member is still there
  a.conn.disconnect();
  assert.equal(relay.unload('r'), false);
  assert.equal(relay.unload('r', { discard: true }), true);
});

test('the JSON-text fast path sends the same messages as the object API', () => {
  const relay = createRelay({ journalLimit: 2 });
  const texts = [];
  const objects = [];
  const t = relay.connectText({ send: (s) => texts.push(s) }, { writer: 'w' });
  const o = relay.connect({ send: (m) => objects.push(m) }, { writer: 'w2' });
  assert.equal(t.receive(JSON.stringify(hello('r', 'a'))), null);
  o.receive(hello('r', 'b'));
  for (let v = 1; v <= 3; v++)
    t.receive(JSON.stringify(envelope(relay, 'r', 'a', 'w', v, [op(['k'], v)])));
  // After each side's own welcome (and the text side's member notice), the streams are equal.
  assert.deepEqual(
    texts.slice(2).map((s) => JSON.parse(s)),
    objects.slice(1),
  );
  assert.equal(objects.filter((m) => m.t === 'settled').length, 1);
  assert.ok(texts.every((s) => typeof s === 'string'));
  assert.deepEqual(t.receive('{"t":"hel'), {
    reason: 'unparseable',
    message:
      'the message is not UTF-8 JSON within the size and depth limits; send one JSON object per frame',
  });
});

// ---- pinned differences from @mmstack/mesh-protocol@0.9.1 ------------------------------------

test('pinned: disconnect removes a member its connection displaced (the reference leaves a ghost)', () => {
  // README: welcome `members` are the origins currently in the room. In the reference, a
  // connection that says hello to the same room under a second origin leaves its first member
  // in the room after it disconnects, listed in every later welcome.
  for (const [lib, ghost] of [
    [reference, true],
    [{ createRelay }, false],
  ]) {
    const relay = lib.createRelay();
    const a = pair(relay, 'alice');
    a.conn.receive(hello('r', 'first'));
    a.conn.receive(hello('r', 'second'));
    a.conn.disconnect();
    const b = pair(relay, 'bob');
    b.conn.receive(hello('r', 'b'));
    assert.deepEqual(b.last().members, ghost ? ['first'] : []);
  }
});

test('pinned: an env message without an envelope object ejects as malformed (the reference throws)', () => {
  const refRelay = reference.createRelay();
  const r = pair(refRelay, 'alice');
  r.conn.receive(hello('r', 'o'));
  assert.throws(() => r.conn.receive({ t: 'env', room: 'r', env: null }), TypeError);

  const violations = [];
  const relay = createRelay({ onViolation: (room, v) => violations.push(v) });
  const a = pair(relay, 'alice');
  a.conn.receive(hello('r', 'o'));
  a.conn.receive({ t: 'env', room: 'r', env: null });
  assert.deepEqual(violations, [{ writer: 'alice', reason: 'malformed', detail: 'envelope' }]);
  assert.equal(a.last(), 'closed');
});

test('pinned: ids beyond 512 bytes are malformed ("bounds"); the reference retains any length', () => {
  const long = 'x'.repeat(600);
  const refRelay = reference.createRelay();
  const r = pair(refRelay, 'alice');
  r.conn.receive(hello('r', 'o'));
  r.conn.receive(
    envelope(refRelay, 'r', 'o', 'alice', 1, [
      op(['k'], 1, { cites: [{ origin: long, hlc: { p: 1, l: 0 } }] }),
    ]),
  );
  assert.equal(refRelay.room('r').seq, 1);

  const violations = [];
  const relay = createRelay({ onViolation: (room, v) => violations.push(v) });
  const a = pair(relay, 'alice');
  a.conn.receive(hello('r', 'o'));
  a.conn.receive(
    envelope(relay, 'r', 'o', 'alice', 1, [
      op(['k'], 1, { cites: [{ origin: long, hlc: { p: 1, l: 0 } }] }),
    ]),
  );
  assert.equal(relay.room('r').seq, 0);
  assert.equal(violations[0].reason, 'malformed');
});
