#!/usr/bin/env node
// `tether agent ...`: the agent command line (agent-bus-and-swarm.md § Local state and CLI
// boundaries). `join` starts a detached sidecar (web/agent/sidecar.js) for the state dir; the
// other commands either talk to it over its 127.0.0.1 endpoint (peers, send, broadcast, history,
// handoff) or work on the state dir directly (read, notify, receipt, prune-archive, share), so
// mail can be read and pruned with no sidecar running.
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  archiveEntries,
  ensureDirs,
  listRecords,
  planPrune,
  readInbox,
  readRecord,
  stateDirs,
} from './store.js';
import { files, lockHolder, pidAlive, readJson, resolveStateDir, writeJson } from './state.js';
import { validateWakeOptions } from './wake.js';
import { LIMITS, bus, useBus } from './envelope.js';
import { listShare, validShareName } from './share.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const READ_TAKE_MAX = 1000;
const JOIN_WAIT_MS = 15_000;

class UsageError extends Error {}
const fail = (msg) => {
  throw new UsageError(msg);
};

const USAGE = `usage: tether agent <command> [options]   (state dir: --dir, or $TETHER_AGENT_DIR, or ~/.tether/agent)
  join --relay ws://HOST:PORT/ --room ROOM --id ID [--name N] [--role R] [--transport relay|webrtc [--webrtc-bind ADDR]]
       [--wake CMD [--wake-min-interval-ms MS] [--wake-delay-ms MS]]     start the sidecar (reuses saved settings)
  leave                                      stop the sidecar
  status | peers                             the sidecar and the room roster
  send PEER TEXT... [--type T] [--topic T] [--payload-json JSON]   (TEXT "-" reads stdin)
  broadcast TEXT... [--topic T]              best effort, to every peer online now
  read [--take N] [--peek]                   N from 0 to ${READ_TAKE_MAX}; 0 consumes nothing; --peek leaves mail
  notify                                     unread, queued and handoff counts
  history PEER [--count N]                   what PEER can replay to us (at most ${LIMITS.historyMax})
  receipt PEER REQUEST_ID                    acks / command responses for REQUEST_ID (consumes nothing)
  handoff PEER TEXT... [--expires-in 24h]    work kept queued until PEER confirms storage
  handoffs                                   sent handoffs and their states
  prune-archive [--older-than 7d] [--keep N] [--apply]   preview unless --apply
  share add NAME DIR | share rm NAME | share list | share ls NAME [SUBPATH]
  pull PEER SHARE PATH [--to DIR]            one file from PEER's share (never overwrites; progress on stderr)
  swarm offer PATH | swarm fetch FILE_ID [--to DIR] | swarm list     file swarms (chunks from every holder)
options: --dir DIR, --json (machine-readable output)`;

export function parseDuration(flag, s) {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(String(s ?? ''));
  if (!m) fail(`${flag} needs a duration like 500ms, 30s, 15m, 2h or 7d (got '${s}')`);
  const mult = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2]];
  return Number(m[1]) * mult;
}

export function parseCount(flag, s, max) {
  if (!/^\d+$/.test(String(s ?? '')) || Number(s) > max)
    fail(`${flag} must be a whole number from 0 to ${max} (got '${s}')`);
  return Number(s);
}

function msFlag(flag, s) {
  if (s === undefined) return undefined;
  if (!/^\d+$/.test(s))
    fail(`${flag} must be a whole number of milliseconds, 0 or more (got '${s}')`);
  return Number(s);
}

// ---- talking to the sidecar ------------------------------------------------------------------

function endpoint(dir) {
  const ep = readJson(files(dir).endpoint);
  if (!ep || !pidAlive(ep.pid)) {
    fail(
      `no sidecar runs for ${dir}; start one with \`tether agent join --dir ${dir} --relay ws://HOST:PORT/ --room ROOM --id ID\``,
    );
  }
  return ep;
}

export function rpc(dir, cmd, args = {}, ep = endpoint(dir)) {
  const body = JSON.stringify({ cmd, args });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: ep.port,
        path: '/rpc',
        method: 'POST',
        headers: {
          authorization: `Bearer ${ep.token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            reject(
              new Error(
                `the sidecar (pid ${ep.pid}) sent an unreadable reply; see ${files(dir).log}`,
              ),
            );
          }
        });
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('timed out')));
    req.on('error', (err) =>
      reject(
        new Error(
          `cannot reach the sidecar for ${dir} (${err.message}); check ${files(dir).log}, or run \`tether agent leave\` then \`join\``,
        ),
      ),
    );
    req.end(body);
  });
}

