// The edge relay under local workerd (Miniflare): one room, 8 writers over real WebSockets from
// Node, each writing one key at a time and waiting for its own echo (the moment a client may call
// the write safe). Envelopes/s and p50/p99 echo latency, with durability on (journal INSERT +
// storage.sync before every echo) and off (memory only), for the Durable Object built around
// tether's WASM relay (web/edge/worker.js) and the same object built around the reference
// @mmstack/mesh-protocol createRelay (bench/lib/edge_mesh_worker.js), all in this one run.
// Also prints the bundle a `wrangler deploy` uploads (esbuild, minified; gzip as uploaded).
//   node bench/edge.bench.mjs [--quick]
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { repoDir } from '../tests/e2e/lib/fixtures.mjs';
import { Peer, startEdge, until } from '../tests/e2e/lib/edge.mjs';

const QUICK = process.argv.includes('--quick');
const WRITERS = 8;
const PER_WRITER = QUICK ? 60 : 250;
const WARMUP = 20;
const out = join(repoDir, 'build/edge-bench');
mkdirSync(out, { recursive: true });

// The .wasm stays a separate module, imported from the bundle's own folder: each source names it
// relative to itself (bench/lib and web/glue/modules sit at different depths), so a path kept
// verbatim would point outside the repo from build/edge-bench/.
const wasmFromBundle = {
  name: 'wasm-from-bundle',
  setup(b) {
    b.onResolve({ filter: /\.wasm$/ }, (args) => ({
      path: relative(out, resolve(args.resolveDir, args.path)),
      external: true,
    }));
  },
};
// Bundles: ours as deployed, and the reference worker (Miniflare cannot resolve bare specifiers).
const common = {
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  minify: true,
  logLevel: 'silent',
  plugins: [wasmFromBundle],
};
await build({
  ...common,
  entryPoints: [join(repoDir, 'web/edge/worker.js')],
  outfile: join(out, 'worker.min.js'),
});
await build({
  ...common,
  minify: false,
  entryPoints: [join(repoDir, 'bench/lib/edge_mesh_worker.js')],
  outfile: join(out, 'mesh_worker.js'),
});
await build({
  ...common,
  entryPoints: [join(repoDir, 'bench/lib/edge_mesh_worker.js')],
  outfile: join(out, 'mesh_worker.min.js'),
});
const size = (f) => {
  const b = readFileSync(f);
  return { raw: b.length, gz: gzipSync(b).length };
};
const ourJs = size(join(out, 'worker.min.js'));
const wasm = size(join(repoDir, 'build/wasm/tether-rooms.wasm'));
const meshJs = size(join(out, 'mesh_worker.min.js'));

const RATES = {
  connectionMessagesPerSecond: 1e6,
  connectionBurst: 1e6,
  principalMessagesPerSecond: 1e6,
  principalBurst: 1e6,
};
// The reference relay never advertises read acknowledgements, so no client acknowledges to it:
// it runs with the requirement off (docs/rooms.md § The slow-reader rule), which changes nothing
// per frame but the branch the admission core takes.
const limitsFor = (scriptPath) =>
  JSON.stringify(scriptPath.includes('mesh_worker') ? { ...RATES, requireReadAck: false } : RATES);

