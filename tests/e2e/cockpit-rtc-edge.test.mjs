// WebRTC brokering at the edge (issue #18): the cockpit relay's Durable Object (web/edge/cockpit.js)
// in the real edge Worker under real workerd (Miniflare), with COCKPIT_RTC naming the local SFU
// (web/sfu) the way the secret names Cloudflare Realtime in production. The demo robot's WebRTC
// camera and the cockpit in Chromium both reach the object over its WebSocket twins; the object
// makes the SFU calls with fetch. TURN minting fails twice first, so the retry that comes after a
// second rides the object's alarm. Inside a private network namespace.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { inNetns } from './lib/netns.mjs';

if (inNetns(import.meta.url)) {
  const { chromium } = await import('playwright-core');
  const { LAUNCH_WEBRTC } = await import('./lib/chromium.mjs');
  const { killAll, startRobot, waitForOutput } = await import('./lib/cockpit_procs.mjs');
  const { startEdge } = await import('./lib/edge.mjs');
  const { decodedPattern, openRtcCockpit, startRtcSfu, waitState } =
    await import('./lib/rtc_cockpit.mjs');

  let sfu;
  let edge;
  let browser;

  before(async () => {
    sfu = await startRtcSfu({ trackTimeoutMs: 5000 });
    // The first two TURN mints fail: retries after 500 ms (a timer) and 1000 ms (the alarm).
    sfu.sfu.failNext({ op: 'turn', count: 2 });
    edge = await startEdge({
      bindings: { COCKPIT_RTC: sfu.text, COCKPIT_ALARM_AFTER_MS: '900' },
    });
    browser = await chromium.launch(LAUNCH_WEBRTC);
  });
  after(async () => {
    await browser?.close().catch(() => {});
    killAll();
    await edge?.mf.dispose().catch(() => {});
    await sfu?.close();
  });

  test(
    'the edge object brokers the robot camera through the SFU into the cockpit, TURN retried on its alarm',
    { timeout: 180_000 },
    async () => {
      const robot = await startRobot(edge.url, ['--webrtc', '--track-timeout-ms', '5000']);
      // Nobody else is connected yet, so no nearer deadline (a stream reap) pre-empts the retry.
      await waitForOutput(robot, /WebRTC opening/);
      const hook = await (await fetch(`${edge.url}/__test/cockpit`)).json();
      assert.ok(
        hook.alarmsFired >= 1,
        `the 1000 ms retry fired as the object's alarm (${hook.alarmsFired})`,
      );
      assert.match(robot.errors, /rtc_failed: the SFU call minting TURN credentials failed \(503/);

      const { page, context, problems } = await openRtcCockpit(browser, edge.url);
      assert.match(await page.textContent('#status-link'), /connected \(websocket\)/);
      await waitState(page, 'live');
      const reads = await decodedPattern(page, 10);
      assert.equal(reads.at(-1).width, 640);
      for (let i = 1; i < reads.length; i++) assert.ok(reads[i].counter > reads[i - 1].counter);

      const stats = await (await fetch(`${edge.url}/api/stats`)).json();
      assert.deepEqual(stats.robots[0].rtc.tracks.front, { active: true, generation: 1, pulls: 1 });
      assert.equal(stats.rtc.iceSets, 1);
      assert.ok(stats.rtc.failed >= 2, 'the two TURN failures are counted');
      assert.deepEqual(problems, []);
      await context.close();
    },
  );
}
