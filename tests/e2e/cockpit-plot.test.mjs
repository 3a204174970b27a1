// The plot panel against the demo robot: its page plots pose.x, pose.y and stats.teleop.vx by
// message path; while the robot drives, the pose.x series climbs and its newest point is a pose
// the cockpit received; Pause freezes it while poses keep coming; dragging zooms the time axis
// and Reset zoom follows again; paths are added and removed, and a bad one is refused by name.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { killAll, startRelay, startRobot } from './lib/cockpit_procs.mjs';
import { LAUNCH, artifacts, openCockpit } from './lib/cockpit_page.mjs';

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

const series = async (page) =>
  Object.fromEntries(
    JSON.parse((await page.$eval('.panel-plot', (e) => e.dataset.series)) ?? '[]').map((s) => [
      s.path,
      s,
    ]),
  );
const lastX = async (page) => (await series(page))['pose.x']?.last ?? null;

test('a plot follows pose.x while the robot drives; pause, zoom and paths', async () => {
  const { context, page, problems } = await openCockpit(browser, relay.http);
  await page.evaluate(() => {
    window.poses = [];
    window.tetherCockpit.ui.taps.add(
      (f) =>
        f.header.ch === 'pose' &&
        window.poses.push(JSON.parse(new TextDecoder().decode(f.payload)).x),
    );
  });
  await page.click('.panel-teleop .lease-button');
  await page.waitForFunction(
    () => document.querySelector('.panel-teleop').dataset.lease === 'held',
    null,
    { timeout: 10000 },
  );
  await page.getByRole('tab', { name: 'Plot' }).click();
  await page.waitForFunction(
    () =>
      JSON.parse(document.querySelector('.panel-plot')?.dataset.series ?? '[]').find(
        (s) => s.path === 'pose.x',
      )?.n > 3,
    null,
    { timeout: 20000 },
  );
  assert.deepEqual(await page.$$eval('.plot-legend li', (els) => els.map((e) => e.dataset.path)), [
    'pose.x',
    'pose.y',
    'stats.teleop.vx',
  ]);
  const x0 = await lastX(page);

  // Drive forward through the cockpit's session (the lease is held; the core repeats the command).
  assert.equal(await page.evaluate(() => window.tetherCockpit.session.drive(1, 0, 0)), true);
  await page.waitForFunction(
    (x) =>
      JSON.parse(document.querySelector('.panel-plot').dataset.series).find(
        (s) => s.path === 'pose.x',
      ).last >
      x + 1,
    x0,
    { timeout: 20000 },
  );
  await page.waitForFunction(
    () =>
      JSON.parse(document.querySelector('.panel-plot').dataset.series).find(
        (s) => s.path === 'stats.teleop.vx',
      )?.last === 1,
    null,
    { timeout: 20000 },
  );

  // Paused: the plot holds its newest point, a pose the cockpit received, while newer ones arrive.
  await page.getByRole('button', { name: 'Pause' }).click();
  const held = await lastX(page);
  const heldAt = await page.evaluate(() => window.poses.length);
  assert.ok(
    (await page.evaluate(() => window.poses)).includes(held),
    `plotted ${held} was received`,
  );
  await page.waitForFunction((h) => window.poses.at(-1) > h + 0.2, held, { timeout: 20000 });
  assert.equal(await lastX(page), held);
  assert.ok((await page.evaluate(() => window.poses.length)) > heldAt);
  // The line is drawn: the canvas holds pixels of the pose.x colour (#35c2ff).
  const lit = await page.$eval('.panel-plot canvas', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4)
      n +=
        Math.abs(d[i] - 0x35) < 30 &&
        Math.abs(d[i + 1] - 0xc2) < 30 &&
        Math.abs(d[i + 2] - 0xff) < 30
          ? 1
          : 0;
    return n;
  });
  assert.ok(lit > 20, `pose.x pixels: ${lit}`);
  await page.getByRole('button', { name: 'Resume' }).click();
  await page.waitForFunction(
    (h) =>
      JSON.parse(document.querySelector('.panel-plot').dataset.series).find(
        (s) => s.path === 'pose.x',
      ).last > h,
    held,
    { timeout: 20000 },
  );
  await page.locator('.panel-plot').screenshot({ path: `${artifacts}panel-plot.png` });

  // Zoom: drag across the middle of the plot; the time axis narrows and stops following.
  const before = JSON.parse(await page.$eval('.panel-plot', (e) => e.dataset.xRange));
  const box = await page.locator('.panel-plot .u-over').boundingBox();
  await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  assert.equal(await page.$eval('.panel-plot', (e) => e.dataset.zoomed), 'true');
  // The panel writes its range when it draws, and its first draw after a drag comes a task after
  // uPlot's mouseup has applied the selection: until then the range read is the last one before.
  await page
    .waitForFunction(
      (b) => {
        const r = JSON.parse(document.querySelector('.panel-plot').dataset.xRange);
        return r[1] - r[0] < (b[1] - b[0]) * 0.5;
      },
      before,
      { timeout: 10000 },
    )
    .catch(() => {});
  const zoomed = JSON.parse(await page.$eval('.panel-plot', (e) => e.dataset.xRange));
  assert.ok(
    zoomed[1] - zoomed[0] < (before[1] - before[0]) * 0.5,
    `zoomed ${zoomed} from ${before}`,
  );
  assert.ok(zoomed[0] >= before[0] && zoomed[1] <= before[1] + 1);
  await page.getByRole('button', { name: 'Reset zoom' }).click();
  assert.equal(await page.$eval('.panel-plot', (e) => e.dataset.zoomed), 'false');
  await page.waitForFunction(
    (z) => JSON.parse(document.querySelector('.panel-plot').dataset.xRange)[1] > z[1] + 0.5,
    zoomed,
    { timeout: 20000 },
  );

  // Paths: one added, one removed, a bad one refused with the channels it could use.
  const input = page.getByLabel('Message path');
  await input.fill('pose.yaw');
  await input.press('Enter');
  await page.getByLabel('remove pose.y', { exact: true }).click();
  assert.deepEqual(await page.$$eval('.plot-legend li', (els) => els.map((e) => e.dataset.path)), [
    'pose.x',
    'stats.teleop.vx',
    'pose.yaw',
  ]);
  await page.waitForFunction(
    () =>
      JSON.parse(document.querySelector('.panel-plot').dataset.series).find(
        (s) => s.path === 'pose.yaw',
      )?.n > 0,
    null,
    { timeout: 20000 },
  );
  await input.fill('nope.x');
  await input.press('Enter');
  assert.match(
    await page.textContent('.plot-error'),
    /"nope\.x" names no JSON channel; start with one of .*pose/,
  );

  await page.evaluate(() => window.tetherCockpit.session.drive(0, 0, 0));
  assert.deepEqual(problems, []);
  await context.close();
});
