// The last step of `make bench`: every target the benches recorded (bench/lib/targets.mjs) in one
// table, from this run. Not a bench itself (no .bench.mjs suffix), so the Makefile runs it last.
import fs from 'node:fs';

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
const fig = (r) =>
  r.unit === 'x' ? `${r.figure.toFixed(2)}x` : `${r.figure.toFixed(1)} ${r.unit}`;
const w = Math.max(...rows.map((r) => r.row.length), 4);
console.log(
  `\nissue 20 targets, this run (${rows.filter((r) => r.met).length} of ${rows.length} met)`,
);
console.log(`${'row'.padEnd(w)}  ${'figure'.padStart(10)}  ${'target'.padEnd(10)}  verdict`);
for (const r of rows)
  console.log(
    `${r.row.padEnd(w)}  ${fig(r).padStart(10)}  ${r.target.padEnd(10)}  ${r.met ? 'met' : 'MISSED'}`,
  );
console.log(
  'where a target is missed, bench/README.md says what stops it and what the figure would be without that limit',
);
