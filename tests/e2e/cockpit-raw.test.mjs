// The raw message inspector, opened from the channel list against the demo robot: the last
// messages of a channel with seq, ts and size, newest first and in order; the payload as the
// decode core reads it in a collapsible tree (a pose's x/y/yaw, a JPEG's size); the channel's
// rate and loss; and "Copy JSON" putting exactly that message on the clipboard.
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

const rows = (page, ch) =>
  page.$$eval(`.raw-view[data-channel="${ch}"] .raw-list > li`, (els) =>
    els.map((e) => ({
      seq: Number(e.dataset.seq),
      size: Number(e.dataset.size),
      summary: e.querySelector('summary').textContent,
    })),
  );

test('raw inspector: last messages with header and decoded tree, rate and loss, copy as JSON', async () => {
  const { context, page, problems } = await openCockpit(browser, relay.http);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: relay.http });
  await page.getByRole('button', { name: /^pose · pose\.json\.v1/ }).click();
  const view = page.locator('.raw-view[data-channel="pose"]');
  await view.waitFor();
  await page.waitForFunction(
    () => document.querySelectorAll('.raw-view[data-channel="pose"] .raw-list > li').length >= 10,
    null,
    { timeout: 20000 },
  );
  const pose = await rows(page, 'pose');
  for (let i = 1; i < pose.length; i++)
    assert.ok(pose[i].seq < pose[i - 1].seq, `newest first: ${pose.map((r) => r.seq)}`);
  for (const r of pose) {
    assert.match(
      r.summary,
      new RegExp(`^#${r.seq} · \\d\\d:\\d\\d:\\d\\d\\.\\d{3} · ${r.size} B$`),
    );
    assert.ok(r.size > 10 && r.size < 512, `size ${r.size}`);
  }
  // The rate line: the pose channel runs at up to 20 Hz.
  await page.waitForFunction(
    () => Number(document.querySelector('.raw-view[data-channel="pose"]').dataset.rateHz) > 1,
    null,
    { timeout: 10000 },
  );
  assert.match(
    await view.locator('.raw-rate').textContent(),
    /^\d+\.\d Hz · \d+ lost \(\d+\.\d%\) · 0 decode errors$/,
  );

  // Pause so the row stays put, open the newest message, read its tree, copy it.
  await view.getByRole('button', { name: 'Pause' }).click();
  const first = view.locator('.raw-list > li').first();
  const seq = Number(await first.getAttribute('data-seq'));
  await first.locator('summary').first().click();
  const tree = await first.locator('.tree').textContent();
  for (const key of ['seq: ', 'ts: ', 'size: ', 'payload: {', 'x: ', 'y: ', 'yaw: '])
    assert.ok(tree.includes(key), `${key} in ${tree}`);
  await first.getByRole('button', { name: 'Copy JSON' }).click();
  const copied = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
  assert.equal(copied.seq, seq);
  assert.equal(copied.delivery, 'latest');
  assert.equal(typeof copied.ts, 'number');
  for (const k of ['x', 'y', 'yaw']) assert.equal(typeof copied.payload[k], 'number', k);
  // Paused: newer messages are kept, but the list holds still.
  const pausedTop = (await rows(page, 'pose'))[0].seq;
  await page.waitForFunction(
    (s) =>
      Number(document.querySelector('.raw-view[data-channel="pose"]').dataset.newestSeq) > s + 2,
    pausedTop,
    { timeout: 10000 },
  );
  assert.equal((await rows(page, 'pose'))[0].seq, pausedTop);

  // A binary channel: the decoded view of a JPEG is its size from the core.
  await page.getByRole('button', { name: /^camera · jpeg\.v1/ }).click();
  const cam = page.locator('.raw-view[data-channel="camera"]');
  await page.waitForFunction(
    () => document.querySelectorAll('.raw-view[data-channel="camera"] .raw-list > li').length >= 3,
    null,
    { timeout: 20000 },
  );
  await cam.getByRole('button', { name: 'Pause' }).click();
  const camFirst = cam.locator('.raw-list > li').first();
  assert.ok(Number(await camFirst.getAttribute('data-size')) > 1000);
  await camFirst.locator('summary').first().click();
  await camFirst.getByRole('button', { name: 'Copy JSON' }).click();
  const jpeg = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
  assert.deepEqual(jpeg.payload, { image: 'jpeg', w: 160, h: 120 });
  assert.deepEqual(jpeg.meta, { w: 160, h: 120 });
  await page.locator('.side').screenshot({ path: `${artifacts}raw-inspector.png` });

  // Copy all: every kept message of the channel, oldest first.
  await view.getByRole('button', { name: 'Copy all' }).click();
  const all = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
  assert.ok(all.length >= 10 && all.length <= 50, `kept ${all.length}`);
  for (let i = 1; i < all.length; i++) assert.ok(all[i].seq > all[i - 1].seq);
  // Copy all includes what arrived while paused; Close removes the view.
  assert.ok(all.at(-1).seq > pausedTop);
  await cam.getByRole('button', { name: 'Close' }).click();
  assert.equal(await page.locator('.raw-view[data-channel="camera"]').count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});
