// WebRTC video end to end (issue #18; cockpit-wire-protocol.md § WebRTC video): the Deno relay
// started with --rtc-file brokers the local SFU (web/sfu, real werift forwarding), the demo robot's
// WebRTC camera (real ffmpeg H.264) publishes through it with the robot SDK, and the real cockpit
// in Chromium plays it in its video panel, whose decoded frames are read back by pixels. Then: a
// stalled track is re-pulled and the picture resumes; an SFU call made to fail shows rtc_failed and
// recovers; rtc_session_gone leads to a new offer and video again; a relay without --rtc-file
// refuses a track channel with rtc_unavailable. Inside a private network namespace.
//
// The steps share one SFU, relay, robot and browser and run in order.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { inNetns } from './lib/netns.mjs';

if (inNetns(import.meta.url)) {
  const { chromium } = await import('playwright-core');
  const { LAUNCH_WEBRTC } = await import('./lib/chromium.mjs');
  const { killAll, startRelay, startRobot } = await import('./lib/cockpit_procs.mjs');
  const { decodedPattern, openRtcCockpit, panelState, startRtcSfu, waitState } =
    await import('./lib/rtc_cockpit.mjs');
  const { barX, patternLayout } = await import('../../web/sfu/pattern.js');

  const TRACK_TIMEOUT_MS = 1500; // the SFU's collection window, shortened from Cloudflare's 30 s
  let sfu;
  let relay;
  let robot;
  let browser;
  let viewer; // the first cockpit page
  let lastCounter = -1;

  const stats = async () => (await fetch(`${relay.http}/api/stats`)).json();
  const say = (line) => robot.stdin.write(`${line}\n`);
  const until = async (fn) => {
    for (;;) {
      const v = await fn();
      if (v) return v;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  before(async () => {
    sfu = await startRtcSfu({ trackTimeoutMs: TRACK_TIMEOUT_MS });
    relay = await startRelay(['--rtc-file', sfu.file]);
    robot = await startRobot(
      relay.http,
      ['--webrtc', '--track-timeout-ms', String(TRACK_TIMEOUT_MS), '--control-stdin'],
      { stdin: 'pipe' },
    );
    browser = await chromium.launch({
      ...LAUNCH_WEBRTC,
      args: [...LAUNCH_WEBRTC.args, '--autoplay-policy=no-user-gesture-required'],
    });
  });
  after(async () => {
    await browser?.close().catch(() => {});
    killAll();
    await sfu?.close();
  });

  function assertPattern(reads, what) {
    const last = reads.at(-1);
    assert.equal(last.width, 640, `${what}: decoded width`);
    assert.equal(last.height, 480, `${what}: decoded height`);
    for (let i = 1; i < reads.length; i++)
      assert.ok(reads[i].counter > reads[i - 1].counter, `${what}: the frame counter rises`);
    // The bar is where the robot drew it for that frame (within the encoder's softening).
    const expected = barX(patternLayout(640, 480), last.counter);
    assert.ok(
      Math.abs(last.barX - expected) <= 2,
      `${what}: bar at ${last.barX}, drawn at ${expected}`,
    );
    assert.notEqual(reads[0].barX, last.barX, `${what}: the picture moves`);
  }

  test(
    'the cockpit plays the robot camera through the SFU: decoded frames carry the robot pattern',
    { timeout: 120_000 },
    async () => {
      viewer = await openRtcCockpit(browser, relay.http);
      const { page } = viewer;
      await waitState(page, 'live');
      const reads = await decodedPattern(page, 10);
      assertPattern(reads, 'the cockpit');
      lastCounter = reads.at(-1).counter;
      const p = await panelState(page);
      assert.ok(p.frames >= 10, `requestVideoFrameCallback counted ${p.frames} frames`);
      assert.match(
        await page.textContent('.panel[data-panel-id="front"] .overlay'),
        /live · \d+\.\d fps/,
      );
      // The JPEG camera still plays beside it.
      const s = await stats();
      const r = s.robots[0];
      assert.deepEqual(r.rtc.tracks.front, { active: true, generation: 1, pulls: 1 });
      assert.equal(r.rtc.framesOnTrack, 0);
      assert.equal(s.rtc.failed, 0);
      assert.deepEqual(viewer.problems, []);
    },
  );

  test(
    'a track stalled for the collection window is declared again and re-pulled, and the picture resumes',
    { timeout: 120_000 },
    async () => {
      const { page } = viewer;
      const before = await panelState(page);
      say('pause front');
      // The SFU collects the silent track; the cockpit shows it stalled meanwhile.
      await until(() => sfu.sfu.collected >= 1);
      await waitState(page, 'stalled');
      say('resume front');
      // The robot SDK sends rtc_stalled; the relay re-declares the track and re-pulls it as a new offer.
      await until(async () => (await stats()).rtc.stalls >= 1);
      await until(async () => (await panelState(page)).mid !== before.mid);
      await waitState(page, 'live');
      const reads = await decodedPattern(page, 10, { after: lastCounter });
      assertPattern(reads, 'after the stall');
      lastCounter = reads.at(-1).counter;
      const s = await stats();
      assert.deepEqual(s.robots[0].rtc.tracks.front, { active: true, generation: 2, pulls: 1 });
      const states = await page.evaluate(() => window.rtcStates);
      assert.deepEqual(states.slice(states.lastIndexOf('stalled')), [
        'stalled',
        'connecting',
        'live',
      ]);
      assert.match(robot.output, /camera front resumed after \d+ ms \(rtc_stalled sent\)/);
    },
  );

  test(
    'an SFU call made to fail shows rtc_failed, and the retry brings the video',
    { timeout: 120_000 },
    async () => {
      // The next two pulls fail: a second cockpit's pull is retried with backoff.
      sfu.sfu.failNext({ op: 'tracks/new', location: 'remote', count: 2 });
      const second = await openRtcCockpit(browser, relay.http);
      try {
        await waitState(second.page, 'live');
        const states = await second.page.evaluate(() => window.rtcStates);
        assert.ok(
          states.includes('failed'),
          `the panel showed failed first: ${states.join(' -> ')}`,
        );
        const errors = await second.page.evaluate(() => window.rtcErrors);
        assert.ok(
          errors.some((e) =>
            /^rtc_failed: .*pulling tracks failed \(503 temporarily_unavailable_error/.test(e),
          ),
          `the cockpit showed rtc_failed: ${errors.join(' | ')}`,
        );
        assertPattern(await decodedPattern(second.page, 10), 'after the failures');
        assert.ok((await stats()).rtc.failed >= 2);
      } finally {
        await second.context.close();
      }
    },
  );

  test('rtc_session_gone leads to a new offer and video again', { timeout: 120_000 }, async () => {
    const { page } = viewer;
    // The viewer's SFU session: the one pulling a track that is no robot's.
    const robotSession = sfu.sfu.stats().sessions.find((s) => s.published.length)?.sessionId;
    const mine = sfu.sfu
      .stats()
      .sessions.filter((s) =>
        s.pulled.some((p) => p.status === 'active' && p.sessionId === robotSession),
      );
    const gone0 = (await stats()).rtc.sessionsGone;
    for (const s of mine) await sfu.sfu.deleteSession(s.sessionId, 'deleted by the test');
    // Hiding the panel (another tab) unsubscribes: the relay's close meets the lost session.
    await page.click('#tabs button:nth-child(2)');
    await until(async () => (await stats()).rtc.sessionsGone > gone0);
    await page.click('#tabs button:nth-child(1)');
    await waitState(page, 'live');
    const errors = await page.evaluate(() => window.rtcErrors);
    assert.ok(
      errors.some((e) => e.startsWith('rtc_session_gone: ')),
      errors.join(' | '),
    );
    assertPattern(await decodedPattern(page, 10, { after: lastCounter }), 'on the new session');
    const sessions = sfu.sfu.stats().sessions.map((s) => s.sessionId);
    for (const s of mine) assert.ok(!sessions.includes(s.sessionId));
  });

  test(
    'a relay without --rtc-file refuses a robot with a track channel: rtc_unavailable',
    { timeout: 60_000 },
    async () => {
      const plain = await startRelay();
      await assert.rejects(startRobot(plain.http, ['--webrtc', '--id', 'cam-2']), (e) => {
        assert.match(e.message, /stopped: rtc_unavailable/);
        assert.match(
          e.message,
          /video\.webrtc\.v1 track, and this relay has no SFU configured \(--rtc-file\)/,
        );
        return true;
      });
      const s = await (await fetch(`${plain.http}/api/stats`)).json();
      assert.deepEqual(s.robots, []);
      assert.equal(s.rtc, undefined);
    },
  );
}
