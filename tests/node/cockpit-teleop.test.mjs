// The robot's teleop safety chain (src/cockpit/teleop_safety.hpp; v7 notes § Teleop) through the
// WASM build and web/glue/cockpit-cores.js, the same rules the native suite checks, and its
// watchdog driven by the one driver on a manual clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadTetherModule } from '../../web/glue/load.js';
import { createTeleopSafety } from '../../web/glue/cockpit-cores.js';
import { createDriver } from '../../web/glue/driver.js';

const mod = await loadTetherModule();
const twist = (gen, vx = 1) => ({ t: 'twist', vx, vy: 0, wz: 0.5, seq: 1, ts: 0, gen });
const zero = { vx: 0, vy: 0, wz: 0 };
const cmd = (s) => {
  const { vx, vy, wz } = s.command();
  return { vx, vy, wz };
};

test('a twist of the current lease moves; the 300 ms watchdog stops it', () => {
  const s = createTeleopSafety(mod);
  assert.equal(s.watchdogMs, 300);
  assert.equal(s.handleMessage({ t: 'teleop_start', gen: 3 }, 0), true);
  s.handleMessage(twist(3), 100);
  assert.deepEqual(cmd(s), { vx: 1, vy: 0, wz: 0.5 });
  assert.equal(s.pollTimeout(), 401);
  s.handleTimeout(400);
  assert.deepEqual(cmd(s), { vx: 1, vy: 0, wz: 0.5 });
  s.handleTimeout(401);
  assert.deepEqual(cmd(s), zero);
  assert.equal(s.pollTimeout(), null);
  s.dispose();
});

test('stop and teleop_stop zero the command', () => {
  const s = createTeleopSafety(mod);
  s.handleMessage({ t: 'teleop_start', gen: 1 }, 0);
  s.handleMessage(twist(1), 0);
  s.handleMessage({ t: 'stop', seq: 2, ts: 0, gen: 1 }, 10);
  assert.deepEqual(cmd(s), zero);
  s.handleMessage(twist(1), 20);
  s.handleMessage({ t: 'teleop_stop', gen: 1 }, 30);
  assert.deepEqual(cmd(s), zero);
  s.dispose();
});

test('the generation floor ignores a released holder forever', () => {
  const s = createTeleopSafety(mod);
  s.handleMessage({ t: 'teleop_start', gen: 1 }, 0);
  s.handleMessage({ t: 'teleop_stop', gen: 1 }, 5);
  assert.equal(s.handleMessage(twist(1), 10), false, 'late twist of gen 1');
  assert.deepEqual(cmd(s), zero);
  s.handleMessage({ t: 'teleop_start', gen: 2 }, 20);
  assert.equal(s.handleMessage(twist(1), 21), false);
  assert.equal(
    s.handleMessage({ t: 'teleop_start', gen: 1 }, 22),
    false,
    'an old grant cannot come back',
  );
  assert.equal(s.handleMessage(twist(2), 23), true);
  assert.deepEqual(cmd(s), { vx: 1, vy: 0, wz: 0.5 });
  assert.equal(s.handleMessage(twist(undefined), 24), false, 'a twist without gen is never obeyed');
  assert.equal(s.command().floor, 2);
  s.dispose();
});

test('session loss stops the robot and drops the lease', () => {
  const s = createTeleopSafety(mod);
  s.handleMessage({ t: 'teleop_start', gen: 4 }, 0);
  s.handleMessage(twist(4), 0);
  s.handleSessionLost(1);
  assert.deepEqual(cmd(s), zero);
  assert.equal(s.handleMessage(twist(4), 2), false);
  s.dispose();
});

test('the driver wakes the watchdog at its deadline: the robot stops by silence', () => {
  const s = createTeleopSafety(mod, { watchdogMs: 200 });
  const clock = { t: 0, timers: [] };
  const seen = [];
  const driver = createDriver(
    s,
    { perform() {}, event: (e) => seen.push(`${e.cause}:${e.vx}`) },
    {
      now: () => clock.t,
      setTimer: (fn, ms) => clock.timers.push({ fn, at: clock.t + ms }),
      clearTimer: () => {},
    },
  );
  driver.input((now) => s.handleMessage({ t: 'teleop_start', gen: 7 }, now));
  clock.t = 10;
  driver.input((now) => s.handleMessage(twist(7, 0.5), now));
  assert.equal(clock.timers.at(-1).at, 211);
  clock.t = 211;
  clock.timers.at(-1).fn();
  assert.deepEqual(seen, ['teleop_start:0', 'twist:0.5', 'watchdog:0']);
  s.dispose();
});