async function call(dir, cmd, args) {
  const r = await rpc(dir, cmd, args);
  if (!r.ok) fail(r.error);
  return r;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- commands --------------------------------------------------------------------------------

async function cmdJoin(dir, v, out) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const f = files(dir);
  const saved = readJson(f.config) ?? {};
  if (saved.id && v.id && saved.id !== v.id) {
    fail(
      `${dir} holds the state of '${saved.id}', not '${v.id}'; use another --dir for a second identity`,
    );
  }
  const cfg = { ...saved };
  if (v['webrtc-bind'] !== undefined) cfg.webrtcBind = v['webrtc-bind'];
  for (const k of ['relay', 'room', 'id', 'name', 'role', 'transport'])
    if (v[k] !== undefined) cfg[k] = v[k];
  if (cfg.transport !== undefined && cfg.transport !== 'relay' && cfg.transport !== 'webrtc') {
    fail(
      `--transport is relay (envelopes through the room relay) or webrtc (data channels); got '${cfg.transport}'`,
    );
  }
  if (!cfg.relay || !cfg.room || !cfg.id)
    fail(
      'join needs --relay ws://HOST:PORT/, --room ROOM and --id ID the first time (they are saved in the state dir)',
    );
  if (!/^wss?:\/\//.test(cfg.relay))
    fail(`--relay must be a ws:// or wss:// URL (got '${cfg.relay}')`);
  if (cfg.id.length > LIMITS.streamId || /[\u0000-\u001f]/.test(cfg.id))
    fail(`--id must be at most ${LIMITS.streamId} characters without control characters`);
  if (v.wake !== undefined) {
    cfg.wake = validateWakeOptions({
      command: v.wake,
      minIntervalMs: msFlag('--wake-min-interval-ms', v['wake-min-interval-ms']),
      delayMs: msFlag('--wake-delay-ms', v['wake-delay-ms']),
    });
  } else if (v['wake-min-interval-ms'] !== undefined || v['wake-delay-ms'] !== undefined) {
    fail('--wake-min-interval-ms and --wake-delay-ms need --wake CMD');
  } else if (v['no-wake']) delete cfg.wake;
  const holder = lockHolder(dir);
  if (holder !== null) {
    const st = await rpc(dir, 'status').catch(() => null);
    if (
      st &&
      st.id === cfg.id &&
      st.room === cfg.room &&
      st.relay === cfg.relay &&
      st.transport === (cfg.transport ?? 'relay')
    ) {
      out(
        { ok: true, already: true, pid: holder, id: cfg.id, room: cfg.room, dir },
        `already joined room '${cfg.room}' as '${cfg.id}' (sidecar pid ${holder})`,
      );
      return;
    }
    fail(
      `a sidecar (pid ${holder}) already runs for ${dir}; run \`tether agent leave --dir ${dir}\` first to change its settings`,
    );
  }
  writeJson(f.config, cfg);
  ensureDirs(dir);
  try {
    fs.unlinkSync(f.endpoint);
  } catch {}
  const logFd = fs.openSync(f.log, 'a', 0o600);
  const child = spawn(process.execPath, [path.join(HERE, 'sidecar.js'), '--dir', dir], {
    detached: true,
    stdio: ['ignore', logFd, logFd],
    env: process.env,
  });
  fs.closeSync(logFd);
  let exited = null;
  child.once('exit', (code, sig) => (exited = sig ?? code));
  child.unref();
  const started = Date.now();
  let shown = 0;
  while (true) {
    if (exited !== null) {
      const tail = fs.readFileSync(f.log, 'utf8').trim().split('\n').slice(-5).join('\n');
      fail(`the sidecar exited (${exited}) while starting:\n${tail}\n(full log: ${f.log})`);
    }
    const ep = readJson(f.endpoint);
    if (ep && ep.pid === child.pid) {
      const st = await rpc(dir, 'status', {}, ep).catch(() => null);
      if (st?.connected) {
        out(
          { ok: true, pid: child.pid, id: cfg.id, room: cfg.room, dir, roster: st.roster },
          `joined room '${cfg.room}' as '${cfg.id}' (sidecar pid ${child.pid}; ${st.roster.length} other peer(s) online)`,
        );
        return;
      }
    }
    const waited = Date.now() - started;
    if (waited > JOIN_WAIT_MS) {
      out(
        { ok: true, pid: child.pid, id: cfg.id, room: cfg.room, dir, connected: false },
        `sidecar pid ${child.pid} started but has not reached ${cfg.relay} yet; it keeps retrying (log: ${f.log})`,
      );
      return;
    }
    if (waited - shown >= 2000) {
      shown = waited;
      process.stderr.write(
        `waiting for the sidecar to join '${cfg.room}' via ${cfg.relay}... ${Math.round(waited / 1000)} s\n`,
      );
    }
    await sleep(100);
  }
}

async function cmdLeave(dir, out) {
  const holder = lockHolder(dir);
  if (holder === null) {
    out({ ok: true, running: false }, `no sidecar runs for ${dir}`);
    return;
  }
  await rpc(dir, 'leave').catch(() => null);
  for (let i = 0; i < 100 && pidAlive(holder); i++) await sleep(50);
  if (pidAlive(holder)) {
    process.kill(holder, 'SIGTERM');
    for (let i = 0; i < 60 && pidAlive(holder); i++) await sleep(50);
  }
  if (pidAlive(holder)) fail(`sidecar pid ${holder} did not stop; stop it with \`kill ${holder}\``);
  out({ ok: true, pid: holder }, `left; sidecar pid ${holder} stopped`);
}

function cmdRead(dir, v, out) {
  const take = v.take === undefined ? 50 : parseCount('--take', v.take, READ_TAKE_MAX);
  const dirs = ensureDirs(dir);
  const r = readInbox(dirs, { take, peek: !!v.peek });
  out(
    { ok: true, ...r },
    r.messages.map(formatEnv).join('\n') ||
      (take === 0 ? '(--take 0: nothing read)' : '(no unread mail)'),
  );
}

function formatEnv(m) {
  const e = m.envelope ?? m;
  const p = e.payload;
  const body =
    e.type === 'handoff'
      ? `HANDOFF (expires ${new Date(p.expiresAt).toISOString()}): ${p.request}`
      : typeof p?.text === 'string'
        ? p.text
        : JSON.stringify(p);
  return `[${new Date(e.ts).toISOString()}] ${e.from.streamId}${e.to ? '' : ' (broadcast)'} ${e.type} ${e.id}: ${body}`;
}

function notify(dir) {
  const d = ensureDirs(dir);
  let unread = 0;
  let malformedInbox = 0;
  const handoffsIn = [];
  for (const n of listRecords(d.inbox)) {
    const r = readRecord(d.inbox, n, 'inbox');
    if (!r) malformedInbox++;
    else {
      unread++;
      if (r.envelope.type === 'handoff') handoffsIn.push(r.envelope.id);
    }
  }
  const queuedBy = {};
  let queued = 0;
  let malformedOutbox = 0;
  for (const n of listRecords(d.outbox)) {
    const r = readRecord(d.outbox, n, 'outbox');
    if (!r) malformedOutbox++;
    else {
      queued++;
      queuedBy[r.to] = (queuedBy[r.to] ?? 0) + 1;
    }
  }
  const handoffs = { pending: 0, stored: 0, expired: 0 };
  for (const n of fs.readdirSync(d.handoffsOut)) {
    const r = n.endsWith('.json') ? readJson(path.join(d.handoffsOut, n)) : null;
    if (r && r.kind === 'handoff-sent' && r.state in handoffs) handoffs[r.state]++;
  }
  return {
    ok: true,
    unread,
    unreadHandoffs: handoffsIn.length,
    queued,
    queuedBy,
    malformed: { inbox: malformedInbox, outbox: malformedOutbox },
    handoffs,
    sidecar: lockHolder(dir),
  };
}

function cmdReceipt(dir, peer, id, out) {
  const d = ensureDirs(dir);
  const found = [];
  for (const [where, folder] of [
    ['inbox', d.inbox],
    ['archive', d.archive],
  ]) {
    for (const n of listRecords(folder)) {
      const r = readRecord(folder, n, 'inbox');
      if (!r) continue;
      // The bus core decides whether an envelope reports on the request (ack/command_response).
      const m = bus().matchReceipt(r.envelope, { requestId: id, peer });
      if (!m) continue;
      found.push({
        where,
        type: m.kind,
        id: r.envelope.id,
        ts: r.envelope.ts,
        failed: !m.ok,
        payload: r.envelope.payload,
      });
    }
  }
  // A handoff's "stored" receipt is kept on its sender record.
  for (const n of fs.readdirSync(d.handoffsOut)) {
    const r = n.endsWith('.json') ? readJson(path.join(d.handoffsOut, n)) : null;
    if (r?.kind === 'handoff-sent' && r.envelope?.id === id && r.envelope?.to === peer) {
      found.push({
        where: 'handoffs',
        type: 'handoff',
        id,
        state: r.state,
        storedAt: r.storedAt ?? null,
        failed: r.state === 'expired',
      });
    }
  }
  out(
    { ok: true, peer, requestId: id, receipts: found },
    found.length
      ? found
          .map(
            (f) =>
              `${f.where}: ${f.type} ${f.state ?? (f.failed ? 'FAILED' : 'ok')} ${JSON.stringify(f.payload ?? {})}`,
          )
          .join('\n')
      : `no receipt from '${peer}' for ${id} yet`,
  );
}

function cmdPrune(dir, v, out) {
  const d = ensureDirs(dir);
  const olderThanMs =
    v['older-than'] !== undefined ? parseDuration('--older-than', v['older-than']) : undefined;
  const keep = v.keep !== undefined ? parseCount('--keep', v.keep, 10_000_000) : undefined;
  const entries = archiveEntries(d);
  const malformed = listRecords(d.archive).length - entries.length;
  const plan = planPrune(entries, { olderThanMs, keep });
  const bytes = plan.reduce((s, e) => s + e.size, 0);
  const limits = olderThanMs !== undefined || keep !== undefined;
  // Receiver dedup markers are only needed while their sender may still retry, i.e. until the
  // handoff's expiresAt; a day after that they are garbage (kept a day for clock skew).
  const now = Date.now();
  const staleMarkers = fs.readdirSync(d.handoffsIn).filter((n) => {
    const m = n.endsWith('.json') ? readJson(path.join(d.handoffsIn, n)) : null;
    return (
      m?.kind === 'handoff-received' &&
      typeof m.expiresAt === 'number' &&
      m.expiresAt + 86_400_000 < now
    );
  });
  if (!v.apply) {
    const first = entries[0];
    out(
      {
        ok: true,
        preview: true,
        archived: entries.length,
        malformed,
        wouldDelete: plan.length,
        bytes,
        names: plan.map((e) => e.name),
        staleHandoffMarkers: staleMarkers.length,
      },
      `${entries.length} archived record(s)${first ? `, oldest ${new Date(first.receivedAt).toISOString()}` : ''}; ` +
        (limits
          ? `would delete ${plan.length} (${bytes} bytes). Add --apply to delete them.`
          : 'preview only: pass --older-than 7d and/or --keep N, then --apply.') +
        (malformed ? ` ${malformed} malformed record(s) are left alone.` : '') +
        ' Deleting receipts deletes that evidence.',
    );
    return;
  }
  if (!limits)
    fail(
      'prune-archive --apply needs a limit: --older-than DURATION and/or --keep N (run without --apply to preview)',
    );
  let deleted = 0;
  for (const e of plan) {
    try {
      fs.unlinkSync(path.join(d.archive, e.name));
      deleted++;
    } catch {}
  }
  let markers = 0;
  for (const n of staleMarkers) {
    try {
      fs.unlinkSync(path.join(d.handoffsIn, n));
      markers++;
    } catch {}
  }
  out(
    {
      ok: true,
      preview: false,
      deleted,
      bytes,
      kept: entries.length - deleted,
      malformed,
      handoffMarkers: markers,
    },
    `deleted ${deleted} archived record(s) (${bytes} bytes); ${entries.length - deleted} kept${markers ? `; ${markers} expired handoff marker(s) removed` : ''}`,
  );
}

function cmdShare(dir, pos, out) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = stateDirs(dir).shares;
  const shares = readJson(file) ?? {};
  const [sub, name, arg] = pos;
  if (sub === 'add') {
    if (!validShareName(name))
      fail('share add NAME DIR: NAME is letters, digits, ".", "_" or "-" (at most 64)');
    if (!arg) fail('share add NAME DIR: give the folder to share');
    let real;
    try {
      real = fs.realpathSync(arg);
    } catch (err) {
      fail(`cannot share ${arg}: ${err.code === 'ENOENT' ? 'it does not exist' : err.code}`);
    }
    if (!fs.statSync(real).isDirectory()) fail(`cannot share ${arg}: it is not a folder`);
    shares[name] = real;
    writeJson(file, shares);
    out({ ok: true, name, path: real }, `sharing ${real} as '${name}'`);
  } else if (sub === 'rm') {
    if (!(name in shares)) fail(`no share named '${name}'; see \`tether agent share list\``);
    delete shares[name];
    writeJson(file, shares);
    out({ ok: true, name }, `stopped sharing '${name}'`);
  } else if (sub === 'list' || sub === undefined) {
    out(
      { ok: true, shares },
      Object.entries(shares)
        .map(([n, p]) => `${n}\t${p}`)
        .join('\n') || '(no shares)',
    );
  } else if (sub === 'ls') {
    if (!(name in shares)) fail(`no share named '${name}'; see \`tether agent share list\``);
    const r = listShare(shares[name], arg ?? '');
    if (r.error) fail(r.error);
    out(
      { ok: true, name, ...r },
      [
        ...r.entries.map((e) => (e.type === 'dir' ? `${e.path}/` : `${e.path}\t${e.size}`)),
        ...(r.omitted.length
          ? [
              `(${r.omitted.length} entr${r.omitted.length === 1 ? 'y' : 'ies'} omitted: ${r.omitted.map((o) => `${o.path}: ${o.reason}`).join('; ')})`,
            ]
          : []),
      ].join('\n'),
    );
  } else fail(`unknown share command '${sub}': add, rm, list or ls`);
}

