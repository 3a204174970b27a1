// Shared by tests/e2e/sfu-*.test.mjs and bench/sfu.bench.mjs: the local SFU (web/sfu), the robot
// camera (real ffmpeg into a werift peer), Chromium viewers (tests/e2e/pages/sfu-viewer.html), and
// the signaling between them over the SFU's Realtime API, done here as the relay will do it.
// Everything started is stopped in stopSfuHarness, also after a failure part-way; ffmpeg is
// killed by PID by the camera's close(). Run only inside `unshare -n` (netns.mjs).
import { chromium } from 'playwright-core';
import { createCamera } from '../../../web/sfu/camera.js';
import { createRealtimeClient } from '../../../web/sfu/client.js';
import { startSfu } from '../../../web/sfu/sfu.js';
import { LAUNCH_WEBRTC } from './chromium.mjs';
import { repoDir } from './fixtures.mjs';
import { startStaticServer } from './static_server.mjs';

export async function startSfuHarness({ browser = true, ...sfuOptions } = {}) {
  const h = { sfu: null, client: null, web: null, browser: null, cameras: [], pages: [], log: [] };
  try {
    h.sfu = await startSfu({ admin: true, log: (line) => h.log.push(line), ...sfuOptions });
    h.client = createRealtimeClient(h.sfu.rtcFile);
    if (browser) {
      h.web = await startStaticServer(repoDir);
      h.browser = await chromium.launch(LAUNCH_WEBRTC);
    }
  } catch (e) {
    await stopSfuHarness(h);
    throw e;
  }
  return h;
}

export async function stopSfuHarness(h) {
  for (const c of h.cameras) await c.close().catch(() => {});
  await h.browser?.close().catch(() => {});
  await h.web?.close().catch(() => {});
  await h.sfu?.close().catch(() => {});
}

/** Asserts a Realtime call succeeded and returns its body (the error value otherwise, in the message). */
export function ok(result, what) {
  if (!result.ok) throw new Error(`${what} failed: ${JSON.stringify(result)}`);
  return result.body;
}

/**
 * A robot: a camera publishing `tracks` ([{ch}]) on a session of its own, each under its channel
 * as trackName. Returns {camera, sessionId, mids: {ch: mid}}.
 */
export async function publishCamera(h, tracks = [{ ch: 'front' }], cameraOptions = {}) {
  const camera = await createCamera({ tracks, ...cameraOptions });
  h.cameras.push(camera);
  const { sessionId } = ok(await h.client.newSession(), 'robot sessions/new');
  const offer = await camera.offer();
  const body = ok(
    await h.client.newTracks(sessionId, {
      sessionDescription: { type: 'offer', sdp: offer.sdp },
      tracks: offer.tracks.map((t) => ({ location: 'local', mid: t.mid, trackName: t.ch })),
    }),
    'robot tracks/new',
  );
  await camera.applyAnswer(body.sessionDescription.sdp);
  return { camera, sessionId, mids: Object.fromEntries(offer.tracks.map((t) => [t.ch, t.mid])) };
}

/** A viewer page with its SFU session: its recvonly offer answered at sessions/new. */
export async function openViewer(h) {
  const context = await h.browser.newContext();
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${h.web.origin}/tests/e2e/pages/sfu-viewer.html`);
  await page.waitForFunction(() => window.viewer);
  const sdp = await page.evaluate(() => window.viewer.offer());
  const body = ok(
    await h.client.newSession({ sessionDescription: { type: 'offer', sdp } }),
    'viewer sessions/new',
  );
  await page.evaluate((answer) => window.viewer.applyAnswer(answer), body.sessionDescription.sdp);
  const viewer = { page, context, problems, sessionId: body.sessionId };
  h.pages.push(viewer);
  return viewer;
}

/** Pulls `trackName` of `publisher` onto the viewer's session; resolves with the new mid. */
export async function pull(h, viewer, publisher, trackName) {
  const body = ok(
    await h.client.newTracks(viewer.sessionId, {
      tracks: [{ location: 'remote', sessionId: publisher, trackName }],
    }),
    'viewer pull',
  );
  if (body.tracks[0].errorCode)
    throw new Error(`pull of ${trackName}: ${JSON.stringify(body.tracks[0])}`);
  const answer = await viewer.page.evaluate(
    (sdp) => window.viewer.answer(sdp),
    body.sessionDescription.sdp,
  );
  ok(
    await h.client.renegotiate(viewer.sessionId, { type: 'answer', sdp: answer }),
    'viewer renegotiate',
  );
  return body.tracks[0].mid;
}

/** What the viewer has seen on `mid` so far (frames, valid pattern reads, first/last frame, latencies). */
export const seen = (viewer, mid) => viewer.page.evaluate((m) => window.viewer.seen(m), mid);

/**
 * Resolves once the viewer has decoded `n` frames on `mid` whose pattern reads back, all of them
 * after counter `after` (if given); the test's own timeout bounds the wait.
 */
export async function decoded(viewer, mid, n, { after = null } = {}) {
  await viewer.page.waitForFunction(
    ([m, k, a]) => {
      const s = window.viewer.seen(m);
      if (!s || s.valid < k) return false;
      return a === null || s.counters.filter((c) => c > a).length >= k;
    },
    [mid, n, after],
    { timeout: 0, polling: 100 },
  );
  return seen(viewer, mid);
}

/** Polls `fn` until it returns a truthy value; a hang fails by the test's own timeout. */
export async function until(fn, everyMs = 50) {
  for (;;) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The SFU's stats for one session. */
export const sessionStats = (h, id) => h.sfu.sfu.stats().sessions.find((s) => s.sessionId === id);
