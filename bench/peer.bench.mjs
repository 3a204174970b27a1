// Peer benchmark, Chromium page to page over real RTCDataChannels on loopback, one run
// (agent-bus-and-swarm.md § Two lanes, § Why ties are broken at random; issue #8 § Speed):
//   raw    the binary lane alone, 64 KiB + 40-byte frames paced by bufferedAmount: the limit here
//   one    a swarm transfer, 1 seeder -> 1 downloader, OPFS part file, end to end
//   three  1 seeder -> 3 downloaders at once, aggregate
// Prints the ratios against the targets (one >= 70% of raw; three >= 1.7x one) and beside the
// spec's own measurements (7.1 MB/s one, 14.1 MB/s three). Runs itself in a private network
// namespace (TOOLCHAIN.md); every browser and server it starts is stopped in `finally`.
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { sampleCpu } from './lib/cpu_sampler.mjs';

const MiB = 1 << 20;
const SIZE = Number(process.env.PEER_BENCH_MIB ?? 48) * MiB;

if (process.env.TETHER_IN_NETNS !== '1') {
  const file = fileURLToPath(import.meta.url);
  const r = spawnSync(
    'unshare',
    ['-n', 'sh', '-c', `ip link set lo up && exec "${process.execPath}" "$0"`, file],
    {
      env: { ...process.env, TETHER_IN_NETNS: '1' },
      stdio: 'inherit',
      timeout: 900_000,
      killSignal: 'SIGKILL',
    },
  );
  process.exit(r.status ?? 1);
}

const { api, newPeerContext, openPeer, results, startPeerHarness, stopPeerHarness } =
  await import('../tests/e2e/lib/peer_harness.mjs');

const mbps = (bytes, ms) => bytes / 1e6 / (ms / 1000);

const fmt = (n, d = 2) => Number(n).toFixed(d);

async function room(h, name, n) {
  const seeder = await openPeer(h, await newPeerContext(h), { id: 'seed', room: name, seed: 1 });
  const ds = [];
  for (let i = 0; i < n; i++)
    ds.push(
      await openPeer(h, await newPeerContext(h), { id: `d${i + 1}`, room: name, seed: 10 + i }),
    );
  await seeder.waitForFunction((k) => window.peerApi.openPeers().length >= k, n, {
    timeout: 0,
    polling: 50,
  });
  for (const d of ds)
    await d.waitForFunction((k) => window.peerApi.openPeers().length >= k, n, {
      timeout: 0,
      polling: 50,
    });
  return { seeder, ds };
}

