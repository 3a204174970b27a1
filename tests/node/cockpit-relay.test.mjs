// The cockpit relay core through the WASM build and `tether/relay-cockpit`: the same scripted
// session as the native suite, so the two builds cannot drift, plus the glue's buffer sharing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCockpitRelay } from '@tether-rt/tether/relay-cockpit';
import { loadWire } from '@tether-rt/tether/wire';

const wire = await loadWire();
const enc = new TextEncoder();
const dec = new TextDecoder();

const manifest = {
  version: 1,
  channels: [
    { ch: 'cam', encoding: 'jpeg.v1' },
    { ch: 'say', dir: 'tx', encoding: 'text.json.v1', delivery: 'reliable', publish: true },
  ],
};
const ctl = (m) =>
  wire.encodeDataFrame(
    { ch: '@control', seq: 0, ts: 0, delivery: 'reliable' },
    enc.encode(JSON.stringify(m)),
  ).bytes;
const control = (m) => wire.encodeControlFrame(m, 'viewer').bytes;

// Every action the core has for its host, in order (what web/glue/driver.js does after each input).
function drain(relay) {
  const out = [];
  for (let a = relay.pollAction(); a; a = relay.pollAction()) out.push(a);
  return out;
}

function robot(relay, id = 'r1') {
  const s = relay.handleSessionOpen('robot', 'webtransport', 0);
  const st = relay.handleIncomingOpen(s, 0);
  relay.handleIncomingData(
    st,
    ctl({ t: 'hello', v: 7, role: 'robot', robot: { id, name: 'R', model: 'm' }, manifest }),
    0,
  );
  relay.handleIncomingEnd(st, 0);
  return s;
}

test('relay-cockpit: robot hello, viewer watch and sub, one frame fanned out as one buffer', async () => {
  const relay = await loadCockpitRelay();
  const r = robot(relay);
  let acts = drain(relay);
  assert.deepEqual(
    acts.map((a) => a.kind),
    ['send_datagram', 'open_carrier', 'write_carrier', 'reset_stream'],
  );
  assert.equal(dec.decode(acts[0].bytes), '{"t":"welcome","v":7}');
  const viewers = [1, 2].map(() => {
    const v = relay.handleSessionOpen('viewer', 'webtransport', 0);
    relay.handleControlData(v, control({ t: 'hello', v: 7, role: 'viewer' }), 0);
    relay.handleControlData(v, control({ t: 'watch', robotId: 'r1' }), 0);
    relay.handleControlData(v, control({ t: 'sub', ch: 'cam' }), 0);
    return v;
  });
  acts = drain(relay);
  const subs = acts
    .filter((a) => a.kind === 'write_carrier')
    .map((a) => dec.decode(wire.decodeDataFrame(a.bytes).payload));
  assert.deepEqual(subs, ['{"t":"subs","chs":["cam"],"n":2}']);
  const frame = wire.encodeDataFrame(
    { ch: 'cam', seq: 1, ts: 0, delivery: 'latest' },
    new Uint8Array([0xff, 0xd8, 1, 2]),
  ).bytes;
  const st = relay.handleIncomingOpen(r, 10);
  relay.handleIncomingData(st, frame, 10);
  const opens = drain(relay).filter((a) => a.kind === 'open_stream');
  assert.deepEqual(
    opens.map((a) => a.session),
    viewers,
  );
  assert.ok(opens[0].sendOrder > opens[1].sendOrder);
  for (const o of opens) relay.handleStreamOpened(o.stream, 11);
  const writes = drain(relay);
  assert.deepEqual(
    writes.map((a) => a.kind),
    ['write_stream', 'write_stream'],
  );
  assert.deepEqual([...writes[0].bytes], [...frame]);
  assert.equal(writes[0].bytes, writes[1].bytes, 'one copy per distinct buffer');
  const stats = relay.stats();
  assert.equal(stats.robots[0].channels.cam.sent, 2);
  relay.dispose();
});

test('relay-cockpit: handleWritesDone counts a turn of reliable completions in one crossing', async () => {
  const relay = await loadCockpitRelay();
  const logManifest = {
    version: 1,
    channels: [{ ch: 'log', encoding: 'json.v1', delivery: 'reliable' }],
  };
  const r = relay.handleSessionOpen('robot', 'webtransport', 0);
  const hello = relay.handleIncomingOpen(r, 0);
  relay.handleIncomingData(
    hello,
    ctl({
      t: 'hello',
      v: 7,
      role: 'robot',
      robot: { id: 'r1', name: 'R', model: 'm' },
      manifest: logManifest,
    }),
    0,
  );
  const v = relay.handleSessionOpen('viewer', 'webtransport', 0);
  relay.handleControlData(v, control({ t: 'hello', v: 7, role: 'viewer' }), 0);
  relay.handleControlData(v, control({ t: 'watch', robotId: 'r1' }), 0);
  relay.handleControlData(v, control({ t: 'sub', ch: 'log' }), 0);
  for (let seq = 1; seq <= 20; seq++) {
    const st = relay.handleIncomingOpen(r, 1);
    relay.handleIncomingData(
      st,
      wire.encodeDataFrame({ ch: 'log', seq, ts: 0, delivery: 'reliable' }, enc.encode(`L${seq}`))
        .bytes,
      1,
    );
  }
  const open = drain(relay).find((a) => a.kind === 'open_stream' && a.session === v);
  relay.handleStreamOpened(open.stream, 2);
  const seqs = (acts) =>
    acts
      .filter((a) => a.kind === 'write_stream')
      .map((a) => wire.decodeDataFrame(a.bytes).header.seq);
  const limit = relay.limits.reliableWritesInFlight;
  assert.deepEqual(seqs(drain(relay)), [1, 2, 3, 4, 5, 6, 7, 8].slice(0, limit));
  relay.handleWritesDone(open.stream, 3, 3);
  assert.deepEqual(seqs(drain(relay)), [9, 10, 11]);
  // More than are outstanding: only the 8 handed out complete, and 8 more go out.
  relay.handleWritesDone(open.stream, 100, 4);
  assert.deepEqual(seqs(drain(relay)), [12, 13, 14, 15, 16, 17, 18, 19]);
  relay.dispose();
});

