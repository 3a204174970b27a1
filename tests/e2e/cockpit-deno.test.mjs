// Cockpit over real WebTransport on loopback: the Deno relay (web/host/relay.js) on the WASM core,
// the demo robot, and Deno viewer clients (tests/e2e/deno/cockpit_viewer.js).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { killAll, runClient, startRelay, startRobot } from './lib/cockpit_procs.mjs';

let relay;
let robot;

before(async () => {
  relay = await startRelay();
  robot = await startRobot(relay.http, ['--camera-hz', '20']);
});

after(() => killAll());

test('cockpit: latest and reliable frames arrive; subs snapshots reach the robot; publish is acked', async () => {
  const r = await runClient('tests/e2e/deno/cockpit_viewer.js', [relay.http, 'basic']);
  assert.equal(r.ok, true, r.error);
  assert.deepEqual(r.robots, [{ id: 'demo-1', name: 'Demo rover', model: 'tether-sim' }]);
  assert.deepEqual(r.panelKinds, ['video', 'map2d', 'map3d', 'teleop', 'chat', 'stats']);
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
  for (let i = 0; i < 3; i++) assert.deepEqual(r[`ack${i}`], { t: 'pub_ack', ch: 'say', id: `m${i}` });
  assert.deepEqual(r.chat.map((c) => c.text), ['echo: hello 0', 'echo: hello 1', 'echo: hello 2']);
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
