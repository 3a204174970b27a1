// The fleet view with two demo robots: both are listed by name, the watched one marked, with its
// link quality and a thumbnail of its camera; Watch switches the cockpit to the other robot, whose
// camera then shows in its card while the first keeps its last frame and its last link figures.
// The second robot's link is then degraded for real (its process stopped, so its frames stop
// while the relay still lists it): its card reports the link stalled with the frame age, the
// first robot's card does not change, and the link reads good again once the robot runs on.
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

test('the fleet view lists two demo robots and switches between them', async () => {
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
  await page.waitForFunction(
    () => document.querySelector('.fleet-card[data-robot="demo-1"]').dataset.link === 'good',
    null,
    { timeout: 20000 },
  );
  assert.match(
    await card(page, 'demo-1').textContent(),
    /Demo rover \(tether-sim\)demo-1 · watching · last frame \d+ s ago · link good: rtt \d+ ms, loss \d+\.\d%, frame age \d+\.\d s/,
  );
  assert.match(
    await card(page, 'demo-2').textContent(),
    /Second rover \(tether-sim\)demo-2 · online · last frame no frame yet · link: not watched yet/,
  );
  assert.equal(await card(page, 'demo-2').getAttribute('data-link'), 'unknown');
  // The watched robot's camera (160x120 JPEGs) becomes its thumbnail.
  await page.waitForFunction(
    () => document.querySelector('.fleet-card[data-robot="demo-1"] img')?.naturalWidth === 160,
    null,
    { timeout: 20000 },
  );

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
  assert.match(
    await card(page, 'demo-1').textContent(),
    /demo-1 · online · last frame \d+ s ago · link (good|degraded) when last watched \(\d+ s ago\): rtt \d+ ms, loss \d+\.\d%, frame age \d+\.\d s/,
  );
  assert.match(await card(page, 'demo-1').getAttribute('data-link'), /^was-(good|degraded)$/);
  const linkOf = (id) =>
    page.waitForFunction(
      (id) => document.querySelector(`.fleet-card[data-robot="${id}"]`)?.dataset.link,
      id,
    );
  // Live: good, or degraded when a loaded machine supersedes latest frames (that is loss too).
  const live = () =>
    ['good', 'degraded'].includes(
      document.querySelector('.fleet-card[data-robot="demo-2"]').dataset.link,
    );
  await page.waitForFunction(live, null, { timeout: 20000 });

  // Degrade the second robot's link: it stops sending (its process is stopped) while listed.
  process.kill(second.pid, 'SIGSTOP');
  try {
    await page.waitForFunction(
      () => document.querySelector('.fleet-card[data-robot="demo-2"]').dataset.link === 'stalled',
      null,
      { timeout: 8000 },
    );
    assert.match(
      await card(page, 'demo-2').textContent(),
      /demo-2 · watching · last frame \d+ s ago · link stalled: rtt \d+ ms, loss \d+\.\d%, frame age [2-9]\.\d s/,
    );
    assert.match(await (await linkOf('demo-1')).jsonValue(), /^was-(good|degraded)$/);
  } finally {
    process.kill(second.pid, 'SIGCONT');
  }
  // Back to live once it runs again. The bound is loose on purpose: after a stopped process the
  // robot's QUIC connection resumes on its own retransmission backoff, seen at up to 15 s here.
  await page.waitForFunction(live, null, { timeout: 60000 });
  // The panels are the second robot's: its map draws.
  await page.waitForFunction(() => document.querySelector('.panel-map2d')?.dataset.poseX, null, {
    timeout: 20000,
  });
  await page.locator('#fleet').screenshot({ path: `${artifacts}cockpit-fleet.png` });
  assert.deepEqual(problems, []);
  await context.close();
});
