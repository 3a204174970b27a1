// The room client core through tether/relay: clients converge over our relay and over the
// reference relay alike (the client speaks the wire format, not our relay's internals).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as reference from '@mmstack/mesh-protocol';

import { createRelay, createRoomClient } from '@tether-rt/tether/relay';

function room(relayLib, text) {
  const relay = relayLib.createRelay({ journalLimit: 4 });
  let clock = 1000;
  const peers = [];
  const join = (i) => {
    const client = createRoomClient({
      room: 'doc',
      origin: `o${i}`,
      writer: `w${i}`,
      now: () => clock,
    });
    const inbox = [];
    const socket = { send: (m) => inbox.push(typeof m === 'string' ? m : JSON.stringify(m)) };
    const conn = text
      ? relay.connectText(socket, { writer: `w${i}` })
      : relay.connect(socket, { writer: `w${i}` });
    const send = (m) => conn.receive(text ? m : JSON.parse(m));
    send(client.hello());
    peers.push({ client, inbox, send, conn });
  };
  const settle = () => {
    for (let round = 0; round < 20; round++) {
      let moved = false;
      for (const p of peers) {
        while (p.inbox.length) {
          moved = true;
          for (const out of p.client.receive(p.inbox.shift())) p.send(out);
        }
      }
      if (!moved) return;
    }
  };
  return { relay, peers, join, settle, tick: () => (clock += 10) };
}

for (const [name, lib, text] of [
  ['tether/relay (text)', { createRelay }, true],
  ['the reference relay', reference, false],
]) {
  test(`room clients converge over ${name}`, () => {
    const r = room(lib, text);
    r.join(0);
    r.join(1);
    r.settle();
    r.peers[0].send(r.peers[0].client.write([{ kind: 'set', path: [], next: { title: 'doc' } }]));
    r.settle();
    for (let n = 0; n < 30; n++) {
      const p = r.peers[n % 2];
      r.tick();
      p.send(p.client.write([{ kind: 'set', path: ['k', n % 5], next: n }]));
      if (n % 7 === 0) r.settle();
    }
    r.settle();
    r.join(2); // a late joiner hydrates from a snapshot (the journal holds 4)
    r.settle();
    const values = r.peers.map((p) => JSON.stringify(p.client.value()));
    assert.equal(new Set(values).size, 1, values.join('\n'));
    assert.deepEqual(r.peers[2].client.value(), {
      title: 'doc',
      k: { 0: 25, 1: 26, 2: 27, 3: 28, 4: 29 },
    });
    assert.ok(r.peers.every((p) => p.client.unacked === 0));
  });
}

for (const [name, lib, text] of [
  ['tether/relay (text)', { createRelay }, true],
  ['the reference relay', reference, false],
]) {
  test(`a late joiner whose clock lags keeps its leaf under a newer root, over ${name}`, () => {
    const relay = lib.createRelay({ journalLimit: 2 });
    const peers = [];
    const join = (origin, now) => {
      const client = createRoomClient({ room: 'doc', origin, writer: origin, now: () => now });
      const inbox = [];
      const socket = { send: (m) => inbox.push(typeof m === 'string' ? m : JSON.stringify(m)) };
      const conn = text
        ? relay.connectText(socket, { writer: origin })
        : relay.connect(socket, { writer: origin });
      const send = (m) => conn.receive(text ? m : JSON.parse(m));
      send(client.hello());
      const p = { client, inbox, send };
      peers.push(p);
      return p;
    };
    const settle = () => {
      for (let moved = true; moved;) {
        moved = false;
        for (const p of peers)
          while (p.inbox.length) {
            moved = true;
            for (const out of p.client.receive(p.inbox.shift())) p.send(out);
          }
      }
    };
    const fast = join('fast', 1_000_000); // a clock far ahead
    settle();
    fast.send(fast.client.write([{ kind: 'set', path: [], next: { doc: {} } }]));
    for (let n = 0; n < 4; n++)
      fast.send(fast.client.write([{ kind: 'set', path: ['k'], next: n }]));
    settle();
    const late = join('late', 10); // joins from a snapshot with a clock that lags
    settle();
    late.send(late.client.write([{ kind: 'set', path: ['doc', 'x'], next: 1 }]));
    settle();
    for (const p of peers)
      assert.equal(p.client.value().doc?.x, 1, JSON.stringify(p.client.value()));
  });
}

