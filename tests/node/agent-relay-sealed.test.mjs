// The encrypted explicit relay transport (web/peer/relay-transport.js with a room secret; the
// sealed channel core src/room/sealed.hpp under web/glue/sealed.js) against the real relay core on
// a loopback ws server (tests/e2e/lib/room_server.mjs) whose `forward` hook is the relay's own
// view: every byte the relay sends out is searched for the plaintext, and the same hook plays a
// hostile relay that tampers, replays and reorders. Each refusal is named, and the session goes
// on carrying the next envelope.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import WebSocket from 'ws';
import { startRoomServer } from '../e2e/lib/room_server.mjs';
import { createRelayTransport } from '../../web/peer/relay-transport.js';
import { Harness, waitFor } from './lib/agent-harness.mjs';

const SECRET = 'a room secret shared out of band, 32+';

function peer(server, id, extra = {}) {
  const errors = [];
  const t = createRelayTransport({
    url: `${server.url}?writer=${id}&kind=agent`,
    room: 'lab',
    selfId: id,
    WebSocket,
    reconnectMinMs: 20,
    reconnectMaxMs: 200,
    secret: SECRET,
    onError: (e) => errors.push(e),
    ...extra,
  });
  const log = { open: [], text: [] };
  t.subscribe({
    open: (p) => log.open.push(p),
    text: (p, s) => log.text.push([p, s]),
  });
  return { t, log, errors };
}

// A loopback room server with the given relay view, and its sealed peers, all closed after the
// test whether it passed or not. `add` opens one more peer; `drop` closes one early.
async function sealedRoom(t, forward) {
  const server = await startRoomServer({ forward });
  const peers = [];
  t.after(async () => {
    for (const p of peers) await p.t.close();
    await server.close();
  });
  const add = (id, extra) => {
    const p = peer(server, id, extra);
    peers.push(p);
    return p;
  };
  const drop = async (p) => {
    await p.t.close();
    peers.splice(peers.indexOf(p), 1);
  };
  return { server, peers, add, drop };
}

// Alice and bob in a sealed room, their lanes to each other open.
async function openPair(t, forward) {
  const room = await sealedRoom(t, forward);
  const a = room.add('alice');
  const b = room.add('bob');
  await Promise.all([a.t.ready, b.t.ready]);
  await waitFor('lanes open', () => a.log.open.includes('bob') && b.log.open.includes('alice'));
  return { ...room, a, b };
}

// The signal in a text the relay is about to send, or null.
function signalOf(text) {
  try {
    const m = JSON.parse(text);
    return m.t === 'signal' ? m : null;
  } catch {
    return null;
  }
}

test('encrypted relay transport: what the relay forwards holds no plaintext, and text arrives intact', async (t) => {
  const forwarded = [];
  const { a, b } = await openPair(t, (text, send, ctx) => {
    forwarded.push({ to: ctx.writer, text });
    send(text);
  });
  assert.equal(a.t.encrypted, true);
  const secretWords = (i) => `LAUNCH-CODE-${i}-zebra "é" ${'x'.repeat(i)}`;
  for (let i = 0; i < 50; i++) {
    assert.equal(a.t.send('bob', JSON.stringify({ n: i, s: secretWords(i) })), true);
    assert.equal(b.t.send('alice', `reply ${secretWords(i)}`), true);
  }
  await waitFor('50 each way', () => b.log.text.length === 50 && a.log.text.length === 50);
  assert.deepEqual(
    b.log.text.map(([p, s]) => [p, JSON.parse(s).s]),
    Array.from({ length: 50 }, (_, i) => ['alice', secretWords(i)]),
  );
  assert.deepEqual(
    a.log.text.map(([, s]) => s),
    Array.from({ length: 50 }, (_, i) => `reply ${secretWords(i)}`),
  );
  // The relay's own view: routing (the signals and whom they go to) and nothing readable.
  const signals = forwarded.filter((x) => signalOf(x.text)?.data?.k === 'tether-env');
  assert.ok(signals.length >= 100, `the relay forwarded ${signals.length} envelope signals`);
  assert.ok(signals.some((x) => x.to === 'bob' && signalOf(x.text).from === 'alice'));
  const all = forwarded.map((x) => x.text).join('\n');
  for (const probe of [
    'LAUNCH-CODE',
    'zebra',
    'reply',
    '"n":',
    Buffer.from('LAUNCH-CODE').toString('base64'),
  ])
    assert.ok(!all.includes(probe), `the relay saw '${probe}'`);
  assert.ok(!all.includes(SECRET) && !all.includes(Buffer.from(SECRET).toString('base64')));
  assert.equal(a.errors.length + b.errors.length, 0, String(a.errors.concat(b.errors)));
});

