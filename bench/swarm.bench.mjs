// Swarm benchmark: runs build/native/tether_bench_swarm_native and prints its table, with each
// simulated figure beside the spec's measured one (agent-bus-and-swarm.md) and their ratio. There
// is no runnable reference implementation here (ninja-p2p's swarm needs VDO.Ninja rooms), so the
// spec's measurements are the reference.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const exe = fileURLToPath(new URL('../build/native/tether_bench_swarm_native', import.meta.url));
if (!existsSync(exe)) {
  console.error(`swarm bench: ${exe} is missing; run \`make native\` first`);
  process.exit(1);
}
const run = spawnSync(exe, [], { encoding: 'utf8', timeout: 600_000, killSignal: 'SIGKILL' });
if (run.status !== 0) {
  console.error(
    `swarm bench: the native bench failed (${run.status} ${run.signal ?? ''})\n${run.stderr}`,
  );
  process.exit(1);
}
const r = JSON.parse(run.stdout);
const fmt = (n, d = 0) =>
  Number(n).toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const rows = [];
const row = (what, ours, spec = '', ratio = '') => rows.push([what, ours, spec, ratio]);

row(`picker picks/s (${fmt(r.decisions.chunks)} chunks, 16 peers)`, fmt(r.decisions.picks_per_s));
row(
  'scheduler decisions/s (request+accept+verify+have)',
  fmt(r.decisions.scheduler_decisions_per_s),
);
row('memory per tracked chunk (bytes)', fmt(r.memory.bytes_per_tracked_chunk, 1));
row('memory per peer at 1M chunks (bytes)', fmt(r.memory.bytes_per_peer));
row(
  '250 MB offer payload (bytes)',
  fmt(r.offer_250mb.offer_payload_bytes),
  '~275,000 inline',
  `${fmt(275_000 / r.offer_250mb.offer_payload_bytes)}x smaller`,
);
const s = r.sim;
row(
  '250 MB, 1 seeder -> 1 downloader (MB/s)',
  fmt(s.mb250_one_downloader.mb_per_s, 2),
  '7.8',
  fmt(s.mb250_one_downloader.mb_per_s / 7.8, 2),
);
row(
  '250 MB, 1 -> 3 downloaders, random ties (aggregate MB/s)',
  fmt(s.mb250_three_random.aggregate_mb_per_s, 2),
  '14.1',
  fmt(s.mb250_three_random.aggregate_mb_per_s / 14.1, 2),
);
row(
  '  gain over one downloader',
  `${fmt(s.mb250_three_random.aggregate_mb_per_s / s.mb250_one_downloader.mb_per_s, 2)}x`,
  '1.81x',
);
row(
  '250 MB, 1 -> 3 downloaders, index ties (aggregate MB/s)',
  fmt(s.mb250_three_index.aggregate_mb_per_s, 2),
  '7.8 (1x)',
  fmt(s.mb250_three_index.aggregate_mb_per_s / 7.8, 2),
);
row(
  '60 MB uninterrupted (s)',
  fmt(s.mb60_clean.ms / 1000, 1),
  '~5',
  fmt(s.mb60_clean.ms / 5000, 2),
);
row(
  '60 MB, signalling drop at 30% (s)',
  fmt(s.mb60_cut_at_30pct.ms / 1000, 1),
  '~55',
  fmt(s.mb60_cut_at_30pct.ms / 55000, 2),
);
row(
  '60 MB, 3 seeders, drop at 30% (s)',
  fmt(s.mb60_three_seeders_cut_at_30pct.ms / 1000, 1),
  'slower with more peers',
  '',
);

const widths = [0, 1, 2, 3].map((i) =>
  Math.max(
    ...rows.map((x) => String(x[i]).length),
    ['measure', 'tether', 'spec', 'ratio'][i].length,
  ),
);
const line = (cells) =>
  cells
    .map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i])))
    .join('  ');
console.log('\nswarm (native core; simulated network, deterministic)');
console.log(line(['measure', 'tether', 'spec', 'ratio']));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const x of rows) console.log(line(x));
console.log(
  `(simulations took ${fmt(s.wall_s, 1)} s of wall time; picker setup ${fmt(r.decisions.setup_s, 1)} s)`,
);