// One on-disk profile, as users run Chromium: see startPeerHarness for why not off-the-record.
const h = await startPeerHarness({ onDiskProfile: true });
try {
  // raw: a warm-up pass, then the measured one (TOOLCHAIN.md: cold channels are slower).
  const raw = await room(h, 'bench-raw', 1);
  await api(raw.ds[0], 'rawReceiver');
  await api(raw.seeder, 'rawSend', 'd1', 8 * MiB, 64 * 1024 + 40);
  await raw.ds[0].waitForFunction((t) => window.peerApi.rawStats().bytes >= t, 8 * MiB, {
    timeout: 0,
    polling: 20,
  });
  await api(raw.ds[0], 'rawReceiver');
  const rawCpu = sampleCpu();
  await api(raw.seeder, 'rawSend', 'd1', SIZE, 64 * 1024 + 40);
  await raw.ds[0].waitForFunction((t) => window.peerApi.rawStats().bytes >= t, SIZE, {
    timeout: 0,
    polling: 20,
  });
  const rawBusy = rawCpu.end();
  const rs = await api(raw.ds[0], 'rawStats');
  const rawMBps = mbps(rs.bytes, rs.last - rs.first);
  for (const p of [raw.seeder, ...raw.ds]) await p.close();

  const WARM = 8 * MiB;
  async function swarmRun(n, seed) {
    const r = await room(h, `bench-swarm-${n}`, n);
    // The same warm-up as the raw lane: a first file over the fresh connections, so that both
    // are measured on warm channels. (A loss on a cold association costs SCTP a retransmission
    // timeout and a smaller congestion window for a while; the warm-up's own rate is printed.)
    const warmId = await api(r.seeder, 'share', {
      name: `warm-${n}.bin`,
      size: WARM,
      seed: seed + 100,
    });
    for (const [i, d] of r.ds.entries()) await api(d, 'startFetch', warmId, `bench/warm-d${i + 1}`);
    const warm = await results(r.ds, warmId);
    for (const x of warm) if (!x.ok) throw new Error(`warm-up download failed: ${x.error}`);
    const warmSlowest = Math.max(...warm.map((x) => x.ms));
    const fileId = await api(r.seeder, 'share', { name: `bench-${n}.bin`, size: SIZE, seed });
    const t0 = Date.now();
    const cpu = sampleCpu();
    // The peers share the profile's OPFS: a folder each, as separate browsers would have.
    for (const [i, d] of r.ds.entries()) await api(d, 'startFetch', fileId, `bench/d${i + 1}`);
    const res = await results(r.ds, fileId);
    const wall = Date.now() - t0;
    const busy = cpu.end();
    for (const x of res) if (!x.ok) throw new Error(`download failed: ${x.error}`);
    let p2p = 0;
    for (const d of r.ds) {
      const p = await api(d, 'progress', fileId);
      for (const [id, v] of Object.entries(p.peers)) if (id !== 'seed') p2p += v.received;
    }
    const statuses = await Promise.all(r.ds.map((d) => api(d, 'status', fileId)));
    for (const p of [r.seeder, ...r.ds]) await p.close();
    return {
      wall,
      slowest: Math.max(...res.map((x) => x.ms)),
      p2p,
      timeouts: statuses.reduce((a, s) => a + s.timeouts, 0),
      busy,
      warmMBps: mbps(n * WARM, warmSlowest),
    };
  }
  const one = await swarmRun(1, 21);
  const oneMBps = mbps(SIZE, one.slowest);
  const three = await swarmRun(3, 22);
  const threeMBps = mbps(3 * SIZE, three.slowest);

  const rows = [
    ['measure', 'tether', 'target / spec', 'ratio'],
    [`raw data channel, 64 KiB frames (MB/s)`, fmt(rawMBps), 'the limit', ''],
    [
      `swarm 1 -> 1, ${SIZE / MiB} MiB (MB/s)`,
      fmt(oneMBps),
      '>= 70% of raw',
      `${fmt((100 * oneMBps) / rawMBps, 0)}% of raw`,
    ],
    ['', '', 'spec: 7.1', `${fmt(oneMBps / 7.1)}x spec`],
    [
      `swarm 1 -> 3, aggregate (MB/s)`,
      fmt(threeMBps),
      '>= 1.7x one',
      `${fmt(threeMBps / oneMBps)}x one`,
    ],
    ['', '', 'spec: 14.1', `${fmt(threeMBps / 14.1)}x spec`],
    [
      '  first 8 MiB on fresh connections (1 -> 1, 1 -> 3 aggregate, MB/s)',
      `${fmt(one.warmMBps)}, ${fmt(three.warmMBps)}`,
      '',
      '',
    ],
    ['  bytes between downloaders (MiB)', fmt(three.p2p / MiB, 1), '> 0', ''],
    ['  request timeouts (1 -> 1, 1 -> 3)', `${one.timeouts}, ${three.timeouts}`, '', ''],
    [
      `  machine CPU busy, ${availableParallelism()} cores (raw, 1 -> 1, 1 -> 3)`,
      `${rawBusy.machine}, ${one.busy.machine}, ${three.busy.machine}`,
      '',
      '',
    ],
    ...['renderers', 'network', 'browser'].map((k) => [
      `  Chromium ${k}, % of one core (raw, 1 -> 1, 1 -> 3)`,
      [rawBusy, one.busy, three.busy].map((b) => b.byKind[k] ?? '0%').join(', '),
      '',
      '',
    ]),
  ];
  const w = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i].length)));
  console.log(`\npeer (Chromium page to page over loopback RTCDataChannels, one run)`);
  for (const r of rows)
    console.log(r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  '));
  console.log(
    `targets: single ${oneMBps >= 0.7 * rawMBps ? 'met' : 'MISSED'}, aggregate ${threeMBps >= 1.7 * oneMBps ? 'met' : 'MISSED'}`,
  );
} finally {
  await stopPeerHarness(h);
}