async function runOnce(label, scriptPath, durable) {
  const dir = mkdtempSync(join(tmpdir(), 'tether-edge-bench-'));
  const edge = await startEdge({
    scriptPath,
    persist: dir,
    bindings: {
      ROOM_LIMITS: limitsFor(scriptPath),
      ROOM_DURABILITY: durable ? 'on' : 'off',
      TETHER_TEST_HOOKS: '0',
    },
  });
  try {
    const room = `bench-${label}`;
    const peers = [];
    for (let i = 0; i < WRITERS; i++) peers.push(new Peer(edge.wsUrl, room, { writer: `w${i}` }));
    await until(() => peers.every((p) => p.client.welcomed), 'welcomes', 2000);
    peers[0].write([{ kind: 'set', path: [], next: { k: {} } }]);
    await until(() => peers.every((p) => p.client.seq >= 1), 'seed', 2000);
    const latencies = [];
    let measuring = false;
    const loops = peers.map(
      (p, i) =>
        new Promise((resolve) => {
          let n = 0;
          let t0 = 0;
          const next = () => {
            if (n >= PER_WRITER + WARMUP) return resolve();
            if (n === WARMUP) measuring = true;
            n++;
            t0 = performance.now();
            p.write([{ kind: 'set', path: ['k', `w${i}`], next: n }]);
          };
          p.ws.on('message', () => {
            if (p.client.unacked === 0 && t0 !== 0) {
              if (measuring && n > WARMUP) latencies.push(performance.now() - t0);
              t0 = 0;
              next();
            }
          });
          next();
        }),
    );
    const start = performance.now();
    await Promise.all(loops);
    const seconds = (performance.now() - start) / 1000;
    latencies.sort((a, b) => a - b);
    const q = (f) => latencies[Math.min(latencies.length - 1, Math.floor(f * latencies.length))];
    // Each loop ends at its own last echo; the others' last envelopes may still be in flight.
    await until(
      () => new Set(peers.map((p) => JSON.stringify(p.client.value()))).size === 1,
      `${label}: convergence`,
      400,
    );
    for (const p of peers) p.terminate();
    return {
      label,
      envPerSec: (WRITERS * (PER_WRITER + WARMUP)) / seconds,
      p50: q(0.5),
      p99: q(0.99),
    };
  } finally {
    await edge.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// Two rounds, alternating ours and the reference, best of each: the machine is shared, so a
// single run mostly measures whoever else is busy at that moment.
const ROUNDS = QUICK ? 1 : 2;
const best = (a, b) => (!a || b.envPerSec > a.envPerSec ? b : a);
const results = [];
for (const durable of [true, false]) {
  const mode = durable ? 'durable' : 'memory';
  let ours = null;
  let ref = null;
  for (let round = 0; round < ROUNDS; round++) {
    ours = best(
      ours,
      await runOnce(`tether-${mode}-${round}`, join(repoDir, 'web/edge/worker.js'), durable),
    );
    ref = best(ref, await runOnce(`mesh-${mode}-${round}`, join(out, 'mesh_worker.js'), durable));
  }
  results.push({ mode, ours, ref });
}

const f = (x, d = 1) => x.toFixed(d);
console.log(
  `edge relay under local workerd (Miniflare): 1 room, ${WRITERS} writers, ${PER_WRITER} writes each (closed loop, 1 in flight per writer), best of ${ROUNDS} alternating runs`,
);
console.log(
  'mode     relay                 env/s   p50 ms  p99 ms   env/s ratio  p50 ratio (ref/ours)',
);
for (const r of results) {
  for (const [name, x] of [
    ['tether (WASM)', r.ours],
    ['mesh-protocol 0.9.1', r.ref],
  ]) {
    const ratio =
      x === r.ours
        ? `${f(r.ours.envPerSec / r.ref.envPerSec, 2)}x`.padStart(10) +
          `  ${f(r.ref.p50 / r.ours.p50, 2)}x`.padStart(11)
        : '';
    console.log(
      `${r.mode.padEnd(8)} ${name.padEnd(20)} ${f(x.envPerSec, 0).padStart(7)} ${f(x.p50, 2).padStart(8)} ${f(x.p99, 2).padStart(7)} ${ratio}`,
    );
  }
}
const kb = (n) => `${f(n / 1024, 1)} KiB`;
console.log(
  `bundle: tether rooms worker.js ${kb(ourJs.raw)} (${kb(ourJs.gz)} gz) + tether-rooms.wasm ${kb(wasm.raw)} (${kb(wasm.gz)} gz) = ${kb(ourJs.gz + wasm.gz)} gz uploaded`,
);
console.log(`        reference worker  ${kb(meshJs.raw)} (${kb(meshJs.gz)} gz)`);
