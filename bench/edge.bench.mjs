// The edge relay under local workerd (Miniflare): one room, 8 writers over real WebSockets from
// Node, each writing one key at a time and waiting for its own echo (the moment a client may call
// the write safe). Envelopes/s and p50/p99 echo latency, with durability on (journal INSERT +
// storage.sync before every echo) and off (memory only), for three Durable Objects in this one
// run, alternating:
//   - the raw echo object (bench/lib/edge_echo_worker.js), the limit: the same front door,
//     tickets and hibernatable sockets, every frame sent as it came to every member (the writer's
//     copy is its echo), no parsing, and when durable the same INSERT + storage.sync per frame
//     before any copy goes out; its clients send frames of the same size and only compare their
//     own echo's text;
//   - tether's (web/edge/worker.js), with the WASM room relay;
//   - the same object around the reference @mmstack/mesh-protocol createRelay
//     (bench/lib/edge_mesh_worker.js).
// Beside each: the CPU the workerd process and the Node clients spent per envelope (from
// /proc and process.cpuUsage), which a shared machine disturbs less than the wall clock.
// Also prints the bundle a `wrangler deploy` uploads (esbuild, minified; gzip as uploaded).
//   node bench/edge.bench.mjs [--quick] [--rounds N] [--writes N] [--only tether|mesh|echo]
//     [--tether-script PATH]  another copy of web/edge/worker.js (inside the repo) as tether's
//                             lane, for an A/B of two builds or two versions at the same load
//   node bench/edge.bench.mjs --profile tether|mesh|echo [--memory] [--callers NAME]
//     one run of that lane with workerd's V8 inspector sampling (Miniflare's inspector), then the
//     functions with the most self time (bench/README.md § The edge relay: where the time goes)
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import WebSocket from 'ws';
import { repoDir } from '../tests/e2e/lib/fixtures.mjs';
import { Peer, edgeOptions, ticketFor, until } from '../tests/e2e/lib/edge.mjs';
import { atLeast } from './lib/targets.mjs';

const argv = process.argv.slice(2);
const arg = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const QUICK = argv.includes('--quick');
const PROFILE = arg('--profile');
const ONLY = arg('--only');
const WRITERS = 8;
const PER_WRITER = Number(arg('--writes') ?? (QUICK ? 60 : 250));
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

const LANES = {
  echo: { name: 'raw echo DO (limit)', script: join(repoDir, 'bench/lib/edge_echo_worker.js') },
  tether: {
    name: 'tether (WASM)',
    script: resolve(arg('--tether-script') ?? join(repoDir, 'web/edge/worker.js')),
  },
  mesh: { name: 'mesh-protocol 0.9.1', script: join(out, 'mesh_worker.js') },
};

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

// The workerd processes Miniflare started for this run (children of this process), for their
// CPU time: utime + stime in clock ticks (100 per second on Linux).
const TICK_MS = 10;
function childPids() {
  const pids = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === process.pid) pids.push(Number(d));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}
function cpuMs(pids) {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited
    }
  }
  return ticks * TICK_MS;
}

async function startLane(scriptPath, durable, persist, inspect) {
  const mf = new Miniflare({
    ...edgeOptions({
      scriptPath,
      persist,
      bindings: {
        ROOM_LIMITS: limitsFor(scriptPath),
        ROOM_DURABILITY: durable ? 'on' : 'off',
        TETHER_TEST_HOOKS: '0',
      },
    }),
    ...(inspect ? { inspectorPort: 0 } : {}),
  });
  const url = (await mf.ready).toString().replace(/\/$/, '');
  return { mf, wsUrl: url.replace(/^http/, 'ws') };
}

