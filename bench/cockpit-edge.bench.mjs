// The cockpit relay at the edge, robots x viewers under local workerd (Miniflare): the whole fleet
// in one Durable Object (the default) against one object per robot (COCKPIT_OBJECTS = per-robot,
// docs/cockpit-fleet.md), in this one run. Each robot streams a 1 KiB latest channel at RATE_HZ to
// VIEWERS viewers of its own, all Node WASM clients over real WebSockets. Printed per row: the
// frames offered to viewers per second (robots x RATE_HZ x VIEWERS), those delivered, and the
// share delivered; a row under 90 % is where that design saturates on this machine, and the first
// such row of the one-object design is printed as its saturation point.
//
// What the figures mean: local workerd runs every object of a process on one thread, so here the
// per-robot design cannot gain cores; what it shows is the cost one object pays per frame and
// viewer (the same in both designs, plus the switchboard's pass-through for per-robot), and the
// point at which a single thread is full. On Cloudflare each object has a thread of its own, so a
// fleet of per-robot objects is bounded by one robot's load on one object, not the fleet's.
// The clients share this Node process and the machine's cores with workerd: figures need a quiet
// machine, and the load average is printed beside them.
//   node bench/cockpit-edge.bench.mjs [--quick]
import os from 'node:os';
import { nodeRobot, nodeViewer, infoOf, until } from '../tests/e2e/lib/cockpit_clients.mjs';
import { startEdge } from '../tests/e2e/lib/edge.mjs';

const QUICK = process.argv.includes('--quick');
const ROBOTS = QUICK ? [1, 4] : [1, 2, 4, 8];
const VIEWERS = 4; // per robot
const RATE_HZ = 50;
const FRAME_BYTES = 1024;
const WARMUP_MS = 1000;
const MEASURE_MS = QUICK ? 2000 : 4000;

const manifest = {
  version: 1,
  channels: [{ ch: 'cam', encoding: 'jpeg.v1', delivery: 'latest' }],
  panels: [{ id: 'v', kind: 'video', channels: ['cam'] }],
};
const payload = new Uint8Array(FRAME_BYTES).fill(7);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const status = (t) => process.stderr.write(`[bench] ${t}\n`);

async function round(edge, design, robots) {
  const info = await infoOf(edge.url);
  const rs = [];
  const vs = [];
  try {
    for (let i = 0; i < robots; i++) {
      const id = `${design}-${robots}-${i}`;
      const r = await nodeRobot(edge.url, { id, name: id, model: 'bench', manifest });
      rs.push(r);
      for (let j = 0; j < VIEWERS; j++) {
        const v = nodeViewer(info);
        vs.push(v);
        await until(() => v.state.welcomed && v.robots.at(-1)?.includes(id), `viewer of ${id}`);
        v.viewer.watch(id);
        await until(() => v.manifests.at(-1)?.robotId === id, `the manifest of ${id}`);
        v.viewer.want(['cam']);
      }
    }
    await until(() => rs.every((r) => r.robot.wants('cam')), 'every robot wanted');
    const streams = rs.map((r) => r.stream('cam', () => payload, 1000 / RATE_HZ));
    await sleep(WARMUP_MS);
    const got = () => vs.reduce((n, v) => n + (v.frames.cam?.length ?? 0), 0);
    const sent = () => streams.reduce((n, s) => n + s.sent(), 0);
    const [g0, s0, t0] = [got(), sent(), Date.now()];
    await sleep(MEASURE_MS);
    const [g1, s1, t1] = [got(), sent(), Date.now()];
    for (const s of streams) s.stop();
    const secs = (t1 - t0) / 1000;
    const offered = ((s1 - s0) * VIEWERS) / secs;
    const delivered = (g1 - g0) / secs;
    return { design, robots, offered, delivered, share: delivered / offered };
  } finally {
    for (const v of vs) v.close();
    for (const r of rs) await r.robot.stop().catch(() => {});
  }
}

const rows = [];
for (const design of ['one', 'per-robot']) {
  const edge = await startEdge({
    bindings: design === 'one' ? {} : { COCKPIT_OBJECTS: 'per-robot' },
  });
  try {
    for (const robots of ROBOTS) {
      status(`${design}: ${robots} robot(s) x ${VIEWERS} viewers`);
      rows.push(await round(edge, design, robots));
    }
  } finally {
    await edge.stop();
  }
}

const load = os
  .loadavg()
  .map((l) => l.toFixed(1))
  .join(' ');
console.log(
  `\ncockpit at the edge: robots x ${VIEWERS} viewers each, ${FRAME_BYTES} B latest frames at ${RATE_HZ} Hz, local workerd (${os.cpus().length} cores, load ${load})`,
);
console.log('objects      robots   offered fps   delivered fps   delivered');
for (const r of rows) {
  console.log(
    `${r.design.padEnd(12)} ${String(r.robots).padStart(6)} ${r.offered.toFixed(0).padStart(13)} ${r.delivered.toFixed(0).padStart(15)} ${`${(r.share * 100).toFixed(0)} %`.padStart(11)}`,
  );
}
const knee = rows.find((r) => r.design === 'one' && r.share < 0.9);
console.log(
  knee
    ? `one object saturates at ${knee.robots} robots x ${VIEWERS} viewers (~${knee.delivered.toFixed(0)} frames/s delivered by its one thread)`
    : `one object kept up with every row (up to ${ROBOTS.at(-1)} robots x ${VIEWERS} viewers); raise ROBOTS to find its limit`,
);
process.exit(0);
