// The real cockpit (build/cockpit, served by the Deno relay) in Chromium, against the demo robot
// over real WebTransport on loopback. Every check is about what an operator sees or does: map
// pixels, the pose arrow moving under W, Space stopping it, the lease refused to a second
// operator, the robot stopping when the holder's tab closes, the event log rendering.
// Screenshots of each panel kind go to build/e2e-artifacts/.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { kill, killAll, startRelay, startRobot } from './lib/cockpit_procs.mjs';
import {
  LAUNCH,
  artifacts,
  cells,
  driving,
  lease,
  mapPixels,
  openCockpit as openCockpitAt,
  palette,
  poseX,
  restingPoseX,
  stats,
  stoppedByRobot,
} from './lib/cockpit_page.mjs';

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

const openCockpit = (options) => openCockpitAt(browser, relay.http, options);

test('the cockpit connects over WebTransport and lays out every panel kind', async () => {
  const { context, page, problems } = await openCockpit();
  assert.match(await page.textContent('#status-link'), /connected \(webtransport\)/);
  const kinds = await page.$$eval('.panel', (els) =>
    els.map((e) => e.className.replace('panel panel-', '')),
  );
  assert.deepEqual(kinds.sort(), ['chat', 'map2d', 'stats', 'teleop', 'video']);
  await page.waitForFunction(() => document.querySelector('.video-canvas').width > 0, null, {
    timeout: 30000,
  });
  for (const kind of kinds)
    await page.locator(`.panel-${kind}`).screenshot({ path: `${artifacts}panel-${kind}.png` });
  await page.screenshot({ path: `${artifacts}cockpit.png` });
  await page.getByRole('tab', { name: '3D' }).click();
  await page.waitForSelector('.panel-map3d canvas');
  // The voxels arrive (1 Hz) and are drawn: the canvas holds more than the clear colour and grid.
  await page.waitForFunction(
    () => Number(document.querySelector('.panel-map3d').dataset.voxels) > 0,
    null,
    { timeout: 30000 },
  );
  const lit = await page.$eval('.panel-map3d canvas', (c) => {
    const copy = Object.assign(document.createElement('canvas'), {
      width: c.width,
      height: c.height,
    });
    const g = copy.getContext('2d');
    g.drawImage(c, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    // Anything far from the clear colour and the two grid-line colours is a voxel or the pose cone.
    const background = [
      [0x15, 0x19, 0x22],
      [0x3a, 0x42, 0x52],
      [0x26, 0x2c, 0x38],
    ];
    let n = 0;
    for (let i = 0; i < d.length; i += 4) {
      const far = background.every(
        ([r, g2, b]) =>
          Math.max(Math.abs(d[i] - r), Math.abs(d[i + 1] - g2), Math.abs(d[i + 2] - b)) > 40,
      );
      n += far ? 1 : 0;
    }
    return n;
  });
  assert.ok(lit > 500, `voxels drawn on the 3D canvas: ${lit} pixels away from the background`);
  await page.locator('.panel-map3d').screenshot({ path: `${artifacts}panel-map3d.png` });
  await page.getByRole('tab', { name: 'Events' }).click();
  await page.waitForFunction(
    () => Number(document.querySelector('.panel-event-log')?.dataset.shown) > 0,
    null,
    { timeout: 30000 },
  );
  await page.locator('.panel-event-log').screenshot({ path: `${artifacts}panel-event-log.png` });
  assert.deepEqual(problems, []);
  await context.close();
});

test('map pixels at known cells have the costmap colours', async () => {
  const { context, page } = await openCockpit();
  const pixels = await mapPixels(page, cells);
  cells.forEach(([x, y, value], i) =>
    assert.deepEqual(pixels[i], palette[value], `cell (${x}, ${y})`),
  );
  await context.close();
});

test('holding W drives the robot on the map; Space stops it', async () => {
  const { context, page } = await openCockpit();
  await page.click('.panel-teleop .lease-button');
  await page.waitForFunction(
    () => document.querySelector('.panel-teleop').dataset.lease === 'held',
    null,
    { timeout: 10000 },
  );
  const start = await poseX(page);
  await page.click('.top h1'); // focus away from the button, as an operator would
  await page.keyboard.down('w');
  await page.waitForFunction(
    (x0) => Number(document.querySelector('.panel-map2d').dataset.poseX) > x0 + 2,
    start,
    { timeout: 20000 },
  );
  await page.keyboard.press(' ');
  await page.keyboard.up('w');
  assert.equal(await page.$eval('.panel-teleop', (e) => e.dataset.twist), '0,0,0');
  // Stopped: the pose settles and then stays put.
  await page.waitForFunction(
    () => /teleop\.vx0/.test(document.querySelector('.stats-list').textContent.replace(/\s/g, '')),
    null,
    { timeout: 10000 },
  );
  const stopped = await restingPoseX(page);
  assert.ok(stopped > start + 2, `the arrow moved right: ${start} -> ${stopped}`);
  await page.click('.panel-teleop .lease-button');
  await context.close();
});

test('a second operator is refused the lease; closing the holder’s tab stops the robot', async () => {
  const first = await openCockpit();
  const second = await openCockpit();
  await first.page.click('.panel-teleop .lease-button');
  await first.page.waitForFunction(
    () => document.querySelector('.panel-teleop').dataset.lease === 'held',
    null,
    { timeout: 10000 },
  );
  await second.page.click('.panel-teleop .lease-button');
  await second.page.waitForFunction(
    () => document.querySelector('.panel-teleop').dataset.lease === 'refused',
    null,
    { timeout: 10000 },
  );
  assert.match(await second.page.textContent('.lease-status'), /held by another viewer/i);
  assert.equal(await lease(first.page), 'held');
  // The holder drives, then its tab closes mid-drive: the robot must come to a stop.
  await first.page.click('.top h1');
  await first.page.keyboard.down('w');
  await second.page.waitForFunction(
    () => /teleop\.vx1/.test(document.querySelector('.stats-list').textContent.replace(/\s/g, '')),
    null,
    { timeout: 20000 },
  );
  await first.context.close();
  await second.page.waitForFunction(
    () => /teleop\.vx0/.test(document.querySelector('.stats-list').textContent.replace(/\s/g, '')),
    null,
    { timeout: 20000 },
  );
  await restingPoseX(second.page);
  await second.context.close();
});

/** Waits (bounded) until the relay says nobody holds demo-1's lease: a closed tab's session
 * lingers until the relay notices it is gone. */
async function leaseFree() {
  for (let i = 0; i < 60; i++) {
    const info = await (await fetch(`${relay.http}/api/stats`)).json();
    if (!info.robots.find((r) => r.id === 'demo-1')?.leaseHolder) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('the lease of demo-1 was still held 30 s after its holder left');
}

test('teleop zeroes on window blur and on a hidden tab while W is still held', async () => {
  await leaseFree();
  const { context, page } = await openCockpit();
  await page.click('.panel-teleop .lease-button');
  await page.waitForFunction(
    () => document.querySelector('.panel-teleop').dataset.lease === 'held',
    null,
    { timeout: 10000 },
  );
  await page.click('.top h1');
  await page.keyboard.down('w');
  await driving(page);
  // The operator alt-tabs away with W still down: no keyup ever comes.
  await page.evaluate(() => window.dispatchEvent(new Event('blur')));
  assert.equal(await page.$eval('.panel-teleop', (e) => e.dataset.twist), '0,0,0');
  await stoppedByRobot(page);
  await page.keyboard.up('w');
  // Back, driving again; then the tab is hidden (another tab in front).
  await page.keyboard.down('w');
  await driving(page);
  await page.evaluate(() => {
    Object.defineProperty(document, 'hidden', { value: true, configurable: true });
    Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
  });
  assert.equal(await page.$eval('.panel-teleop', (e) => e.dataset.twist), '0,0,0');
  await stoppedByRobot(page);
  assert.match(await stats(page), /teleop\.vx0/);
  await page.keyboard.up('w');
  await context.close();
});

test('a corrupt costmap leaves the last good map on screen and the error counter rises', async () => {
  // A second robot whose every 2nd costmap is cut short mid-stream.
  const faulty = await startRobot(relay.http, [
    '--id',
    'faulty-1',
    '--name',
    'Faulty rover',
    '--corrupt-costmap-every',
    '2',
  ]);
  try {
    const { context, page, problems } = await openCockpit({ robot: 'faulty-1' });
    assert.deepEqual(
      await mapPixels(page, cells),
      cells.map(([, , v]) => palette[v]),
    );
    await page.waitForFunction(
      () => Number(document.querySelector('.panel-map2d .panel-badge')?.dataset.errors) >= 2,
      null,
      { timeout: 30000 },
    );
    assert.match(
      await page.textContent('.panel-map2d .panel-badge'),
      /^([2-9]|\d{2,}) decode errors$/,
    );
    // Still the last good map, cell for cell.
    assert.deepEqual(
      await mapPixels(page, cells),
      cells.map(([, , v]) => palette[v]),
    );
    await page
      .locator('.panel-map2d')
      .screenshot({ path: `${artifacts}panel-map2d-after-corrupt-frames.png` });
    assert.deepEqual(problems, []);
    await context.close();
  } finally {
    kill(faulty);
  }
});

test('at phone width the cockpit fits the screen and every panel stays visible', async () => {
  const { context, page, problems } = await openCockpit({ viewport: { width: 390, height: 844 } });
  const layout = await page.evaluate(() => ({
    scrollWidth: document.scrollingElement.scrollWidth,
    innerWidth: window.innerWidth,
    panels: [...document.querySelectorAll('.panel')].map((p) => {
      const r = p.getBoundingClientRect();
      return {
        kind: p.className,
        left: r.left,
        right: r.right,
        top: r.top,
        bottom: r.bottom,
        width: r.width,
        height: r.height,
      };
    }),
  }));
  assert.ok(
    layout.scrollWidth <= layout.innerWidth,
    `no sideways scrolling: ${layout.scrollWidth} > ${layout.innerWidth}`,
  );
  for (const p of layout.panels) {
    assert.ok(
      p.left >= 0 && p.right <= layout.innerWidth + 0.5,
      `${p.kind} inside the screen: ${p.left}..${p.right}`,
    );
    assert.ok(p.width >= 300 && p.height >= 100, `${p.kind} readable: ${p.width}x${p.height}`);
  }
  // Stacked, not piled: no two panels overlap.
  for (const [i, a] of layout.panels.entries()) {
    for (const b of layout.panels.slice(i + 1)) {
      const overlap =
        a.left < b.right - 0.5 &&
        b.left < a.right - 0.5 &&
        a.top < b.bottom - 0.5 &&
        b.top < a.bottom - 0.5;
      assert.ok(!overlap, `${a.kind} and ${b.kind} overlap`);
    }
  }
  await page.screenshot({ path: `${artifacts}cockpit-phone.png`, fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});
