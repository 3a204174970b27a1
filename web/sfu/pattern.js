// The robot camera's test pattern, drawn and read back by pixels (docs/webrtc-video.md § Robot
// camera). Each frame carries, as rows of black and white cells across the top, its frame counter,
// the counter's complement (so a misread is caught), and the wall-clock millisecond it was made
// (low 32 bits); below them a white bar moves 8 px a frame across colour ramps. A viewer that
// reads a valid counter, a stamp and a bar where the counter puts it has decoded real frames of
// this stream; the stamp gives glass-to-glass latency on one machine. Runs in Node and browsers.

export const BITS = 16; // cells per row
const ROWS = 4; // counter, ~counter, stamp low 16 bits, stamp high 16 bits
const BAR_STEP = 8; // px per frame
const BLACK = 16; // video-range luma
const WHITE = 235;

/** Where everything is in a width x height frame (width a multiple of 32, height even). */
export function patternLayout(width, height) {
  if (width % 32 || height % 2)
    throw new Error(
      `the pattern needs a width that is a multiple of 32 and an even height, not ${width}x${height}`,
    );
  const cell = Math.floor(width / BITS);
  const top = cell * ROWS;
  if (cell < 8 || height < top + 2 * cell)
    throw new Error(
      `a ${width}x${height} frame is too small for the pattern: use at least 128 px wide and 6/16 of the width high`,
    );
  return { width, height, cell, top, barWidth: cell, barStep: BAR_STEP };
}

/** The bar's left edge in frame `counter`. */
export const barX = (layout, counter) =>
  (counter * layout.barStep) % (layout.width - layout.barWidth);

/** The static background, yuv420p: luma and chroma ramps below the cell rows, grey above. */
function background(layout) {
  const { width: w, height: h, top } = layout;
  const frame = new Uint8Array((w * h * 3) / 2);
  const u0 = w * h;
  const v0 = u0 + (w * h) / 4;
  frame.fill(BLACK, 0, top * w);
  for (let y = top; y < h; y++)
    for (let x = 0; x < w; x++) frame[y * w + x] = 60 + Math.floor((100 * x) / w);
  for (let y = 0; y < h / 2; y++)
    for (let x = 0; x < w / 2; x++) {
      const ramp = y >= top / 2;
      frame[u0 + y * (w / 2) + x] = ramp ? 64 + Math.floor((128 * y) / (h / 2)) : 128;
      frame[v0 + y * (w / 2) + x] = ramp ? 192 - Math.floor((128 * x) / (w / 2)) : 128;
    }
  return frame;
}

/** A frame drawer for `layout`: draw(counter, stampMs) returns the yuv420p bytes (one reused buffer). */
export function createDrawer(layout) {
  const { width: w, height: h, cell, top, barWidth } = layout;
  const base = background(layout);
  const frame = new Uint8Array(base.length);
  const u0 = w * h;
  const v0 = u0 + (w * h) / 4;
  return function draw(counter, stampMs) {
    frame.set(base);
    const c = counter & 0xffff;
    const stamp = Number(BigInt.asUintN(32, BigInt(Math.floor(stampMs))));
    const rows = [c, ~c & 0xffff, stamp & 0xffff, stamp >>> 16];
    for (let r = 0; r < ROWS; r++)
      for (let b = 0; b < BITS; b++) {
        if (!((rows[r] >> (BITS - 1 - b)) & 1)) continue; // the background up there is black
        for (let y = r * cell; y < (r + 1) * cell; y++)
          frame.fill(WHITE, y * w + b * cell, y * w + (b + 1) * cell);
      }
    const bx = barX(layout, c);
    for (let y = top; y < h; y++) frame.fill(WHITE, y * w + bx, y * w + bx + barWidth);
    for (let y = top / 2; y < h / 2; y++) {
      frame.fill(128, u0 + y * (w / 2) + bx / 2, u0 + y * (w / 2) + (bx + barWidth) / 2);
      frame.fill(128, v0 + y * (w / 2) + bx / 2, v0 + y * (w / 2) + (bx + barWidth) / 2);
    }
    return frame;
  };
}

/**
 * Reads a frame back from RGBA pixels (a canvas's getImageData of the decoded video at its
 * native size). Returns {valid, counter, stamp, barX}; valid is false unless the counter and its
 * complement agree. `barX` is the left edge of the brightest run on the bar's middle row.
 */
export function readPattern(rgba, width, height) {
  const layout = patternLayout(width, height);
  const { cell, top } = layout;
  const luma = (x, y) => {
    const i = (y * width + x) * 4;
    return 0.299 * rgba[i] + 0.587 * rgba[i + 1] + 0.114 * rgba[i + 2];
  };
  const rows = [];
  for (let r = 0; r < ROWS; r++) {
    let value = 0;
    for (let b = 0; b < BITS; b++) {
      // the mean of the cell's inner half, away from block edges
      let sum = 0;
      let n = 0;
      for (let y = r * cell + (cell >> 2); y < (r + 1) * cell - (cell >> 2); y += 2)
        for (let x = b * cell + (cell >> 2); x < (b + 1) * cell - (cell >> 2); x += 2, n++)
          sum += luma(x, y);
      value = (value << 1) | (sum / n > 128 ? 1 : 0);
    }
    rows.push(value);
  }
  const [counter, inverse, lo, hi] = rows;
  const y = Math.floor((top + height) / 2);
  let best = -1;
  let run = 0;
  for (let x = 0; x < width; x++) {
    if (luma(x, y) > 200) {
      if (++run === 1) best = best < 0 ? x : best;
    } else if (run) break;
  }
  return {
    valid: (counter ^ inverse) === 0xffff,
    counter,
    stamp: ((hi << 16) | lo) >>> 0,
    barX: best,
  };
}

/** How far `stamp` (the low 32 bits of a wall-clock ms) lies before `nowMs`, across the wrap. */
export const stampAge = (stamp, nowMs) =>
  Number(BigInt.asUintN(32, BigInt(Math.floor(nowMs)) - BigInt(stamp)));
