// Real media through the local SFU (web/sfu; issue #18, cockpit protocol § WebRTC video): the robot
// camera (real ffmpeg H.264 into a werift peer) publishes, real Chromium viewers pull through the
// SFU's Realtime API and decode frames whose test pattern is read back by pixels; two viewers at
// once; a track that carries no media for the (shortened) collection window is collected across
// every pull, and re-declaring and re-pulling it brings the picture back; closing tracks, with and
// without an SDP exchange. Runs inside a private network namespace (tests/e2e/lib/netns.mjs).
//
// The steps share one SFU, one robot and two viewers and run in order.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { inNetns } from './lib/netns.mjs';

if (inNetns(import.meta.url)) {
  const {
    startSfuHarness,
    stopSfuHarness,
    publishCamera,
    openViewer,
    pull,
    decoded,
    seen,
    until,
    ok,
    sessionStats,
  } = await import('./lib/sfu_harness.mjs');
  const { barX, patternLayout } = await import('../../web/sfu/pattern.js');

  const TRACK_TIMEOUT_MS = 1500; // the collection window, shortened from Cloudflare's 30 s
  let h;
  let robot;
  let a; // viewer A
  let b; // viewer B
  let midA;
  let midB;
  let lastBeforeStall;

  before(async () => {
    h = await startSfuHarness({ trackTimeoutMs: TRACK_TIMEOUT_MS });
  });
  after(async () => {
    if (h) await stopSfuHarness(h);
  });

  /** Asserts a viewer's reads are the camera's pattern: counters rising, the bar where each counter puts it. */
  function assertPattern(s, what) {
    assert.ok(s.valid >= 10, `${what}: ${s.valid} frames read back`);
    assert.equal(s.last.width, 640, `${what}: decoded width`);
    assert.equal(s.last.height, 480, `${what}: decoded height`);
    assert.ok(
      s.last.counter > s.first.counter,
      `${what}: the frame counter moved (${s.first.counter} -> ${s.last.counter})`,
    );
    const layout = patternLayout(640, 480);
    // Within 2 px: the encoder may soften the bar's edge; it moves 8 px a frame.
    const expectedBar = barX(layout, s.last.counter);
    assert.ok(
      Math.abs(s.last.barX - expectedBar) <= 2,
      `${what}: the bar is at ${s.last.barX}, where frame ${s.last.counter} draws it (${expectedBar})`,
    );
    assert.notEqual(s.first.barX, s.last.barX, `${what}: the bar moved`);
    for (let i = 1; i < s.counters.length; i++)
      assert.ok(
        s.counters[i] > s.counters[i - 1],
        `${what}: counters rise frame to frame (${s.counters[i - 1]} then ${s.counters[i]})`,
      );
  }

  test(
    'a Chromium viewer decodes the robot camera through the SFU, pattern and all',
    { timeout: 120_000 },
    async () => {
      robot = await publishCamera(h, [{ ch: 'front' }]);
      a = await openViewer(h);
      midA = await pull(h, a, robot.sessionId, 'front');
      const s = await decoded(a, midA, 30);
      assertPattern(s, 'viewer A');
      const pub = sessionStats(h, robot.sessionId).published[0];
      assert.ok(
        pub.keyframeRequests >= 1,
        'the SFU asked the robot for a keyframe when the viewer subscribed',
      );
      assert.deepEqual(a.problems, []);
    },
  );

  test('two viewers at once each decode the same track', { timeout: 120_000 }, async () => {
    b = await openViewer(h);
    midB = await pull(h, b, robot.sessionId, 'front');
    const before = (await seen(a, midA)).last.counter;
    const [sa, sb] = await Promise.all([
      decoded(a, midA, 30, { after: before }),
      decoded(b, midB, 30, { after: before }),
    ]);
    assertPattern(sa, 'viewer A');
    assertPattern(sb, 'viewer B');
    const stats = sessionStats(h, robot.sessionId).published[0];
    assert.equal(stats.subscribers, 2);
    for (const v of [a, b]) {
      const p = sessionStats(h, v.sessionId).pulled.find((x) => x.status === 'active');
      assert.ok(p.packetsOut > 0, 'the SFU forwards to each viewer');
    }
    lastBeforeStall = Math.max(sa.last.counter, sb.last.counter);
  });

  test(
    'a track without media for the collection window is collected across every pull, and comes back re-declared and re-pulled',
    { timeout: 120_000 },
    async () => {
      robot.camera.pause('front');
      // The SFU collects the track and both pulls of it.
      await until(async () => {
        const s = ok(await h.client.getSession(robot.sessionId), 'robot GET');
        return s.tracks[0].status === 'inactive';
      });
      for (const [v, mid] of [
        [a, midA],
        [b, midB],
      ]) {
        const s = ok(await h.client.getSession(v.sessionId), 'viewer GET');
        assert.equal(
          s.tracks.find((t) => t.mid === mid).status,
          'inactive',
          'every pull of a collected track is inactive',
        );
      }
      assert.ok(h.sfu.sfu.collected >= 1);

      // The camera resumes: its media reaches the SFU but no longer any viewer.
      const { gapMs } = robot.camera.resume('front');
      assert.ok(gapMs >= TRACK_TIMEOUT_MS, `the camera reports its gap (${gapMs} ms)`);
      const dropped0 = sessionStats(h, robot.sessionId).droppedPackets;
      const out0 = sessionStats(h, a.sessionId).pulled.find((p) => p.mid === midA).packetsOut;
      await until(() => sessionStats(h, robot.sessionId).droppedPackets >= dropped0 + 50);
      assert.equal(
        sessionStats(h, a.sessionId).pulled.find((p) => p.mid === midA).packetsOut,
        out0,
        'a collected pull gets nothing',
      );
      const pullAgain = ok(
        await h.client.newTracks(a.sessionId, {
          tracks: [{ location: 'remote', sessionId: robot.sessionId, trackName: 'front' }],
        }),
        'pull',
      );
      assert.equal(
        pullAgain.tracks[0].errorCode,
        'not_found_track_error',
        'a collected track cannot be pulled until it is declared again',
      );

      // What the relay does on rtc_stalled: close the old pulls, declare the track again, pull it anew.
      for (const [v, mid] of [
        [a, midA],
        [b, midB],
      ]) {
        const closed = ok(
          await h.client.closeTracks(v.sessionId, { tracks: [{ mid }], force: true }),
          'close',
        );
        assert.deepEqual(closed.tracks, [{ mid }]);
      }
      const again = ok(
        await h.client.newTracks(robot.sessionId, {
          tracks: [{ location: 'local', mid: robot.mids.front, trackName: 'front' }],
        }),
        'declare again',
      );
      assert.deepEqual(again, {
        requiresImmediateRenegotiation: false,
        tracks: [{ trackName: 'front', mid: robot.mids.front }],
      });
      const newA = await pull(h, a, robot.sessionId, 'front');
      const newB = await pull(h, b, robot.sessionId, 'front');
      assert.notEqual(newA, midA, 'a re-pull is a new transceiver');
      const [sa, sb] = await Promise.all([
        decoded(a, newA, 30, { after: lastBeforeStall }),
        decoded(b, newB, 30, { after: lastBeforeStall }),
      ]);
      assertPattern(sa, 'viewer A after the stall');
      assertPattern(sb, 'viewer B after the stall');
      midA = newA;
      midB = newB;
    },
  );

  test(
    'tracks/close with an SDP exchange stops a pull; closing it again reports close_track_error',
    { timeout: 60_000 },
    async () => {
      const offer = await b.page.evaluate((mid) => window.viewer.closeOffer(mid), midB);
      const closed = ok(
        await h.client.closeTracks(b.sessionId, {
          tracks: [{ mid: midB }],
          force: false,
          sessionDescription: { type: 'offer', sdp: offer },
        }),
        'negotiated close',
      );
      assert.deepEqual(closed.tracks, [{ mid: midB }]);
      assert.equal(closed.sessionDescription.type, 'answer');
      await b.page.evaluate((sdp) => window.viewer.applyAnswer(sdp), closed.sessionDescription.sdp);
      const state = ok(await h.client.getSession(b.sessionId), 'GET');
      assert.equal(state.tracks.find((t) => t.mid === midB).status, 'inactive');
      assert.equal(
        sessionStats(h, robot.sessionId).published[0].subscribers,
        1,
        'only viewer A still pulls',
      );
      const twice = ok(
        await h.client.closeTracks(b.sessionId, { tracks: [{ mid: midB }], force: true }),
        'close again',
      );
      assert.equal(twice.tracks[0].errorCode, 'close_track_error');
      // Viewer A still decodes.
      const last = (await seen(a, midA)).last.counter;
      assertPattern(await decoded(a, midA, 10, { after: last }), 'viewer A after B closed');
      // The connection outlives the closed track: B pulls again on the same session.
      const midB2 = await pull(h, b, robot.sessionId, 'front');
      assertPattern(await decoded(b, midB2, 10), 'viewer B pulling again');
    },
  );

  test(
    "a deleted publisher session takes its tracks with it; its viewers' pulls turn inactive",
    { timeout: 60_000 },
    async () => {
      assert.equal(await h.sfu.sfu.deleteSession(robot.sessionId), true);
      const gone = await h.client.getSession(robot.sessionId);
      assert.equal(gone.status, 410);
      assert.equal(gone.errorCode, 'session_error');
      const s = ok(await h.client.getSession(a.sessionId), 'viewer GET');
      assert.ok(
        s.tracks.filter((t) => t.location === 'remote').every((t) => t.status === 'inactive'),
      );
    },
  );
}
