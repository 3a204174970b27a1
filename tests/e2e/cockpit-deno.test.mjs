// Cockpit over real WebTransport on loopback: the Deno relay (web/host/relay.js) on the WASM core,
// the demo robot, and Deno viewer clients (tests/e2e/deno/cockpit_viewer.js).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { loadWire } from '@tether-rt/tether/wire';
import { killAll, runClient, startRelay, startRobot } from './lib/cockpit_procs.mjs';

let relay;

before(async () => {
  relay = await startRelay();
  await startRobot(relay.http, ['--camera-hz', '20']);
});

after(() => killAll());

test('cockpit: latest and reliable frames arrive; subs snapshots reach the robot; publish is acked', async () => {
  const r = await runClient('tests/e2e/deno/cockpit_viewer.js', [relay.http, 'basic']);
  assert.equal(r.ok, true, r.error);
  assert.deepEqual(r.robots, [{ id: 'demo-1', name: 'Demo rover', model: 'tether-sim' }]);
  // Every known kind, plus one no cockpit knows (it must still render).
  assert.deepEqual(r.panelKinds, [
    'video',
    'map2d',
    'map3d',
    'teleop',
    'chat',
    'stats',
    'event-log',
    'plot',
  ]);
  for (const f of r.camera) {
    assert.deepEqual(f.soi, [0xff, 0xd8], 'a JPEG starts with SOI');
    assert.deepEqual(f.eoi, [0xff, 0xd9], 'and ends with EOI');
    assert.equal(f.delivery, 'latest');
    assert.deepEqual(f.meta, { w: 160, h: 120 });
  }
  assert.equal(r.costmap.zlibHeader, 0x78, 'costmap payload is RFC 1950 zlib');
  assert.deepEqual(r.costmap.meta, { w: 200, h: 200, res: 0.1, origin: [-10, -10, 0] });
  assert.deepEqual(r.statsSubs, ['camera', 'chat', 'costmap', 'pose', 'stats']);
  assert.ok(r.subsNAfterUnsub > r.statsSubsN, 'n grows with every snapshot');
  for (let i = 0; i < 3; i++)
    assert.deepEqual(r[`ack${i}`], { t: 'pub_ack', ch: 'say', id: `m${i}` });
  assert.deepEqual(
    r.chat.map((c) => c.text),
    ['echo: hello 0', 'echo: hello 1', 'echo: hello 2'],
  );
  assert.ok(r.chat.every((c) => c.delivery === 'reliable'));
  assert.equal(r.notPublishable.code, 'not_publishable');
});

test('cockpit: two viewers race for the lease; the holder drives; its disconnect stops the robot', async () => {
  const r = await runClient('tests/e2e/deno/cockpit_viewer.js', [relay.http, 'lease']);
  assert.equal(r.ok, true, r.error);
  assert.deepEqual(r.replies, ['teleop_held', 'teleop_started']);
  assert.equal(r.loserMoved, false);
  assert.equal(r.driving.vx, 0.5);
  assert.ok(r.driving.active > 0);
  assert.equal(r.stopped.active, 0);
  assert.equal(r.stopped.vx, 0);
  assert.ok(r.stopped.floor > r.driving.active, 'teleop_stop raised the generation floor');
  assert.equal(r.regrant, 'teleop_started');
});

test('cockpit: a viewer that stops reading gets the newest latest frame when it resumes', async () => {
  const r = await runClient('tests/e2e/deno/cockpit_viewer.js', [relay.http, 'resume']);
  assert.equal(r.ok, true, r.error);
  assert.ok(r.afterResume > r.seenBefore + 10);
});

test('cockpit: the WebSocket twin /ws/viewer speaks the same protocol, one frame per message', async () => {
  const wire = await loadWire();
  const info = await (await fetch(`${relay.http}/api/info`)).json();
  assert.equal(info.version, 7);
  assert.match(info.wtUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
  assert.match(info.certHash, /^[0-9a-f]{64}$/);
  const ws = new WebSocket(`${info.wsUrl}/ws/viewer`);
  ws.binaryType = 'arraybuffer';
  const messages = [];
  const frames = [];
  let waiting = null;
  ws.on('message', (data) => {
    const f = wire.decodeDataFrame(new Uint8Array(data));
    assert.equal(f.ok, true, 'every message is one whole data frame');
    if (f.header.ch === '@control') messages.push(JSON.parse(new TextDecoder().decode(f.payload)));
    else frames.push(f);
    waiting?.();
  });
  const until = async (fn) => {
    for (let i = 0; i < 300 && !fn(); i++)
      await new Promise((r) => ((waiting = r), setTimeout(r, 50)));
    return fn();
  };
  await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
  let seq = 0;
  const send = (m) =>
    ws.send(
      wire.encodeDataFrame(
        { ch: '@control', seq: seq++, ts: 0, delivery: 'reliable' },
        new TextEncoder().encode(JSON.stringify(m)),
      ).bytes,
    );
  try {
    send({ t: 'hello', v: 7, role: 'viewer' });
    assert.ok(await until(() => messages.some((m) => m.t === 'robots' && m.robots.length)));
    send({ t: 'watch', robotId: 'demo-1' });
    send({ t: 'sub', ch: 'pose' });
    assert.ok(
      await until(() => frames.length >= 3),
      `pose frames over WebSocket: ${frames.length}`,
    );
    assert.deepEqual(messages.slice(0, 1), [{ t: 'welcome', v: 7 }]);
    const pose = JSON.parse(new TextDecoder().decode(frames[0].payload));
    assert.deepEqual(Object.keys(pose).sort(), ['ts', 'x', 'y', 'yaw', 'z']);
    const stats = await (await fetch(`${relay.http}/api/stats`)).json();
    const counters = stats.robots[0].channels.pose;
    assert.ok(counters.sent >= 3);
    assert.deepEqual(Object.keys(counters).sort(), ['aborted', 'dropped', 'expired', 'sent']);
  } finally {
    ws.terminate();
  }
});
