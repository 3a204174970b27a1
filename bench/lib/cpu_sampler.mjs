// Where the CPU went during a bench run, from /proc (Linux): the whole machine's busy share, and
// the CPU time of Chromium's processes by kind (browser, network service, renderers, GPU). Page
// to page on loopback, every byte crosses both renderers' WebRTC stacks and the network service's
// sockets on the same cores, so throughput ratios are read beside these. Elsewhere it reports
// nothing rather than guess.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

const TICKS_PER_S = 100; // USER_HZ: 100 on every Linux ABI Node runs on

function machine() {
  const f = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return { idle: f[3] + (f[4] ?? 0), total: f.reduce((a, b) => a + b, 0) };
}

function kindOf(cmdline) {
  if (!cmdline.includes('chromium')) return null;
  const type = /--type=([a-z-]+)/.exec(cmdline)?.[1];
  if (!type) return 'browser';
  if (type === 'utility') return cmdline.includes('NetworkService') ? 'network' : 'utility';
  if (type === 'gpu-process') return 'gpu';
  return type === 'renderer' ? 'renderers' : null;
}

const ticksOf = (stat) => {
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime
};

// A renderer's threads by name (CrRendererMain, DedicatedWorker thread, WebRTC_Network, ...):
// tid -> {name, ticks}.
function threadTicks(pid, into) {
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      into.set(`${pid}/${tid}`, { name, ticks: ticksOf(stat) });
    } catch {
      // the thread ended between the listing and the read
    }
  }
}

// Our own network namespace: the peer bench runs itself in a private one (unshare -n), and every
// Chromium it starts inherits it, so this tells its processes apart from the Chromium of other
// tests and benches running on the machine at the same time, which used to be counted as ours.
const ownNetns = (() => {
  try {
    return readlinkSync('/proc/self/ns/net');
  } catch {
    return null;
  }
})();
const sameNetns = (pid) => {
  if (ownNetns === null) return true;
  try {
    return readlinkSync(`/proc/${pid}/ns/net`) === ownNetns;
  } catch {
    return false;
  }
};

function chromiumTicks() {
  const by = new Map(); // pid -> {kind, ticks}
  const threads = new Map(); // pid/tid -> {name, ticks}, renderers only
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const kind = kindOf(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
      if (!kind || !sameNetns(pid)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      by.set(pid, { kind, ticks: ticksOf(stat) });
      if (kind === 'renderers') threadTicks(pid, threads);
    } catch {
      // the process ended between the listing and the read
    }
  }
  return { by, threads };
}

/**
 * Sums samples taken around the parts of a run that count (a swarm lane's downloads, not the
 * seeder's hashing of each new file before them): {machine: 'n/a', byKind, seconds, wallSeconds}.
 * @param {{seconds: Record<string, number> | null, wallSeconds?: number}[]} samples
 */
export function sumCpu(samples) {
  const seconds = { total: 0 };
  const threads = {};
  let wall = 0;
  for (const s of samples) {
    if (!s.seconds) return { machine: 'n/a', byKind: {}, seconds: null, threads: {} };
    wall += s.wallSeconds ?? 0;
    for (const [k, v] of Object.entries(s.seconds)) seconds[k] = (seconds[k] ?? 0) + v;
    for (const [k, v] of Object.entries(s.threads ?? {})) threads[k] = (threads[k] ?? 0) + v;
  }
  const byKind = {};
  for (const [k, v] of Object.entries(seconds))
    if (k !== 'total') byKind[k] = `${Math.round((100 * v) / wall)}%`;
  // The machine's busy share, weighted by each sample's length.
  const busy = samples.reduce((a, s) => a + parseFloat(s.machine) * (s.wallSeconds ?? 0), 0);
  const machine = wall && Number.isFinite(busy) ? `${Math.round(busy / wall)}%` : 'n/a';
  return { machine, byKind, seconds, threads, wallSeconds: wall };
}

/**
 * Starts a sample; `.end()` returns {machine: '97%', byKind: {network: '45%', ...}} (of one core)
 * and `seconds`: {network: 1.9, ..., total: 5.2}, the CPU seconds each kind used (what a lane's
 * cost per MB is computed from).
 */
export function sampleCpu() {
  let m0;
  let c0;
  const t0 = performance.now();
  try {
    m0 = machine();
    c0 = chromiumTicks();
  } catch {
    return { end: () => ({ machine: 'n/a', byKind: {}, seconds: null, threads: {} }) };
  }
  return {
    end() {
      const seconds = (performance.now() - t0) / 1000;
      const m1 = machine();
      const byKind = {};
      const c1 = chromiumTicks();
      for (const [pid, { kind, ticks }] of c1.by) {
        const before = c0.by.get(pid)?.ticks ?? 0;
        byKind[kind] = (byKind[kind] ?? 0) + (ticks - before);
      }
      const threads = {}; // renderer threads by name: CPU seconds
      for (const [id, { name, ticks }] of c1.threads) {
        const t = (ticks - (c0.threads.get(id)?.ticks ?? 0)) / TICKS_PER_S;
        if (t > 0) threads[name] = (threads[name] ?? 0) + t;
      }
      const pct = (x) => `${Math.round(x)}%`;
      const out = {};
      const cpuSeconds = { total: 0 };
      for (const [k, t] of Object.entries(byKind)) {
        out[k] = pct((100 * t) / TICKS_PER_S / seconds);
        cpuSeconds[k] = t / TICKS_PER_S;
        cpuSeconds.total += t / TICKS_PER_S;
      }
      const total = m1.total - m0.total;
      return {
        machine: total ? pct(100 * (1 - (m1.idle - m0.idle) / total)) : 'n/a',
        byKind: out,
        seconds: cpuSeconds,
        threads,
        wallSeconds: seconds,
      };
    },
  };
}
