// Gamepad teleop against the demo robot, with a pad simulated through the page's Gamepad API
// (navigator.getGamepads answers what the test sets): the stick alone does not drive; holding the
// deadman (LB) drives the robot through the same lease and watchdog as the keys; letting it go
// stops the robot while the stick is still pushed; the mapping is on screen.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { killAll, startRelay, startRobot } from './lib/cockpit_procs.mjs';
import { LAUNCH, driving, restingPoseX, stats, stoppedByRobot } from './lib/cockpit_page.mjs';

let relay;
let browser;

before(async () => {
  relay = await startRelay();
  await startRobot(relay.http);
  browser = await chromium.launch(LAUNCH);
});

after(async () => {
  await browser?.close().catch(() => {});
  killAll();
});

// A standard-mapping pad whose axes and buttons the test sets through window.pad.
const PAD = () => {
  const buttons = Array.from({ length: 17 }, () => ({ pressed: false, touched: false, value: 0 }));
  window.pad = {
    id: 'Simulated pad (STANDARD GAMEPAD)',
    index: 0,
    connected: true,
    mapping: 'standard',
    timestamp: 0,
    axes: [0, 0, 0, 0],
    buttons,
  };
  navigator.getGamepads = () => [window.pad, null, null, null];
};
const setPad = (page, { axes, deadman }) =>
  page.evaluate(
    ({ axes, deadman }) => {
      if (axes) window.pad.axes = axes;
      if (deadman !== undefined)
        window.pad.buttons[4] = { pressed: deadman, touched: deadman, value: deadman ? 1 : 0 };
      window.pad.timestamp++;
    },
    { axes, deadman },
  );

test('a gamepad drives only while its deadman is held', async () => {
  // The pad goes in through an init script, before the cockpit's first read of it.
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await ctx.addInitScript(PAD);
  const p = await ctx.newPage();
  const errs = [];
  p.on('pageerror', (e) => errs.push(e.message));
  await p.goto(`${relay.http}/`);
  await p.waitForFunction(
    () => document.querySelector('.panel-teleop')?.dataset.gamepad === 'connected',
    null,
    { timeout: 30000 },
  );
  assert.match(
    await p.textContent('.panel-teleop'),
    /Gamepad: hold LB \(deadman\); left stick drive and strafe, right stick turn, RB boost/,
  );
  assert.match(await p.textContent('.gamepad-status'), /Simulated pad.*deadman released/);
  await p.waitForFunction(() => document.querySelector('.panel-map2d')?.dataset.poseX, null, {
    timeout: 30000,
  });
  await p.click('.panel-teleop .lease-button');
  await p.waitForFunction(
    () => document.querySelector('.panel-teleop').dataset.lease === 'held',
    null,
    { timeout: 10000 },
  );

  // Stick forward, deadman not held: no command leaves the cockpit and the robot stays put.
  const x0 = await restingPoseX(p);
  await setPad(p, { axes: [0, -1, 0, 0] });
  assert.equal(await restingPoseX(p), x0);
  assert.match(await stats(p), /teleop\.vx0/);
  assert.equal(await p.$eval('.panel-teleop', (e) => e.dataset.twist ?? ''), '');

  // Deadman held: it drives forward at the panel's maxV (1 m/s in the demo manifest).
  await setPad(p, { deadman: true });
  await driving(p);
  assert.equal(await p.$eval('.panel-teleop', (e) => e.dataset.gamepad), 'deadman');
  await p.waitForFunction(
    (x) => Number(document.querySelector('.panel-map2d').dataset.poseX) > x + 2,
    x0,
    { timeout: 20000 },
  );

  // Deadman let go, stick still pushed: the robot stops and stays stopped.
  await setPad(p, { deadman: false });
  await stoppedByRobot(p);
  assert.equal(await p.$eval('.panel-teleop', (e) => e.dataset.zeroedBy), 'deadman');
  const x1 = await restingPoseX(p);
  assert.ok(x1 > x0 + 2);
  assert.equal(await restingPoseX(p), x1);
  assert.deepEqual(errs, []);
  await ctx.close();
});
