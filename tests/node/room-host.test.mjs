// The room endpoint (web/edge/room-host.js) over tether's relay with sockets shaped as workerd's
// (no bufferedAmount): the admission core's frame and slow-reader checks run inside the relay's
// own calls (bindings/room_bindings.cpp judge), one per inbound message and one per batch, with
// the same verdicts as the per-recipient checks they replace (docs/rooms.md § Limits).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRelay, createRoomClient, pathPrefixAcl } from '@tether-rt/tether/relay';
import { loadTetherModule } from '../../web/glue/load.js';
import { CLOSE, resolveLimits } from '../../web/edge/limits.js';
import { buildPolicy, parsePolicyConfig } from '../../web/edge/policy.js';
import { createRoomHost } from '../../web/edge/room-host.js';

const mod = await loadTetherModule({}, 'room');

// Counts the calls JS makes into the admission core's per-frame and per-recipient checks.
function countAdmissionCalls() {
  const proto = mod.RoomAdmissionCore.prototype;
  const counts = { frame: 0, send: 0 };
  const saved = { frame: proto.frame, send: proto.send };
  proto.frame = function (...a) {
    counts.frame += 1;
    return saved.frame.apply(this, a);
  };
  proto.send = function (...a) {
    counts.send += 1;
    return saved.send.apply(this, a);
  };
  counts.restore = () => Object.assign(proto, saved);
  return counts;
}

function member(host, room, name, { buffered = false, ack = true } = {}) {
  const inbox = [];
  const client = createRoomClient({ room, origin: name, writer: name, policyVersion: 1 });
  let closed = null;
  const socket = {
    send: (text) => inbox.push(text),
    close: (code, reason) => (closed = { code, reason }),
    bufferedAmount: buffered ? 0 : undefined,
  };
  const conn = host.open(socket, { writer: name, kind: 'human', room });
  const pump = () => {
    const frames = inbox.splice(0);
    for (const f of frames) {
      const out = client.receive(f);
      if (ack) for (const o of out) conn.message(o);
    }
  };
  conn.message(client.hello());
  pump();
  return {
    client,
    conn,
    inbox,
    pump,
    write: (ops) => conn.message(client.write(ops)),
    get closed() {
      return closed;
    },
  };
}

function host(limits = {}) {
  return createRoomHost({
    relayImpl: { createRelay, pathPrefixAcl },
    store: null,
    limits: resolveLimits(limits),
    log: { error() {}, warn() {}, info() {} },
  });
}

test('room host: workerd-shaped sockets are judged inside the relay, no admission call per frame or recipient', () => {
  const counts = countAdmissionCalls();
  try {
    const h = host();
    const a = member(h, 'doc', 'a');
    const b = member(h, 'doc', 'b');
    const before = { ...counts };
    for (let i = 0; i < 20; i++) {
      a.write([{ kind: 'set', path: ['k', i], next: i }]);
      a.pump();
      b.pump();
    }
    assert.equal(
      Object.keys(b.client.value().k).length,
      20,
      'every write reached the other member',
    );
    assert.equal(a.client.unacked, 0, 'every write was echoed');
    assert.equal(counts.frame - before.frame, 0, 'no frame() call from JS per message');
    assert.equal(counts.send - before.send, 0, 'no send() call from JS per recipient');
  } finally {
    counts.restore();
  }
});

test('room host: a socket with a bufferedAmount is still judged by the host, per recipient', () => {
  const counts = countAdmissionCalls();
  try {
    const h = host();
    const a = member(h, 'doc', 'a', { buffered: true });
    const before = counts.send;
    a.write([{ kind: 'set', path: ['x'], next: 1 }]);
    a.pump();
    assert.equal(a.client.unacked, 0);
    assert.ok(counts.send > before, 'the host asked the admission core about its echo');
  } finally {
    counts.restore();
  }
});

