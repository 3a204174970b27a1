// tether/relay's `commitText` (the edge's store keeps envelopes as text): onCommit is handed the
// core's JSON text of the sequenced envelope, with the seq and the generation in `state`, and the
// same durability contract as with objects (the echo waits for the returned promise).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createRelay, createRoomClient } from '@tether-rt/tether/relay';

// A room client of room `name` joined to `relay`, and what the relay sent it.
function member(relay, name, origin = 'o1') {
  const client = createRoomClient({ room: name, origin, writer: 'w1', now: () => 1000 });
  const inbox = [];
  const conn = relay.connectText({ send: (text) => inbox.push(text) }, { writer: 'w1' });
  const deliver = () => {
    while (inbox.length) for (const out of client.receive(inbox.shift())) conn.receive(out);
  };
  conn.receive(client.hello());
  deliver();
  return { client, conn, inbox, deliver };
}

function room(options) {
  const relay = createRelay(options);
  return { relay, ...member(relay, 'doc') };
}

for (const commitText of [true, false]) {
  test(`onCommit with commitText ${commitText}: the envelope, its seq and its generation`, () => {
    const commits = [];
    const r = room({
      commitText,
      onCommit: (name, env, state) => {
        commits.push({ name, env, seq: state.seq, instance: state.instance });
      },
    });
    for (let n = 1; n <= 3; n++) {
      r.conn.receive(r.client.write([{ kind: 'set', path: ['k'], next: n }]));
      r.deliver();
    }
    assert.equal(commits.length, 3);
    const instance = r.relay.room('doc').instance;
    commits.forEach((c, i) => {
      assert.equal(typeof c.env, commitText ? 'string' : 'object');
      const env = commitText ? JSON.parse(c.env) : c.env;
      assert.equal(c.name, 'doc');
      assert.equal(env.seq, i + 1);
      assert.equal(c.seq, i + 1);
      assert.equal(c.instance, instance);
      assert.equal(env.origin, 'o1');
      assert.deepEqual(
        env.ops.map(({ kind, path, next }) => ({ kind, path, next })),
        [{ kind: 'set', path: ['k'], next: i + 1 }],
      );
    });
    assert.equal(r.client.unacked, 0);
  });
}

test('commitText: the echo still waits for the promise onCommit returns', async () => {
  let release;
  const texts = [];
  const r = room({
    commitText: true,
    onCommit: (name, env) => {
      texts.push(env);
      return new Promise((resolve) => (release = resolve));
    },
  });
  r.conn.receive(r.client.write([{ kind: 'set', path: ['k'], next: 1 }]));
  assert.equal(texts.length, 1);
  assert.equal(r.inbox.length, 0, 'no echo before the write is durable');
  release();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(r.inbox.length, 1);
  assert.equal(JSON.parse(r.inbox[0]).env.seq, JSON.parse(texts[0]).seq);
  r.deliver();
  assert.equal(r.client.unacked, 0);
});

// The state is read per commit from the packed action and the core (web/glue/relay.js
// commitState): its own enumerable keys, a spread and JSON see the vectors as the literal with
// getters did, read live inside the callback; the instance follows a migration within one room.
test('onCommit state: own enumerable values, spreadable, and the instance across a migration', () => {
  const seen = [];
  const r = room({
    commitText: true,
    onCommit: (name, env, state) => {
      const spread = { ...state };
      seen.push({
        keys: Object.keys(state),
        spread,
        json: JSON.parse(JSON.stringify(state)),
        has: 'settled' in state && 'wm' in state,
        live: state.instance === r.relay.room(name).instance,
        registers: state.checkpoint(),
      });
    },
  });
  r.conn.receive(r.client.write([{ kind: 'set', path: ['k'], next: 1 }]));
  r.deliver();
  const first = r.relay.room('doc').instance;
  // A migration: the client's next envelope, raised to schema 1 with a root op.
  const msg = JSON.parse(r.client.write([{ kind: 'set', path: ['k'], next: 2 }]));
  msg.env.schemaVersion = 1;
  msg.env.ops = [{ kind: 'set', path: [], next: { k: 3 }, cites: [], epoch: 0 }];
  r.inbox.length = 0;
  r.conn.receive(JSON.stringify(msg));
  assert.equal(seen.length, 2);
  const keys = ['seq', 'instance', 'wm', 'ranges', 'settled', 'schemaVersion', 'checkpoint'];
  for (const s of seen) {
    assert.deepEqual(s.keys, keys);
    assert.deepEqual(Object.keys(s.spread), keys);
    assert.equal(typeof s.spread.checkpoint, 'function');
    assert.ok(s.has && s.live);
    assert.equal(s.json.seq, s.spread.seq);
    assert.deepEqual(s.json.ranges, s.spread.ranges);
  }
  assert.equal(seen[0].spread.instance, first);
  assert.deepEqual(seen[0].spread.wm, { o1: 1 });
  assert.equal(seen[0].spread.schemaVersion, 0);
  assert.notEqual(seen[1].spread.instance, first, 'a migration mints a new instance');
  assert.equal(seen[1].spread.instance, r.relay.room('doc').instance);
  assert.equal(seen[1].spread.schemaVersion, 1);
  assert.deepEqual(
    seen[1].registers.map((g) => g.path),
    [[]],
  );
});

// The glue keeps the instance it read until a commit names another generation: two rooms of one
// relay, written in turn, must each be handed their own.
test('onCommit state: each room of one relay gets its own instance', () => {
  const seen = [];
  const relay = createRelay({ onCommit: (name, env, state) => seen.push([name, state.instance]) });
  const writers = ['doc', 'other'].map((name) => member(relay, name, `o-${name}`));
  for (let n = 1; n <= 2; n++) {
    for (const w of writers) {
      w.conn.receive(w.client.write([{ kind: 'set', path: ['k'], next: n }]));
      w.deliver();
    }
  }
  assert.equal(seen.length, 4);
  assert.notEqual(relay.room('doc').instance, relay.room('other').instance);
  for (const [name, instance] of seen) assert.equal(instance, relay.room(name).instance, name);
});

// A message is staged into the core's buffer as UTF-8, ASCII by hand and the rest from the first
// non-ASCII unit on (web/glue/relay.js stage): text after either part, and a pair split across
// nothing, arrive whole.
test('messages with non-ASCII text after an ASCII prefix are staged whole', () => {
  const texts = [];
  const r = room({ commitText: true, onCommit: (name, env) => void texts.push(env) });
  const values = ['é', 'plain', 'a😀b', '😀', 'ü€😀 tail ascii', 'x'.repeat(5000) + 'ß'];
  for (const next of values) {
    r.conn.receive(r.client.write([{ kind: 'set', path: ['k'], next }]));
    r.deliver();
  }
  assert.deepEqual(
    texts.map((t) => JSON.parse(t).ops[0].next),
    values,
  );
  assert.equal(r.client.value().k, values.at(-1));
  assert.equal(r.client.unacked, 0);
});
