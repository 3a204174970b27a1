// Durability of the edge relay under real workerd (Miniflare) with SQLite-backed Durable Objects
// persisted to a folder: restart the whole runtime mid-stream, lose no echoed write, and let
// pre-restart clients catch up with a delta; rebuild a room object from storage as a wake-up
// does; stall on a real storage failure and recover.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createRoomClient } from '@tether-rt/tether/relay';
import { Peer, startEdge, until } from './lib/edge.mjs';

const dir = mkdtempSync(join(tmpdir(), 'tether-edge-'));
const running = new Set();
async function start(opts) {
  const e = await startEdge({ persist: dir, bindings: { CHECKPOINT_EVERY: '8' }, ...opts });
  running.add(e);
  return e;
}
async function stop(e) {
  running.delete(e);
  await e.stop();
}
after(async () => {
  for (const e of running) await e.stop();
  rmSync(dir, { recursive: true, force: true });
});

// Every write a client saw echoed, by its own bookkeeping: the values it wrote whose envelopes
// left its unacknowledged tail.
function tracker(peer, key) {
  const written = [];
  return {
    write(n) {
      if (peer.write([{ kind: 'set', path: [key, `v${n}`], next: n }]) !== null) written.push(n);
    },
    acked: () => written.slice(0, written.length - peer.client.unacked),
    written,
  };
}

test(
  'edge: restarting the runtime mid-stream loses no echoed write; old clients get delta',
  { timeout: 120_000 },
  async () => {
    const room = 'restart';
    let edge = await start();
    const a = new Peer(edge.wsUrl, room, { writer: 'a' });
    const b = new Peer(edge.wsUrl, room, { writer: 'b' });
    await until(() => a.client.welcomed && b.client.welcomed, 'welcomes');
    a.write([{ kind: 'set', path: [], next: { a: {}, b: {} } }]);
    await until(() => a.client.unacked === 0, 'seed');
    const ta = tracker(a, 'a');
    const tb = tracker(b, 'b');
    // 30 writes each, more than three checkpoints' worth (CHECKPOINT_EVERY=8), then kill the
    // runtime while the last burst is still in flight.
    for (let n = 0; n < 25; n++) {
      ta.write(n);
      tb.write(n);
    }
    await until(() => a.client.unacked === 0 && b.client.unacked === 0, 'first writes echoed');
    for (let n = 25; n < 30; n++) {
      ta.write(n);
      tb.write(n);
    }
    const echoedA = ta.acked();
    const echoedB = tb.acked();
    await stop(edge);
    await until(() => a.closed && b.closed, 'sockets dropped by the restart');

    edge = await start();
    const a2 = new Peer(edge.wsUrl, room, { writer: 'a', client: a.client });
    const b2 = new Peer(edge.wsUrl, room, { writer: 'b', client: b.client });
    await until(() => a2.welcomes.length && b2.welcomes.length, 'welcomes after restart');
    // The instance nonce survived, so the relay answered from its journal: delta, not snapshot.
    assert.deepEqual(
      [a2.welcomes[0], b2.welcomes[0]].map((m) => m !== 'snapshot'),
      [true, true],
      JSON.stringify([a2.welcomes, b2.welcomes]),
    );
    assert.ok(a2.welcomes.every((m) => m === 'delta' || m === 'up-to-date'));
    await until(
      () => a2.client.unacked === 0 && b2.client.unacked === 0,
      'tails resent and echoed',
    );
    const v = a2.client.value();
    for (const n of echoedA) assert.equal(v.a[`v${n}`], n, `a's echoed write ${n}`);
    for (const n of echoedB) assert.equal(v.b[`v${n}`], n, `b's echoed write ${n}`);
    // And, with the tails resent, every write made at all.
    assert.equal(Object.keys(v.a).length, 30);
    assert.equal(Object.keys(v.b).length, 30);
    const info = await edge.hook('info', room);
    assert.equal(info.seq, 61);
    assert.equal(
      info.storageSync,
      true,
      'onCommit waits on ctx.storage.sync(), the durability barrier',
    );
    // A fresh client after the restart sees the same document.
    const c = new Peer(edge.wsUrl, room, { writer: 'c' });
    await until(() => c.client.welcomed, 'fresh welcome');
    assert.deepEqual(c.client.value(), v);
    for (const p of [a2, b2, c]) await p.close();
    await stop(edge);
  },
);