test('encrypted relay transport: wrong secret, tampered, replayed, reordered and unsealed frames are refused by name; the session goes on', async (t) => {
  let mode = 'pass';
  let held = null;
  const room = await sealedRoom(t, (text, send, ctx) => {
    const sig = ctx.writer === 'bob' ? signalOf(text) : null;
    if (!sig || sig.from !== 'alice' || mode === 'pass') return send(text);
    if (mode === 'replay') {
      send(text);
      send(text);
    } else if (mode === 'tamper') {
      const raw = Buffer.from(sig.data.text, 'base64');
      raw[raw.length - 20] ^= 1;
      send(JSON.stringify({ ...sig, data: { ...sig.data, text: raw.toString('base64') } }));
      send(text); // the genuine one right after: it still opens
    } else if (mode === 'reorder') {
      if (!held) held = text;
      else {
        send(text);
        send(held);
        held = null;
      }
    }
  });
  const a = room.add('alice');
  const b = room.add('bob');
  const eve = room.add('eve', { secret: 'some other secret of enough bytes' });
  const plain = room.add('plain', { secret: undefined });
  await Promise.all(room.peers.map((p) => p.t.ready));
  const codes = () => b.errors.map((e) => e.code);
  const texts = () => b.log.text.map(([p, s]) => `${p}:${s}`);
  // Eve's hello (the epoch handshake, when the lanes open) is refused: she is never linked, so
  // bob never reports her open and she can seal nothing to him.
  await waitFor('wrong-secret', () => codes().includes('wrong-secret'));
  await waitFor(
    'lanes open',
    () =>
      b.log.open.includes('alice') &&
      ['eve', 'plain'].every((x) => b.t.stats.sealed.awaiting.includes(x)),
  );
  assert.ok(!b.log.open.includes('eve') && !b.log.open.includes('plain'));
  assert.equal(eve.t.send('bob', 'from the wrong secret'), false);
  assert.equal(plain.t.encrypted, false);
  assert.equal(plain.t.send('bob', '{"v":1}'), true);
  await waitFor('unsealed', () => codes().includes('unsealed'));

  mode = 'tamper';
  a.t.send('bob', 'after tamper');
  await waitFor('tampered then the genuine one', () => texts().includes('alice:after tamper'));
  assert.ok(codes().includes('tampered'));

  mode = 'replay';
  a.t.send('bob', 'replayed once');
  await waitFor('replay', () => codes().includes('replay'));
  assert.equal(texts().filter((x) => x === 'alice:replayed once').length, 1);

  mode = 'reorder';
  a.t.send('bob', 'first');
  a.t.send('bob', 'second');
  await waitFor('reorder', () => codes().includes('reorder'));
  assert.ok(texts().includes('alice:second'));
  assert.ok(!texts().includes('alice:first'), 'the older frame, delivered late, is refused');

  mode = 'pass';
  a.t.send('bob', 'still going');
  await waitFor('the session survives', () => texts().includes('alice:still going'));
  assert.deepEqual(
    texts(),
    ['alice:after tamper', 'alice:replayed once', 'alice:second', 'alice:still going'],
    'nothing from eve or the plaintext peer reached the application',
  );
  for (const e of b.errors) assert.match(e.message, /refused \([a-z-]+\): /);
  assert.equal(b.t.stats.sealed.refused, b.errors.length);
});

// The kind byte of a sealed frame in a signal the relay forwards (0 text, 1 hello, 2 answer), or null.
function sealedKind(sig) {
  if (sig?.data?.k !== 'tether-env') return null;
  return Buffer.from(sig.data.text, 'base64')[1];
}

test('encrypted relay transport: a relay that records a session and replays it to the restarted receiver gets every frame refused (wrong-epoch)', async (t) => {
  const recorded = []; // what the relay sent bob from alice, verbatim, until bob restarted
  let recording = true;
  const sendTo = new Map(); // the relay's latest way to each member's socket
  const room = await openPair(t, (text, send, ctx) => {
    sendTo.set(ctx.writer, send);
    const sig = ctx.writer === 'bob' ? signalOf(text) : null;
    if (recording && sig?.from === 'alice' && sig.data?.k === 'tether-env') recorded.push(text);
    send(text);
  });
  const { a, b } = room;
  for (let i = 0; i < 10; i++) assert.equal(a.t.send('bob', `recorded ${i}`), true);
  await waitFor('bob got all 10', () => b.log.text.length === 10);
  const textFrames = 10; // beside them the recording holds the epoch handshake's frames

  // Bob restarts: a new transport, so a new session and a new epoch, remembering nothing.
  recording = false;
  await room.drop(b);
  const b2 = room.add('bob');
  await b2.t.ready;
  await waitFor('the lane to alice reopens', () => b2.log.open.includes('alice'));
  // The relay replays the whole recorded session to the new bob, handshake frames included.
  const replay = sendTo.get('bob');
  for (const text of recorded) replay(text);
  const wrongEpoch = () => b2.errors.filter((e) => e.code === 'wrong-epoch').length;
  await waitFor(
    'every recorded text refused or taken',
    () => wrongEpoch() + b2.log.text.length >= textFrames,
  );
  assert.deepEqual(b2.log.text, [], 'nothing of the recorded session reached the application');
  for (const e of b2.errors) assert.equal(e.code, 'wrong-epoch', e.message);
  // The session with the live alice goes on.
  assert.equal(a.t.send('bob', 'live after the replay'), true);
  await waitFor('the live text', () => b2.log.text.length === 1);
  assert.deepEqual(b2.log.text, [['alice', 'live after the replay']]);
  assert.equal(wrongEpoch(), textFrames);
});

