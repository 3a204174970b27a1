// tether/relay's `commitText` (the edge's store keeps envelopes as text): onCommit is handed the
// core's JSON text of the sequenced envelope, with the seq and the generation in `state`, and the
// same durability contract as with objects (the echo waits for the returned promise).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createRelay, createRoomClient } from '@tether-rt/tether/relay';

function room(options) {
  const relay = createRelay(options);
  const client = createRoomClient({ room: 'doc', origin: 'o1', writer: 'w1', now: () => 1000 });
  const inbox = [];
  const conn = relay.connectText({ send: (text) => inbox.push(text) }, { writer: 'w1' });
  const deliver = () => {
    while (inbox.length) for (const out of client.receive(inbox.shift())) conn.receive(out);
  };
  conn.receive(client.hello());
  deliver();
  return { relay, client, conn, inbox, deliver };
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
