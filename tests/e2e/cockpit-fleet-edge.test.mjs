// A fleet split over Durable Objects at the edge (docs/cockpit-fleet.md): with COCKPIT_OBJECTS =
// per-robot each robot's sessions live in an object of their own and the fleet's object is a
// directory. Two robots, one viewer, under real workerd: the viewer lists both, watches one and
// drives it, switches to the other and drives that (its socket never changes: the switchboard
// moves the session between objects), and evicting one robot's object leaves the other robot,
// the viewer and its lease untouched. With TETHER_FLEET_OBJECTS=one the same test runs on the one
// object design, where the eviction takes everything down, so the isolation checks fail there.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { infoOf, nodeRobot, nodeViewer, until } from './lib/cockpit_clients.mjs';
import { startEdge } from './lib/edge.mjs';

const manifest = {
  version: 1,
  channels: [
    { ch: 'pose', encoding: 'pose.json.v1' },
    { ch: 'cmd_vel', dir: 'tx', encoding: 'twist.json.v1' },
  ],
  panels: [{ id: 'drive', kind: 'teleop', channels: ['cmd_vel'] }],
};

const objects = process.env.TETHER_FLEET_OBJECTS === 'one' ? {} : { COCKPIT_OBJECTS: 'per-robot' };
let edge;
const closers = [];
after(async () => {
  for (const c of closers.reverse()) await c().catch(() => {});
  await edge?.stop();
});

const stats = async (robot) =>
  (await fetch(`${edge.url}/api/stats${robot ? `?robot=${robot}` : ''}`)).json();

async function drive(viewer, robot, vx) {
  viewer.viewer.teleopStart();
  await until(
    () => viewer.state.teleop === 'held',
    () => `the lease: ${JSON.stringify(viewer.state)}`,
  );
  viewer.viewer.drive(vx, 0, 0);
  await until(() => robot.robot.command().vx === vx, `the robot moving at ${vx}`, 15_000);
}

test(
  'edge fleet: a viewer lists two robots in their own objects, drives one, switches and drives the other; evicting one object leaves the other alone',
  { timeout: 120_000 },
  async () => {
    edge = await startEdge({ bindings: objects });
    const a = await nodeRobot(edge.url, { id: 'rover-a', name: 'A', model: 'sim', manifest });
    closers.push(() => a.robot.stop());
    const b = await nodeRobot(edge.url, { id: 'rover-b', name: 'B', model: 'sim', manifest });
    closers.push(() => b.robot.stop());
    await until(() => a.welcomes() === 1 && b.welcomes() === 1, 'both robots welcomed');

    const viewer = nodeViewer(await infoOf(edge.url));
    closers.push(async () => viewer.close());
    await until(
      () => viewer.robots.at(-1)?.join() === 'rover-a,rover-b',
      () => `both robots listed: ${JSON.stringify(viewer.robots)}`,
    );
    if (objects.COCKPIT_OBJECTS) {
      // Each robot object holds its own robot only; the directory lists the fleet.
      assert.deepEqual(
        (await stats()).robots.map((r) => r.id),
        ['rover-a', 'rover-b'],
      );
      assert.deepEqual(
        (await stats('rover-a')).robots.map((r) => r.id),
        ['rover-a'],
      );
      assert.deepEqual(
        (await stats('rover-b')).robots.map((r) => r.id),
        ['rover-b'],
      );
    }

    viewer.viewer.watch('rover-a');
    await until(() => viewer.manifests.at(-1)?.robotId === 'rover-a', 'the manifest of rover-a');
    await drive(viewer, a, 0.5);
    assert.equal(b.robot.command().vx, 0, 'rover-b did not move');

    // Watching another robot gives up the lease on the first (v7 notes § Viewer session).
    // The lease request goes right behind the watch, so it reaches rover-a's object after the
    // move began: the switchboard must bring it to rover-b's object, in order, or it is lost.
    viewer.viewer.watch('rover-b');
    viewer.viewer.teleopStart();
    await until(() => viewer.manifests.at(-1)?.robotId === 'rover-b', 'the manifest of rover-b');
    await until(() => a.robot.command().active === 0, 'rover-a released when the viewer left it');
    await until(
      () => viewer.messages.filter((m) => m.t === 'teleop_started').length === 2,
      () =>
        `the lease on rover-b from the request sent behind the watch: ${JSON.stringify(viewer.state)}`,
    );
    await drive(viewer, b, 0.3);
    assert.equal(a.robot.command().vx, 0, 'rover-a stays stopped');
    const sockets = viewer.sockets().length;
    assert.equal(sockets, 1, 'the viewer kept its one socket across the switch');
    if (objects.COCKPIT_OBJECTS) {
      const sb = await stats('rover-b');
      assert.equal(sb.robots[0].viewers, 1, 'the viewer moved into rover-b object');
      assert.equal(sb.robots[0].leaseHolder, true);
      assert.equal((await stats('rover-a')).robots[0].viewers, 0, 'and left rover-a object');
    }

    // rover-a's object is evicted: rover-a reconnects (through the directory, into a fresh object)
    // and nothing else notices.
    // (The reset may cut the hook's own response short.)
    await fetch(`${edge.url}/__test/cockpit/evict?robot=rover-a`).catch(() => {});
    await until(() => a.welcomes() === 2, 'rover-a welcomed again', 30_000);
    await until(
      () => viewer.robots.at(-1)?.join() === 'rover-a,rover-b',
      () => `rover-a listed again: ${JSON.stringify(viewer.robots)}`,
    );
    assert.equal(b.welcomes(), 1, 'rover-b kept its session');
    assert.equal(viewer.sockets().length, sockets, 'the viewer kept its socket');
    assert.equal(viewer.state.teleop, 'held', 'and its lease on rover-b');
    viewer.viewer.drive(0.2, 0, 0);
    await until(() => b.robot.command().vx === 0.2, 'rover-b still driven on the same lease');
    if (objects.COCKPIT_OBJECTS) {
      // The directory saw rover-a's object go (its link closed) and come back.
      const dir = await stats();
      assert.deepEqual(
        dir.robots.map((r) => r.id),
        ['rover-a', 'rover-b'],
      );
    }
  },
);
