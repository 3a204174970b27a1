// Issue 20's rows, gathered from every bench of one `make bench` run into one table at its end
// (bench/targets.mjs prints it). Each bench still prints its own rows; this only records the
// figure that meets or misses a target, so the run ends with every target in one place and
// nobody has to scroll 500 lines to see which ones held.
//
// The Makefile names the file in TETHER_BENCH_TARGETS and empties it before the run; a bench run
// on its own (no variable) records nothing.
import fs from 'node:fs';
import path from 'node:path';

/**
 * @param {object} row
 * @param {string} row.row       what is measured, e.g. "edge durable, ours / raw echo DO"
 * @param {number} row.figure    the ratio or size from this run
 * @param {string} row.target    the target as text, e.g. ">= 0.80"
 * @param {boolean} row.met
 * @param {string} [row.unit]    'x' (a ratio, the default), 'KiB', ...
 */
export function recordTarget({ row, figure, target, met, unit = 'x' }) {
  const file = process.env.TETHER_BENCH_TARGETS;
  if (!file) return;
  // The bench's file name rides along, so the table can name a bench that recorded nothing.
  const bench = path.basename(process.argv[1] ?? '');
  fs.appendFileSync(file, `${JSON.stringify({ bench, row, figure, target, met, unit })}\n`);
}

/** `figure` against a lower bound: met when figure >= bound. */
export const atLeast = (row, figure, bound, unit = 'x') =>
  recordTarget({ row, figure, target: `>= ${bound}`, met: figure >= bound, unit });

/** `figure` against an upper bound: met when figure <= bound. */
export const atMost = (row, figure, bound, unit = 'x') =>
  recordTarget({ row, figure, target: `<= ${bound}`, met: figure <= bound, unit });
