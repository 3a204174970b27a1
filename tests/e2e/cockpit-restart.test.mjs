// Teleop after a relay restart (docs/cockpit-protocol.md § The teleop lease): the robot keeps its
// generation floor while the relay starts afresh, so the relay's generations must only grow across
// restarts. The Deno relay is killed and started again on the same port, and the edge's cockpit
// Durable Object is evicted by restarting workerd over the same persisted storage, each in the
// middle of a lease; the robot SDK and the viewer client reconnect by themselves, and the next
// lease must drive the robot.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { infoOf, nodeRobot, nodeViewer, until } from './lib/cockpit_clients.mjs';
import { kill, killAll, startRelay } from './lib/cockpit_procs.mjs';
import { startEdge } from './lib/edge.mjs';

const manifest = {
  version: 1,
  channels: [
    { ch: 'pose', encoding: 'pose.json.v1' },
    { ch: 'cmd_vel', dir: 'tx', encoding: 'twist.json.v1' },
  ],
  panels: [{ id: 'drive', kind: 'teleop', channels: ['cmd_vel'] }],
};

const dir = mkdtempSync(join(tmpdir(), 'tether-cockpit-restart-'));
const edges = new Set();
after(async () => {
  killAll();
  for (const e of edges) await e.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

// One lease, released, then a second one driving: the robot's floor is now above the first grant.
async function driveOnce(viewer, robot, vx) {
  viewer.viewer.teleopStart();
  await until(
    () => viewer.state.teleop === 'held',
    () => `the lease: ${JSON.stringify(viewer.state)} ${viewer.messages.map((m) => m.t)}`,
  );
  viewer.viewer.drive(vx, 0, 0);
  await until(() => robot.robot.command().vx === vx, `the robot moving at ${vx}`, 15_000);
}

async function restartMidLease(start, stop) {
  let relay = await start();
  const robot = await nodeRobot(relay.http, { id: 'r1', name: 'Rover', model: 'sim', manifest });
  await until(() => robot.welcomes() === 1, 'the robot welcomed');
  const viewer = nodeViewer(await infoOf(relay.http));
  viewer.viewer.watch('r1');
  await until(() => viewer.manifests.some((m) => m.manifest), 'the manifest');
  await driveOnce(viewer, robot, 0.5);
  viewer.viewer.teleopStop();
  await until(() => robot.robot.command().active === 0, 'the first lease released');
  await driveOnce(viewer, robot, 0.4);
  const before = robot.robot.command();
  assert.ok(before.floor >= 2, `the robot's floor rose: ${JSON.stringify(before)}`);

  // The relay dies while the lease is held, with no teleop_stop on the way.
  const manifestsBefore = viewer.manifests.length;
  await stop(relay);
  await until(() => robot.robot.command().vx === 0, 'the robot stopped on session loss');
  relay = await start(relay);
  await until(() => robot.welcomes() === 2, 'the robot welcomed again', 30_000);
  await until(
    () =>
      viewer.state.welcomed &&
      viewer.manifests.length > manifestsBefore &&
      viewer.manifests.at(-1).manifest,
    'the viewer watching again',
  );

  await driveOnce(viewer, robot, 0.3);
  const afterRestart = robot.robot.command();
  assert.ok(
    afterRestart.active >= before.floor,
    `the new lease (${afterRestart.active}) is above the robot's floor (${before.floor})`,
  );
  viewer.close();
  await robot.robot.stop();
  return relay;
}

test(
  'deno: a relay restarted mid-lease grants a lease that drives the robot',
  { timeout: 120_000 },
  async () => {
    let port = 0;
    const last = await restartMidLease(
      async () => {
        const r = await startRelay(['--port', String(port)]);
        port = Number(r.matched[2]);
        return r;
      },
      async (r) => {
        kill(r);
        await new Promise((res) =>
          r.exitCode === null && r.signalCode === null ? r.once('exit', res) : res(),
        );
      },
    );
    kill(last);
  },
);

// The clock stepping back across the restart (another machine, an NTP step): the wall-clock seed
// alone would issue generations below the robot's floor, so the stored floor must carry them.
test(
  'deno: a relay restarted mid-lease with its clock an hour back grants from the floor stored in --rooms-db',
  { timeout: 120_000 },
  async () => {
    let port = 0;
    const db = join(dir, 'relay-rooms.sqlite');
    const env = { TICKET_SECRET: 'a-ticket-secret-of-at-least-32-characters' };
    const last = await restartMidLease(
      async (previous) => {
        const skew = previous
          ? { TETHER_TEST_HOOKS: '1', TETHER_TEST_CLOCK_SKEW_MS: String(-3_600_000) }
          : {};
        const r = await startRelay(['--port', String(port), '--rooms-db', db], { ...env, ...skew });
        port = Number(r.matched[2]);
        return r;
      },
      async (r) => {
        kill(r);
        await new Promise((res) =>
          r.exitCode === null && r.signalCode === null ? r.once('exit', res) : res(),
        );
      },
    );
    kill(last);
  },
);

// The same at the edge, with the whole fleet in one object and with an object per robot
// (docs/cockpit-fleet.md): there the robot's own object keeps its generation floor.
for (const [what, bindings] of [
  ['the cockpit object', {}],
  ["the robot's own object (COCKPIT_OBJECTS=per-robot)", { COCKPIT_OBJECTS: 'per-robot' }],
]) {
  test(
    `edge: ${what} evicted mid-lease (workerd restarted over its storage) grants a lease that drives the robot`,
    { timeout: 120_000 },
    async () => {
      let port = 0;
      const start = async () => {
        const e = await startEdge({
          persist: join(dir, String(Object.keys(bindings).length)),
          port,
          bindings,
        });
        edges.add(e);
        port = Number(new URL(e.url).port);
        return { ...e, http: e.url };
      };
      const last = await restartMidLease(start, async (e) => {
        edges.delete(e);
        await e.stop();
      });
      edges.delete(last);
      await last.stop();
    },
  );
}