test('a new client seeded with a persisted outbox resends it; the relay acknowledges once', () => {
  const relay = createRelay({});
  const inbox = [];
  let conn = relay.connectText({ send: (m) => inbox.push(m) }, { writer: 'w' });
  const flush = (client) => {
    while (inbox.length) for (const out of client.receive(inbox.shift())) conn.receive(out);
  };
  const first = createRoomClient({ room: 'doc', origin: 'tab', writer: 'w', now: () => 500 });
  conn.receive(first.hello());
  flush(first);
  conn.receive(first.write([{ kind: 'set', path: ['a'], next: 1 }])); // reaches the relay
  first.write([{ kind: 'set', path: ['b'], next: 2 }]); // written offline: never sent
  inbox.length = 0; // the process dies before it reads the echo
  const persisted = first.tail();
  assert.equal(persisted.length, 2);
  conn.disconnect();

  const fresh = createRoomClient({
    room: 'doc',
    origin: 'tab',
    writer: 'w',
    now: () => 1,
    outbox: persisted,
  });
  assert.equal(fresh.unacked, 2);
  conn = relay.connectText({ send: (m) => inbox.push(m) }, { writer: 'w' });
  conn.receive(fresh.hello());
  flush(fresh);
  assert.equal(fresh.unacked, 0);
  assert.deepEqual(fresh.refused(), []);
  assert.equal(relay.room('doc').seq, 2); // version 1 once (its resend was a duplicate), then 2
  assert.deepEqual(fresh.value(), { a: 1, b: 2 });
  assert.throws(
    () => createRoomClient({ room: 'other', origin: 'tab', writer: 'w', outbox: persisted }),
    /outbox entry 0: written for another room/,
  );
});

// docs/rooms.md § Migrations: a client of a newer schema never wipes a written room by writing
// a leaf; the document moves only with migrate(), over our relay and the reference alike.
for (const [name, lib, text] of [
  ['tether/relay (text)', { createRelay }, true],
  ['the reference relay', reference, false],
]) {
  test(`a newer client migrates a written room only with migrate(), over ${name}`, () => {
    const relay = lib.createRelay({});
    const boxes = [[], []];
    const clients = [
      createRoomClient({ room: 'doc', origin: 'old', writer: 'w1', schemaVersion: 1 }),
      createRoomClient({ room: 'doc', origin: 'new', writer: 'w2', schemaVersion: 2 }),
    ];
    const conns = boxes.map((box, i) => {
      const socket = { send: (m) => box.push(typeof m === 'string' ? m : JSON.stringify(m)) };
      const conn = text
        ? relay.connectText(socket, { writer: `w${i + 1}` })
        : relay.connect(socket, { writer: `w${i + 1}` });
      return { receive: (m) => conn.receive(text ? m : JSON.parse(m)) };
    });
    const settle = () => {
      for (let moved = true; moved;) {
        moved = false;
        boxes.forEach((box, i) => {
          while (box.length) {
            moved = true;
            for (const out of clients[i].receive(box.shift())) conns[i].receive(out);
          }
        });
      }
    };
    conns[0].receive(clients[0].hello());
    settle();
    conns[0].receive(clients[0].write([{ kind: 'set', path: [], next: { a: 1, b: 1 } }]));
    settle();
    const before = relay.room('doc').instance;
    conns[1].receive(clients[1].hello());
    settle();
    assert.equal(clients[1].roomSchemaVersion, 1);
    // A leaf write would have been a migration that kept only that leaf.
    assert.throws(
      () => clients[1].write([{ kind: 'set', path: ['a'], next: 2 }]),
      /the room holds schema 1 and this client writes schema 2; call migrate\(ops\)/,
    );
    assert.throws(
      () => clients[1].migrate([{ kind: 'set', path: ['a'], next: 2 }]),
      /a migration replaces the whole document: include a set at the root path \[\]/,
    );
    settle();
    assert.equal(relay.room('doc').instance, before);
    assert.deepEqual(clients[0].value(), { a: 1, b: 1 });
    // The migration: the document in the new shape, built from what the room holds.
    const next = { ...clients[1].value(), a: 2, shape: 2 };
    conns[1].receive(clients[1].migrate([{ kind: 'set', path: [], next }]));
    assert.equal(clients[1].write([{ kind: 'set', path: ['early'], next: 1 }]), null);
    settle();
    assert.notEqual(relay.room('doc').instance, before); // a new generation
    assert.equal(clients[1].unacked, 0);
    assert.deepEqual(clients[1].refused(), []);
    assert.deepEqual(clients[1].value(), { a: 1, b: 1, shape: 2, ...{ a: 2 } });
    assert.deepEqual(clients[0].value(), clients[1].value());
    conns[1].receive(clients[1].write([{ kind: 'set', path: ['b'], next: 3 }]));
    settle();
    assert.equal(clients[0].value().b, 3);
    // The old client is out of date now, and says what to do.
    assert.throws(
      () => clients[0].write([{ kind: 'set', path: ['a'], next: 9 }]),
      /the room holds schema 2, newer than this client's 1; load the code/,
    );
  });
}

