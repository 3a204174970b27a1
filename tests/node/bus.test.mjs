// tether/bus over the WASM build: the golden vectors (the same ones the native suite checks), the
// declarations under strict tsc, and buses talking through PeerTransport endpoints of an in-memory
// network (tests/node/lib/loop_transport.mjs) that can be connected-but-not-open and can reject
// sends, stepped explicitly with a fake clock.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { loadBus } from '@tether-rt/tether/bus';
import { LoopNet } from './lib/loop_transport.mjs';

const fixture = (name) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/bus/${name}`, import.meta.url), 'utf8'));
const api = await loadBus();
const T0 = 1_700_000_000_000;

function invalidText(v) {
  if (v.text !== undefined) return v.text;
  return v.repeat.prefix + v.repeat.char.repeat(v.repeat.count) + v.repeat.suffix;
}

// A room of buses on one LoopNet, with a shared fake clock and per-bus logs of what handlers saw.
function room(names, { handoffs = [] } = {}) {
  const net = new LoopNet();
  const clock = { t: T0 };
  const nodes = {};
  for (const name of names) {
    const ep = net.endpoint(`origin-${name}`);
    const log = {
      messages: [],
      rejected: [],
      handoffs: [],
      stored: [],
      expired: [],
      confirmations: [],
    };
    const bus = api.createBus({
      self: { streamId: name, role: 'agent', name: `Agent ${name}`, instanceId: `${name}-1` },
      transport: ep,
      now: () => clock.t,
      seed: names.indexOf(name) + 1,
      autoTick: false,
      acceptHandoffs: handoffs.includes(name),
      // The delivery info rides along non-enumerably, so the envelope still serialises as received.
      message: (e, info) =>
        log.messages.push(
          Object.defineProperties(e, {
            replayed: { value: info.replayed },
            via: { value: info.peer },
          }),
        ),
      rejected: (err, peer) => log.rejected.push({ ...err, peer }),
      handoff: (h) => log.handoffs.push(h),
      handoffStored: (h) => log.stored.push(h),
      handoffExpired: (h) => log.expired.push(h),
      confirmation: (c) => log.confirmations.push(c),
    });
    nodes[name] = { bus, ep, log, origin: `origin-${name}` };
  }
  const link = (a, b) => {
    net.connect(nodes[a].origin, nodes[b].origin);
    net.open(nodes[a].origin, nodes[b].origin);
    net.deliver();
  };
  return { net, clock, nodes, link };
}

const chats = (log) =>
  log.messages
    .filter((m) => m.type === 'chat')
    .map((m) => m.payload.text + (m.replayed ? '*' : ''));

test('bus: golden envelopes parse to their canonical form or their refusal', () => {
  const f = fixture('envelopes.json');
  assert.ok(f.valid.length >= 8);
  for (const v of f.valid) {
    const r = api.parseEnvelope(v.text);
    assert.equal(r.ok, true, v.name);
    const s = api.serializeEnvelope(r.envelope);
    assert.equal(s.ok, true, v.name);
    assert.equal(s.text, v.canonical, v.name);
    assert.equal(api.isTransient(r.envelope.type), v.transient, v.name);
  }
  assert.ok(f.invalid.length >= 25);
  // A JS string is always Unicode text, so the invalid-UTF-8 vectors (text_b64) cannot cross this
  // API; the native suite and the fuzzer cover them.
  for (const v of f.invalid.filter((x) => x.text_b64 === undefined)) {
    const r = api.parseEnvelope(invalidText(v));
    assert.equal(r.ok, false, v.name);
    assert.equal(r.code, v.code, v.name);
    assert.equal(r.field, v.field, v.name);
    assert.ok(r.detail.length > 0);
  }
  assert.equal(api.limits.historyMaxRequest, 200);
  assert.equal(api.limits.handoffMaxRequestBytes, 32000);
});

test("bus: parseEnvelope through the staged inbox gives JSON.parse's values and the core's refusals", () => {
  const from = { streamId: 's', role: 'agent', name: 'Ünï 😀', instanceId: 'i' };
  const base = { v: 1, id: 'm-1', type: 'chat', from, to: null, topic: null, ts: T0 };
  // The scanner's shapes (payload text handed over verbatim) and the DOM path's (escaped header,
  // exponents, -0) must come out as the same values.
  const payloads = [
    {
      text: 'caf\u00e9 😀 "q" \\ \n \u2028',
      n: [0, -1.5, 12345678901234, 0.001, 1e21],
      deep: [[[[{}]]]],
    },
    'x'.repeat(200000),
    null,
  ];
  for (const payload of payloads) {
    const text = JSON.stringify({ ...base, payload });
    const r = api.parseEnvelope(text);
    assert.equal(r.ok, true);
    assert.deepEqual(r.envelope, JSON.parse(text));
  }
  const escaped = JSON.stringify({ ...base, payload: 1 }).replace('"m-1"', '"m\\u002d1"');
  assert.deepEqual(api.parseEnvelope(escaped).envelope, { ...base, payload: 1 });
  const minusZero = JSON.stringify({ ...base, payload: 1 }).replace(
    '"payload":1',
    '"payload":[-0,1e2]',
  );
  assert.deepEqual(api.parseEnvelope(minusZero).envelope.payload, [0, 100]);
  // A lone surrogate (JSON.parse would take it) is refused, in the text and in an escape.
  const lone = JSON.stringify({ ...base, payload: 1 }).replace('"m-1"', '"m\ud800"');
  assert.equal(api.parseEnvelope(lone).code, 'not_json');
  assert.equal(api.parseEnvelope(lone.replace('\ud800', '\\ud800')).code, 'not_json');
  // Too large, by its UTF-8 byte count, whether it is long in units or in bytes.
  const big = JSON.stringify({ ...base, payload: 'é'.repeat(140000) });
  const r = api.parseEnvelope(big);
  assert.equal(r.code, 'too_large');
  assert.match(r.detail, new RegExp(`${Buffer.byteLength(big)} bytes`));
  assert.equal(
    api.parseEnvelope(JSON.stringify({ ...base, payload: 'x'.repeat(300000) })).code,
    'too_large',
  );
  // Small after large: the staging buffer is reused, nothing of the last message leaks in.
  assert.equal(api.parseEnvelope('{}').code, 'missing_field');
  assert.equal(api.parseEnvelope('').code, 'not_json');
  assert.equal(api.parseEnvelope(JSON.stringify(base)).envelope.payload, null);
});

test('bus: a special character at every offset of a string run reads back as JSON.parse reads it', () => {
  // The scanner reads string runs sixteen bytes at a time (WebAssembly SIMD-128): a quote, an
  // escape, DEL or a multi-byte character on either side of a block must end the run exactly
  // there, or the UTF-16 spans the glue slices by (and the values) come out wrong; a raw control
  // character or a lone surrogate must still be refused wherever it falls.
  const base = { v: 1, id: 'm-1', type: 'chat', to: null, topic: null, ts: T0 };
  const identity = { streamId: 's', role: 'agent', instanceId: 'i' };
  const messages = [];
  const handlers = [];
  const rx = api.createBus({
    self: { streamId: 'rx', role: 'agent', name: 'Rx', instanceId: 'rx-1' },
    transport: {
      selfId: 'origin-rx',
      openPeers: () => ['origin-s'],
      send: () => true,
      subscribe: (h) => (handlers.push(h), () => {}),
    },
    now: () => T0,
    autoTick: false,
    message: (e) => messages.push(e),
  });
  for (const ch of ['"', '\\', '\n', '\u007f', 'é', '€', '😀', '\u2028']) {
    for (let k = 0; k <= 40; k++) {
      const s = 'a'.repeat(k) + ch + 'b'.repeat(40 - k);
      const text = JSON.stringify({
        ...base,
        id: `m-${k}`,
        from: { ...identity, name: s },
        payload: { [s]: [s, k] },
      });
      const r = api.parseEnvelope(text);
      assert.equal(r.ok, true, `${JSON.stringify(ch)} after ${k}`);
      assert.deepEqual(r.envelope, JSON.parse(text));
      const before = messages.length;
      handlers[0].text('origin-s', text);
      assert.equal(messages.length, before + 1, `${JSON.stringify(ch)} after ${k}: delivered`);
      assert.deepEqual(messages[messages.length - 1], JSON.parse(text));
    }
  }
  for (const bad of ['\u0001', '\u001f', '\ud800', '\udc00']) {
    for (let k = 0; k <= 40; k++) {
      const s = 'a'.repeat(k) + bad + 'b'.repeat(40 - k);
      // Raw in the text: JSON.stringify would escape the control and keep the surrogate lone.
      const text = `{"v":1,"id":"m","type":"chat","from":{"streamId":"s","role":"agent","name":"n","instanceId":"i"},"ts":${T0},"payload":"${s}"}`;
      assert.equal(api.parseEnvelope(text).code, 'not_json', `${JSON.stringify(bad)} after ${k}`);
    }
  }
  rx.close();
});

test('bus: direct messages, broadcasts and their envelopes cross real PeerTransport endpoints', () => {
  const { nodes, link } = room(['A', 'B', 'C']);
  link('A', 'B');
  link('A', 'C');
  const d = nodes.A.bus.send('B', 'chat', { text: 'hi B' }, { topic: 'work' });
  assert.equal(d.ok, true);
  assert.equal(d.status, 'sent');
  const b = nodes.A.bus.broadcast('chat', { text: 'hi all' });
  assert.equal(b.ok, true);
  assert.deepEqual(b.sentTo.sort(), ['origin-B', 'origin-C']);
  nodes.A.ep.net.deliver();
  assert.deepEqual(chats(nodes.B.log), ['hi B', 'hi all']);
  assert.deepEqual(chats(nodes.C.log), ['hi all']);
  const got = nodes.B.log.messages.find((m) => m.payload.text === 'hi B');
  assert.equal(got.id, d.id);
  assert.equal(got.topic, 'work');
  assert.deepEqual(got.from, { streamId: 'A', role: 'agent', name: 'Agent A', instanceId: 'A-1' });
  const peers = nodes.A.bus.peers();
  assert.deepEqual(peers.map((p) => [p.peer, p.streamId, p.open]).sort(), [
    ['origin-B', 'B', true],
    ['origin-C', 'C', true],
  ]);
});

test('bus: peerConnected before the channel opens: rejected sends queue and flush in order on open', () => {
  const { net, nodes, link } = room(['A', 'B']);
  link('A', 'B');
  net.close('origin-A', 'origin-B');
  // B is offline; A keeps sending. Nothing is lost, nothing reorders.
  for (const t of ['one', 'two', 'three'])
    assert.equal(nodes.A.bus.send('B', 'chat', { text: t }).status, 'queued');
  assert.equal(nodes.A.bus.queued('B'), 3);
  // The channel reports open but the first send is rejected (closed again meanwhile).
  nodes.A.ep.rejectNext = 2; // the announce and the first replay
  net.open('origin-A', 'origin-B');
  assert.equal(nodes.A.bus.queued('B'), 3);
  net.deliver();
  // B's announce reaching A is the next retry point: everything goes, in order.
  assert.equal(nodes.A.bus.queued('B'), 0);
  net.deliver();
  assert.deepEqual(chats(nodes.B.log), ['one', 'two', 'three']);
  // The transport's explicit false is honoured for transient traffic too: reported, never queued.
  nodes.A.ep.rejectNext = 1;
  const t = nodes.A.bus.send('B', 'swarm_have', { fileId: 'x', indexes: [1] });
  assert.equal(t.ok, false);
  assert.equal(t.code, 'not_accepted');
  assert.equal(nodes.A.bus.queued('B'), 0);
});

test('bus: a peer the roster dropped is queued for even while its dead channel still looks open', () => {
  const { net, nodes, link } = room(['A', 'B']);
  link('A', 'B');
  // B's tab closed: the relay dropped it, but A's channel has not noticed and would swallow sends.
  net.unlist('origin-A', 'origin-B', { dead: true });
  for (const t of ['one', 'two'])
    assert.equal(nodes.A.bus.send('B', 'chat', { text: t }).status, 'queued');
  // B is back on the roster; the old channel still looks open but carries nothing: still held.
  net.relist('origin-A', 'origin-B');
  assert.equal(nodes.A.bus.send('B', 'chat', { text: 'three' }).status, 'queued');
  net.deliver();
  assert.deepEqual(chats(nodes.B.log), []);
  assert.equal(nodes.A.bus.queued('B'), 3);
  // The restarted B negotiates a new connection: the transport closes the old one, opens the new.
  net.links.get(net.key('origin-A', 'origin-B')).dead = false;
  net.close('origin-A', 'origin-B');
  net.open('origin-A', 'origin-B');
  net.deliver();
  net.deliver();
  assert.deepEqual(chats(nodes.B.log), ['one', 'two', 'three']);
  assert.equal(nodes.A.bus.queued('B'), 0);
});

test('bus: after a signaling blip the live channel is used again once it carries a message', () => {
  const { net, nodes, link } = room(['A', 'B']);
  link('A', 'B');
  net.unlist('origin-A', 'origin-B'); // B's signaling dropped; the channel is alive
  assert.equal(nodes.A.bus.send('B', 'chat', { text: 'during' }).status, 'queued');
  net.relist('origin-A', 'origin-B');
  net.deliver();
  assert.deepEqual(chats(nodes.B.log), []);
  // B's transport reports its signaling back: B's bus re-announces, which proves the channel.
  nodes.B.ep.fire('reconnect');
  net.deliver();
  net.deliver();
  assert.deepEqual(chats(nodes.B.log), ['during']);
  assert.equal(nodes.A.bus.send('B', 'chat', { text: 'after' }).status, 'sent');
  net.deliver();
  assert.deepEqual(chats(nodes.B.log), ['during', 'after']);
});

test("bus: a late joiner gets broadcasts and its own directs from history, never other peers' directs", () => {
  const { net, nodes, link } = room(['A', 'B', 'C']);
  link('A', 'B');
  nodes.A.bus.broadcast('chat', { text: 'room news' });
  nodes.A.bus.send('B', 'chat', { text: 'secret for B' });
  nodes.A.bus.send('C', 'chat', { text: 'for C (queued)' });
  net.deliver();
  link('A', 'C');
  assert.deepEqual(chats(nodes.C.log), ['for C (queued)']);
  const h = nodes.C.bus.requestHistory('A', 0); // non-positive: 50
  assert.equal(h.ok, true);
  net.deliver();
  assert.deepEqual(chats(nodes.C.log), ['for C (queued)', 'room news*']);
  assert.ok(!nodes.C.log.messages.some((m) => m.payload.text === 'secret for B'));
  assert.deepEqual(
    nodes.A.bus.history(10, 'C').map((e) => e.payload.text),
    ['room news', 'for C (queued)'],
  );
});

test('bus: a hostile peer (junk, forged identity, misaddressed) is refused and the room keeps working', () => {
  const { net, nodes, link } = room(['A', 'B']);
  link('A', 'B');
  const evil = net.endpoint('origin-evil');
  net.connect('origin-evil', 'origin-B');
  net.open('origin-evil', 'origin-B');
  const env = (over) =>
    JSON.stringify({
      v: 1,
      id: 'e1',
      type: 'chat',
      from: { streamId: 'evil', role: 'x', name: 'E', instanceId: 'e' },
      to: null,
      topic: null,
      ts: T0,
      payload: {},
      ...over,
    });
  const junk = [
    '{"v":1,',
    'x'.repeat(api.limits.maxFileChunkEnvelopeBytes + 1),
    '[]',
    env({ v: 2 }),
    env({ id: 'a\u0000b' }),
    env({ type: 'rm -rf' }),
  ];
  for (const text of junk) evil.send('origin-B', text);
  evil.send('origin-B', env({ type: 'ping' })); // binds origin-evil to stream "evil"
  evil.send(
    'origin-B',
    env({ from: { streamId: 'A', role: 'agent', name: 'Agent A', instanceId: 'A-1' } }),
  ); // then claims to be A
  evil.send('origin-B', env({ to: 'someone-else' }));
  net.deliver();
  const codes = nodes.B.log.rejected.map((r) => r.code);
  assert.deepEqual(codes, [
    'not_json',
    'too_large',
    'not_object',
    'bad_version',
    'nul_in_string',
    'unknown_type',
    'forged_identity',
    'not_for_us',
  ]);
  assert.ok(nodes.B.log.rejected.every((r) => r.peer === 'origin-evil' && r.detail.length > 0));
  nodes.A.bus.send('B', 'chat', { text: 'still fine' });
  net.deliver();
  assert.deepEqual(chats(nodes.B.log), ['still fine']);
  assert.equal(
    nodes.B.log.messages.filter((m) => m.from.streamId === 'A' && m.via === 'origin-evil').length,
    0,
  );
});

test("bus: a received message reaches the handler with parseEnvelope's values, whichever path delivered it", () => {
  // The first message from a peer comes with a peer event (the core's event text); later ones
  // the core hands back as the text the glue passed (read by JSON.parse, canonical key order);
  // an exponent in the payload is left to the core's DOM path. All must look the same.
  const { net, nodes, link } = room(['A', 'B']);
  link('A', 'B');
  const src = net.endpoint('origin-C');
  net.connect('origin-C', 'origin-B');
  net.open('origin-C', 'origin-B');
  net.deliver();
  const from = '"from":{"instanceId":"c1","name":"C","role":"agent","streamId":"C"}';
  const texts = [
    `{"payload": { "text" : "h\\u0069 \u00e9", "n" : 1.50, "k":1, "k":2 }, "ts": 1700000000000.5, ${from}, "type":"chat", "id":"c-1", "v":1}`,
    `{"v":1,"id":"c-2","type":"file_chunk",${from},"to":"B","topic":"t","ts":1,"payload":{"transferId":"x","data":"QUJD"}}`,
    `{"v":1,"id":"c-3","type":"event",${from},"ts":2}`,
    `{"v":1,"id":"c-4","type":"chat",${from},"ts":3,"payload":{"n":1e2,"big":12345678901234567890}}`,
    `{"v":1,"id":"c-5","type":"chat",${from},"ts":4,"payload":{ "text" : "again" }}`,
  ];
  for (const t of texts) src.send('origin-B', t);
  net.deliver();
  const got = nodes.B.log.messages.filter((m) => m.from.streamId === 'C');
  assert.deepEqual(
    got.map((m) => JSON.stringify(m)),
    texts.map((t) => JSON.stringify(api.parseEnvelope(t).envelope)),
  );
  assert.ok(got.every((m) => m.replayed === false && m.via === 'origin-C'));
  assert.deepEqual(Object.keys(got[2]), [
    'v',
    'id',
    'type',
    'from',
    'to',
    'topic',
    'ts',
    'payload',
  ]);
  assert.equal(got[2].payload, null);
  assert.equal(got[3].payload.n, 100);
  // Kept in history as received text (file_chunk is transient), replayed with the same values.
  const history = nodes.B.bus.history(10, 'C').filter((e) => e.from.streamId === 'C');
  assert.deepEqual(
    history.map((e) => e.id),
    ['c-1', 'c-3', 'c-4', 'c-5'],
  );
  assert.deepEqual(history[0], api.parseEnvelope(texts[0]).envelope);
  // A handler that sends while handling a delivered message: its send goes out and arrives.
  nodes.B.bus.subscribe({
    message: (e) => e.id === 'c-6' && nodes.B.bus.send('A', 'chat', { text: 'reply to c-6' }),
  });
  src.send('origin-B', `{"v":1,"id":"c-6","type":"chat",${from},"ts":5,"payload":{"text":"ping"}}`);
  net.deliver();
  assert.deepEqual(chats(nodes.A.log), ['reply to c-6']);
});

// A bus on a bare transport whose text handler the test calls itself, also from inside the bus's
// own handlers (while earlier events of the same drain are still waiting to be read).
function bareBus(hooks = {}) {
  const handlers = [];
  const got = [];
  const text = (peer, t) => handlers[0].text(peer, t);
  const bus = api.createBus({
    self: { streamId: 'me', role: 'agent', name: 'Me', instanceId: 'me-1' },
    transport: {
      openPeers: () => ['p1', 'p2'],
      send: () => true,
      subscribe(h) {
        handlers.push(h);
        return () => {};
      },
    },
    now: () => T0,
    autoTick: false,
    message: (e, info) => {
      got.push({ json: JSON.stringify(e), peer: info.peer, envelope: e });
      hooks.message?.(e, text);
    },
    peer: (peer) => hooks.peer?.(peer, text),
  });
  return { bus, got, text };
}

test("bus: a sender's repeated strings (from, to, topic, payload keys) read back as each text says", () => {
  // The glue keeps the strings of the last message it read through spans and reuses them when the
  // core reports the same bytes again (bindings/bus_bindings.cpp: Repeats). Every change of
  // sender, `to`, topic or payload keys, escaped and non-ASCII keys, payloads without a tape, and
  // texts that arrive while an earlier message's event still waits must read as parseEnvelope
  // reads each text, into objects of their own.
  const fromA = '"from":{"streamId":"A","role":"agent","name":"Ann","instanceId":"a1"}';
  const fromA2 = '"from":{"streamId":"A","role":"agent","name":"Ann","instanceId":"a2"}';
  const fromB = '"from":{"streamId":"B","role":"robot","name":"B\u00e9","instanceId":"b1"}';
  const big = JSON.stringify(
    Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i])),
  );
  const env = (id, from, rest) => `{"v":1,"id":"${id}","type":"chat",${from},"ts":1${rest}}`;
  const texts = [
    ['p1', env('m1', fromA, ',"payload":{"text":"one"}')],
    ['p1', env('m2', fromA, ',"payload":{"text":"two"}')],
    ['p1', env('m3', fromA, ',"to":"me","topic":"t1","payload":{"text":"three","n":3}')],
    ['p1', env('m4', fromA, ',"to":"me","topic":"t1","payload":{"text":"four","n":4}')],
    ['p1', env('m5', fromA, ',"topic":"t2","payload":{"n":5,"text":"five"}')],
    ['p1', env('m6', fromA, ',"topic":"t2","payload":{"tex\\u0074":"six","n":6}')],
    ['p1', env('m7', fromA, ',"payload":{"text":"seven","n":7}')],
    ['p1', env('m8', fromA, ',"payload":{"text":{"text":"eight"},"n":[8]}')],
    ['p1', env('m9', fromA, ',"payload":{"text":"nine","n":9}')],
    ['p1', env('m10', fromA, ',"payload":{"t\u00e9xt":"ten","n":10}')],
    ['p1', env('m11', fromA, ',"payload":{"t\u00e9xt":"eleven","n":11}')],
    ['p1', env('m12', fromA, `,"payload":${big}`)],
    ['p1', env('m13', fromA, ',"payload":{"t\u00e9xt":"thirteen","n":13}')],
    ['p1', env('m14', fromA, ',"payload":{"__proto__":"x","n":14}')],
    ['p1', env('m15', fromA, ',"payload":{"__proto__":"y","n":15}')],
    ['p1', env('m16', fromA, ',"payload":"scalar"')],
    ['p1', env('m17', fromA, ',"payload":{"text":"seventeen"}')],
    ['p1', env('m18', fromA, ',"payload":{"text":"eighteen","text":"again"}')],
    ['p1', env('m19', fromA, ',"payload":{"text":"nineteen","text":"again"}')],
    ['p1', env('m20', fromA2, ',"payload":{"text":"twenty"}')],
    ['p2', env('m21', fromB, ',"to":"me","payload":{"text":"twenty-one"}')],
    ['p2', env('m22', fromB, ',"to":"me","payload":{"text":"twenty-two"}')],
    ['p1', env('m23', fromA2, ',"to":"me","topic":"t3","payload":{"text":"twenty-three"}')],
    ['p1', env('m24', fromA2, ',"to":"me","topic":"t3","payload":{"text":"twenty-four"}')],
  ];
  // B's first message comes with a peer event, and its message event waits behind it: m22 arrives
  // from the peer handler, so both of B's message events are read after their text was replaced.
  let nested = false;
  const { got, text } = bareBus({
    peer: (info, send) => {
      if (info.streamId === 'B' && !nested) {
        nested = true;
        send(...texts[21]);
      }
    },
  });
  for (let i = 0; i < texts.length; i++) if (i !== 21) text(...texts[i]);
  assert.ok(nested);
  assert.deepEqual(
    got.map((g) => g.json),
    texts.map(([, t]) => JSON.stringify(api.parseEnvelope(t).envelope)),
  );
  assert.deepEqual(
    got.map((g) => g.peer),
    texts.map(([p]) => p),
  );
  assert.equal(Object.getPrototypeOf(got[13].envelope.payload), Object.prototype);
  assert.equal(Object.getOwnPropertyDescriptor(got[14].envelope.payload, '__proto__').value, 'y');
  // Objects are the envelope's own: changing one changes no other.
  got[0].envelope.from.name = 'changed';
  got[0].envelope.payload.text = 'changed';
  assert.equal(got[1].envelope.from.name, 'Ann');
  assert.equal(got[1].envelope.payload.text, 'two');
});

test('bus: an ordinary message is received without reading the clock; a ping reads it', () => {
  // The core asks for the time only for texts whose handling reads it (Bus::reads_time, a held
  // channel's wake); the glue then passes the text again with now(). A chat, an ack or a command
  // costs no clock read, a ping's pong carries the time read for it.
  const sent = [];
  const handlers = [];
  let reads = 0;
  const clock = () => {
    reads++;
    return T0 + 500;
  };
  api.createBus({
    self: { streamId: 'me', role: 'agent', name: 'Me', instanceId: 'me-1' },
    transport: {
      openPeers: () => ['p1'],
      send: (peer, text) => sent.push(JSON.parse(text)),
      subscribe(h) {
        handlers.push(h);
        return () => {};
      },
    },
    now: clock,
    autoTick: false,
  });
  const from = '"from":{"streamId":"A","role":"agent","name":"Ann","instanceId":"a1"}';
  const text = (id, type, rest = '') =>
    handlers[0].text('p1', `{"v":1,"id":"${id}","type":"${type}",${from},"ts":1${rest}}`);
  text('m0', 'chat', ',"payload":{"text":"first"}'); // binds A (a peer event)
  sent.length = 0;
  reads = 0;
  text('m1', 'chat', ',"payload":{"text":"hi"}');
  text('m2', 'ack', ',"to":"me","payload":{"messageId":"nothing-of-ours"}');
  text('m3', 'command', ',"to":"me","payload":{"run":"ls"}');
  text('m4', 'chat', ',"payload":{"text":"hi \\u00e9"}');
  assert.equal(reads, 0);
  assert.deepEqual(sent, []);
  text('m5', 'ping', ',"to":"me","payload":{"ts":7}');
  assert.equal(reads, 2); // the ping's, and the pong's transmit result
  assert.equal(sent.length, 1);
  assert.equal(sent[0].type, 'pong');
  assert.equal(sent[0].ts, T0 + 500);
  assert.equal(sent[0].payload.pongTs, T0 + 500);
});

test('bus: with peerIdsAreStreams a peer id can only speak for its own stream, from the first message', () => {
  const net = new LoopNet();
  const rejected = [];
  const messages = [];
  const ep = net.endpoint('B');
  const bus = api.createBus({
    self: { streamId: 'B', role: 'agent', name: 'B', instanceId: 'B-1' },
    transport: ep,
    now: () => T0,
    autoTick: false,
    peerIdsAreStreams: true,
    message: (e) => messages.push(e.from.streamId),
    rejected: (err, peer) => rejected.push([err.code, err.field, peer]),
  });
  const mallory = net.endpoint('mallory');
  net.connect('mallory', 'B');
  net.open('mallory', 'B');
  const env = (streamId) =>
    JSON.stringify({
      v: 1,
      id: `m-${streamId}`,
      type: 'chat',
      from: { streamId, role: 'x', name: 'M', instanceId: 'm' },
      to: null,
      topic: null,
      ts: T0,
      payload: {},
    });
  mallory.send('B', env('alice')); // a first message under someone else's name: refused
  mallory.send('B', env('mallory'));
  net.deliver();
  assert.deepEqual(rejected, [['forged_identity', 'from.streamId', 'mallory']]);
  assert.deepEqual(messages, ['mallory']);
  bus.close();
});

test('bus: confirmations correlate ack and command_response with the message id', () => {
  const { net, nodes, link } = room(['A', 'B']);
  link('A', 'B');
  const cmd = nodes.A.bus.send('B', 'command', { run: 'build' });
  net.deliver();
  const received = nodes.B.log.messages.find((m) => m.id === cmd.id);
  // The public shape: {requestId, ok, result | error}; anything else is refused.
  assert.equal(nodes.B.bus.respond(received, { ok: true, output: 'done' }).code, 'bad_payload');
  assert.equal(nodes.B.bus.respond(received, { result: { output: 'done' } }).ok, true);
  net.deliver();
  assert.equal(nodes.A.log.confirmations.length, 1);
  const c = nodes.A.log.confirmations[0];
  assert.equal(c.messageId, cmd.id);
  assert.equal(c.from, 'B');
  assert.equal(c.type, 'command_response');
  assert.equal(c.forType, 'command');
  const resp = nodes.A.log.messages.find((m) => m.type === 'command_response');
  assert.deepEqual(resp.payload, { requestId: cmd.id, ok: true, result: { output: 'done' } });
  assert.equal(api.matchReceipt(resp, { requestId: cmd.id, peer: 'B' }).kind, 'command_response');
  assert.equal(api.matchReceipt(resp, { requestId: cmd.id, peer: 'C' }), null);
});

test('bus: a handoff expiry past int64 is refused by name and the module keeps working', () => {
  // The binding used to cast such a double straight to int64 (undefined behaviour in C++; this
  // build's WASM happened to saturate). It saturates on purpose now and the core names the field.
  const { nodes, link } = room(['S', 'R'], { handoffs: ['R'] });
  link('S', 'R');
  for (const expiresAt of [1e300, -1e300, 2 ** 63]) {
    const h = nodes.S.bus.handoff('R', 'review PR 12', { expiresAt });
    assert.equal(h.ok, false, `expiresAt ${expiresAt}`);
    assert.equal(h.field, 'payload.expiresAt');
  }
  // The module still works: a sane handoff right after is taken.
  assert.equal(nodes.S.bus.handoff('R', 'review PR 12', { ttlMs: 60_000 }).ok, true);
});

test('bus: a handoff is stored once, acked after storage, retried with backoff and survives a lost receipt', () => {
  const { net, clock, nodes, link } = room(['S', 'R'], { handoffs: ['R'] });
  link('S', 'R');
  const store = new Map();
  nodes.R.bus.subscribe({
    handoff(h) {
      if (!store.has(h.key)) store.set(h.key, h.request);
      nodes.R.bus.confirmHandoff(h.key);
    },
  });
  assert.equal(nodes.S.bus.peers()[0].handoff, true);
  // The receipt is lost on the way back once: R's first ack is "accepted" but dropped.
  let dropAcks = 1;
  const realSend = nodes.R.ep.send.bind(nodes.R.ep);
  nodes.R.ep.send = (peer, text) => {
    if (dropAcks > 0 && JSON.parse(text).type === 'ack') {
      dropAcks--;
      return true;
    }
    return realSend(peer, text);
  };
  const h = nodes.S.bus.handoff('R', 'review PR 12', { ttlMs: 60_000 });
  assert.equal(h.ok, true);
  assert.equal(h.handoff.expiresAt, T0 + 60_000);
  net.deliver();
  assert.equal(store.size, 1);
  assert.equal(nodes.S.log.stored.length, 0);
  assert.equal(nodes.S.bus.nextWakeMs(), T0 + api.limits.handoffRetryInitialMs);
  clock.t = nodes.S.bus.nextWakeMs();
  nodes.S.bus.tick();
  net.deliver();
  assert.equal(store.size, 1);
  assert.equal(nodes.R.log.handoffs.length, 1); // the retry was re-acked, not redelivered
  assert.equal(nodes.S.log.stored.length, 1);
  assert.equal(nodes.S.log.stored[0].id, h.handoff.id);
  assert.deepEqual(nodes.S.bus.pendingHandoffs(), []);
});

test('bus: handoffs need handoff-v1, bound their text and expire on time', () => {
  const { net, clock, nodes, link } = room(['S', 'R', 'N'], { handoffs: ['R'] });
  link('S', 'R');
  link('S', 'N');
  assert.equal(nodes.S.bus.handoff('N', 'x').code, 'handoff_unsupported');
  assert.equal(nodes.S.bus.handoff('R', 'x'.repeat(32_000)).code, 'handoff_too_large');
  assert.equal(nodes.S.bus.handoff('R', 'x'.repeat(31_998)).ok, true);
  assert.equal(nodes.S.bus.handoff('R', 'x', { ttlMs: 24 * 3600_000 + 1 }).code, 'handoff_expiry');
  net.deliver();
  // R never confirms and then goes away: the next handoff expires exactly at expiresAt.
  net.close('origin-S', 'origin-R');
  const h = nodes.S.bus.handoff('R', 'later', { ttlMs: 10_000 });
  assert.equal(h.ok, true);
  for (let i = 0; i < 20 && nodes.S.log.expired.length === 0; i++) {
    clock.t = nodes.S.bus.nextWakeMs();
    nodes.S.bus.tick();
  }
  assert.deepEqual(
    nodes.S.log.expired.map((e) => e.id),
    [h.handoff.id],
  );
  assert.equal(clock.t, T0 + 10_000);
  assert.equal(nodes.S.bus.pendingHandoffs().length, 1); // the 24 h one is still retrying
});

test('bus: one-to-one transfer plan and receiver verify a file end to end', () => {
  const bytes = new Uint8Array(200_000).map((_, i) => (i * 7 + 3) & 0xff);
  const planned = api.planFileSend({ bytes, name: 'data.bin', chunkSize: 65536 });
  assert.equal(planned.ok, true);
  const { plan } = planned;
  assert.equal(plan.offer.totalChunks, 4);
  assert.equal(plan.offer.sha256, createHash('sha256').update(bytes).digest('hex'));
  const rx = api.createFileReceiver({ maxFileBytes: api.limits.fileBrowserMaxBytes });
  assert.equal(rx.offer('S', plan.offer).ok, true);
  assert.equal(rx.chunk('X', plan.chunk(0)).code, 'not_owner');
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < plan.offer.totalChunks; i++) {
    const c = rx.chunk('S', plan.chunk(i));
    assert.equal(c.ok, true);
    out.set(c.data, c.offset);
  }
  assert.equal(rx.complete('S', plan.complete).ok, true);
  assert.deepEqual(Buffer.from(out), Buffer.from(bytes));
  assert.equal(
    rx.offer('S', { ...plan.offer, size: api.limits.fileBrowserMaxBytes + 1, totalChunks: 1025 })
      .code,
    'file_too_large',
  );
  plan.dispose();
  rx.dispose();
});

test('bus: a plan for a peer with a message limit sends chunks whose envelopes fit it', () => {
  const bytes = new Uint8Array(300_000).map((_, i) => (i * 13 + 5) & 0xff);
  // No limit known: the default chunk. A data channel whose far end states none takes 65,536
  // bytes, so a 64 KiB chunk (~88 KB of envelope) would be refused there.
  assert.equal(
    api.planFileSend({ bytes, name: 'a.bin' }).plan.offer.chunkSize,
    api.limits.fileDefaultChunkSize,
  );
  const { nodes, link } = room(['A', 'B']);
  link('A', 'B');
  for (const limit of [65_536, 16_384]) {
    const { plan } = api.planFileSend({ bytes, name: 'a.bin', maxMessageBytes: limit });
    assert.ok(plan.offer.chunkSize < api.limits.fileDefaultChunkSize, `${limit}`);
    assert.ok(plan.offer.chunkSize >= api.limits.fileMinChunkSize);
    nodes.A.ep.sent.length = 0;
    assert.equal(nodes.A.bus.send('B', 'file_chunk', plan.chunk(0)).ok, true);
    const [chunk] = nodes.A.ep.sent;
    assert.ok(
      Buffer.byteLength(chunk.text) <= limit,
      `${Buffer.byteLength(chunk.text)} > ${limit}`,
    );
    plan.dispose();
  }
});

test('bus: tsc type-checks a consumer of tether/bus', async () => {
  const { spawnSync } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const repoDir = fileURLToPath(new URL('../../', import.meta.url));
  // A hang guard, not a performance assertion.
  const r = spawnSync(
    process.execPath,
    [`${repoDir}node_modules/.bin/tsc`, '--noEmit', '-p', 'tests/node/tsconfig.bus-types.json'],
    {
      cwd: repoDir,
      encoding: 'utf8',
      timeout: 120_000,
      killSignal: 'SIGKILL',
    },
  );
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
});

// Replays one recorded exchange (fixtures/bus/ninja.json) through the glue over a transport that
// records what it is handed; returns, per step, what the bus sent, delivered, refused, confirmed.
function replayExchange(x) {
  const handlers = [];
  let sent = [];
  const transport = {
    selfId: x.self.streamId,
    openPeers: () => [],
    send: (peer, text) => (sent.push({ conn: peer, text }), true),
    sendBinary: () => false,
    bufferedAmount: () => 0,
    hasBinary: () => false,
    subscribe: (h) => (handlers.push(h), () => {}),
    close: async () => {},
  };
  let t = 0;
  let log = null;
  const bus = api.createBus({
    self: x.self,
    transport,
    now: () => t,
    seed: x.seed,
    autoTick: false,
    ...(x.transportId ? { transportId: x.transportId } : {}),
    message: (e, info) => log.delivered.push({ id: e.id, type: e.type, replayed: info.replayed }),
    rejected: (err) => log.rejected.push(err.code),
    confirmation: (c) => log.confirmed.push(c.messageId),
  });
  const results = [];
  for (const s of x.steps) {
    t = s.now;
    sent = [];
    log = { delivered: [], rejected: [], confirmed: [] };
    let r = { ok: true };
    if (s.do === 'open') for (const h of handlers) h.open?.(s.conn);
    else if (s.do === 'receive') for (const h of handlers) h.text?.(s.conn, s.text);
    else if (s.do === 'send') r = bus.send(s.to, s.type, s.payload);
    else if (s.do === 'respond') r = bus.respond(api.parseEnvelope(s.command).envelope, s.outcome);
    else if (s.do === 'requestHistory') r = bus.requestHistory(s.to, s.count);
    else if (s.do === 'broadcast') r = bus.broadcast(s.type, s.payload);
    results.push({ out: sent, ...log, ...(r.ok ? {} : { error: r.code }) });
  }
  bus.close();
  return results;
}

test('bus: exchanges with a ninja-p2p peer replay to the recorded answers through the WASM build', () => {
  const f = fixture('ninja.json');
  assert.ok(f.exchanges.length >= 7);
  for (const x of f.exchanges) {
    const got = replayExchange(x);
    x.steps.forEach((s, i) => {
      const want = {
        out: s.out,
        delivered: s.delivered,
        rejected: s.rejected,
        confirmed: s.confirmed,
        ...(s.error ? { error: s.error } : {}),
      };
      assert.deepEqual(got[i], want, `${x.name}, step ${i} (${s.do})`);
    });
  }
});

test("bus: share names, the list-files answer and the hand-sent types are the core's", () => {
  assert.equal(api.validShareName('my.docs_2-x'), true);
  for (const bad of ['', '.', '..', 'a/b', 'my docs', 'caf\u00e9', 'x'.repeat(65), 7, null])
    assert.equal(api.validShareName(bad), false, JSON.stringify(bad));
  assert.equal(api.validShareName('x'.repeat(api.limits.maxShareNameChars)), true);
  assert.deepEqual(
    [api.limits.shareLevelMaxEntries, api.limits.shareListMaxEntries, api.limits.shareListMaxDepth],
    [200, 10_000, 32],
  );
  const read = [
    { name: 'b.txt', dir: false, size: 3 },
    { name: 'z', dir: true },
    { name: 'a.txt', dir: false, size: 0 },
  ];
  assert.deepEqual(api.listFilesResult('docs', 'notes', read, 1), {
    share: 'docs',
    path: 'notes',
    entries: [
      { name: 'z', path: 'notes/z', type: 'dir', size: null },
      { name: 'a.txt', path: 'notes/a.txt', type: 'file', size: 0 },
      { name: 'b.txt', path: 'notes/b.txt', type: 'file', size: 3 },
    ],
    truncated: false,
    omitted: 1,
  });
  const many = Array.from({ length: 201 }, (_, i) => ({ name: `f${i}`, dir: false, size: i }));
  const cut = api.listFilesResult('docs', '', many, 0);
  assert.equal(cut.entries.length, 200);
  assert.equal(cut.truncated, true);
  // A host's bad reading (a `dir` that is not a boolean, sizes and counts that are not counts,
  // entries that are not entries) is read as false and 0 or left out, never a trap.
  const odd = api.listFilesResult(
    'docs',
    '',
    [{ name: 'a', dir: 'yes', size: -5 }, { name: 'b', size: 1e300 }, { name: 7 }, null],
    NaN,
  );
  assert.deepEqual(
    odd.entries.map((e) => [e.name, e.type, e.size]),
    [
      ['a', 'file', 0],
      ['b', 'file', 2 ** 63],
    ],
  );
  assert.equal(odd.omitted, 0);
  assert.equal(api.listFilesResult('docs', '', [], -3).omitted, 0);
  assert.deepEqual(api.directSendTypes, ['chat', 'command', 'command_response', 'event', 'ack']);
  assert.ok(Object.isFrozen(api.directSendTypes));
});

test('bus: list-files orders a folder as the public implementation does (folders, then localeCompare)', () => {
  // The public implementation sorts with `a.name.localeCompare(b.name)` under Node's ICU; the
  // core's collation (src/bus/name_collation.hpp) must give the same order, so the same 200
  // entries, for names of every character it ranks. Random names from a seeded generator.
  let seed = 20261204;
  const next = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const alphabet = ['\u0001', '\u00ad']; // ignored by the collation, as controls are
  for (let c = 0x20; c < 0x7f; c++) if (c !== 0x2f) alphabet.push(String.fromCharCode(c));
  for (let c = 0xa0; c <= 0xff; c++) alphabet.push(String.fromCharCode(c));
  alphabet.push(...'łšČőžđĳŒœſıŋħŧƒǅȸαβΑάΆΩжЖёЁѢѣ'); // Latin Extended, Greek, Cyrillic
  for (let round = 0; round < 150; round++) {
    const names = new Set();
    while (names.size < 50) {
      let name = '';
      for (let i = 1 + next(6); i > 0; i--) name += alphabet[next(alphabet.length)];
      names.add(name);
    }
    const read = [...names].map((name, i) => ({ name, dir: i % 5 === 0, size: 0 }));
    const want = [...read]
      .sort((a, b) => Number(!a.dir) - Number(!b.dir) || a.name.localeCompare(b.name))
      .map((e) => e.name);
    const got = api.listFilesResult('s', '', read, 0).entries.map((e) => e.name);
    assert.deepEqual(got, want, `round ${round}`);
  }
});

test('bus: the ninja-p2p shared-folder and file shapes through the WASM build', () => {
  const x = Object.fromEntries(fixture('ninja.json').exchanges.map((e) => [e.name, e]));
  // get-file as we ask for it.
  const ask = x.get_file_pulled.steps.find((s) => s.do === 'send' && s.type === 'command');
  assert.deepEqual(
    api.shareCommandPayload({ command: 'get-file', share: 'docs', path: 'guide.md' }),
    { ok: true, payload: ask.payload },
  );
  assert.deepEqual(api.shareCommandPayload({ command: 'list-files', share: 'docs' }).payload, {
    command: 'list-files',
    args: { share: 'docs' },
  });
  assert.equal(api.shareCommandPayload({ command: 'get-file', share: 'docs' }).ok, false);
  // get-file as a ninja-p2p peer asks us for it, and the refusal of a bad one.
  for (const c of x.get_file_served.commands) {
    const r = api.parseShareCommand(c.text);
    if (c.parsed) assert.deepEqual(r, { ok: true, ...c.parsed });
    else
      assert.deepEqual(
        [r.ok, r.code, r.field, r.detail],
        [false, c.error.code, c.error.field, c.error.detail],
      );
  }
  assert.equal(
    api.parseShareCommand(x.command_response.steps.find((s) => s.do === 'respond').command),
    null,
  );
  // Its untagged offer and 12,000-byte chunks verify to the recorded bytes; our ack is recorded.
  const rx = api.createFileReceiver();
  const parts = [];
  let offer = null;
  for (const s of x.get_file_pulled.steps.filter((s) => s.do === 'receive')) {
    const e = api.parseEnvelope(s.text).envelope;
    if (e.type === 'file_offer') assert.equal(rx.offer(e.from.streamId, e.payload).ok, true);
    if (e.type === 'file_chunk') parts.push(Buffer.from(rx.chunk(e.from.streamId, e.payload).data));
    if (e.type === 'file_complete') offer = rx.complete(e.from.streamId, e.payload).offer;
  }
  assert.deepEqual(Buffer.concat(parts), Buffer.from(x.get_file_pulled.file.bytes_b64, 'base64'));
  const ack = x.get_file_pulled.steps.at(-1);
  assert.deepEqual(api.fileAckReceived(offer, 'guide.md'), { ok: true, payload: ack.payload });
  // An unsolicited offer over the caps: the recorded refusal.
  const big = x.unsolicited_offer_refused.steps.find(
    (s) => s.do === 'receive' && s.text.includes('file_offer'),
  );
  const refusal = x.unsolicited_offer_refused.steps.at(-1).payload;
  const why = api
    .createFileReceiver()
    .offer('ninja-worker', api.parseEnvelope(big.text).envelope.payload);
  assert.equal(why.ok, false);
  assert.deepEqual(
    api.fileAckRefusal(api.parseEnvelope(big.text).envelope.payload, why.detail),
    refusal,
  );
  assert.equal(api.fileAckRefusal({ transferId: 7 }, 'x').transferId, 'invalid');
  // The sizes it sends.
  assert.equal(api.limits.fileMinChunkSize, 1024);
  assert.equal(api.limits.fileMaxChunkSize, 1024 * 1024);
  assert.ok(api.limits.maxFileChunkEnvelopeBytes > 4 * Math.ceil(api.limits.fileMaxChunkSize / 3));
});

test('bus: one-to-one chunks of 1 MiB (what the public implementation may send) cross and verify', () => {
  const { net, nodes, link } = room(['A', 'B']);
  link('A', 'B');
  const bytes = new Uint8Array(3 * api.limits.fileMaxChunkSize - 7).map(
    (_, i) => (i * 29 + (i >> 9)) & 255,
  );
  assert.equal(
    api.planFileSend({ bytes, name: 'x.bin', chunkSize: api.limits.fileMaxChunkSize + 1 }).ok,
    false,
  );
  assert.equal(
    api.planFileSend({ bytes, name: 'x.bin', chunkSize: api.limits.fileMinChunkSize - 1 }).ok,
    false,
  );
  const { plan } = api.planFileSend({
    bytes,
    name: 'x.bin',
    chunkSize: api.limits.fileMaxChunkSize,
  });
  assert.equal(nodes.A.bus.send('B', 'file_offer', plan.offer).ok, true);
  for (let i = 0; i < plan.offer.totalChunks; i++)
    assert.equal(nodes.A.bus.send('B', 'file_chunk', plan.chunk(i)).ok, true);
  assert.equal(nodes.A.bus.send('B', 'file_complete', plan.complete).ok, true);
  plan.dispose();
  assert.ok(
    nodes.A.ep.sent.some((s) => s.text.length > api.limits.maxEnvelopeBytes),
    'the chunks are over the ordinary bound',
  );
  net.deliver();
  assert.deepEqual(nodes.B.log.rejected, []);
  const rx = api.createFileReceiver();
  const parts = [];
  let done = null;
  for (const m of nodes.B.log.messages) {
    if (m.type === 'file_offer') assert.equal(rx.offer('A', m.payload).ok, true);
    if (m.type === 'file_chunk') parts.push(Buffer.from(rx.chunk('A', m.payload).data));
    if (m.type === 'file_complete') done = rx.complete('A', m.payload);
  }
  assert.equal(done.ok, true);
  assert.deepEqual(Buffer.concat(parts), Buffer.from(bytes));
});