// A writer of the echo lane: a ticketed socket that sends frames the size of a room write and
// knows its echo by its text. No room client: the limit's clients do the least a client can.
class EchoWriter {
  constructor(wsUrl, room, writer) {
    this.writer = writer;
    this.pending = null;
    this.onEcho = () => {};
    this.ready = ticketFor(room, writer).then(
      (t) =>
        new Promise((resolve, reject) => {
          this.ws = new WebSocket(
            `${wsUrl}/rooms/${encodeURIComponent(room)}?ticket=${encodeURIComponent(t)}`,
          );
          this.ws.once('open', resolve);
          this.ws.once('error', reject);
          this.ws.on('message', (data) => {
            if (this.pending !== null && String(data) === this.pending) {
              this.pending = null;
              this.onEcho();
            }
          });
        }),
    );
    this.room = room;
  }
  // The shape and size of a room client's write of one `set` (what the other lanes send).
  write(n) {
    const env = {
      origin: this.writer,
      writer: this.writer,
      version: n,
      hlc: { p: Date.now(), l: 0 },
      ops: [{ kind: 'set', path: ['k', this.writer], next: n, cites: [] }],
      schemaVersion: 0,
    };
    this.pending = JSON.stringify({ t: 'write', room: this.room, env });
    this.ws.send(this.pending);
  }
  terminate() {
    this.ws?.terminate();
  }
}

// The closed loop: every writer writes, waits for its own echo, writes again.
async function closedLoop(writers, write, onEcho) {
  const latencies = [];
  let measuring = false;
  const loops = writers.map(
    (p, i) =>
      new Promise((resolve) => {
        let n = 0;
        let t0 = 0;
        const next = () => {
          if (n >= PER_WRITER + WARMUP) return resolve();
          if (n === WARMUP) measuring = true;
          n++;
          t0 = performance.now();
          write(p, i, n);
        };
        onEcho(p, () => {
          if (measuring && n > WARMUP) latencies.push(performance.now() - t0);
          t0 = 0;
          next();
        });
        next();
      }),
  );
  const start = performance.now();
  await Promise.all(loops);
  return { seconds: (performance.now() - start) / 1000, latencies };
}

async function runOnce(lane, durable, { inspect = null } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'tether-edge-bench-'));
  const edge = await startLane(LANES[lane].script, durable, dir, inspect !== null);
  try {
    const pids = childPids();
    const room = `bench-${lane}`;
    let writers;
    let loop;
    if (lane === 'echo') {
      writers = [];
      for (let i = 0; i < WRITERS; i++) writers.push(new EchoWriter(edge.wsUrl, room, `w${i}`));
      await Promise.all(writers.map((w) => w.ready));
      // Each socket was accepted into the room before its 101 answer: all are members now.
      loop = () =>
        closedLoop(
          writers,
          (w, i, n) => w.write(n),
          (w, done) => (w.onEcho = done),
        );
    } else {
      writers = [];
      for (let i = 0; i < WRITERS; i++)
        writers.push(new Peer(edge.wsUrl, room, { writer: `w${i}`, record: false }));
      await until(() => writers.every((p) => p.client.welcomed), 'welcomes', 2000);
      writers[0].write([{ kind: 'set', path: [], next: { k: {} } }]);
      await until(() => writers.every((p) => p.client.seq >= 1), 'seed', 2000);
      loop = () =>
        closedLoop(
          writers,
          (p, i, n) => p.write([{ kind: 'set', path: ['k', `w${i}`], next: n }]),
          (p, done) =>
            p.ws.on('message', () => {
              if (p.client.unacked === 0 && p.awaiting) {
                p.awaiting = false;
                done();
              }
            }),
        );
      // Peer.write is synchronous: the echo cannot arrive before `awaiting` is set.
      for (const p of writers) {
        const write = p.write.bind(p);
        p.write = (ops) => {
          p.awaiting = true;
          return write(ops);
        };
      }
    }
    const session = inspect ? await inspect.start(edge.mf) : null;
    const cpu0 = process.cpuUsage();
    const server0 = cpuMs(pids);
    const { seconds, latencies } = await loop();
    const serverMs = cpuMs(pids) - server0;
    const c = process.cpuUsage(cpu0);
    const profile = session ? await session.stop() : null;
    latencies.sort((a, b) => a - b);
    const q = (f) => latencies[Math.min(latencies.length - 1, Math.floor(f * latencies.length))];
    if (lane !== 'echo') {
      // Each loop ends at its own last echo; the others' last envelopes may still be in flight.
      await until(
        () => new Set(writers.map((p) => JSON.stringify(p.client.value()))).size === 1,
        `${lane}: convergence`,
        400,
      );
    }
    for (const p of writers) p.terminate();
    const envs = WRITERS * (PER_WRITER + WARMUP);
    return {
      lane,
      envPerSec: envs / seconds,
      p50: q(0.5),
      p99: q(0.99),
      serverUs: (serverMs * 1000) / envs,
      clientUs: (c.user + c.system) / envs,
      profile,
    };
  } finally {
    await edge.mf.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

// --- the profile: workerd's V8 sampler through Miniflare's inspector proxy --------------------
function inspector() {
  let ws = null;
  let id = 0;
  const waiting = new Map();
  const call = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const n = ++id;
      waiting.set(n, { resolve, reject });
      ws.send(JSON.stringify({ id: n, method, params }));
    });
  return {
    async start(mf) {
      const base = (await mf.getInspectorURL()).toString().replace(/\/$/, '');
      const list = await (await fetch(`${base.replace(/^ws/, 'http')}/json/list`)).json();
      const target = list.find((t) => t.webSocketDebuggerUrl.endsWith('/tether-rooms')) ?? list[0];
      ws = new WebSocket(target.webSocketDebuggerUrl, { headers: { Origin: 'http://localhost' } });
      ws.on('message', (data) => {
        const m = JSON.parse(String(data));
        const w = waiting.get(m.id);
        if (!w) return;
        waiting.delete(m.id);
        if (m.error) w.reject(new Error(m.error.message));
        else w.resolve(m.result);
      });
      await new Promise((r, j) => {
        ws.once('open', r);
        ws.once('error', j);
      });
      await call('Profiler.enable');
      await call('Profiler.setSamplingInterval', { interval: 100 });
      await call('Profiler.start');
      return {
        stop: async () => {
          const { profile } = await call('Profiler.stop');
          ws.close();
          return profile;
        },
      };
    },
  };
}

