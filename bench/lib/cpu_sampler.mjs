// Where the CPU went during a bench run, from /proc (Linux): the whole machine's busy share, and
// the CPU time of Chromium's processes by kind (browser, network service, renderers, GPU). Page
// to page on loopback, every byte crosses both renderers' WebRTC stacks and the network service's
// sockets on the same cores, so throughput ratios are read beside these. Elsewhere it reports
// nothing rather than guess.
import { readdirSync, readFileSync } from 'node:fs';

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

function chromiumTicks() {
  const by = new Map(); // pid -> {kind, ticks}
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const kind = kindOf(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
      if (!kind) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      by.set(pid, { kind, ticks: Number(f[11]) + Number(f[12]) }); // utime + stime
    } catch {
      // the process ended between the listing and the read
    }
  }
  return by;
}

/** Starts a sample; `.end()` returns {machine: '97%', byKind: {network: '45%', ...}} (of one core). */
export function sampleCpu() {
  let m0;
  let c0;
  const t0 = performance.now();
  try {
    m0 = machine();
    c0 = chromiumTicks();
  } catch {
    return { end: () => ({ machine: 'n/a', byKind: {} }) };
  }
  return {
    end() {
      const seconds = (performance.now() - t0) / 1000;
      const m1 = machine();
      const byKind = {};
      for (const [pid, { kind, ticks }] of chromiumTicks()) {
        const before = c0.get(pid)?.ticks ?? 0;
        byKind[kind] = (byKind[kind] ?? 0) + (ticks - before);
      }
      const pct = (x) => `${Math.round(x)}%`;
      const out = {};
      for (const [k, t] of Object.entries(byKind)) out[k] = pct((100 * t) / TICKS_PER_S / seconds);
      const total = m1.total - m0.total;
      return {
        machine: total ? pct(100 * (1 - (m1.idle - m0.idle) / total)) : 'n/a',
        byKind: out,
      };
    },
  };
}
