// Bus benchmark: strict envelope parse + validate through tether/bus (WASM) beside a plain-JS
// implementation of exactly the same checks (bench/bus.bench.mjs: plainParse), and a full bus
// receive (parse, identity binding, history, delivery to a handler) beside JSON.parse + plainParse
// + the handler. Same inputs, same run; ratios are tether / plain JS (above 1 means faster).
//
// Timing: the two sides alternate short rounds and each keeps its best, measured in this
// process's CPU time (process.cpuUsage), so other jobs on a shared machine slow neither side's
// best round much and never one side alone. BUS_BENCH_ROUNDS sets the rounds (default 9; 3 with
// --quick).
//
// Beside each receive row, the limit: what only crossing into WASM costs (the text encoded into
// the module's inbox and one call that finds nothing to do), which no design that keeps the
// decisions in the core can avoid. bench/README.md § bus says where the rest of the time goes.
import { performance } from 'node:perf_hooks';
import { loadBus } from '@tether-rt/tether/bus';
import { loadTetherModule } from '../web/glue/load.js';
import { atLeast } from './lib/targets.mjs';
import { envelopeText as mk } from './lib/bus-envelopes.mjs';

const api = await loadBus();
const mod = await loadTetherModule({}, 'bus'); // the same instance: for the crossing-alone rows
const L = api.limits;
const TYPES = new Set([
  'chat',
  'announce',
  'skill_update',
  'command',
  'command_response',
  'file_offer',
  'file_chunk',
  'file_complete',
  'file_ack',
  'event',
  'ping',
  'pong',
  'ack',
  'history_replay',
  'history_request',
  'handoff',
  'swarm_offer',
  'swarm_manifest_request',
  'swarm_manifest_page',
  'swarm_announce',
  'swarm_request',
  'swarm_chunk',
  'swarm_have',
]);
const KEYS = new Set(['v', 'id', 'type', 'from', 'to', 'topic', 'ts', 'payload']);
const FROM_KEYS = new Set(['streamId', 'role', 'name', 'instanceId']);

// The reference: the envelope rules of agent-bus-notes.md written directly in JS.
function str(v, max, field) {
  if (typeof v !== 'string') return `${field} must be a string`;
  if (v.length === 0) return `${field} empty`;
  if (v.length > max) return `${field} too long`;
  if (v.includes('\0')) return `${field} has NUL`;
  return null;
}
function plainParse(text) {
  if (text.length > L.maxEnvelopeBytes && Buffer.byteLength(text) > L.maxEnvelopeBytes)
    return { ok: false, code: 'too_large' };
  let e;
  try {
    e = JSON.parse(text);
  } catch {
    return { ok: false, code: 'not_json' };
  }
  if (typeof e !== 'object' || e === null || Array.isArray(e))
    return { ok: false, code: 'not_object' };
  for (const k of Object.keys(e)) if (!KEYS.has(k)) return { ok: false, code: 'unknown_field' };
  if (e.v !== 1) return { ok: false, code: 'bad_version' };
  let err = str(e.id, L.maxIdChars, 'id') ?? str(e.type, L.maxTypeChars, 'type');
  if (err) return { ok: false, code: 'bad_field', detail: err };
  if (!TYPES.has(e.type)) return { ok: false, code: 'unknown_type' };
  const f = e.from;
  if (typeof f !== 'object' || f === null || Array.isArray(f))
    return { ok: false, code: 'bad_field' };
  for (const k of Object.keys(f))
    if (!FROM_KEYS.has(k)) return { ok: false, code: 'unknown_field' };
  err =
    str(f.streamId, L.maxStreamIdChars, 'from.streamId') ??
    str(f.role, L.maxRoleChars, 'from.role') ??
    str(f.name, L.maxNameChars, 'from.name') ??
    str(f.instanceId, L.maxInstanceIdChars, 'from.instanceId');
  if (err) return { ok: false, code: 'bad_field', detail: err };
  if (e.to != null && (err = str(e.to, L.maxToChars, 'to')))
    return { ok: false, code: 'bad_field', detail: err };
  if (e.topic != null && (err = str(e.topic, L.maxTopicChars, 'topic')))
    return { ok: false, code: 'bad_field', detail: err };
  if (typeof e.ts !== 'number' || !Number.isFinite(e.ts)) return { ok: false, code: 'not_finite' };
  return {
    ok: true,
    envelope: {
      v: 1,
      id: e.id,
      type: e.type,
      from: f,
      to: e.to ?? null,
      topic: e.topic ?? null,
      ts: e.ts,
      payload: e.payload ?? null,
    },
  };
}

const inputs = [
  ['chat (~200 B)', mk('chat', null, { text: 'build finished, 3 warnings; see the log' })],
  [
    'command (~1 KB)',
    mk('command', 'me', {
      run: 'make test',
      env: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`K${i}`, 'v'.repeat(30)])),
    }),
  ],
  ['swarm_have (~150 B)', mk('swarm_have', 'me', { fileId: 'a'.repeat(64), indexes: [1, 2, 3] })],
  [
    'file_chunk (64 KiB base64)',
    mk('file_chunk', 'me', {
      transferId: 't1',
      index: 3,
      totalChunks: 9,
      data: Buffer.alloc(65536, 7).toString('base64'),
    }),
  ],
];

