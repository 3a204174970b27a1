// Layouts people own, against the demo robot: in Edit, a panel is removed, two are swapped by
// dragging one onto the other, a gap is dragged to resize, and a panel is added from the channel
// list; the layout survives a reload (saved per robot), its Share link opened in a fresh context
// shows the same geometry, and Reset brings back the manifest's layout.
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

/** Each shown panel's id and box, rounded to whole pixels. */
const geometry = (page) =>
  page.$$eval('#panels .panel', (els) =>
    Object.fromEntries(
      els.map((e) => {
        const r = e.getBoundingClientRect();
        return [e.dataset.panelId, [r.left, r.top, r.width, r.height].map(Math.round)];
      }),
    ),
  );

/** How many elements in the page carry each panel id: one per panel, never a stray. */
const idCounts = (page) =>
  page.$$eval('[data-panel-id]', (els) => {
    const n = {};
    for (const e of els) n[e.dataset.panelId] = (n[e.dataset.panelId] ?? 0) + 1;
    return n;
  });
const onePerPanel = async (page, ids) => {
  const counts = await idCounts(page);
  assert.deepEqual(counts, Object.fromEntries(ids.map((id) => [id, 1])));
};

test('a layout edited, saved, shared by URL and opened in a fresh context looks the same; Reset restores it', async () => {
  const { context, page, problems } = await openCockpit(browser, relay.http);
  const original = await geometry(page);
  assert.deepEqual(Object.keys(original).sort(), ['cam', 'drive', 'health', 'map', 'talk']);

  await page.click('#layout-edit');
  // Remove the chat panel.
  await page.getByRole('button', { name: 'remove Chat' }).click();
  // Swap the map and the camera: drag the map's head onto the camera.
  await page
    .locator('[data-panel-id="map"] .panel-head')
    .dragTo(page.locator('[data-panel-id="cam"]'));
  // Resize: drag the first gap of the top row 120 px to the right.
  const gap = page.locator('#panels > .layout-row > .layout-resizer').first();
  const g = await gap.boundingBox();
  await page.mouse.move(g.x + g.width / 2, g.y + g.height / 2);
  await page.mouse.down();
  await page.mouse.move(g.x + g.width / 2 + 120, g.y + g.height / 2, { steps: 6 });
  await page.mouse.up();
  // Add a panel for the log channel: exactly one element carries its id, while editing and after.
  await page.getByRole('button', { name: 'add a panel for log' }).click();
  await page.waitForSelector('[data-panel-id="log-1"] .log-list');
  const editedIds = ['cam', 'drive', 'health', 'log-1', 'map'];
  await onePerPanel(page, editedIds);
  // The new panel is an editable one like the rest: it has its remove button.
  await page.getByRole('button', { name: 'remove log' }).waitFor();
  await page.click('#layout-edit'); // Done
  await page.waitForSelector('[data-panel-id="log-1"] .log-list');
  await onePerPanel(page, editedIds);
  const edited = await geometry(page);
  assert.deepEqual(Object.keys(edited).sort(), ['cam', 'drive', 'health', 'log-1', 'map']);
  assert.equal(
    await page.$eval('[data-panel-id="log-1"]', (e) => e.className),
    'panel panel-event-log',
  );
  // The map now sits where the camera's column was, at the left, and is wider than before.
  assert.ok(edited.map[0] < edited.cam[0], `map left of camera: ${edited.map} vs ${edited.cam}`);
  assert.ok(edited.map[0] < original.map[0]);
  assert.notDeepEqual(edited.map, original.map);

  // Saved for this robot: a reload shows the same.
  await page.reload();
  await page.waitForSelector('[data-panel-id="log-1"]', { timeout: 30000 });
  assert.deepEqual(await geometry(page), edited);

  // Shared: the link in a fresh context (no saved layout) shows the same geometry.
  await page.click('#layout-share');
  const url = await page.inputValue('#layout-link');
  assert.match(url, /#layout=[\w-]+$/);
  const other = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const fresh = await other.newPage();
  await fresh.goto(url);
  await fresh.waitForSelector('[data-panel-id="log-1"]', { timeout: 30000 });
  await fresh.waitForFunction(() => document.querySelector('.panel-map2d')?.dataset.poseX, null, {
    timeout: 30000,
  });
  assert.deepEqual(await geometry(fresh), edited);
  await fresh.screenshot({ path: `${artifacts}cockpit-layout.png` });
  await other.close();

  // Reset: the manifest's layout again, and it stays after a reload.
  await page.click('#layout-reset');
  await page.waitForFunction(() => document.querySelector('[data-panel-id="talk"]'));
  assert.deepEqual(await geometry(page), original);
  await page.reload();
  await page.waitForSelector('[data-panel-id="talk"]', { timeout: 30000 });
  assert.deepEqual(await geometry(page), original);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a cut-off layout link is refused with a note and the manifest layout shows', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await page.goto(`${relay.http}/#layout=eyJsYXlvdXQiOnsicm93Ij`);
  await page.waitForSelector('[data-panel-id="talk"]', { timeout: 30000 });
  assert.match(
    await page.textContent('#layout-note'),
    /not readable \(a cut-off link\?\); ask for the link again/,
  );
  await ctx.close();
});
