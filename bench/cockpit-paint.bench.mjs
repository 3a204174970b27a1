// `make bench`, the cockpit's first paint (issue #6 § Speed): the real cockpit, served by the Deno
// relay with the demo robot online, opened in fresh Chromium contexts (cold caches each time).
// Prints the median and worst of: first contentful paint, the link open (WebTransport up and
// welcomed), the first costmap drawn and the first camera frame drawn, all in ms from navigation
// start, as the page's own clock sees them. Also what the cockpit ships.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { LAUNCH } from '../tests/e2e/lib/chromium.mjs';
import { killAll, startRelay, startRobot } from '../tests/e2e/lib/cockpit_procs.mjs';

const RUNS = Number(process.env.TETHER_BENCH_PAINT_RUNS ?? 5);
const root = new URL('..', import.meta.url).pathname;
const status = (s) => console.error(`[bench cockpit-paint] ${s}`);

// Marks every milestone with the page's clock the moment the DOM shows it.
const MILESTONES = () => {
  const marks = {};
  const check = () => {
    const t = performance.now();
    if (!marks.linkOpen && document.querySelector('#status-link')?.dataset.state === 'open')
      marks.linkOpen = t;
    if (!marks.firstMap && document.querySelector('.panel-map2d canvas')?.dataset.transform)
      marks.firstMap = t;
    if (!marks.firstVideo && document.querySelector('.video-canvas')?.width > 0)
      marks.firstVideo = t;
  };
  new MutationObserver(check).observe(document, {
    subtree: true,
    childList: true,
    attributes: true,
  });
  window.__marks = marks;
};

status('starting the relay and the demo robot');
const relay = await startRelay();
await startRobot(relay.http);
const browser = await chromium.launch(LAUNCH);
const samples = [];
try {
  for (let i = 0; i < RUNS; i++) {
    status(`run ${i + 1}/${RUNS}`);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.addInitScript(MILESTONES);
    await page.goto(`${relay.http}/`);
    await page.waitForFunction(() => window.__marks?.firstMap && window.__marks?.firstVideo, null, {
      timeout: 60000,
    });
    samples.push(
      await page.evaluate(() => ({
        fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
        ...window.__marks,
      })),
    );
    await context.close();
  }
} finally {
  await browser.close().catch(() => {});
  killAll();
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(
  '\ncockpit first paint: %d cold loads against the demo robot, ms from navigation start',
  RUNS,
);
console.log('milestone                      median      worst');
for (const [key, label] of [
  ['fcp', 'first contentful paint'],
  ['linkOpen', 'link open (welcomed)'],
  ['firstMap', 'first costmap drawn'],
  ['firstVideo', 'first camera frame drawn'],
]) {
  const xs = samples.map((s) => s[key]);
  console.log(
    `${label.padEnd(28)}${median(xs).toFixed(0).padStart(8)}${Math.max(...xs)
      .toFixed(0)
      .padStart(11)}`,
  );
}
const size = (f) => statSync(join(root, 'build/cockpit', f)).size;
const gz = (f) => gzipSync(readFileSync(join(root, 'build/cockpit', f))).length;
// The cockpit ships its own module (tether-cockpit.wasm, wasm/module.cmake), not the full one.
const total = size('cockpit.js') + size('tether-cockpit.wasm');
const totalGz = gz('cockpit.js') + gz('tether-cockpit.wasm');
console.log(
  `shipped: JS + WASM ${(total / 1024).toFixed(0)} KiB (${(totalGz / 1024).toFixed(0)} KiB gzip)`,
);