test('room host: judged in the relay, a reader that never acknowledges is closed 4010', () => {
  const h = host({ maxBufferedBytes: 4096 });
  const writer = member(h, 'doc', 'w');
  const silent = member(h, 'doc', 's', { ack: false });
  for (let i = 0; i < 200 && silent.closed === null; i++) {
    writer.write([{ kind: 'set', path: ['k', i], next: 'v'.repeat(64) }]);
    writer.pump();
  }
  assert.equal(silent.closed?.code, CLOSE.SLOW_READER, JSON.stringify(silent.closed));
  assert.equal(writer.closed, null, 'the acknowledging writer stays');
});

// The bound is about a reader that stopped reading, not one frame (docs/rooms.md § Limits, the
// slow-reader rule): a welcome larger than maxBufferedBytes reaches a fresh socket, whichever side
// judges it, instead of closing it 4010 on every reconnect.
test('room host: a welcome larger than maxBufferedBytes reaches a fresh socket', () => {
  for (const buffered of [false, true]) {
    const h = host({ maxBufferedBytes: 4096 });
    const writer = member(h, 'doc', 'w', { buffered });
    for (let i = 0; i < 20; i++) {
      writer.write([{ kind: 'set', path: ['k', i], next: 'v'.repeat(400) }]);
      writer.pump();
    }
    assert.equal(writer.client.unacked, 0);
    const fresh = member(h, 'doc', 'fresh', { buffered });
    assert.equal(fresh.closed, null, `buffered ${buffered}: ${JSON.stringify(fresh.closed)}`);
    assert.equal(fresh.client.welcomed, true);
    assert.deepEqual(fresh.client.value(), writer.client.value());
  }
});

test('room host: judged in the relay, a frame over maxFrameBytes in UTF-8 is closed 1009 unread', () => {
  const h = host({ maxFrameBytes: 1024 });
  const stays = member(h, 'doc', 'stays'); // keeps the room loaded once the others are closed
  const a = member(h, 'doc', 'a');
  const seq = h.info('doc').seq;
  // 400 UTF-16 units inside the limit, 1,200 bytes of UTF-8 beyond it.
  a.write([{ kind: 'set', path: ['big'], next: '€'.repeat(400) }]);
  assert.equal(a.closed?.code, CLOSE.TOO_BIG, JSON.stringify(a.closed));
  assert.equal(h.info('doc').seq, seq, 'the relay never sequenced it');
  // A frame longer than the limit in UTF-16 units is refused before it is staged.
  const b = member(h, 'doc', 'b');
  b.conn.message('x'.repeat(2000));
  assert.equal(b.closed?.code, CLOSE.TOO_BIG);
  assert.equal(stays.closed, null);
});

test('policy: with no rules, tether asks canWrite about root ops only; the answers are the same', () => {
  const asked = [];
  const policy = buildPolicy(parsePolicyConfig(''), pathPrefixAcl);
  const canWrite = policy.canWrite;
  const spied = {
    canWrite: (ctx, path, room, info) => (asked.push(path), canWrite(ctx, path, room, info)),
  };
  spied[Symbol.for('tether.relay.canWriteRootOnly')] = spied.canWrite;
  const relay = createRelay({ policy: spied });
  const inbox = [];
  let closed = false;
  const conn = relay.connectText(
    { send: (t) => inbox.push(t), close: () => (closed = true) },
    { writer: 'ag', kind: 'agent', room: 'doc' },
  );
  const client = createRoomClient({ room: 'doc', origin: 'ag', writer: 'ag' });
  const flush = () => inbox.splice(0).forEach((f) => client.receive(f));
  conn.receive(client.hello());
  flush();
  conn.receive(client.write([{ kind: 'set', path: [], next: { seeded: true } }])); // seq 0: allowed
  flush();
  conn.receive(client.write([{ kind: 'set', path: ['a'], next: 1 }]));
  flush();
  assert.deepEqual(asked, [[]], 'only the root op was asked about');
  assert.equal(client.unacked, 0);
  conn.receive(client.write([{ kind: 'set', path: [], next: 2 }])); // an agent on the root after seq 0
  flush();
  assert.deepEqual(asked, [[], []]);
  assert.equal(closed, true, 'refused as before: the agent is ejected');
});
