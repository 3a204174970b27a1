// `make bench`, the shipped modules (bench/README.md § Module size): every WASM module's raw and
// gzip size; what the cockpit fetches at first load; each edge Worker's upload as the pinned
// wrangler reports it for `wrangler deploy --dry-run`; and each one's cold start under workerd
// (Miniflare): a fresh workerd, timed from start to its first answer from its WASM module, beside
// the same for a Worker with no WASM (the floor: workerd's own start), in alternating rounds.
// Prints each figure beside its target with the ratio. Cold-start times need a quiet machine.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Miniflare } from 'miniflare';
import { EDGE_WORKERS, dryRun, miniflareWorkers, uploadLine } from '../web/edge/workers.mjs';
import { repoDir } from '../web/edge/wrangler-cli.mjs';
import { atMost } from './lib/targets.mjs';

const TARGET_EDGE_GZ = 120 * 1024;
const TARGET_COCKPIT_GZ = 250 * 1024;
const ROUNDS = Number(process.env.TETHER_BENCH_RUNS ?? 5);
const run = promisify(execFile);
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const gz = (file) => gzipSync(readFileSync(file), { level: 9 }).length;
const status = (s) => console.error(`[bench modules] ${s}`);

console.log('\nshipped modules: raw and gzip -9 (wasm/module.cmake)');
const wasmDir = join(repoDir, 'build/wasm');
for (const name of ['tether', 'tether-cockpit', ...EDGE_WORKERS.map((w) => w.module)]) {
  const w = join(wasmDir, `${name}.wasm`);
  const j = join(wasmDir, `${name}.mjs`);
  const bindings = (await import(join(wasmDir, `${name}.mjs`))).tetherModule.bindings.join(' ');
  console.log(
    `  ${name.padEnd(21)} .wasm ${kib(statSync(w).size).padStart(10)} (${kib(gz(w)).padStart(10)} gz)` +
      `   .mjs ${kib(statSync(j).size).padStart(9)} (${kib(gz(j)).padStart(9)} gz)   ${bindings}`,
  );
}

// The cockpit's first load: what web/cockpit/build.mjs reports (entry, its static chunks, .wasm).
status('bundling the cockpit');
const { stdout: cockpitOut } = await run(process.execPath, ['web/cockpit/build.mjs'], {
  cwd: repoDir,
});
const first = /first load (.*) \(([\d.]+) KiB gzip\)/.exec(cockpitOut);
const cockpitGz = first ? Number(first[2]) * 1024 : NaN;

// The edge Workers as uploaded (web/edge/workers.mjs): one dry run each.
const work = mkdtempSync(join(tmpdir(), 'tether-bench-modules-'));
try {
  const bundles = [];
  for (const w of EDGE_WORKERS) {
    status(`wrangler deploy --dry-run ${w.name}`);
    bundles.push(await dryRun(w, join(work, w.name), { logs: join(work, 'logs') }));
  }
  const rooms = bundles.find((d) => d.worker.front);

  // Cold start: each bundle alone in a fresh workerd, to its first answer from its WASM module
  // (its probe), against a Worker with no WASM, alternating.
  writeFileSync(join(work, 'floor.js'), 'export default { fetch: () => new Response("") };');
  const floor = {
    modules: true,
    modulesRoot: work,
    scriptPath: join(work, 'floor.js'),
    compatibilityDate: '2025-01-01',
    cf: false,
  };
  const bindings = {
    TICKET_SECRET: 'bench-secret-0123456789abcdef0123456789',
    POLICY_VERSION: '1',
  };
  async function coldStart(opts, path = '/', init = undefined) {
    const t0 = performance.now();
    const mf = new Miniflare({ cf: false, ...opts });
    try {
      const res = await mf.dispatchFetch(`http://edge.test${path}`, init);
      await res.arrayBuffer();
      return performance.now() - t0;
    } finally {
      await mf.dispose();
    }
  }
  const times = { floor: [] };
  for (let i = 0; i < ROUNDS; i++) {
    status(`cold start round ${i + 1}/${ROUNDS}`);
    times.floor.push(await coldStart(floor));
    for (const d of bundles) {
      const [opts] = miniflareWorkers({
        scriptFor: () => ({ modulesRoot: d.outdir, scriptPath: d.script }),
        bindings,
        workers: [d.worker],
      });
      (times[d.worker.name] ??= []).push(
        await coldStart(opts, d.worker.probe.path, d.worker.probe.init),
      );
    }
  }
  const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  const f = median(times.floor);

  console.log(
    '\nwhat each runtime gets, against its target (ratio = figure / target; <= 1 meets it)',
  );
  console.log(
    `  rooms Worker upload (wrangler, JS + WASM)  gzip ${kib(rooms.uploadGzKiB * 1024).padStart(10)}   target ${kib(TARGET_EDGE_GZ).padStart(10)}   ${((rooms.uploadGzKiB * 1024) / TARGET_EDGE_GZ).toFixed(2)}x`,
  );
  atMost('rooms Worker upload, gzip', rooms.uploadGzKiB, 120, 'KiB');
  atMost('cockpit first load (JS + WASM), gzip', cockpitGz / 1024, 250, 'KiB');
  console.log(
    `  cockpit first load (JS + WASM)             gzip ${kib(cockpitGz).padStart(10)}   target ${kib(TARGET_COCKPIT_GZ).padStart(10)}   ${(cockpitGz / TARGET_COCKPIT_GZ).toFixed(2)}x`,
  );
  console.log(
    '\nthe edge Workers (web/edge/workers.mjs): upload as wrangler reports it, and cold start',
  );
  for (const d of bundles) {
    const e = median(times[d.worker.name]);
    console.log(`  ${uploadLine(d)}`);
    console.log(
      `  ${''.padEnd(15)} cold start under workerd ${e.toFixed(0).padStart(6)} ms median of ${ROUNDS}; a Worker with no WASM ${f.toFixed(0)} ms ` +
        `(${(e / f).toFixed(2)}x; the module's own cost ${(e - f).toFixed(0)} ms)`,
    );
  }
  if (first) console.log(`  cockpit first load: ${first[1]}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
