// The edge's Workers, one per system, in the order a deploy needs (a Worker's bindings name only
// Workers deployed before it): the one list that web/edge/deploy.mjs (deploy every Worker),
// web/edge/dev.mjs (`make edge-dev`), tests/package/wrangler.test.mjs (`make test-deploy`),
// bench/modules.bench.mjs and tests/e2e/lib/edge.mjs (the e2e suites, under Miniflare) read. Each
// entry's bindings are the ones its wrangler config declares; `make test-deploy` checks that they
// agree. web/edge/routes.js says which Worker serves which path.
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { repoDir, wranglerCommand, wranglerEnv } from './wrangler-cli.mjs';

/**
 * @typedef {{name: string, config: string, main: string, module: string,
 *   durableObjects: Record<string, string>, services: Record<string, string>,
 *   front?: boolean, probe: {path: string, init?: RequestInit, status: number}}} EdgeWorker
 * `probe` is a request that only the Worker's WASM module can answer (its first answer is its
 * cold start, bench/README.md § Module size) and the status it gets without any secret set.
 */

/** @type {readonly EdgeWorker[]} */
export const EDGE_WORKERS = Object.freeze([
  {
    name: 'tether-mailbox',
    config: 'web/edge/mailbox.wrangler.toml',
    main: 'web/edge/mailbox-worker.js',
    module: 'tether-mailbox',
    durableObjects: { MAILBOXES: 'MailboxObject' },
    services: {},
    probe: { path: '/mailboxes', init: { method: 'POST' }, status: 201 },
  },
  {
    name: 'tether-cockpit',
    config: 'web/edge/cockpit.wrangler.toml',
    main: 'web/edge/cockpit-worker.js',
    module: 'tether-cockpit-relay',
    durableObjects: { COCKPIT: 'CockpitRelayObject' },
    services: {},
    probe: { path: '/api/info', status: 200 },
  },
  {
    // The front door: the public hostname, with the cockpit's files as its static assets.
    name: 'tether-rooms',
    config: 'web/edge/wrangler.toml',
    main: 'web/edge/worker.js',
    module: 'tether-rooms',
    durableObjects: { ROOMS: 'RoomObject' },
    services: { COCKPIT_SERVICE: 'tether-cockpit', MAILBOX_SERVICE: 'tether-mailbox' },
    front: true,
    // A room upgrade without a ticket: the ticket check runs on the module before any object.
    probe: { path: '/rooms/lab', init: { headers: { upgrade: 'websocket' } }, status: 401 },
  },
]);

/** The front door (the rooms Worker). */
export const FRONT = /** @type {EdgeWorker} */ (EDGE_WORKERS.find((w) => w.front));

/** The rooms Worker's upload budget, JS + WASM gzip as wrangler reports it (issue #20). */
export const ROOMS_UPLOAD_BUDGET_GZ_KIB = 120;

const run = promisify(execFile);
const gz = (file) => gzipSync(readFileSync(file), { level: 9 }).length;

/**
 * `wrangler deploy --dry-run` of one Worker into `outdir`, offline: its upload as wrangler reports
 * it, wrangler's output, and each file of the bundle with its size and gzip -9 size.
 * @param {EdgeWorker} worker
 */
export async function dryRun(worker, outdir, { logs = join(outdir, '..', 'logs') } = {}) {
  const [cmd, args] = wranglerCommand([
    'deploy',
    '--dry-run',
    '--outdir',
    outdir,
    '-c',
    worker.config,
  ]);
  let stdout;
  try {
    ({ stdout } = await run(cmd, args, {
      cwd: repoDir,
      env: wranglerEnv({ WRANGLER_LOG_PATH: logs }),
      maxBuffer: 16 << 20,
    }));
  } catch (e) {
    const err = /** @type {{stdout?: string, stderr?: string}} */ (e);
    throw new Error(
      `wrangler deploy --dry-run -c ${worker.config} failed (did make wasm cockpit run?):\n` +
        `${err.stdout ?? ''}${err.stderr ?? e}`,
    );
  }
  const upload = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(stdout);
  if (!upload)
    throw new Error(`no upload size in wrangler's output for ${worker.name}:\n${stdout}`);
  const files = readdirSync(outdir).map((f) => ({
    file: f,
    bytes: statSync(join(outdir, f)).size,
    gzBytes: gz(join(outdir, f)),
  }));
  return {
    worker,
    outdir,
    // wrangler names the bundle's entry after the Worker's main
    script: join(outdir, basename(worker.main)),
    stdout,
    files,
    uploadKiB: Number(upload[1]),
    uploadGzKiB: Number(upload[2]),
  };
}

/** One line per Worker: its upload (wrangler's figures) and the bundle's parts. */
export function uploadLine(d) {
  const parts = d.files
    .filter((f) => !f.file.endsWith('.map'))
    .map((f) => `${f.file} ${(f.gzBytes / 1024).toFixed(1)} KiB gz`)
    .join(' + ');
  return `${d.worker.name.padEnd(15)} upload ${d.uploadKiB.toFixed(1).padStart(6)} KiB (gzip ${d.uploadGzKiB.toFixed(1).padStart(6)} KiB): ${parts}`;
}

/**
 * Miniflare options for a set of the edge's Workers, `scriptFor(worker)` giving each one's
 * script (and `modulesRoot`): the front door first (it answers Miniflare's URL), each Worker with
 * its Durable Objects and its service bindings to the others. `bindings` go to every Worker.
 * @param {{scriptFor: (w: EdgeWorker) => {scriptPath: string, modulesRoot: string},
 *   bindings?: Record<string, string>, workers?: readonly EdgeWorker[],
 *   extra?: (w: EdgeWorker) => object}} o
 */
export function miniflareWorkers({ scriptFor, bindings = {}, workers = EDGE_WORKERS, extra }) {
  const ordered = [...workers].sort((a, b) => Number(!!b.front) - Number(!!a.front));
  return ordered.map((w) => ({
    name: w.name,
    modules: true,
    ...scriptFor(w),
    modulesRules: [
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
      { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
    ],
    compatibilityDate: compatibilityDate(w),
    durableObjects: Object.fromEntries(
      Object.entries(w.durableObjects).map(([b, className]) => [b, { className, useSQLite: true }]),
    ),
    // A service a test leaves out is left unbound (the front door then says what to deploy).
    serviceBindings: Object.fromEntries(
      Object.entries(w.services).filter(([, s]) => workers.some((o) => o.name === s)),
    ),
    bindings,
    ...(extra?.(w) ?? {}),
  }));
}

/** The compatibility date a Worker's wrangler config pins. */
export function compatibilityDate(worker) {
  const toml = readFileSync(join(repoDir, worker.config), 'utf8');
  const m = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml);
  if (!m) throw new Error(`${worker.config} has no compatibility_date`);
  return m[1];
}
