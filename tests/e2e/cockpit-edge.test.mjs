// The real cockpit in Chromium against the cockpit relay at the edge: its Durable Object
// (web/edge/cockpit.js) in the real edge Worker (web/edge/worker.js) under real workerd through
// Miniflare, the cockpit's files served as the Worker's static assets. /api/info offers no
// WebTransport there, so the cockpit and the demo robot both take the WebSocket twins
// (cockpit-wire-v7-notes.md § Endpoints): the same checks an operator makes, over the other lane.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { killAll, startRobot } from './lib/cockpit_procs.mjs';
import {
  LAUNCH,
  artifacts,
  cells,
  driving,
  mapPixels,
  openCockpit as openCockpitAt,
  palette,
  poseX,
  restingPoseX,
  stoppedByRobot,
} from './lib/cockpit_page.mjs';
import { startEdge } from './lib/edge.mjs';

let edgeRuntime;
let edge;
let browser;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  // TETHER_COCKPIT_OBJECTS=per-robot runs the same checks on a fleet split over objects.
  const objects = process.env.TETHER_COCKPIT_OBJECTS;
  edgeRuntime = await startEdge({ bindings: objects ? { COCKPIT_OBJECTS: objects } : {} });
  edge = edgeRuntime.url;
  await startRobot(edge);
  browser = await chromium.launch(LAUNCH);
});

after(async () => {
  await browser?.close().catch(() => {});
  killAll();
  await edgeRuntime?.stop();
});

const openCockpit = (options) => openCockpitAt(browser, edge, options);

test('edge: /api/info offers only WebSocket, and the robot is welcomed over /ws/robot', async () => {
  const info = await (await fetch(`${edge}/api/info`)).json();
  assert.deepEqual(Object.keys(info).sort(), ['version', 'wsUrl']);
  assert.equal(info.wsUrl, edge.replace('http:', 'ws:'));
  const stats = await (await fetch(`${edge}/api/stats`)).json();
  assert.deepEqual(
    stats.robots.map((r) => r.id),
    ['demo-1'],
  );
  const plain = await fetch(`${edge}/ws/viewer`);
  assert.equal(plain.status, 426, 'a plain GET on a WebSocket endpoint says how to connect');
});

test('edge: the cockpit connects over WebSocket and draws the costmap', async () => {
  const { context, page, problems } = await openCockpit();
  assert.match(await page.textContent('#status-link'), /connected \(websocket\)/);
  assert.deepEqual(
    await mapPixels(page, cells),
    cells.map(([, , v]) => palette[v]),
  );
  await page.screenshot({ path: `${artifacts}cockpit-edge.png` });
  assert.deepEqual(problems, []);
  await context.close();
});

test('edge: holding W drives the robot over WebSocket; Space stops it', async () => {
  const { context, page } = await openCockpit();
  await page.click('.panel-teleop .lease-button');
  await page.waitForFunction(
    () => document.querySelector('.panel-teleop').dataset.lease === 'held',
    null,
    { timeout: 10000 },
  );
  const start = await poseX(page);
  await page.click('.top h1');
  await page.keyboard.down('w');
  await driving(page);
  await page.waitForFunction(
    (x0) => Number(document.querySelector('.panel-map2d').dataset.poseX) > x0 + 2,
    start,
    { timeout: 20000 },
  );
  await page.keyboard.press(' ');
  await page.keyboard.up('w');
  assert.equal(await page.$eval('.panel-teleop', (e) => e.dataset.twist), '0,0,0');
  await stoppedByRobot(page);
  await restingPoseX(page);
  await context.close();
});

// The fleet view's link figures are the relay's (docs/cockpit-protocol.md § Fleet link quality):
// the edge's one fleet object runs the same core as the Deno relay, so they come from there too,
// the robot's own rtt among them. A fleet split over objects has no figures yet
// (docs/cockpit-fleet.md).
test(
  'edge: the fleet view shows the relay link figures, the robot rtt among them',
  { skip: process.env.TETHER_COCKPIT_OBJECTS === 'per-robot' },
  async () => {
    const { context, page, problems } = await openCockpit({ robot: 'demo-1' });
    await page.click('#fleet-toggle');
    await page.waitForFunction(
      () =>
        /link good at the relay: heard \d+\.\d s ago, \d+\.\d fps, \d+\.\d KiB\/s, robot rtt \d+ ms/.test(
          document.querySelector('.fleet-card[data-robot="demo-1"]')?.textContent ?? '',
        ),
      null,
      { timeout: 20000 },
    );
    assert.equal(
      await page.$eval('.fleet-card[data-robot="demo-1"]', (e) => e.dataset.link),
      'good',
    );
    assert.deepEqual(problems, []);
    await context.close();
  },
);
