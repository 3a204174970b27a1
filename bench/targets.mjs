// The last step of `make bench`: every target the benches recorded (bench/lib/targets.mjs) in one
// table, from this run. Not a bench itself (no .bench.mjs suffix), so the Makefile runs it last.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const file = process.env.TETHER_BENCH_TARGETS;
if (!file || !fs.existsSync(file)) {
  console.log(
    '[bench] no targets recorded (run through `make bench`, which sets TETHER_BENCH_TARGETS)',
  );
  process.exit(0);
}
const rows = fs
  .readFileSync(file, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));
// Every bench that records a target must have recorded one: a bench that skipped itself (no
// Chromium, no namespace, no Deno) or stopped before its figures would otherwise just be absent
// from the table, and absent reads like met.
const benchDir = path.dirname(fileURLToPath(import.meta.url));
const recorded = new Set(rows.map((r) => r.bench));
const silent = fs
  .readdirSync(benchDir)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => fs.readFileSync(path.join(benchDir, f), 'utf8').includes('./lib/targets.mjs'))
  .filter((f) => !recorded.has(f))
  .sort();
const fig = (r) =>
  r.unit === 'x' ? `${r.figure.toFixed(2)}x` : `${r.figure.toFixed(1)} ${r.unit}`;
const w = Math.max(...rows.map((r) => r.row.length), ...silent.map((f) => f.length), 4);
const total = rows.length + silent.length;
console.log(`\nissue 20 targets, this run (${rows.filter((r) => r.met).length} of ${total} met)`);
console.log(`${'row'.padEnd(w)}  ${'figure'.padStart(10)}  ${'target'.padEnd(10)}  verdict`);
for (const r of rows)
  console.log(
    `${r.row.padEnd(w)}  ${fig(r).padStart(10)}  ${r.target.padEnd(10)}  ${r.met ? 'met' : 'MISSED'}`,
  );
for (const f of silent)
  console.log(
    `${f.padEnd(w)}  ${'-'.padStart(10)}  ${''.padEnd(10)}  NOT RECORDED: it skipped itself or stopped before its figures; run \`node bench/${f}\` alone to see why`,
  );
console.log(
  'where a target is missed, bench/README.md says what stops it and what the figure would be without that limit',
);