test('encrypted relay transport: a relay that withholds the epoch handshake stops the traffic, never lets it through unbound', async (t) => {
  const toBob = [];
  const room = await sealedRoom(t, (text, send, ctx) => {
    const sig = signalOf(text);
    // Everything bob sends alice on the lanes (his hello and answers) is dropped.
    if (ctx.writer === 'alice' && sig?.from === 'bob' && sig.data?.k === 'tether-env') return;
    if (ctx.writer === 'bob' && sig?.from === 'alice') toBob.push(sig);
    send(text);
  });
  const a = room.add('alice');
  const b = room.add('bob');
  await Promise.all([a.t.ready, b.t.ready]);
  // Alice's hello reaches bob; his hello back, which would link both, never arrives.
  await waitFor(
    'both wait on the handshake',
    () =>
      a.t.stats.sealed.awaiting.includes('bob') &&
      b.t.stats.sealed.awaiting.includes('alice') &&
      b.t.stats.sealed.hellosOpened >= 1,
  );
  assert.deepEqual(a.log.open, []);
  assert.deepEqual(b.log.open, []);
  assert.deepEqual(a.t.openPeers(), []);
  for (let i = 0; i < 5; i++) {
    assert.equal(a.t.send('bob', `withheld ${i}`), false);
    assert.equal(b.t.send('alice', `withheld ${i}`), false);
  }
  assert.equal(a.t.stats.sealed.sealed + b.t.stats.sealed.sealed, 0, 'no text was sealed');
  assert.ok(toBob.length > 0);
  assert.ok(
    toBob.every((sig) => sealedKind(sig) === 1 || sealedKind(sig) === 2),
    'only handshake frames went from alice to bob',
  );
  assert.deepEqual(b.log.text, []);
});

test('encrypted relay transport: a secret too short is refused before anything connects', () => {
  assert.throws(
    () =>
      createRelayTransport({
        url: 'ws://127.0.0.1:1/',
        room: 'lab',
        selfId: 'a',
        WebSocket,
        secret: 'short',
      }),
    /room secret is 5 bytes; it must be at least 16/,
  );
});

test('tether agent: --secret-file and $TETHER_ROOM_SECRET seal the sidecars; status says encrypted or not; the secret is never shown', async (t) => {
  const forwarded = [];
  const server = await startRoomServer({
    forward: (text, send) => {
      forwarded.push(text);
      send(text);
    },
  });
  t.after(() => server.close());
  const h = new Harness(t);
  const A = h.dir('alice');
  const B = h.dir('bob');
  const C = h.dir('carol');
  const secretFile = path.join(h.base, 'secret.txt');
  const secret = 'cli room secret 5f1d2c3b4a69788796a5b4c3d2e1f0';
  fs.writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
  await h.join(A, 'alice', server.url, ['--secret-file', secretFile]);
  await h.join(B, 'bob', server.url, [], { env: { TETHER_ROOM_SECRET: secret } });
  await h.join(C, 'carol', server.url, ['--no-secret']);
  const sa = await h.run(A, ['status'], { json: false });
  assert.match(sa.stdout, /; encrypted \(envelopes sealed with the room secret/);
  assert.equal((await h.ok(B, ['status'])).encrypted, true);
  const sc = await h.run(C, ['status'], { json: false });
  assert.match(sc.stdout, /; unencrypted \(no room secret: the relay reads every envelope/);
  assert.equal((await h.ok(C, ['status'])).encrypted, false);
  await waitFor('bob sees alice', async () =>
    (await h.ok(B, ['peers'])).peers?.some((p) => p.id === 'alice' && p.open),
  );
  await h.ok(A, ['send', 'bob', 'PLAINTEXT-CANARY over the sealed relay']);
  const got = await waitFor('bob reads it', async () => {
    const r = await h.ok(B, ['read']);
    return r.messages?.length ? r.messages : null;
  });
  assert.equal(got[0].envelope.payload.text, 'PLAINTEXT-CANARY over the sealed relay');
  assert.ok(!forwarded.join('\n').includes('PLAINTEXT-CANARY'), 'the relay saw the plaintext');
  const short = await h.run(A, ['join', '--secret', 'short'], {});
  assert.notEqual(short.code, 0);
  assert.match(
    short.stderr + short.stdout,
    /--secret: the room secret is 5 bytes; it must be at least 16/,
  );
  h.assertNoSecret(secret, {
    allowedFiles: [path.join(A, 'room-secret'), path.join(B, 'room-secret'), secretFile],
  });
  assert.equal(fs.statSync(path.join(A, 'room-secret')).mode & 0o777, 0o600);
});