const ROUNDS = Number(process.env.BUS_BENCH_ROUNDS ?? (process.argv.includes('--quick') ? 3 : 9));
const ROUND_MS = 40;
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

// Calls per second of CPU time in one round of about ROUND_MS.
function round(fn) {
  let n = 0;
  const w0 = performance.now();
  const c0 = cpuMs();
  do {
    for (let i = 0; i < 50; i++) fn();
    n += 50;
  } while (performance.now() - w0 < ROUND_MS);
  return (n / Math.max(cpuMs() - c0, 1e-3)) * 1000;
}

// Alternating rounds of both sides; each side's best.
function race(a, b) {
  for (let i = 0; i < 300; i++) (a(), b()); // warm-up
  let bestA = 0;
  let bestB = 0;
  for (let r = 0; r < ROUNDS; r++) {
    bestA = Math.max(bestA, round(a));
    bestB = Math.max(bestB, round(b));
  }
  return [bestA, bestB];
}

const fmt = (n, d = 0) =>
  Number(n).toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const rows = [];
for (const [name, text] of inputs) {
  const a = api.parseEnvelope(text);
  const b = plainParse(text);
  if (!a.ok || !b.ok || JSON.stringify(a.envelope) !== JSON.stringify(b.envelope))
    throw new Error(`bus bench: implementations disagree on ${name}`);
  const [w, j] = race(
    () => api.parseEnvelope(text),
    () => plainParse(text),
  );
  rows.push([`parse+validate ${name}`, fmt(w), fmt(j), fmt(w / j, 2), '']);
}

// Full receive path: one bus receiving on a transport endpoint, delivering to a handler.
let delivered = 0;
const handlers = [];
const transport = {
  selfId: 'me-origin',
  openPeers: () => ['peer-origin'],
  send: () => true,
  sendBinary: () => false,
  bufferedAmount: () => 0,
  hasBinary: () => false,
  subscribe(h) {
    handlers.push(h);
    return () => {};
  },
  close: async () => {},
};
let lastDelivered = null;
const bus = api.createBus({
  self: { streamId: 'me', role: 'agent', name: 'Me', instanceId: 'i' },
  transport,
  autoTick: false,
  message: (e) => {
    delivered++;
    lastDelivered = e;
  },
});
let plainDelivered = 0;
const onMsg = () => plainDelivered++;
const command4k = mk('command', 'me', {
  run: 'make test',
  env: Object.fromEntries(Array.from({ length: 90 }, (_, i) => [`KEY_${i}`, 'v'.repeat(36)])),
});
// An ack the core reads (correlation by messageId) and so still parses into a DOM.
const ack = mk('ack', 'me', { messageId: 'm-unknown', ok: true });
// The crossing alone: encodeInto WASM memory (a buffer of our own: the glue's inbox must not
// move under it), then one call for a connection the core does not know (it returns at once,
// after writing the status the glue reads).
const idle = new mod.BusCore();
const idleRefused = idle.init(
  JSON.stringify({
    self: { streamId: 'idle', role: 'agent', name: 'I', instanceId: 'i' },
    seed: 1,
  }),
);
if (idleRefused !== '') throw new Error(`bus bench: the idle core refused ${idleRefused}`);
const idleAddress = idle.address();
const staging = new mod.BusFilePlan();
let stagingView = staging.input(1 << 20);
const encoder = new TextEncoder();
const crossing = (text) => {
  if (stagingView.length === 0) stagingView = staging.input(1 << 20); // memory grew
  const n = encoder.encodeInto(text, stagingView).written;
  mod._tether_bus_text(idleAddress, 0xffffffff, n, 0, 0);
};
for (const [name, live] of [
  ['chat', inputs[0][1]],
  ['command 4 KiB', command4k],
  ['ack (read by the core)', ack],
  ['file_chunk 64 KiB', inputs[3][1]],
]) {
  handlers[0].text('peer-origin', live);
  if (JSON.stringify(lastDelivered) !== JSON.stringify(plainParse(live).envelope))
    throw new Error(`bus bench: the bus delivered another envelope for ${name}`);
  const [recv, recvJs] = race(
    () => handlers[0].text('peer-origin', live),
    () => {
      const r = plainParse(live);
      if (r.ok) onMsg(r.envelope);
    },
  );
  // The target (issue 20): a bus receive at least as fast as plain JS's parse-and-check.
  atLeast(`bus receive ${name}: tether / plain JS`, recv / recvJs, 1);
  rows.push([
    `receive ${name} via bus (bind, history, deliver)`,
    fmt(recv),
    fmt(recvJs),
    fmt(recv / recvJs, 2),
    '>= 1.00',
  ]);
  const [limit] = race(
    () => crossing(live),
    () => {},
  );
  rows.push([`  limit: the crossing alone (encodeInto + one call)`, fmt(limit), '', '', '']);
}
bus.close();
idle.delete();
staging.delete();
if (delivered === 0 || plainDelivered === 0) throw new Error('bus bench: nothing was delivered');

const head = ['measure (ops per CPU-s)', 'tether (WASM)', 'plain JS', 'ratio', 'target'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
const line = (cells) =>
  cells
    .map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i])))
    .join('  ');
console.log(
  `\nbus envelopes (Node, one run, best of ${ROUNDS} alternating rounds in CPU time; plain JS applies the same checks without the state machine)`,
);
console.log(line(head));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(line(r));
