// Shared by the peer e2e tests and bench/peer.bench.mjs: Chromium with the WebRTC loopback flags
// (TOOLCHAIN.md), the static server for the pages, the loopback room relay, and browser peers
// (tests/e2e/pages/peer-swarm.html, peer-bus.html) each in its own context (own OPFS) unless one is shared.
import { chromium } from 'playwright-core';
import { repoDir } from './fixtures.mjs';
import { startRoomServer } from './room_server.mjs';
import { startStaticServer } from './static_server.mjs';
import { LAUNCH_WEBRTC as LAUNCH } from './chromium.mjs';

export { LAUNCH };

export async function startPeerHarness() {
  const h = { browser: null, web: null, rooms: null, contexts: [] };
  try {
    h.web = await startStaticServer(repoDir);
    h.rooms = await startRoomServer();
    h.browser = await chromium.launch(LAUNCH);
  } catch (e) {
    await stopPeerHarness(h);
    throw e;
  }
  return h;
}

/** Closes everything that started, also after a failure part-way. */
export async function stopPeerHarness(h) {
  await h.browser?.close().catch(() => {});
  await h.rooms?.close().catch(() => {});
  await h.web?.close().catch(() => {});
}

export async function newPeerContext(h) {
  // Loopback candidates need the media permissions as well as the flag (TOOLCHAIN.md).
  const ctx = await h.browser.newContext({ permissions: ['camera', 'microphone'] });
  h.contexts.push(ctx);
  return ctx;
}

/**
 * Opens a peer page in `ctx`, joins `room` as `id`; returns the page (use page.evaluate on peerApi).
 * `kind` picks the page: 'peer-swarm' (swarm glue, OPFS) or 'peer-bus' (tether/bus).
 */
export async function openPeer(h, ctx, { id, room, seed = 1, kind = 'peer-swarm' }) {
  const page = await ctx.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`${id} pageerror: ${e.message}`));
  page.on(
    'console',
    (m) => m.type() === 'error' && page.problems.push(`${id} console: ${m.text()}`),
  );
  await page.goto(`${h.web.origin}/tests/e2e/pages/${kind}.html`);
  await page.waitForFunction(() => window.peerApiReady === true);
  await page.evaluate((o) => window.peerApi.start(o), { url: h.rooms.url, room, id, seed });
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
