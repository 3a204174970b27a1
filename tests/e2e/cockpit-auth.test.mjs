// Auth end to end on both cockpit relays (docs/cockpit-protocol.md § The auth file, § Publishing):
// the Deno relay reads an --auth file, the edge's cockpit Durable Object under real workerd reads
// the same JSON from its COCKPIT_AUTH secret. The robot SDK and the viewer client run in this
// process over real WebSockets; the real cockpit in Chromium takes its token from ?token=.
//   - a robot needs a token of the robot role, a viewer one of the viewer role (a missing, unknown
//     or other-role token is auth_failed, and the client stops for good);
//   - a listed viewer token watches, and publishes on a channel whose requiredScope its token holds;
//     on another it is answered pub_nack not_publishable naming the scope.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import WebSocket from 'ws';
import { connectRobot } from '../../web/glue/cockpit-robot.js';
import { infoOf, nodeRobot, nodeViewer, until } from './lib/cockpit_clients.mjs';
import { LAUNCH } from './lib/chromium.mjs';
import { killAll, startRelay } from './lib/cockpit_procs.mjs';
import { startEdge } from './lib/edge.mjs';

const ROBOT = 'robot-token-0123456789abcdef';
const OPS = 'ops-token-0123456789abcdef';
const ARMED = 'armed-token-0123456789abcdef';
const auth = JSON.stringify({
  tokens: [
    { token: ROBOT, name: 'rover', roles: ['robot'] },
    { token: OPS, name: 'ops', roles: ['viewer'], scopes: ['chat'] },
    { token: ARMED, name: 'arm ops', roles: ['viewer'], scopes: ['chat', 'arm'] },
  ],
});
const manifest = {
  version: 1,
  channels: [
    { ch: 'pose', encoding: 'pose.json.v1' },
    { ch: 'say', dir: 'tx', encoding: 'text.json.v1', delivery: 'reliable', publish: true },
    { ch: 'arm', dir: 'tx', encoding: 'json.v1', publish: true, requiredScope: 'arm' },
  ],
  panels: [],
};

const dir = mkdtempSync(join(tmpdir(), 'tether-cockpit-auth-'));
const authFile = join(dir, 'auth.json');
writeFileSync(authFile, auth);

let browser;
before(async () => {
  browser = await chromium.launch(LAUNCH);
});
after(async () => {
  await browser?.close().catch(() => {});
  killAll();
  rmSync(dir, { recursive: true, force: true });
});

const hosts = {
  'deno (--auth FILE)': async () => {
    const r = await startRelay(['--auth', authFile]);
    return { http: r.http, stop: async () => {} };
  },
  'edge (COCKPIT_AUTH)': async () => {
    const e = await startEdge({ bindings: { COCKPIT_AUTH: auth } });
    return { http: e.url, stop: () => e.stop() };
  },
};

/** A robot that the relay must refuse: resolves with its final link event. */
async function refusedRobot(http, token) {
  const robot = await connectRobot(
    {
      relay: http,
      lane: 'websocket',
      WebSocket,
      id: 'intruder',
      manifest,
      ...(token ? { token } : {}),
    },
    { event() {} },
  );
  const final = await robot.done;
  await robot.stop();
  return final;
}

for (const [name, start] of Object.entries(hosts)) {
  describe(`${name}: auth end to end`, { timeout: 120_000 }, () => {
    let host;
    let robot;
    let info;
    const viewers = [];
    const viewer = (token) => {
      const v = nodeViewer(info, { token });
      viewers.push(v);
      return v;
    };
    before(async () => {
      host = await start();
      robot = await nodeRobot(host.http, { id: 'r1', name: 'Rover', manifest, token: ROBOT });
      await until(() => robot.welcomes() === 1, 'the robot with its token welcomed');
      info = await infoOf(host.http);
    });
    after(async () => {
      for (const v of viewers) v.close();
      await robot?.robot.stop();
      await host?.stop();
    });

    test('a robot without a robot token is refused for good', async () => {
      for (const token of [undefined, 'not-a-listed-token-000', OPS]) {
        const final = await refusedRobot(host.http, token);
        assert.equal(final.code, 'auth_failed', `token ${token}: ${JSON.stringify(final)}`);
        assert.match(final.detail, /auth file/);
      }
      const stats = await (await fetch(`${host.http}/api/stats`)).json();
      assert.deepEqual(
        stats.robots.map((r) => r.id),
        ['r1'],
        'only the robot with its token is listed',
      );
    });

    test('a viewer without a viewer token is refused for good', async () => {
      for (const token of [undefined, 'not-a-listed-token-000', ROBOT]) {
        const v = viewer(token);
        await until(() => v.state.link?.state === 'closed', `viewer with token ${token} closed`);
        assert.equal(v.state.link.code, 'auth_failed');
        assert.equal(v.state.welcomed, false);
        assert.equal(v.sockets().length, 1, 'no reconnect');
      }
    });

    test('scopes on publish: requiredScope needs the token to hold it', async () => {
      const ops = viewer(OPS);
      const armed = viewer(ARMED);
      for (const v of [ops, armed]) {
        v.viewer.watch('r1');
        await until(() => v.manifests.some((m) => m.manifest), 'the manifest for a listed token');
      }
      assert.equal(ops.publish('say', { text: 'hi' }, 's1'), 'sent');
      assert.equal(ops.publish('arm', { up: 1 }, 'a1'), 'sent');
      assert.equal(armed.publish('arm', { up: 1 }, 'a2'), 'sent');
      await until(() => ops.answer('s1') && ops.answer('a1') && armed.answer('a2'), 'every answer');
      assert.equal(ops.answer('s1').t, 'pub_ack');
      assert.equal(ops.answer('a1').t, 'pub_nack');
      assert.equal(ops.answer('a1').code, 'not_publishable');
      assert.match(ops.answer('a1').message, /scope arm/);
      assert.equal(armed.answer('a2').t, 'pub_ack');
      // The relay numbers publishes robot-ward itself: one arm value reached the robot, the armed one.
      const arm = robot.events.filter((e) => e.kind === 'publish' && e.ch === 'arm');
      assert.equal(arm.length, 1, `the robot got one arm value: ${JSON.stringify(arm)}`);
    });

    test('the cockpit in Chromium with ?token= watches the robot', async () => {
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(`${host.http}/?token=${OPS}`);
        await page.waitForFunction(
          () => document.querySelector('#status-link')?.dataset.state === 'open',
          null,
          { timeout: 30_000 },
        );
        await page.waitForSelector('#robot option[value="r1"]', { state: 'attached' });
        assert.equal(await page.$eval('#errors', (e) => e.textContent), '');
      } finally {
        await context.close();
      }
    });
  });
}
