// The fleet view with two demo robots: both are listed by name, the watched one marked, a
// thumbnail of its camera, and every card with the relay's link figures (docs/cockpit-protocol.md
// § Fleet link quality), the robot never watched included. The second robot's link is degraded for
// real while only the first is watched (its process stopped, so it falls silent while the relay
// still lists it): its card turns stalled with the relay's figures, the first stays good, and the
// second reads good again once it runs on. Watch then switches the cockpit to the second robot,
// whose camera shows in its card while the first keeps its last frame.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { killAll, startRelay, startRobot } from './lib/cockpit_procs.mjs';
import { LAUNCH, artifacts, openCockpit } from './lib/cockpit_page.mjs';

let relay;
let browser;
let second;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  relay = await startRelay();
  await startRobot(relay.http);
  // On the WebSocket lane the relay keeps a silent robot listed for its 10 s liveness, longer than
  // the stall takes to show.
  second = await startRobot(relay.http, ['--id', 'demo-2', '--name', 'Second rover', '--ws']);
  browser = await chromium.launch(LAUNCH);
});

after(async () => {
  await browser?.close().catch(() => {});
  killAll();
});

const card = (page, id) => page.locator(`.fleet-card[data-robot="${id}"]`);
const thumbWidth = (page, id) =>
  page.$eval(`.fleet-card[data-robot="${id}"] img`, (i) => (i.complete ? i.naturalWidth : 0));

const dataLink = (id) =>
  document.querySelector(`.fleet-card[data-robot="${id}"]`)?.dataset.link ?? null;
const waitLink = (page, id, state, timeout) =>
  page.waitForFunction(
    ([id, state]) =>
      document.querySelector(`.fleet-card[data-robot="${id}"]`)?.dataset.link === state,
    [id, state],
    { timeout },
  );
// The relay's figures as a card shows them.
const RELAY = String.raw`link (good|degraded|stalled) at the relay: heard (\d+\.\d) s ago, \d+\.\d fps, \d+\.\d KiB/s, robot rtt (\d+ ms|–)`;
const HERE = String.raw`here: rtt \d+ ms, loss \d+\.\d%, frame age \d+\.\d s`;

test('the fleet view lists two demo robots, with the relay link of each, and switches between them', async () => {
  const { context, page, problems } = await openCockpit(browser, relay.http, { robot: 'demo-1' });
  await page.click('#fleet-toggle');
  await page.waitForFunction(() => document.querySelectorAll('.fleet-card').length === 2, null, {
    timeout: 20000,
  });
  // Frames seen from the moment the view loaded count; the card refreshes every second.
  await page.waitForFunction(
    () =>
      /last frame \d+ s ago/.test(
        document.querySelector('.fleet-card[data-robot="demo-1"]').textContent,
      ),
    null,
    { timeout: 20000 },
  );
  await waitLink(page, 'demo-1', 'good', 20000);
  // The robot never watched has the relay's figures too, its own rtt among them once it reported
  // one (its second ping).
  await waitLink(page, 'demo-2', 'good', 20000);
  await page.waitForFunction(
    () =>
      /robot rtt \d+ ms/.test(
        document.querySelector('.fleet-card[data-robot="demo-2"]').textContent,
      ),
    null,
    { timeout: 20000 },
  );
  assert.match(
    await card(page, 'demo-1').textContent(),
    new RegExp(
      String.raw`Demo rover \(tether-sim\)demo-1 · watching · last frame \d+ s ago · ${RELAY} · ${HERE}`,
    ),
  );
  assert.match(
    await card(page, 'demo-2').textContent(),
    new RegExp(
      String.raw`Second rover \(tether-sim\)demo-2 · online · last frame no frame yet · ${RELAY}Watch$`,
    ),
  );
  // The watched robot's camera (160x120 JPEGs) becomes its thumbnail.
  await page.waitForFunction(
    () => document.querySelector('.fleet-card[data-robot="demo-1"] img')?.naturalWidth === 160,
    null,
    { timeout: 20000 },
  );

  // Degrade the second robot's link while only the first is watched: it stops sending (its
  // process is stopped) while the relay still lists it (its WebSocket liveness is 10 s).
  process.kill(second.pid, 'SIGSTOP');
  try {
    await waitLink(page, 'demo-2', 'stalled', 9000);
    const text = await card(page, 'demo-2').textContent();
    const m = text.match(new RegExp(RELAY));
    assert.ok(m, text);
    assert.equal(m[1], 'stalled');
    assert.ok(Number(m[2]) >= 3, `silent for ${m[2]} s: ${text}`); // kLinkStalledAfterMs
    assert.equal(await page.evaluate(dataLink, 'demo-1'), 'good');
  } finally {
    process.kill(second.pid, 'SIGCONT');
  }
  // Good again once it runs (on its own reconnect when the relay had let it go).
  await waitLink(page, 'demo-2', 'good', 60000);
  assert.equal(await page.evaluate(dataLink, 'demo-1'), 'good');

  await card(page, 'demo-2').getByRole('button', { name: 'Watch' }).click();
  await page.waitForFunction(() => document.querySelector('#robot').value === 'demo-2', null, {
    timeout: 20000,
  });
  await page.waitForFunction(
    () => document.querySelector('.fleet-card[data-robot="demo-2"]')?.dataset.watching === 'true',
    null,
    { timeout: 20000 },
  );
  await page.waitForFunction(
    () => document.querySelector('.fleet-card[data-robot="demo-2"] img')?.naturalWidth === 160,
    null,
    { timeout: 20000 },
  );
  assert.equal(await card(page, 'demo-1').getAttribute('data-watching'), 'false');
  assert.equal(await thumbWidth(page, 'demo-1'), 160); // its last frame stays
  // The first robot, no longer watched, keeps the relay's live figures.
  assert.match(
    await card(page, 'demo-1').textContent(),
    new RegExp(String.raw`demo-1 · online · last frame \d+ s ago · ${RELAY}Watch$`),
  );
  // The panels are the second robot's: its map draws.
  await page.waitForFunction(() => document.querySelector('.panel-map2d')?.dataset.poseX, null, {
    timeout: 20000,
  });
  await page.locator('#fleet').screenshot({ path: `${artifacts}cockpit-fleet.png` });
  assert.deepEqual(problems, []);
  await context.close();
});
