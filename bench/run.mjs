// `make bench`: data-frame encode and decode throughput for 200 B, 4 KiB and 1 MiB payloads, in
// one run, for the native core, the WASM core called from Node through web/glue/wire.js, and a
// plain-JS DataView codec (bench/plain_js_wire.mjs). The ratios are the point: absolute MB/s on a
// shared 2-core machine are noisy, ratios from the same run much less so.
//
// Timing: every (size, op) case runs WASM and plain JS in alternating rounds and keeps each one's
// best round, so a burst of load from another process hurts both sides alike rather than one.
// Nothing here asserts a speed; the correctness checks below only compare bytes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { gzipSync } from 'node:zlib';

import { loadWire } from '../web/glue/wire.js';
import * as plain from './plain_js_wire.mjs';

const root = new URL('../', import.meta.url);
const nativeBin = new URL('build/native/tether_bench_wire_native', root);
const wasmFile = new URL('build/wasm/tether.wasm', root);

const SIZES = [200, 4096, 1 << 20];
const ROUNDS = 5;
// Seconds per implementation per case: 12 cases x 2 implementations x 1.2 s, plus native and
// warm-up, keeps the whole run near 40 s.
const CASE_SECONDS = Number(process.env.BENCH_CASE_SECONDS ?? 1.2);
const NATIVE_CASE_SECONDS = Number(process.env.BENCH_NATIVE_SECONDS ?? 0.6);
// A stream chunk holds this many bytes of back-to-back frames (at least one frame): about what a
// WebTransport reader hands over at once on a busy reliable stream.
const STREAM_CHUNK_BYTES = 64 * 1024;
// The "split" rows push the same bytes in reads of this size, which cut frames anywhere, as
// network reads do.
const SPLIT_READ_BYTES = 16000;

// --- status line ------------------------------------------------------------------------------
const tty = process.stderr.isTTY;
function status(text) {
  if (tty) process.stderr.write(`\r\x1b[K[bench] ${text}`);
  else process.stderr.write(`[bench] ${text}\n`);
}
function clearStatus() {
  if (tty) process.stderr.write('\r\x1b[K');
}

// --- timing -----------------------------------------------------------------------------------
const now = () => performance.now() / 1000;
let sink = 0; // results feed this so the engine cannot drop the work

// Finds a batch size that takes about 10 ms, warming the JIT on the way.
function calibrate(fn) {
  let n = 1;
  for (;;) {
    const t0 = now();
    for (let i = 0; i < n; i++) sink += fn(i);
    const t = now() - t0;
    if (t > 0.01 || n >= 1 << 24) return Math.max(1, Math.round((n * 0.01) / Math.max(t, 1e-9)));
    n *= 4;
  }
}

// Runs batches for `seconds`; returns calls per second.
function round(fn, batch, seconds) {
  let calls = 0;
  const t0 = now();
  let t = 0;
  do {
    for (let i = 0; i < batch; i++) sink += fn(calls + i);
    calls += batch;
    t = now() - t0;
  } while (t < seconds);
  return calls / t;
}

// Alternates rounds of each implementation; returns each one's best MB/s.
function race(impls, bytesPerCall) {
  const batches = impls.map((impl) => calibrate(impl.fn));
  const best = impls.map(() => 0);
  for (let r = 0; r < ROUNDS; r++) {
    impls.forEach((impl, k) => {
      const rate = round(impl.fn, batches[k], CASE_SECONDS / ROUNDS);
      best[k] = Math.max(best[k], (rate * bytesPerCall) / 1e6);
    });
  }
  return best;
}

// --- inputs -----------------------------------------------------------------------------------
function payloadOf(size) {
  const p = new Uint8Array(size);
  for (let i = 0; i < size; i++) p[i] = (i * 31) & 0xff; // the same bytes as wire_native.cpp
  return p;
}
// The header wire_native.cpp uses; seq varies per call as it does there.
const headerFor = (seq) => ({ ch: 'camera', seq, ts: 1752576000.5, delivery: 'latest' });

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// --- native -----------------------------------------------------------------------------------
function runNative() {
  status('native (build/native/tether_bench_wire_native)');
  const r = spawnSync(nativeBin.pathname, [String(NATIVE_CASE_SECONDS)], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    throw new Error(`native bench failed: ${r.error?.message ?? r.stderr}. Run \`make native\`.`);
  }
  const bySize = new Map();
  for (const line of r.stdout.trim().split('\n')) {
    const row = JSON.parse(line);
    bySize.set(row.payload, row);
  }
  return bySize;
}

