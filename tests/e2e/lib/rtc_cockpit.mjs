// What the cockpit's WebRTC suites share (tests/e2e/cockpit-rtc*.test.mjs): the local SFU with its
// rtc file on disk, the cockpit page with the test pattern's reader (web/sfu/pattern.js) injected,
// reading the pattern back from a video panel's decoded frames, and a record of the states a panel
// and the error box went through. Run only inside `unshare -n` (netns.mjs).
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSfu } from '../../../web/sfu/sfu.js';
import { repoDir } from './fixtures.mjs';

/** The local SFU in this process and its credentials as a relay --rtc-file. */
export async function startRtcSfu(options = {}) {
  const sfu = await startSfu({ admin: true, ...options });
  const dir = mkdtempSync(join(tmpdir(), 'tether-rtc-'));
  const file = join(dir, 'rtc.json');
  writeFileSync(file, JSON.stringify(sfu.rtcFile));
  chmodSync(file, 0o600);
  return {
    ...sfu,
    file,
    text: JSON.stringify(sfu.rtcFile),
    async close() {
      rmSync(dir, { recursive: true, force: true });
      await sfu.close();
    },
  };
}

const patternSource = readFileSync(join(repoDir, 'web/sfu/pattern.js'), 'utf8');

/**
 * Opens the cockpit at `base` in a fresh context with the pattern reader as window.tetherPattern
 * and a record of every state the panel `panelId` shows (window.rtcStates) and every error the
 * cockpit shows (window.rtcErrors). Resolves once the link is open.
 */
export async function openRtcCockpit(browser, base, panelId = 'front') {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.addInitScript((id) => {
    window.rtcStates = [];
    window.rtcErrors = [];
    new MutationObserver(() => {
      const panel = document.querySelector(`.panel[data-panel-id="${id}"]`);
      const s = panel?.dataset.rtcState;
      if (s && window.rtcStates.at(-1) !== s) window.rtcStates.push(s);
      const e = document.querySelector('#errors')?.textContent;
      if (e && window.rtcErrors.at(-1) !== e) window.rtcErrors.push(e);
    }).observe(document, { subtree: true, attributes: true, childList: true, characterData: true });
  }, panelId);
  await page.goto(`${base}/`);
  await page.addScriptTag({
    type: 'module',
    content: `${patternSource}\nwindow.tetherPattern = { readPattern, patternLayout, barX };`,
  });
  await page.waitForFunction(
    () => document.querySelector('#status-link')?.dataset.state === 'open' && window.tetherPattern,
    null,
    { timeout: 30_000 },
  );
  return { context, page, problems };
}

/** The test pattern read back from the panel's current video frame: {valid, counter, barX, width, height} or null. */
export function readTrack(page, panelId = 'front') {
  return page.evaluate((id) => {
    const v = document.querySelector(`.panel[data-panel-id="${id}"] video`);
    if (!v || !v.videoWidth) return null;
    const c = document.createElement('canvas');
    c.width = v.videoWidth;
    c.height = v.videoHeight;
    const g = c.getContext('2d', { willReadFrequently: true });
    g.drawImage(v, 0, 0);
    const p = window.tetherPattern.readPattern(
      g.getImageData(0, 0, c.width, c.height).data,
      c.width,
      c.height,
    );
    return p ? { ...p, width: c.width, height: c.height } : null;
  }, panelId);
}

/**
 * Resolves with `n` valid pattern reads of the panel's video whose counters rise, all above
 * `after` (if given); the test's own timeout bounds the wait.
 */
export async function decodedPattern(page, n, { after = -1, panelId = 'front' } = {}) {
  const reads = [];
  for (;;) {
    const p = await readTrack(page, panelId);
    if (p?.valid && p.counter > after && (!reads.length || p.counter > reads.at(-1).counter))
      reads.push(p);
    if (reads.length >= n) return reads;
    await new Promise((r) => setTimeout(r, 60));
  }
}

/** The panel's state, mid and decoded frame count as its data attributes say. */
export const panelState = (page, panelId = 'front') =>
  page.$eval(`.panel[data-panel-id="${panelId}"]`, (e) => ({
    state: e.dataset.rtcState,
    mid: e.dataset.mid,
    frames: Number(e.dataset.frames ?? 0),
  }));

export const waitState = (page, state, panelId = 'front') =>
  page.waitForFunction(
    ([id, s]) => document.querySelector(`.panel[data-panel-id="${id}"]`)?.dataset.rtcState === s,
    [panelId, state],
    { timeout: 0, polling: 100 },
  );