// docs/rooms.md § The room client: one origin per tab or device, so a reload creates a new
// client under an origin the room already holds versions of. Its writes must be kept, not
// answered `duplicate` and dropped as acknowledged.
for (const [name, lib, text] of [
  ['tether/relay (text)', { createRelay }, true],
  ['the reference relay', reference, false],
]) {
  test(`a client created again under a used origin writes above the room's mark, over ${name}`, () => {
    const relay = lib.createRelay({});
    const open = (client) => {
      const inbox = [];
      const socket = { send: (m) => inbox.push(typeof m === 'string' ? m : JSON.stringify(m)) };
      const conn = text
        ? relay.connectText(socket, { writer: 'w' })
        : relay.connect(socket, { writer: 'w' });
      const send = (m) => conn.receive(text ? m : JSON.parse(m));
      const flush = () => {
        while (inbox.length) for (const out of client.receive(inbox.shift())) send(out);
      };
      send(client.hello());
      flush();
      return { send, flush, conn };
    };
    const first = createRoomClient({ room: 'doc', origin: 'tab', writer: 'w', now: () => 10 });
    const a = open(first);
    a.send(first.write([{ kind: 'set', path: [], next: { n: 0 } }]));
    a.send(first.write([{ kind: 'set', path: ['n'], next: 1 }]));
    a.flush();
    assert.equal(first.unacked, 0);
    a.conn.disconnect();

    const reloaded = createRoomClient({ room: 'doc', origin: 'tab', writer: 'w', now: () => 20 });
    const b = open(reloaded);
    b.send(reloaded.write([{ kind: 'set', path: ['n'], next: 2 }]));
    b.flush();
    assert.deepEqual(reloaded.refused(), []);
    assert.equal(reloaded.unacked, 0);
    assert.equal(relay.room('doc').seq, 3, "the reload's write was sequenced, not a duplicate");
    const late = createRoomClient({ room: 'doc', origin: 'late', writer: 'w2', now: () => 30 });
    open(late);
    assert.deepEqual(late.value(), { n: 2 });
    assert.deepEqual(reloaded.value(), { n: 2 });
  });
}

