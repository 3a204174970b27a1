// `make bench`, the shipped modules (bench/README.md § Module size): every WASM module's raw and
// gzip size; what the cockpit fetches at first load; the edge Worker's upload as the pinned
// wrangler reports it for `wrangler deploy --dry-run`; and that Worker's cold start under workerd
// (Miniflare): a fresh workerd, timed from start to its first answer from the WASM module, beside
// the same for a Worker with no WASM (the floor: workerd's own start), in alternating rounds.
// Prints each figure beside its target with the ratio. Cold-start times need a quiet machine.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Miniflare } from 'miniflare';
import { repoDir, wranglerCommand, wranglerEnv } from '../web/edge/wrangler-cli.mjs';

const TARGET_EDGE_GZ = 120 * 1024;
const TARGET_COCKPIT_GZ = 250 * 1024;
const ROUNDS = Number(process.env.TETHER_BENCH_RUNS ?? 5);
const run = promisify(execFile);
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const gz = (file) => gzipSync(readFileSync(file), { level: 9 }).length;
const status = (s) => console.error(`[bench modules] ${s}`);

console.log('\nshipped modules: raw and gzip -9 (wasm/module.cmake)');
const wasmDir = join(repoDir, 'build/wasm');
for (const name of ['tether', 'tether-edge', 'tether-cockpit']) {
  const w = join(wasmDir, `${name}.wasm`);
  const j = join(wasmDir, `${name}.mjs`);
  const bindings = (await import(join(wasmDir, `${name}.mjs`))).tetherModule.bindings.join(' ');
  console.log(
    `  ${name.padEnd(15)} .wasm ${kib(statSync(w).size).padStart(10)} (${kib(gz(w)).padStart(10)} gz)` +
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

// The edge Worker as uploaded.
status('wrangler deploy --dry-run');
const work = mkdtempSync(join(tmpdir(), 'tether-bench-modules-'));
try {
  const outdir = join(work, 'bundle');
  const [cmd, args] = wranglerCommand([
    'deploy',
    '--dry-run',
    '--outdir',
    outdir,
    '-c',
    'web/edge/wrangler.toml',
  ]);
  const { stdout } = await run(cmd, args, {
    cwd: repoDir,
    env: wranglerEnv({ WRANGLER_LOG_PATH: join(work, 'logs') }),
    maxBuffer: 16 << 20,
  });
  const upload = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(stdout);
  if (!upload) throw new Error(`no upload size in wrangler's output:\n${stdout}`);
  const edgeGz = Number(upload[2]) * 1024;

  // Cold start: the uploaded bundle against a Worker with no WASM, alternating.
  writeFileSync(
    join(work, 'floor.js'),
    'export default { fetch: () => Response.json({ version: 0 }) };',
  );
  const options = (scriptPath, modulesRoot, extra = {}) => ({
    modules: true,
    modulesRoot,
    scriptPath,
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: '2025-01-01',
    cf: false,
    ...extra,
  });
  const edge = options(join(outdir, 'worker.js'), outdir, {
    durableObjects: {
      ROOMS: { className: 'RoomObject', useSQLite: true },
      COCKPIT: { className: 'CockpitRelayObject', useSQLite: true },
    },
    bindings: { TICKET_SECRET: 'bench-secret-0123456789abcdef0123456789', POLICY_VERSION: '1' },
  });
  const floor = options(join(work, 'floor.js'), work);
  // /api/info answers with the protocol version read from the WASM module: the module compiled,
  // instantiated and called once.
  async function coldStart(opts) {
    const t0 = performance.now();
    const mf = new Miniflare(opts);
    try {
      const res = await mf.dispatchFetch('http://edge.test/api/info');
      await res.json();
      return performance.now() - t0;
    } finally {
      await mf.dispose();
    }
  }
  const times = { edge: [], floor: [] };
  for (let i = 0; i < ROUNDS; i++) {
    status(`cold start round ${i + 1}/${ROUNDS}`);
    times.floor.push(await coldStart(floor));
    times.edge.push(await coldStart(edge));
  }
  const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  const [e, f] = [median(times.edge), median(times.floor)];

  console.log(
    '\nwhat each runtime gets, against its target (ratio = figure / target; <= 1 meets it)',
  );
  console.log(
    `  edge Worker upload (wrangler, JS + WASM)   gzip ${kib(edgeGz).padStart(10)}   target ${kib(TARGET_EDGE_GZ).padStart(10)}   ${(edgeGz / TARGET_EDGE_GZ).toFixed(2)}x`,
  );
  console.log(
    `  cockpit first load (JS + WASM)             gzip ${kib(cockpitGz).padStart(10)}   target ${kib(TARGET_COCKPIT_GZ).padStart(10)}   ${(cockpitGz / TARGET_COCKPIT_GZ).toFixed(2)}x`,
  );
  console.log(
    `  edge Worker cold start under workerd       ${e.toFixed(0).padStart(6)} ms median of ${ROUNDS}; a Worker with no WASM ${f.toFixed(0)} ms ` +
      `(${(e / f).toFixed(2)}x; the module's own cost ${(e - f).toFixed(0)} ms)`,
  );
  if (first) console.log(`  cockpit first load: ${first[1]}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
