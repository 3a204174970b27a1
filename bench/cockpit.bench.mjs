// Cockpit relay throughput and latency: one robot, 8 viewers, one reliable channel, 1 KiB and
// 256 KiB frames, through the Deno relay over WebTransport and over WebSocket, beside a raw loopback
// WebTransport echo measured in the same run (the physical limit on this machine).
// Run: node bench/cockpit.bench.mjs [seconds per case, default 5]
import { killAll, runClient, startRelay } from '../tests/e2e/lib/cockpit_procs.mjs';

const seconds = Number(process.argv[2] ?? 5);
const rows = [];
let relay;
try {
  relay = await startRelay();
  for (const size of [1024, 256 * 1024]) {
    const echo = await runClient('bench/cockpit_bench_client.js', [
      relay.http,
      'echo',
      String(size),
      String(seconds),
      '8',
    ]);
    for (const mode of ['wt', 'ws']) {
      const r = await runClient('bench/cockpit_bench_client.js', [
        relay.http,
        mode,
        String(size),
        String(seconds),
        '8',
      ]);
      rows.push({ size, mode, ...r, echoFps: echo.fps, echoP50: echo.p50 });
    }
  }
} finally {
  killAll();
}

const kib = (n) => `${n / 1024} KiB`;
const f1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : '-');
console.log(
  '\ncockpit relay: 1 robot -> 8 viewers, reliable channel (per-viewer fps; latency robot -> viewer)',
);
console.log(
  'size     lane          fps/viewer   p50 ms   p99 ms   MB/s out   | raw WT echo fps   p50 ms   relay/echo fps',
);
for (const r of rows) {
  const mbs = (r.fps * 8 * r.size) / 1e6;
  console.log(
    `${kib(r.size).padEnd(8)} ${(r.mode === 'wt' ? 'WebTransport' : 'WebSocket').padEnd(13)} ${f1(r.fps).padStart(10)} ${f1(r.p50).padStart(8)} ${f1(r.p99).padStart(8)} ${f1(mbs).padStart(10)}   | ${f1(r.echoFps).padStart(15)} ${f1(r.echoP50).padStart(8)} ${(r.fps / r.echoFps).toFixed(2).padStart(16)}`,
  );
}
