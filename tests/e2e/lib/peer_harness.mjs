// Shared by the peer e2e tests and bench/peer.bench.mjs: Chromium with the WebRTC loopback flags
// (TOOLCHAIN.md), the static server for the pages, the loopback room relay, and browser peers
// (tests/e2e/pages/peer-swarm.html, peer-bus.html) each in its own context (own OPFS) unless one is shared.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { repoDir } from './fixtures.mjs';
import { startRoomServer } from './room_server.mjs';
import { startStaticServer } from './static_server.mjs';
import { LAUNCH_WEBRTC as LAUNCH } from './chromium.mjs';

export { LAUNCH };

/**
 * `onDiskProfile`: every page shares one persistent profile in a fresh temporary folder, the way a
 * user's browser runs, instead of one off-the-record context per peer. The bench needs it: in an
 * off-the-record context OPFS lives in the browser process's memory, and every
 * FileSystemSyncAccessHandle write is a synchronous IPC into it (a Chrome trace of a 1 -> 1 swarm
 * showed the OPFS worker 88% of its time in FileSystemAccessFileDelegateHost::Write and the browser
 * process at a quarter of a core), where a profile on disk writes the file straight from the
 * worker. Peers then share one origin's OPFS, so each downloads into its own folder.
 */
export async function startPeerHarness({ onDiskProfile = false } = {}) {
  const h = { browser: null, shared: null, profileDir: null, web: null, rooms: null, contexts: [] };
  try {
    h.web = await startStaticServer(repoDir);
    h.rooms = await startRoomServer();
    if (onDiskProfile) {
      h.profileDir = mkdtempSync(join(tmpdir(), 'tether-peer-profile-'));
      h.shared = await chromium.launchPersistentContext(h.profileDir, {
        ...LAUNCH,
        permissions: PERMISSIONS,
      });
    } else h.browser = await chromium.launch(LAUNCH);
  } catch (e) {
    await stopPeerHarness(h);
    throw e;
  }
  return h;
}

/** Closes everything that started, also after a failure part-way. */
export async function stopPeerHarness(h) {
  await h.shared?.close().catch(() => {});
  await h.browser?.close().catch(() => {});
  if (h.profileDir) rmSync(h.profileDir, { recursive: true, force: true });
  await h.rooms?.close().catch(() => {});
  await h.web?.close().catch(() => {});
}

// Loopback candidates need the media permissions as well as the flag (TOOLCHAIN.md).
const PERMISSIONS = ['camera', 'microphone'];

/** A context of its own (own OPFS) per call; with `onDiskProfile`, the one shared context. */
export async function newPeerContext(h) {
  if (h.shared) return h.shared;
  const ctx = await h.browser.newContext({ permissions: PERMISSIONS });
  h.contexts.push(ctx);
  return ctx;
}

/**
 * Opens a peer page in `ctx`, joins `room` as `id`; returns the page (use page.evaluate on peerApi).
 * `kind` picks the page: 'peer-swarm' (swarm glue, OPFS) or 'peer-bus' (tether/bus); `session`
 * passes the swarm core's download settings (windowPerPeer, windowTotal) to the peer.
 */
export async function openPeer(h, ctx, { id, room, seed = 1, kind = 'peer-swarm', session }) {
  const page = await ctx.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`${id} pageerror: ${e.message}`));
  page.on(
    'console',
    (m) => m.type() === 'error' && page.problems.push(`${id} console: ${m.text()}`),
  );
  await page.goto(`${h.web.origin}/tests/e2e/pages/${kind}.html`);
  await page.waitForFunction(() => window.peerApiReady === true);
  await page.evaluate((o) => window.peerApi.start(o), {
    url: h.rooms.url,
    room,
    id,
    seed,
    session,
  });
  return page;
}

export const api = (page, fn, ...args) =>
  page.evaluate(([f, a]) => window.peerApi[f](...a), [fn, args]);

/**
 * Waits until every page's download of `fileId` settled; returns the results in page order. With
 * `explainAfterMs`, a download still running by then fails the wait with every page's swarm
 * status and transport stats, instead of a bare test timeout.
 */
export async function results(pages, fileId, { explainAfterMs = 0 } = {}) {
  const settled = Promise.all(
    pages.map(async (p) => {
      await p.waitForFunction((f) => window.peerApi.result(f) !== null, fileId, {
        timeout: explainAfterMs,
        polling: 50,
      });
      return api(p, 'result', fileId);
    }),
  );
  if (!explainAfterMs) return settled;
  try {
    return await settled;
  } catch (e) {
    const state = [];
    for (const p of pages) {
      state.push(
        await p
          .evaluate(
            (f) => ({
              who: document.getElementById('who').textContent,
              result: window.peerApi.result(f),
              status: window.peerApi.status(f),
              stats: window.peerApi.stats(),
              transport: window.peerApi.transportStats(),
              openPeers: window.peerApi.openPeers(),
            }),
            fileId,
          )
          .catch((err) => ({ unreadable: String(err) })),
      );
    }
    throw new Error(
      `downloads not settled after ${explainAfterMs} ms (${e.message}):\n${JSON.stringify(state, null, 1)}`,
    );
  }
}