async function cmdSwarm(dir, v, pos, out) {
  const [sub, arg] = pos;
  if (sub === 'offer') {
    if (!arg) fail('swarm offer PATH: give the file to offer');
    process.stderr.write(`hashing ${arg}...\n`);
    const r = await call(dir, 'swarm-offer', { path: path.resolve(arg) });
    return out(
      r,
      `offering ${r.name} (${r.size} bytes) as ${r.fileId}\nothers fetch it with: tether agent swarm fetch ${r.fileId}`,
    );
  }
  if (sub === 'list') {
    const r = await call(dir, 'swarm-list');
    return out(
      r,
      Object.entries(r.offers)
        .map(([id, o]) => `${id}\t${o.size}\t${o.name}`)
        .join('\n') || '(no offers seen)',
    );
  }
  if (sub === 'fetch') {
    if (!arg) fail('swarm fetch FILE_ID [--to DIR]: give the file id from `swarm offer`');
    const to = path.resolve(v.to ?? '.');
    await call(dir, 'swarm-fetch', { fileId: arg, to });
    let shown = '';
    // One line per change: the file, then each peer's share of it.
    const progressLine = (p, have, bytes) =>
      `${p.name}: ${have}/${p.total} chunks, ${bytes}/${p.size} bytes (${Math.floor((100 * have) / Math.max(1, p.total))}%)` +
      Object.entries(p.peers ?? {})
        .map(([peer, c]) => ` | ${peer}: ${c.received ?? 0} B from, ${c.served ?? 0} B to`)
        .join('');
    for (;;) {
      const st = await call(dir, 'swarm-status', { fileId: arg });
      if (st.state === 'done') {
        // A fetch faster than one poll still ends its progress display at 100%.
        const last = st.progress ? progressLine(st.progress, st.progress.total, st.progress.size) : '';
        if (last && last !== shown) process.stderr.write(`${last}\n`);
        return out(
          { ok: true, ...st.result, path: path.join(to, st.result.name) },
          `saved ${path.join(to, st.result.name)} (${st.result.size} bytes, sha256 verified${st.result.resumed ? ', resumed' : ''})`,
        );
      }
      if (st.state === 'failed') fail(st.error);
      const p = st.progress;
      const line = p ? progressLine(p, p.have, p.bytes) : `waiting for an offer of ${arg}...`;
      if (line !== shown) process.stderr.write(`${line}\n`);
      shown = line;
      await sleep(200);
    }
  }
  fail(`unknown swarm command '${sub ?? ''}': offer PATH, fetch FILE_ID [--to DIR] or list`);
}

