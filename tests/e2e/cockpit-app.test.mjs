// The real cockpit (build/cockpit, served by the Deno relay) in Chromium, against the demo robot
// over real WebTransport on loopback. Every check is about what an operator sees or does: map
// pixels, the pose arrow moving under W, Space stopping it, the lease refused to a second
// operator, the robot stopping when the holder's tab closes, an unknown panel kind rendering.
// Screenshots of each panel kind go to build/e2e-artifacts/.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { killAll, startRelay, startRobot } from './lib/cockpit_procs.mjs';

const LAUNCH = {
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
};
const artifacts = new URL('../../build/e2e-artifacts/', import.meta.url).pathname;
const palette = JSON.parse(readFileSync(new URL('../../fixtures/decode/vectors.json', import.meta.url))).palette;

let relay;
let browser;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  relay = await startRelay();
  await startRobot(relay.http);
  browser = await chromium.launch(LAUNCH);
});

after(async () => {
  await browser?.close().catch(() => {});
  killAll();
});

async function openCockpit() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${relay.http}/`);
  await page.waitForFunction(() => document.querySelector('#status-link')?.dataset.state === 'open', null, { timeout: 30000 });
  // The map has drawn once the canvas exposes its transform and the pose arrow.
  await page.waitForFunction(() => {
    const m = document.querySelector('.panel-map2d');
    return m?.querySelector('canvas')?.dataset.transform && m.dataset.poseX;
  }, null, { timeout: 30000 });
  return { context, page, problems };
}

const lease = (page) => page.$eval('.panel-teleop', (e) => e.dataset.lease);
const poseX = async (page) => Number(await page.$eval('.panel-map2d', (e) => e.dataset.poseX));

test('the cockpit connects over WebTransport and lays out every panel kind', async () => {
  const { context, page, problems } = await openCockpit();
  assert.match(await page.textContent('#status-link'), /connected \(webtransport\)/);
  const kinds = await page.$$eval('.panel', (els) => els.map((e) => e.className.replace('panel panel-', '')));
  assert.deepEqual(kinds.sort(), ['chat', 'map2d', 'stats', 'teleop', 'video']);
  await page.waitForFunction(() => document.querySelector('.video-canvas').width > 0, null, { timeout: 30000 });
  for (const kind of kinds) await page.locator(`.panel-${kind}`).screenshot({ path: `${artifacts}panel-${kind}.png` });
  await page.screenshot({ path: `${artifacts}cockpit.png` });
  await page.getByRole('tab', { name: '3D' }).click();
  await page.waitForSelector('.panel-map3d canvas');
  await page.locator('.panel-map3d').screenshot({ path: `${artifacts}panel-map3d.png` });
  await page.getByRole('tab', { name: 'Events' }).click();
  const unknown = page.locator('[data-unknown-kind="event-log"]');
  await unknown.waitFor();
  assert.match(await unknown.textContent(), /Unknown panel kind "event-log"/);
  await page.waitForFunction(() => /log \(json\.v1\): [1-9]/.test(document.querySelector('.rate-list')?.textContent ?? ''), null, { timeout: 30000 });
  await unknown.screenshot({ path: `${artifacts}panel-unknown.png` });
  assert.deepEqual(problems, []);
  await context.close();
});

test('map pixels at known cells have the costmap colours', async () => {
  const { context, page } = await openCockpit();
  // The demo world (web/host/demo-robot.js): walls and boxes are lethal (100), the north-east
  // corner is unknown (255), the rest free (0). Cells are (x, y) with row 0 at world min-y.
  const cells = [
    [10, 10, '0'],
    [130, 55, '100'],
    [50, 140, '100'],
    [1, 100, '100'],
    [150, 175, '255'],
    [160, 20, '0'],
  ];
  const pixels = await page.evaluate((cells) => {
    const canvas = document.querySelector('.panel-map2d canvas');
    const [scale, cx, cy] = JSON.parse(canvas.dataset.transform);
    const g = canvas.getContext('2d');
    const h = Number(document.querySelector('.panel-map2d').dataset.mapH);
    return cells.map(([x, y]) => {
      const px = Math.floor(cx + (x + 0.5) * scale);
      const py = Math.floor(cy + (h - 1 - y + 0.5) * scale);
      return Array.from(g.getImageData(px, py, 1, 1).data);
    });
  }, cells);
  cells.forEach(([x, y, value], i) => assert.deepEqual(pixels[i], palette[value], `cell (${x}, ${y})`));
  await context.close();
});

test('holding W drives the robot on the map; Space stops it', async () => {
  const { context, page } = await openCockpit();
  await page.click('.panel-teleop .lease-button');
  await page.waitForFunction(() => document.querySelector('.panel-teleop').dataset.lease === 'held', null, { timeout: 10000 });
  const start = await poseX(page);
  await page.click('.top h1'); // focus away from the button, as an operator would
  await page.keyboard.down('w');
  await page.waitForFunction((x0) => Number(document.querySelector('.panel-map2d').dataset.poseX) > x0 + 2, start, { timeout: 20000 });
  await page.keyboard.press(' ');
  await page.keyboard.up('w');
  assert.equal(await page.$eval('.panel-teleop', (e) => e.dataset.twist), '0,0,0');
  // Stopped: the pose settles and then stays put.
  await page.waitForFunction(() => /teleop\.vx0/.test(document.querySelector('.stats-list').textContent.replace(/\s/g, '')), null, { timeout: 10000 });
  const stopped = await poseX(page);
  await page.waitForTimeout(1000);
  assert.equal(await poseX(page), stopped);
  assert.ok(stopped > start + 2, `the arrow moved right: ${start} -> ${stopped}`);
  await page.click('.panel-teleop .lease-button');
  await context.close();
});

test('a second operator is refused the lease; closing the holder’s tab stops the robot', async () => {
  const first = await openCockpit();
  const second = await openCockpit();
  await first.page.click('.panel-teleop .lease-button');
  await first.page.waitForFunction(() => document.querySelector('.panel-teleop').dataset.lease === 'held', null, { timeout: 10000 });
  await second.page.click('.panel-teleop .lease-button');
  await second.page.waitForFunction(() => document.querySelector('.panel-teleop').dataset.lease === 'refused', null, { timeout: 10000 });
  assert.match(await second.page.textContent('.lease-status'), /held by another viewer/i);
  assert.equal(await lease(first.page), 'held');
  // The holder drives, then its tab closes mid-drive: the robot must come to a stop.
  await first.page.click('.top h1');
  await first.page.keyboard.down('w');
  await second.page.waitForFunction(() => /teleop\.vx1/.test(document.querySelector('.stats-list').textContent.replace(/\s/g, '')), null, { timeout: 20000 });
  await first.context.close();
  await second.page.waitForFunction(() => /teleop\.vx0/.test(document.querySelector('.stats-list').textContent.replace(/\s/g, '')), null, { timeout: 20000 });
  const x = await poseX(second.page);
  await second.page.waitForTimeout(1000);
  assert.equal(await poseX(second.page), x);
  await second.context.close();
});
