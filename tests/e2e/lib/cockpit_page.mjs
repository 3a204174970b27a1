// What the cockpit e2e suites share: Chromium's launch options, opening the real cockpit and
// waiting for its first map, reading map pixels through the canvas's own transform, and the
// operator-visible facts (pose, lease, what the robot reports about teleop).
import { readFileSync } from 'node:fs';
export { LAUNCH } from './chromium.mjs';

export const artifacts = new URL('../../../build/e2e-artifacts/', import.meta.url).pathname;
export const palette = JSON.parse(
  readFileSync(new URL('../../../fixtures/decode/vectors.json', import.meta.url)),
).palette;

/** Opens the cockpit at `base` in a fresh context; resolves once the link is open and the map drawn. */
export async function openCockpit(
  browser,
  base,
  { viewport = { width: 1280, height: 800 }, robot } = {},
) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${base}/`);
  await page.waitForFunction(
    () => document.querySelector('#status-link')?.dataset.state === 'open',
    null,
    { timeout: 30000 },
  );
  if (robot) {
    await page.waitForSelector(`#robot option[value="${robot}"]`, {
      state: 'attached',
      timeout: 30000,
    });
    await page.selectOption('#robot', robot);
  }
  // The map has drawn once the canvas exposes its transform and the pose arrow.
  await page.waitForFunction(
    () => {
      const m = document.querySelector('.panel-map2d');
      return m?.querySelector('canvas')?.dataset.transform && m.dataset.poseX;
    },
    null,
    { timeout: 30000 },
  );
  return { context, page, problems };
}

// Known cells of the demo world (web/host/demo-robot.js): walls and boxes are lethal (100), the
// north-east corner is unknown (255), the rest free (0). Cells are (x, y), row 0 at world min-y.
export const cells = [
  [10, 10, '0'],
  [130, 55, '100'],
  [50, 140, '100'],
  [1, 100, '100'],
  [150, 175, '255'],
  [160, 20, '0'],
];

/** The map canvas's RGBA at the centre of each cell, through the canvas's own transform. */
export function mapPixels(page, cells) {
  return page.evaluate((cells) => {
    const canvas = document.querySelector('.panel-map2d canvas');
    const [scale, cx, cy] = JSON.parse(canvas.dataset.transform);
    const g = canvas.getContext('2d');
    const h = Number(document.querySelector('.panel-map2d').dataset.mapH);
    return cells.map(([x, y]) => {
      const px = Math.floor(cx + (x + 0.5) * scale);
      const py = Math.floor(cy + (h - 1 - y + 0.5) * scale);
      return Array.from(g.getImageData(px, py, 1, 1).data);
    });
  }, cells);
}

export const lease = (page) => page.$eval('.panel-teleop', (e) => e.dataset.lease);
export const poseX = async (page) =>
  Number(await page.$eval('.panel-map2d', (e) => e.dataset.poseX));

export const stats = (page) => page.$eval('.stats-list', (e) => e.textContent.replace(/\s/g, ''));
export const driving = (page) =>
  page.waitForFunction(
    () => /teleop\.vx1/.test(document.querySelector('.stats-list').textContent.replace(/\s/g, '')),
    null,
    { timeout: 20000 },
  );
export const stoppedByRobot = (page) =>
  page.waitForFunction(
    () => /teleop\.vx0/.test(document.querySelector('.stats-list').textContent.replace(/\s/g, '')),
    null,
    { timeout: 20000 },
  );

/**
 * Resolves with the map's pose x once it holds still for `quietMs`; throws if the robot is still
 * moving after `timeoutMs`. Pose is a latest channel, so the arrow may lag the robot's own stats
 * by a frame or two under load: "stopped" means "comes to rest", not "same value right now".
 */
export async function restingPoseX(page, { quietMs = 1000, timeoutMs = 20000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last = await poseX(page);
  while (Date.now() < deadline) {
    await page.waitForTimeout(quietMs);
    const now = await poseX(page);
    if (now === last) return now;
    last = now;
  }
  throw new Error(`the robot never came to rest: the pose arrow was still moving at x=${last}`);
}