// ---- entry -----------------------------------------------------------------------------------

const OPTIONS = {
  dir: { type: 'string' },
  json: { type: 'boolean' },
  relay: { type: 'string' },
  room: { type: 'string' },
  id: { type: 'string' },
  name: { type: 'string' },
  role: { type: 'string' },
  transport: { type: 'string' },
  'webrtc-bind': { type: 'string' },
  wake: { type: 'string' },
  'no-wake': { type: 'boolean' },
  'wake-min-interval-ms': { type: 'string' },
  'wake-delay-ms': { type: 'string' },
  take: { type: 'string' },
  peek: { type: 'boolean' },
  type: { type: 'string' },
  topic: { type: 'string' },
  'payload-json': { type: 'string' },
  count: { type: 'string' },
  'expires-in': { type: 'string' },
  'older-than': { type: 'string' },
  keep: { type: 'string' },
  apply: { type: 'boolean' },
  to: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

function payloadFrom(v, words, what) {
  if (v['payload-json'] !== undefined) {
    try {
      return JSON.parse(v['payload-json']);
    } catch {
      fail('--payload-json must be valid JSON');
    }
  }
  // "-" reads the text from stdin (long text does not fit in argv).
  const text =
    words.length === 1 && words[0] === '-' ? fs.readFileSync(0, 'utf8') : words.join(' ');
  if (!text) fail(`${what}: give the text to send (or "-" to read it from stdin)`);
  return { text };
}

export async function main(argv) {
  if (argv[0] !== 'agent') fail(`tether: the only command group is 'agent'\n${USAGE}`);
  let parsed;
  try {
    parsed = parseArgs({
      args: argv.slice(1),
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    fail(`${err.message}\n${USAGE}`);
  }
  const v = parsed.values;
  const [cmd, ...pos] = parsed.positionals;
  if (v.help || !cmd) {
    console.log(USAGE);
    return;
  }
  const dir = resolveStateDir(v.dir);
  const out = (obj, human) => console.log(v.json ? JSON.stringify(obj) : human);
  // Records on disk are checked by the C++ bus core when this build has it (as the sidecar does).
  if (['read', 'notify', 'receipt', 'prune-archive'].includes(cmd) && !(await useBus()))
    fail('tether/bus (the WASM module) could not be loaded; build it with `make wasm`');
  switch (cmd) {
    case 'join':
      return cmdJoin(dir, v, out);
    case 'leave':
      return cmdLeave(dir, out);
    case 'status': {
      const r = await call(dir, 'status');
      return out(
        r,
        `'${r.id}' in room '${r.room}' via ${r.relay}: ${r.connected ? 'connected' : 'reconnecting'}, ${r.roster.length} peer(s); sidecar pid ${r.pid}`,
      );
    }
    case 'peers': {
      const r = await call(dir, 'peers');
      return out(
        r,
        r.peers
          .map(
            (p) =>
              `${p.id}\t${p.open ? 'online' : 'offline'}\t${p.role ?? '-'}\t${p.skills.join(',') || '-'}`,
          )
          .join('\n') || '(nobody else in the room)',
      );
    }
    case 'send': {
      const [to, ...words] = pos;
      if (!to) fail('send PEER TEXT...: name the peer (see `tether agent peers`)');
      const r = await call(dir, 'send', {
        to,
        type: v.type,
        topic: v.topic,
        payload: payloadFrom(v, words, 'send'),
      });
      return out(
        r,
        r.state === 'sent'
          ? `sent ${r.id} to ${to}`
          : `queued ${r.id} for ${to} (offline or not ready; kept on disk until it is accepted)`,
      );
    }
    case 'broadcast': {
      const r = await call(dir, 'broadcast', {
        topic: v.topic,
        payload: payloadFrom(v, pos, 'broadcast'),
      });
      return out(
        r,
        `broadcast ${r.id} to ${r.delivered.length} peer(s)${r.missed.length ? `; missed (best effort): ${r.missed.join(', ')}` : ''}`,
      );
    }
    case 'read':
      return cmdRead(dir, v, out);
    case 'notify': {
      const r = notify(dir);
      return out(
        r,
        `${r.unread} unread${r.unreadHandoffs ? ` (${r.unreadHandoffs} handoff)` : ''}, ${r.queued} queued${
          r.queued
            ? ` (${Object.entries(r.queuedBy)
                .map(([p, n]) => `${p}: ${n}`)
                .join(', ')})`
            : ''
        }; handoffs sent: ${r.handoffs.pending} pending, ${r.handoffs.stored} stored, ${r.handoffs.expired} expired${r.malformed.inbox + r.malformed.outbox ? `; ${r.malformed.inbox + r.malformed.outbox} malformed record(s) skipped` : ''}${r.sidecar ? '' : '; no sidecar running'}`,
      );
    }
    case 'history': {
      const [peer] = pos;
      if (!peer) fail('history PEER: name the peer to ask');
      const count =
        v.count === undefined ? undefined : parseCount('--count', v.count, LIMITS.historyMax);
      const r = await call(dir, 'history', { peer, count });
      return out(r, r.replayed.map(formatEnv).join('\n') || '(nothing new to replay)');
    }
    case 'receipt': {
      const [peer, id] = pos;
      if (!peer || !id) fail('receipt PEER REQUEST_ID: both are needed');
      return cmdReceipt(dir, peer, id, out);
    }
    case 'handoff': {
      const [to, ...words] = pos;
      if (!to || !words.length) fail('handoff PEER TEXT...: name the peer and the work');
      const expiresInMs =
        v['expires-in'] === undefined
          ? LIMITS.handoffMaxLifetimeMs
          : parseDuration('--expires-in', v['expires-in']);
      if (expiresInMs <= 0 || expiresInMs > LIMITS.handoffMaxLifetimeMs)
        fail('--expires-in must be more than 0 and at most 24h');
      const request =
        words.length === 1 && words[0] === '-' ? fs.readFileSync(0, 'utf8') : words.join(' ');
      if (Buffer.byteLength(JSON.stringify(request)) > LIMITS.handoffRequestBytes)
        fail(
          `the handoff text is over ${LIMITS.handoffRequestBytes} bytes as a JSON string; put the detail in a shared file and hand off its path`,
        );
      const r = await call(dir, 'handoff', { to, request, expiresInMs });
      return out(
        r,
        `handoff ${r.id} queued for ${to} until it confirms storage or ${new Date(r.expiresAt).toISOString()}${r.peerReady ? '' : ` (no current handoff-v1 announcement from ${to} yet)`}`,
      );
    }
    case 'handoffs': {
      const r = await call(dir, 'handoffs');
      return out(
        r,
        r.handoffs.map((h) => `${h.id}\t${h.to}\t${h.state}\tsends=${h.sends}`).join('\n') ||
          '(no handoffs sent)',
      );
    }
    case 'pull': {
      const [peer, share, rel] = pos;
      if (!peer || !share || !rel)
        fail('pull PEER SHARE PATH [--to DIR]: name the peer, its share and the file');
      const to = path.resolve(v.to ?? '.');
      const r = await call(dir, 'pull', { peer, share, path: rel, to });
      let shown = '';
      const progress = (received, size) =>
        `pull ${share}/${rel}: ${received} / ${size} bytes (${Math.floor((100 * received) / Math.max(1, size))}%)`;
      for (;;) {
        const st = await call(dir, 'pull-status', { id: r.pull });
        if (st.state === 'done') {
          // A pull faster than one poll still ends its progress display at 100%.
          const last = progress(st.size, st.size);
          if (last !== shown) process.stderr.write(`${last}\n`);
          return out(st, `saved ${st.savedPath} (${st.size} bytes, sha256 ${st.sha256})`);
        }
        if (st.state === 'failed') fail(st.error);
        const line = st.size ? progress(st.received, st.size) : `pull ${share}/${rel}: waiting for ${peer}`;
        if (line !== shown) process.stderr.write(`${line}\n`);
        shown = line;
        await sleep(200);
      }
    }
    case 'swarm':
      return cmdSwarm(dir, v, pos, out);
    case 'prune-archive':
      return cmdPrune(dir, v, out);
    case 'share':
      return cmdShare(dir, pos, out);
    default:
      fail(`unknown command '${cmd}'\n${USAGE}`);
  }
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (err) => {
      console.error(
        err instanceof UsageError ? `tether agent: ${err.message}` : (err.stack ?? String(err)),
      );
      process.exit(err instanceof UsageError ? 2 : 1);
    },
  );
}