// Self time per function (name and file), over the samples that ran something.
function selfTimes(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const hits = new Map();
  for (const s of profile.samples) hits.set(s, (hits.get(s) ?? 0) + 1);
  const rows = new Map();
  let busy = 0;
  let idle = 0;
  for (const [nodeId, count] of hits) {
    const f = byId.get(nodeId).callFrame;
    if (f.functionName === '(idle)') {
      idle += count;
      continue;
    }
    busy += count;
    const file = f.url.startsWith('wasm://')
      ? 'wasm'
      : f.url
          .replace(/^file:\/\//, '')
          .replace(repoDir, '')
          .replace(/^.*node_modules\//, '');
    const key = `${f.functionName || '(anonymous)'}  ${file}${file && f.url.startsWith('wasm') ? '' : file ? `:${f.lineNumber + 1}` : ''}`;
    rows.set(key, (rows.get(key) ?? 0) + count);
  }
  return { busy, idle, rows: [...rows].sort((a, b) => b[1] - a[1]) };
}

// Self samples of every function named `name`, by the two frames above it.
function callersOf(profile, name) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const hits = new Map();
  for (const s of profile.samples) hits.set(s, (hits.get(s) ?? 0) + 1);
  const label = (id) => {
    const c = byId.get(id)?.callFrame;
    return c ? `${c.functionName || '(anonymous)'}:${c.lineNumber + 1}` : '(root)';
  };
  const out = new Map();
  for (const [id, count] of hits) {
    if (byId.get(id).callFrame.functionName !== name) continue;
    const p1 = parent.get(id);
    const key = `${label(p1)} <- ${label(parent.get(p1))}`;
    out.set(key, (out.get(key) ?? 0) + count);
  }
  return [...out].sort((a, b) => b[1] - a[1]);
}

const f = (x, d = 1) => x.toFixed(d);
const load = () =>
  loadavg()
    .map((x) => f(x, 1))
    .join(' ');

if (PROFILE) {
  if (!LANES[PROFILE]) throw new Error(`--profile takes one of ${Object.keys(LANES).join(', ')}`);
  const durable = !argv.includes('--memory');
  const r = await runOnce(PROFILE, durable, { inspect: inspector() });
  const { busy, idle, rows } = selfTimes(r.profile);
  const wasmShare = rows.filter(([k]) => k.endsWith('  wasm')).reduce((a, [, n]) => a + n, 0);
  console.log(
    `profile of ${LANES[PROFILE].name}, ${durable ? 'durable' : 'memory'}, ${WRITERS} writers x ${PER_WRITER + WARMUP} writes: ${f(r.envPerSec, 0)} env/s under the sampler (load ${load()})`,
  );
  console.log(
    `samples: ${busy} busy, ${idle} idle; WASM ${f((100 * wasmShare) / busy)}% of busy; workerd CPU ${f(r.serverUs, 0)} us/env`,
  );
  console.log('self %   function  file:line');
  for (const [k, n] of rows.slice(0, Number(arg('--top') ?? 40)))
    console.log(`${f((100 * n) / busy).padStart(6)}   ${k}`);
  // --callers NAME: who calls the function NAME, two frames up, by its self samples.
  if (arg('--callers')) {
    for (const [caller, n] of callersOf(r.profile, arg('--callers')).slice(0, 12))
      console.log(`${f((100 * n) / busy).padStart(6)}   ${arg('--callers')} <- ${caller}`);
  }
  process.exit(0);
}

// Rounds alternate the three lanes, best of each: the machine is shared, so a single run mostly
// measures whoever else is busy at that moment.
const ROUNDS = Number(arg('--rounds') ?? (QUICK ? 1 : 2));
const order = ONLY ? [ONLY] : ['echo', 'tether', 'mesh'];
const best = (a, b) => (!a || b.envPerSec > a.envPerSec ? b : a);
const results = [];
const loadAt = load();
for (const durable of [true, false]) {
  const mode = durable ? 'durable' : 'memory';
  const got = {};
  for (let round = 0; round < ROUNDS; round++)
    for (const lane of order) got[lane] = best(got[lane], await runOnce(lane, durable));
  results.push({ mode, ...got });
}

console.log(
  `edge relay under local workerd (Miniflare): 1 room, ${WRITERS} writers, ${PER_WRITER} writes each (closed loop, 1 in flight per writer), best of ${ROUNDS} alternating runs (load ${loadAt})`,
);
console.log(
  'mode     relay                  env/s   p50 ms  p99 ms  of limit (target)  vs ref (target)  workerd us/env  clients us/env',
);
for (const r of results) {
  for (const lane of order) {
    const x = r[lane];
    const ofLimit =
      r.echo && lane !== 'echo'
        ? `${f(x.envPerSec / r.echo.envPerSec, 2)}x${lane === 'tether' ? ' (>= 0.80)' : ''}`
        : '';
    const vsRef =
      lane === 'tether' && r.mesh ? `${f(x.envPerSec / r.mesh.envPerSec, 2)}x (>= 3.00)` : '';
    if (lane === 'tether' && r.echo)
      atLeast(`edge ${r.mode}: ours / raw echo DO`, x.envPerSec / r.echo.envPerSec, 0.8);
    if (lane === 'tether' && r.mesh)
      atLeast(`edge ${r.mode}: ours / reference`, x.envPerSec / r.mesh.envPerSec, 3);
    console.log(
      `${r.mode.padEnd(8)} ${LANES[lane].name.padEnd(20)} ${f(x.envPerSec, 0).padStart(7)} ${f(x.p50, 2).padStart(8)} ${f(x.p99, 2).padStart(7)}  ${ofLimit.padEnd(17)}  ${vsRef.padEnd(15)}  ${f(x.serverUs, 0).padStart(14)}  ${f(x.clientUs, 0).padStart(14)}`,
    );
  }
}
console.log(
  'limit: the raw echo object (same front door, tickets and sockets; every frame to every member unparsed; durable: the same INSERT + storage.sync per envelope before the echo)',
);
const kb = (n) => `${f(n / 1024, 1)} KiB`;
console.log(
  `bundle: tether rooms worker.js ${kb(ourJs.raw)} (${kb(ourJs.gz)} gz) + tether-rooms.wasm ${kb(wasm.raw)} (${kb(wasm.gz)} gz) = ${kb(ourJs.gz + wasm.gz)} gz uploaded`,
);
console.log(`        reference worker  ${kb(meshJs.raw)} (${kb(meshJs.gz)} gz)`);
