// The cockpit's event-log panel against the demo robot's reliable JSON log (levels debug, info,
// warn and error, web/host/demo-robot.js): entries arrive in order with their level and text, the
// level filter keeps only that level and above, the text filter only matching rows, and clearing
// the filters brings every kept entry back. A second robot with a panel kind no cockpit knows
// shows that kind still renders, named, with its channel's rate.
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
  await startRobot(relay.http, ['--log-hz', '20']);
  await startRobot(relay.http, [
    '--id',
    'demo-2',
    '--name',
    'Future rover',
    '--future-panel',
    'gauge-9000',
  ]);
  browser = await chromium.launch(LAUNCH);
});

after(async () => {
  await browser?.close().catch(() => {});
  killAll();
});

const rows = (page) =>
  page.$$eval('.panel-event-log .log-list li', (els) =>
    els.map((e) => ({
      level: e.dataset.level,
      text: e.querySelector('.log-text').textContent,
      n: Number(e.dataset.n),
    })),
  );

test('event-log: entries in order with their levels; level and text filters narrow them', async () => {
  const { context, page, problems } = await openCockpit(browser, relay.http, { robot: 'demo-1' });
  await page.getByRole('tab', { name: 'Events' }).click();
  const panel = page.locator('.panel-event-log');
  await panel.waitFor();
  await page.waitForFunction(
    () => Number(document.querySelector('.panel-event-log').dataset.total) >= 30,
    null,
    { timeout: 30000 },
  );
  const all = await rows(page);
  assert.ok(all.length >= 30, `rows: ${all.length}`);
  // The robot's own numbering (#n in the text) rises by one: reliable, in order, none lost.
  const robotN = all.map((r) => Number(r.text.match(/#(\d+)\)$/)[1]));
  for (let i = 1; i < robotN.length; i++)
    assert.equal(robotN[i], robotN[i - 1] + 1, `entry ${i}: ${robotN.join(',')}`);
  assert.deepEqual(new Set(all.map((r) => r.level)), new Set(['debug', 'info', 'warn', 'error']));
  for (const r of all) assert.match(r.text, /^\[demo\] /);
  for (const r of all.filter((r) => r.level === 'error')) assert.match(r.text, /lidar dropout/);

  await panel.getByLabel('Lowest level shown').selectOption('warn');
  const warn = await rows(page);
  assert.ok(
    warn.length > 0 && warn.length < all.length,
    `warn+ rows: ${warn.length} of ${all.length}`,
  );
  for (const r of warn) assert.ok(r.level === 'warn' || r.level === 'error', r.level);
  assert.ok(warn.some((r) => r.level === 'warn') && warn.some((r) => r.level === 'error'));

  await panel.getByLabel('Lowest level shown').selectOption('debug');
  await panel.getByLabel('Filter log text').fill('LIDAR');
  const lidar = await rows(page);
  assert.ok(lidar.length > 0);
  for (const r of lidar) {
    assert.equal(r.level, 'error');
    assert.match(r.text, /lidar/);
  }
  // New entries that match keep arriving under the filter; others do not show.
  const before = lidar.at(-1).n;
  await page.waitForFunction(
    (n) =>
      Number(document.querySelector('.panel-event-log .log-list li:last-child')?.dataset.n) > n,
    before,
    { timeout: 20000 },
  );
  for (const r of await rows(page)) assert.match(r.text, /lidar/);

  await panel.getByLabel('Filter log text').fill('');
  const back = await rows(page);
  assert.ok(back.length >= all.length, `${back.length} rows after clearing, ${all.length} before`);
  await panel.screenshot({ path: `${artifacts}panel-event-log.png` });
  assert.deepEqual(problems, []);
  await context.close();
});

test('a panel kind the cockpit does not know still renders, named, with its channel rate', async () => {
  const { context, page, problems } = await openCockpit(browser, relay.http, { robot: 'demo-2' });
  await page.getByRole('tab', { name: 'Future' }).click();
  const unknown = page.locator('[data-unknown-kind="gauge-9000"]');
  await unknown.waitFor();
  assert.match(await unknown.textContent(), /Unknown panel kind "gauge-9000"/);
  await page.waitForFunction(
    () => /log \(json\.v1\): [1-9]/.test(document.querySelector('.rate-list')?.textContent ?? ''),
    null,
    { timeout: 30000 },
  );
  assert.deepEqual(problems, []);
  await context.close();
});