// docs/rooms.md § The room client: a refused hello and an eject naming our writer reach the
// caller as events; another writer's eject, broadcast under ejection 'writer', does not.
for (const [name, lib, text] of [
  ['tether/relay (text)', { createRelay }, true],
  ['the reference relay', reference, false],
]) {
  test(`rejects and ejects are events of the room client, over ${name}`, () => {
    const relay = lib.createRelay({
      policyVersion: 1,
      policy: { canWrite: (ctx, path) => !(ctx.writer === 'bad' && path[0] === 'secret') },
    });
    const open = (client, writer) => {
      const inbox = [];
      const socket = {
        send: (m) => inbox.push(typeof m === 'string' ? m : JSON.stringify(m)),
        close() {},
      };
      const conn = text ? relay.connectText(socket, { writer }) : relay.connect(socket, { writer });
      const send = (m) => conn.receive(text ? m : JSON.parse(m));
      const flush = () => {
        while (inbox.length) for (const out of client.receive(inbox.shift())) send(out);
      };
      send(client.hello());
      flush();
      return { send, flush };
    };
    const make = (origin, writer, extra = {}) =>
      createRoomClient({ room: 'doc', origin, writer, policyVersion: 1, ...extra });
    const stale = make('s', 'w', { policyVersion: 0 });
    open(stale, 'w');
    assert.deepEqual(stale.events(), [{ kind: 'rejected', reason: 'policy-version', expected: 1 }]);
    assert.equal(stale.write([{ kind: 'set', path: ['x'], next: 1 }]), null);

    const good = make('g', 'w');
    const bad = make('b', 'bad');
    const g = open(good, 'w');
    const b = open(bad, 'bad');
    b.send(bad.write([{ kind: 'set', path: ['secret'], next: 1 }]));
    b.flush();
    g.flush();
    assert.deepEqual(bad.events(), [{ kind: 'ejected', reason: 'can-write' }]);
    assert.equal(bad.welcomed, false);
    assert.equal(bad.write([{ kind: 'set', path: ['x'], next: 1 }]), null);
    assert.deepEqual(good.events(), [], 'the eject named another writer');
    assert.equal(good.welcomed, true);
    // Its writer is banned: the next hello is rejected `unauthorized`.
    const again = make('b2', 'bad');
    open(again, 'bad');
    assert.deepEqual(again.events(), [{ kind: 'rejected', reason: 'unauthorized' }]);
  });
}

// docs/rooms.md § The room client, a room the relay lost: a relay without storage restarts, and
// the client hears what it held before it hydrates from the empty room.
for (const [name, lib, text] of [
  ['tether/relay (text)', { createRelay }, true],
  ['the reference relay', reference, false],
]) {
  test(`a client reports the document of a room its relay lost, over ${name}`, () => {
    const client = createRoomClient({ room: 'doc', origin: 'tab', writer: 'w' });
    const attach = (relay) => {
      const box = [];
      const socket = { send: (m) => box.push(typeof m === 'string' ? m : JSON.stringify(m)) };
      const conn = text
        ? relay.connectText(socket, { writer: 'w' })
        : relay.connect(socket, { writer: 'w' });
      const send = (m) => conn.receive(text ? m : JSON.parse(m));
      const settle = () => {
        while (box.length) for (const out of client.receive(box.shift())) send(out);
      };
      return { send, settle };
    };
    const first = attach(lib.createRelay({}));
    first.send(client.hello());
    first.settle();
    first.send(client.write([{ kind: 'set', path: [], next: { title: 'plan', steps: 3 } }]));
    first.settle();
    assert.deepEqual(client.events(), []);
    // The process restarted: a new relay, nothing of the room in it.
    const second = attach(lib.createRelay({}));
    second.send(client.hello());
    second.settle();
    assert.deepEqual(client.events(), [
      { kind: 'lost', reason: 'room-lost', value: { title: 'plan', steps: 3 } },
    ]);
    assert.deepEqual(client.value(), {});
    second.send(client.write([{ kind: 'set', path: [], next: client.events()[0].value }]));
    second.settle();
    assert.deepEqual(client.value(), { title: 'plan', steps: 3 });
    assert.equal(client.unacked, 0);
  });
}