// --- one payload size ---------------------------------------------------------------------------
function benchSize(wire, size) {
  const payload = payloadOf(size);
  const frame = plain.encodeDataFrame(headerFor(1), payload);

  // The two encoders must agree byte for byte, and every decoder must read the frame back.
  const viaWasm = wire.encodeDataFrame(headerFor(1), payload);
  assert.ok(viaWasm.ok);
  assert.deepEqual(viaWasm.bytes, frame);
  const decoded = wire.decodeDataFrame(frame);
  assert.ok(decoded.ok);
  assert.deepEqual(decoded.header, headerFor(1));
  assert.deepEqual(decoded.payload, payload);

  const perChunk = Math.max(1, Math.floor(STREAM_CHUNK_BYTES / frame.length));
  const chunk = concat(
    Array.from({ length: perChunk }, (_, i) => plain.encodeDataFrame(headerFor(i), payload)),
  );
  const reads = [];
  for (let at = 0; at < chunk.length; at += SPLIT_READ_BYTES) {
    reads.push(chunk.subarray(at, at + SPLIT_READ_BYTES));
  }
  const wasmStream = new wire.DataFrameStream();
  const plainStream = new plain.DataFrameStream();
  const pushAll = (stream, parts) => parts.reduce((n, p) => n + stream.push(p).frames.length, 0);
  const plainPushAll = (stream, parts) => parts.reduce((n, p) => n + stream.push(p).length, 0);
  const check = wasmStream.push(chunk);
  assert.equal(check.error, null);
  assert.equal(check.frames.length, perChunk);
  assert.deepEqual(check.frames.at(-1).payload, payload);
  assert.equal(plainStream.push(chunk).length, perChunk);
  assert.equal(pushAll(wasmStream, reads), perChunk);
  assert.equal(plainPushAll(plainStream, reads), perChunk);

  const rows = [];
  const cases = [
    {
      op: 'encode',
      bytes: frame.length,
      wasm: (i) => wire.encodeDataFrame(headerFor(i), payload).bytes.length,
      js: (i) => plain.encodeDataFrame(headerFor(i), payload).length,
    },
    {
      op: 'decode',
      bytes: frame.length,
      wasm: () => wire.decodeDataFrame(frame).payload.length,
      js: () => plain.decodeDataFrame(frame).payload.length,
    },
    {
      op: `stream x${perChunk}`,
      bytes: chunk.length,
      wasm: () => wasmStream.push(chunk).frames.length,
      js: () => plainStream.push(chunk).length,
    },
    {
      op: `split x${perChunk}`,
      bytes: chunk.length,
      native: false, // the native binary has no counterpart
      wasm: () => pushAll(wasmStream, reads),
      js: () => plainPushAll(plainStream, reads),
    },
  ];
  for (const c of cases) {
    status(`${label(size)} ${c.op}: wasm vs plain JS, ${ROUNDS} alternating rounds`);
    const [wasm, js] = race(
      [
        { name: 'wasm', fn: c.wasm },
        { name: 'js', fn: c.js },
      ],
      c.bytes,
    );
    rows.push({ size, op: c.op, hasNative: c.native !== false, wasm, js });
  }
  wasmStream.close();
  return rows;
}

// --- report -----------------------------------------------------------------------------------
function label(size) {
  return size >= 1 << 20 ? `${size >> 20} MiB` : size >= 1024 ? `${size >> 10} KiB` : `${size} B`;
}
const mbs = (v) => (v === undefined ? '-' : v >= 100 ? v.toFixed(0) : v.toFixed(1));
const ratio = (a, b) => (a === undefined ? '-' : `${(a / b).toFixed(2)}x`);

function printTable(rows, native) {
  const head = ['size', 'op', 'native MB/s', 'wasm MB/s', 'plain-JS MB/s', 'wasm/js', 'native/js'];
  const lines = rows.map((r) => {
    // The native binary measures one decoder path (a DataStreamDecoder fed one whole frame per
    // call); it stands beside the decode and stream rows.
    const n = r.hasNative ? native.get(r.size) : undefined;
    const nat = r.op === 'encode' ? n?.encodeMBs : n?.decodeMBs;
    return [
      label(r.size),
      r.op,
      mbs(nat),
      mbs(r.wasm),
      mbs(r.js),
      ratio(r.wasm, r.js),
      ratio(nat, r.js),
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(fmt(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(fmt(l));
}

async function main() {
  const started = now();
  console.log(
    `tether bench: node ${process.version}, ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const wasmBytes = readFileSync(wasmFile);
  const native = runNative();
  status('loading build/wasm/tether.wasm');
  const wire = await loadWire();
  const rows = [];
  for (const size of SIZES) rows.push(...benchSize(wire, size));
  clearStatus();

  printTable(rows, native);
  const gzipped = gzipSync(wasmBytes, { level: 9 }).length;
  console.log(`\ntether.wasm: ${wasmBytes.length} bytes raw, ${gzipped} bytes gzip -9`);
  console.log(
    [
      'MB = 10^6 bytes of frame (prefix + header + payload). Best of ' +
        ROUNDS +
        ' alternating rounds.',
      `stream: one push() of a chunk of xN back-to-back frames (~${STREAM_CHUNK_BYTES >> 10} KiB);`,
      `  split: the same bytes pushed in ${SPLIT_READ_BYTES}-byte reads that cut frames anywhere.`,
      'native: one DataStreamDecoder fed one whole frame per call, beside every decode row.',
      'Plain JS checks only lengths and JSON syntax (no UTF-8 strictness, header fields, bounds or',
      '  depth). Both sides return payloads as views of the input where it held the whole frame;',
      '  the core validates every header.',
      `Finished in ${(now() - started).toFixed(1)} s (sink ${sink > 0 ? 'ok' : 'empty'}).`,
    ].join('\n'),
  );
}

await main();
