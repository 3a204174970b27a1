// One endpoint for both relays when self-hosted (docs/cockpit-protocol.md § Endpoints): the Deno
// cockpit relay started with --rooms-db answers /rooms/<name> on its own port, beside /api/info,
// /ws/robot and /ws/viewer, as the edge Worker does. Two room peers write and see each other's
// writes through it while a robot streams to a viewer over the same port; without --rooms-db the
// path answers 404 naming the flag.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { infoOf, nodeRobot, nodeViewer, until } from './lib/cockpit_clients.mjs';
import { killAll, startRelay } from './lib/cockpit_procs.mjs';
import { Peer, SECRET, upgradeAnswer } from './lib/edge.mjs';

const dir = mkdtempSync(join(tmpdir(), 'tether-cockpit-rooms-'));
after(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
});

const manifest = {
  version: 1,
  channels: [{ ch: 'log', encoding: 'json.v1', delivery: 'reliable' }],
  panels: [],
};

test('the Deno relay serves rooms and the cockpit on one port', async () => {
  const relay = await startRelay(['--rooms-db', join(dir, 'rooms.sqlite')], {
    TICKET_SECRET: SECRET,
  });
  const info = await infoOf(relay.http);
  const robot = await nodeRobot(relay.http, { id: 'r1', manifest });
  await until(() => robot.welcomes() === 1, 'the robot welcomed');
  const viewer = nodeViewer(info);
  viewer.viewer.watch('r1');
  viewer.viewer.want(['log']);
  await until(() => robot.robot.wants('log'), 'the robot asked for log');
  const log = robot.stream('log', (n) => new TextEncoder().encode(JSON.stringify({ n })), 20);

  const a = new Peer(info.wsUrl, 'lobby', { writer: 'alice' });
  const b = new Peer(info.wsUrl, 'lobby', { writer: 'bob' });
  try {
    await Promise.all([a.ready, b.ready]);
    await until(() => a.welcomes.length && b.welcomes.length, 'both room peers welcomed');
    await until(
      () => a.write([{ kind: 'set', path: [], next: { note: 'from alice' } }]),
      'alice wrote',
    );
    await until(
      () => b.messages.some((m) => JSON.stringify(m).includes('from alice')),
      "bob saw alice's write",
    );
    await until(() => (viewer.frames.log?.length ?? 0) >= 5, 'cockpit frames on the same port');
  } finally {
    log.stop();
    await a.close();
    await b.close();
    viewer.close();
    await robot.robot.stop();
  }
});

test('without --rooms-db, /rooms/ names the flag', async () => {
  const relay = await startRelay();
  const info = await infoOf(relay.http);
  const answer = await upgradeAnswer(`${relay.http}/rooms/lobby?ticket=x`);
  assert.equal(answer.status, 404);
  assert.match(answer.body, /--rooms-db/);
  assert.ok(info.wsUrl);
});