// The operator bumps POLICY_VERSION (docs/rooms.md § Policy) and restarts: the envelopes after the
// last checkpoint were written under the old version, and replaying them is not a live write
// (§ Durability at the edge), so the room loads with everything in it, while a client still on
// the old version is refused as before.
test(
  'edge: after a POLICY_VERSION bump a durable room loads: its journal replays, old clients are refused',
  { timeout: 60_000 },
  async () => {
    const room = 'policy-bump';
    let edge = await start();
    const a = new Peer(edge.wsUrl, room, { writer: 'a' });
    await until(() => a.client.welcomed, 'welcome');
    a.write([{ kind: 'set', path: [], next: { n: 0 } }]);
    // A checkpoint at seq 1 (a new generation) and a journal tail after it (CHECKPOINT_EVERY=8).
    for (let n = 1; n <= 5; n++) a.write([{ kind: 'set', path: ['n'], next: n }]);
    await until(() => a.client.unacked === 0, 'writes echoed');
    const value = a.client.value();
    await a.close();
    await stop(edge);

    edge = await start({ bindings: { CHECKPOINT_EVERY: '8', POLICY_VERSION: '2' } });
    const client = createRoomClient({ room, origin: 'b', writer: 'b', policyVersion: 2 });
    const b = new Peer(edge.wsUrl, room, { writer: 'b', client });
    await until(() => b.client.welcomed || b.closed, 'welcome under the new version');
    assert.equal(b.closed, null, `refused: ${JSON.stringify(b.closed)} ${b.httpBody ?? ''}`);
    assert.deepEqual(b.client.value(), value);
    assert.equal((await edge.hook('info', room)).seq, 6);
    b.write([{ kind: 'set', path: ['n'], next: 6 }]);
    await until(() => b.client.unacked === 0, 'a write under the new version');

    const old = new Peer(edge.wsUrl, room, { writer: 'c' }); // still on version 1
    await until(() => old.messages.some((m) => m.t === 'reject') || old.closed, 'the old hello');
    assert.deepEqual(old.messages[0], {
      t: 'reject',
      room,
      reason: 'policy-version',
      expected: 2,
    });
    assert.equal(old.client.welcomed, false);
    for (const p of [b, old]) await p.close();
    await stop(edge);
  },
);

test(
  'edge: a forced eviction (the wake-up path, on demand) keeps the sockets and answers delta',
  { timeout: 60_000 },
  async () => {
    const room = 'wake';
    const edge = await start();
    const a = new Peer(edge.wsUrl, room, { writer: 'a' });
    const b = new Peer(edge.wsUrl, room, { writer: 'b' });
    await until(() => a.client.welcomed && b.client.welcomed, 'welcomes');
    a.write([{ kind: 'set', path: [], next: { n: 0 } }]);
    for (let n = 1; n <= 12; n++) b.write([{ kind: 'set', path: ['n'], next: n }]);
    await until(
      () => a.client.unacked === 0 && b.client.unacked === 0 && a.client.value().n === 12,
      'writes',
    );
    const before = await edge.hook('info', room);
    // Drop the object's memory exactly as hibernation does and rebuild it from storage.
    const evicted = await edge.hook('evict', room);
    assert.equal(evicted.sockets, 2);
    const woke = await edge.hook('info', room);
    assert.equal(woke.wakes, before.wakes + 1);
    assert.equal(woke.seq, before.seq);
    assert.equal(woke.instance, before.instance);
    assert.equal(woke.members, 2, 'both sockets rejoined silently');
    const seen = a.messages.length;
    // The same sockets go on writing and reading, with nothing re-sent to them.
    b.write([{ kind: 'set', path: ['n'], next: 13 }]);
    await until(() => a.client.value().n === 13 && b.client.unacked === 0, 'write after wake');
    assert.ok(
      a.messages.slice(seen).every((m) => m.t === 'env' || m.t === 'settled'),
      JSON.stringify(a.messages.slice(seen)),
    );
    // A client that reconnects after the wake-up gets a delta.
    await a.close();
    b.write([{ kind: 'set', path: ['n'], next: 14 }]);
    await until(() => b.client.unacked === 0, 'write while a is away');
    const a2 = new Peer(edge.wsUrl, room, { writer: 'a', client: a.client });
    await until(() => a2.welcomes.length, 'rewelcome');
    assert.deepEqual(a2.welcomes, ['delta']);
    await until(() => a2.client.value().n === 14, 'caught up');
    for (const p of [a2, b]) await p.close();
    await stop(edge);
  },
);

