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
    const client = createRoomClient({ room: 'doc', origin: `o${i}`, writer: `w${i}`, now: () => clock });
    const inbox = [];
    const socket = { send: (m) => inbox.push(typeof m === 'string' ? m : JSON.stringify(m)) };
    const conn = text ? relay.connectText(socket, { writer: `w${i}` }) : relay.connect(socket, { writer: `w${i}` });
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

for (const [name, lib, text] of [['tether/relay (text)', { createRelay }, true], ['the reference relay', reference, false]]) {
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
    assert.deepEqual(r.peers[2].client.value(), { title: 'doc', k: { 0: 25, 1: 26, 2: 27, 3: 28, 4: 29 } });
    assert.ok(r.peers.every((p) => p.client.unacked === 0));
  });
}