test('relay-cockpit: terminal errors close the session with their code', async () => {
  const relay = await loadCockpitRelay();
  const v = relay.handleSessionOpen('viewer', 'webtransport', 0);
  relay.handleControlData(
    v,
    control({ t: 'hello', v: 7, role: 'viewer' }).map((b) => b),
    0,
  );
  const big = new Uint8Array(4);
  new DataView(big.buffer).setUint32(0, 64 * 1024 + 1, true);
  drain(relay);
  relay.handleControlData(v, big, 0);
  const acts = drain(relay);
  assert.equal(acts.at(-1).kind, 'close_session');
  assert.equal(acts.at(-1).code, 'control_too_large');
  relay.dispose();
});

test('relay-cockpit: an invalid auth file is refused with the entry at fault', async () => {
  await assert.rejects(
    loadCockpitRelay({ authText: '{"tokens":[{"token":"short"}]}' }),
    /tokens\[0\]\.token/,
  );
  const relay = await loadCockpitRelay({
    authText: '{"tokens":[{"token":"0123456789abcdefghij","scopes":["x"]}]}',
  });
  const v = relay.handleSessionOpen('viewer', 'webtransport', 0);
  relay.handleControlData(
    v,
    control({ t: 'hello', v: 7, role: 'viewer', token: 'wrong-wrong-wrong-wrong' }),
    0,
  );
  const acts = drain(relay);
  assert.equal(JSON.parse(dec.decode(acts[0].bytes.slice(4))).code, 'auth_failed');
  assert.equal(acts.at(-1).code, 'auth_failed');
  relay.dispose();
});

test('relay-cockpit: a viewer that asks gets every robot link figures; a silent robot turns stalled', async () => {
  const relay = await loadCockpitRelay();
  const a = robot(relay, 'a');
  const b = robot(relay, 'b');
  const plain = relay.handleSessionOpen('viewer', 'webtransport', 0);
  const fleet = relay.handleSessionOpen('viewer', 'webtransport', 0);
  for (const v of [plain, fleet])
    relay.handleControlData(v, control({ t: 'hello', v: 7, role: 'viewer' }), 0);
  drain(relay);
  relay.handleControlData(fleet, control({ t: 'fleet', link: true }), 0);
  // The messages each viewer got on its control stream (a u32 prefix, then JSON).
  const robotsTo = (acts, v) =>
    acts
      .filter((x) => x.kind === 'write_control' && x.session === v)
      .map((x) => JSON.parse(dec.decode(x.bytes.subarray(4))))
      .filter((m) => m.t === 'robots');
  let got = robotsTo(drain(relay), fleet);
  assert.equal(got.length, 1);
  assert.deepEqual(
    got[0].robots.map((r) => [r.id, r.link.state]),
    [
      ['a', 'good'],
      ['b', 'good'],
    ],
  );
  // Both ping (a with its rtt), then only a does; time runs through the relay's own deadlines.
  const seen = [];
  for (let now = 100, n = 0; now <= 12000; now += 100) {
    if (now % 1000 === 0) {
      relay.handleDatagram(
        a,
        enc.encode(JSON.stringify({ t: 'ping', n: ++n, ts: 0, rttMs: 20 })),
        now,
      );
      if (now < 4000)
        relay.handleDatagram(b, enc.encode(JSON.stringify({ t: 'ping', n, ts: 0 })), now);
    }
    const t = relay.pollTimeout();
    if (t !== null && t <= now) relay.handleTimeout(now);
    const acts = drain(relay);
    assert.deepEqual(robotsTo(acts, plain), []); // nothing extra for a viewer that did not ask
    seen.push(...robotsTo(acts, fleet));
  }
  const last = seen.at(-1);
  assert.equal(last.robots.find((r) => r.id === 'b').link.state, 'stalled');
  assert.ok(last.robots.find((r) => r.id === 'b').link.silentMs >= 3000);
  assert.equal(last.robots.find((r) => r.id === 'b').link.rttMs, undefined);
  assert.deepEqual(last.robots.find((r) => r.id === 'a').link.state, 'good');
  assert.equal(last.robots.find((r) => r.id === 'a').link.rttMs, 20);
  // Each push is a relay message the codec accepts.
  for (const m of seen) assert.equal(wire.parseMessage(JSON.stringify(m), 'relay').ok, true);
});