test(
  'edge: a real hibernation round trip: workerd evicts the idle object, sockets stay, nothing is lost',
  { timeout: 240_000 },
  async (t) => {
    const room = 'hibernate';
    // Default settings: with CHECKPOINT_EVERY overridden, local workerd was seen never to evict.
    const edge = await startEdge({ persist: dir });
    running.add(edge);
    const a = new Peer(edge.wsUrl, room, { writer: 'a' });
    const b = new Peer(edge.wsUrl, room, { writer: 'b' });
    await until(() => a.client.welcomed && b.client.welcomed, 'welcomes');
    a.write([{ kind: 'set', path: [], next: { n: 0 } }]);
    for (let n = 1; n <= 10; n++) b.write([{ kind: 'set', path: ['n'], next: n }]);
    await until(() => a.client.value()?.n === 10 && b.client.unacked === 0, 'writes');
    const before = await edge.hook('info', room);
    // Leave the object idle: workerd evicts an object whose only activity is hibernatable
    // WebSockets once it has been idle for a while (observed: within 40 s here). Every look
    // wakes it again, so look rarely (bounded).
    let after = before;
    for (let i = 0; i < 4 && after.incarnation === before.incarnation; i++) {
      await new Promise((r) => setTimeout(r, 40_000));
      after = await edge.hook('info', room);
    }
    if (after.incarnation === before.incarnation) {
      // Eviction is the runtime's choice; the forced-eviction test below covers the same path.
      t.skip(
        'local workerd kept the idle object in memory; the wake-up path ran only in the forced-eviction test',
      );
      for (const p of [a, b]) await p.close();
      await stop(edge);
      return;
    }
    assert.deepEqual([after.seq, after.instance, after.members], [before.seq, before.instance, 2]);
    assert.equal(a.closed, null);
    const seen = a.messages.length;
    b.write([{ kind: 'set', path: ['n'], next: 11 }]);
    await until(
      () => a.client.value().n === 11 && b.client.unacked === 0,
      'write after the wake-up',
    );
    assert.ok(
      a.messages.slice(seen).every((m) => m.t === 'env' || m.t === 'settled'),
      JSON.stringify(a.messages.slice(seen)),
    );
    // The woken object counts each socket on from the read state its attachment kept
    // (docs/rooms.md § The slow-reader rule, Across a hibernation): the readers' acknowledgements
    // still match its count, so they read past the bound (4 MiB by default), which the required
    // acknowledgements would otherwise close them at.
    const data = randomBytes(75_000).toString('base64'); // 100 KB, incompressible
    for (let i = 0; i < 48; i++) {
      b.write([{ kind: 'set', path: ['big'], next: `${i} ${data}` }]);
      await until(() => b.client.unacked === 0 || a.closed || b.closed, 'a big write');
      assert.deepEqual([a.closed, b.closed], [null, null], 'the readers after the wake-up');
    }
    await until(() => a.client.value().big === `47 ${data}`, 'the big writes');
    await a.close();
    const a2 = new Peer(edge.wsUrl, room, { writer: 'a', client: a.client });
    await until(() => a2.welcomes.length, 'rewelcome');
    assert.deepEqual(a2.welcomes, ['up-to-date']);
    for (const p of [a2, b]) await p.close();
    await stop(edge);
  },
);

test(
  'edge: a storage failure stalls the room, then unload + re-hydrate brings it back',
  { timeout: 60_000 },
  async () => {
    const room = 'stall';
    const edge = await start();
    const a = new Peer(edge.wsUrl, room, { writer: 'a' });
    const b = new Peer(edge.wsUrl, room, { writer: 'b' });
    await until(() => a.client.welcomed && b.client.welcomed, 'welcomes');
    a.write([{ kind: 'set', path: [], next: { k: 0 } }]);
    await until(() => a.client.unacked === 0, 'seed');
    // A real SQLite error on the next journal INSERT (a trigger raising ABORT).
    await edge.hook('fail-storage', room);
    a.write([{ kind: 'set', path: ['k'], next: 1 }]);
    await until(() => a.closed && b.closed, 'the room closes its sockets');
    assert.equal(a.closed.code, 1011);
    assert.match(a.closed.reason, /storage failed at seq 2/);
    // The write was never echoed: still in a's tail.
    assert.equal(a.client.unacked, 1);
    assert.ok(
      !b.messages.some((m) => m.t === 'env' && m.env.seq === 2),
      'nobody saw the unstored write',
    );
    // Storage comes back; the room was re-hydrated from it; the writer's resend lands.
    await edge.hook('heal-storage', room);
    const a2 = await until(async () => {
      const p = new Peer(edge.wsUrl, room, { writer: 'a', client: a.client });
      await p.ready;
      await until(() => p.closed || p.client.welcomed, 'admission');
      return p.client.welcomed ? p : null;
    }, 'readmission after recovery');
    await until(() => a2.client.unacked === 0, 'the resend is echoed');
    const info = await edge.hook('info', room);
    assert.equal(info.seq, 2);
    assert.equal(info.stalled, false);
    const b2 = new Peer(edge.wsUrl, room, { writer: 'b', client: b.client });
    await until(() => b2.client.value()?.k === 1, 'b sees the write');
    for (const p of [a2, b2]) await p.close();
    await stop(edge);
  },
);
