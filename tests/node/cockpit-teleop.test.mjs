// The demo robot's teleop safety chain (web/host/teleop-safety.js; v7 notes § Teleop).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TeleopSafety } from '../../web/host/teleop-safety.js';

const twist = (gen, vx = 1) => ({ t: 'twist', vx, vy: 0, wz: 0.5, seq: 1, ts: 0, gen });

test('a twist of the current lease moves; the 300 ms watchdog stops it', () => {
  const s = new TeleopSafety();
  assert.equal(s.handle({ t: 'teleop_start', gen: 3 }, 0), true);
  s.handle(twist(3), 100);
  assert.deepEqual(s.command(100), { vx: 1, vy: 0, wz: 0.5 });
  assert.deepEqual(s.command(400), { vx: 1, vy: 0, wz: 0.5 });
  assert.deepEqual(s.command(401), { vx: 0, vy: 0, wz: 0 });
});

test('stop and teleop_stop zero the command', () => {
  const s = new TeleopSafety();
  s.handle({ t: 'teleop_start', gen: 1 }, 0);
  s.handle(twist(1), 0);
  s.handle({ t: 'stop', seq: 2, ts: 0, gen: 1 }, 10);
  assert.deepEqual(s.command(10), { vx: 0, vy: 0, wz: 0 });
  s.handle(twist(1), 20);
  s.handle({ t: 'teleop_stop', gen: 1 }, 30);
  assert.deepEqual(s.command(30), { vx: 0, vy: 0, wz: 0 });
});

test('the generation floor ignores a released holder forever', () => {
  const s = new TeleopSafety();
  s.handle({ t: 'teleop_start', gen: 1 }, 0);
  s.handle({ t: 'teleop_stop', gen: 1 }, 5);
  assert.equal(s.handle(twist(1), 10), false, 'late twist of gen 1');
  assert.deepEqual(s.command(10), { vx: 0, vy: 0, wz: 0 });
  s.handle({ t: 'teleop_start', gen: 2 }, 20);
  assert.equal(s.handle(twist(1), 21), false);
  assert.equal(s.handle({ t: 'teleop_start', gen: 1 }, 22), false, 'an old grant cannot come back');
  assert.equal(s.handle(twist(2), 23), true);
  assert.deepEqual(s.command(23), { vx: 1, vy: 0, wz: 0.5 });
  assert.equal(s.handle(twist(undefined), 24), false, 'a twist without gen is never obeyed');
});

test('session loss stops the robot and drops the lease', () => {
  const s = new TeleopSafety();
  s.handle({ t: 'teleop_start', gen: 4 }, 0);
  s.handle(twist(4), 0);
  s.sessionLost();
  assert.deepEqual(s.command(1), { vx: 0, vy: 0, wz: 0 });
  assert.equal(s.handle(twist(4), 2), false);
});
