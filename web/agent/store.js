// The agent's on-disk state (agent-bus-and-swarm.md § Delivery semantics, § Local state and CLI
// boundaries): inbox, outbox, archive and handoff records, one JSON file per record.
//
// - Every write is write-to-temp + rename in the same directory, so a reader never sees half a
//   record and a crash leaves either the old state or the new one.
// - Record names are `<seq>-<hash>.json`: seq (16 digits, monotonic per writer) gives order, hash
//   covers sender identity + message id, so a resend of one id lands on one name.
// - A read claims a record by renaming it from inbox/ into archive/. rename() is atomic: of two
//   concurrent readers exactly one succeeds, and the other moves on (ENOENT).
// - A record that does not parse or does not match its own name's claims is malformed: it stays
//   on disk untouched, is skipped, and is not counted.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { checkEnvelope, handoffShapeOk, recordHash } from './envelope.js';

export const RECORD_MAX_BYTES = 1024 * 1024; // a record bigger than this is not ours: malformed
const NAME_RE = /^(\d{16})-([0-9a-f]{32})\.json$/;

export function stateDirs(dir) {
  return {
    root: dir,
    inbox: path.join(dir, 'inbox'),
    archive: path.join(dir, 'archive'),
    outbox: path.join(dir, 'outbox'),
    handoffsOut: path.join(dir, 'handoffs', 'sent'),
    handoffsIn: path.join(dir, 'handoffs', 'received'),
    shares: path.join(dir, 'shares.json'),
  };
}

export function ensureDirs(dir) {
  const d = stateDirs(dir);
  for (const k of ['inbox', 'archive', 'outbox', 'handoffsOut', 'handoffsIn'])
    fs.mkdirSync(d[k], { recursive: true, mode: 0o700 });
  return d;
}

export function writeAtomic(file, data, { exclusive = false, mode = 0o600 } = {}) {
  const tmp = path.join(
    path.dirname(file),
    `.tmp-${process.pid}-${randomBytes(6).toString('hex')}`,
  );
  const fd = fs.openSync(tmp, 'wx', mode);
  try {
    fs.writeSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    if (exclusive) {
      // link() fails with EEXIST instead of replacing: the final name is taken exactly once.
      fs.linkSync(tmp, file);
      fs.unlinkSync(tmp);
    } else {
      fs.renameSync(tmp, file);
    }
  } catch (err) {
    try {
      fs.unlinkSync(tmp);
    } catch {}
    throw err;
  }
}

let lastSeq = 0;
export function nextSeq() {
  lastSeq = Math.max(Date.now() * 1000, lastSeq + 1);
  return String(lastSeq).padStart(16, '0');
}

export function recordName(env, seq = nextSeq()) {
  return `${seq}-${recordHash(env)}.json`;
}

/** The hash part of a record name, or null for names that are not ours (temp files etc.). */
export function nameHash(name) {
  const m = NAME_RE.exec(name);
  return m ? m[2] : null;
}

/** Record names in `dir`, oldest first; temp files and foreign names are left alone. */
export function listRecords(dir) {
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    if (err.code === 'ENOENT') return [];
    throw err;
  }
  return names.filter((n) => NAME_RE.test(n)).sort();
}

/**
 * Reads and validates one record. kind: 'inbox' | 'outbox'. Returns the record, or null when it is
 * malformed or gone. Outbox records must agree with their envelope (recipient, type, id), and
 * every record's name must carry its envelope's hash.
 */
export function readRecord(dir, name, kind) {
  const file = path.join(dir, name);
  let text;
  try {
    const st = fs.statSync(file);
    if (!st.isFile() || st.size > RECORD_MAX_BYTES) return null;
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  let rec;
  try {
    rec = JSON.parse(text);
  } catch {
    return null;
  }
  if (!rec || typeof rec !== 'object' || rec.v !== 1 || rec.kind !== kind) return null;
  const c = checkEnvelope(rec.envelope);
  if (!c.ok) return null;
  const env = rec.envelope;
  if (nameHash(name) !== recordHash(env)) return null;
  if (kind === 'outbox') {
    if (
      rec.to !== env.to ||
      rec.type !== env.type ||
      rec.id !== env.id ||
      typeof env.to !== 'string'
    )
      return null;
  }
  if (kind === 'inbox' && env.type === 'handoff' && !handoffShapeOk(env)) return null;
  return rec;
}

export function summarizeDir(dir, kind) {
  let valid = 0;
  let malformed = 0;
  for (const n of listRecords(dir)) {
    if (readRecord(dir, n, kind)) valid++;
    else malformed++;
  }
  return { valid, malformed };
}

/**
 * Reads the inbox. take: how many records to return (0 = none, nothing consumed). peek: return
 * them without consuming. Otherwise each returned record was claimed by this call (renamed into
 * archive/); records another reader claimed first are skipped.
 */
export function readInbox(dirs, { take, peek = false }) {
  const out = [];
  let skipped = 0;
  let lost = 0;
  if (take === 0) return { messages: out, skipped, lost };
  for (const name of listRecords(dirs.inbox)) {
    if (out.length >= take) break;
    const rec = readRecord(dirs.inbox, name, 'inbox');
    if (!rec) {
      if (fs.existsSync(path.join(dirs.inbox, name))) skipped++;
      continue;
    }
    if (!peek) {
      try {
        fs.renameSync(path.join(dirs.inbox, name), path.join(dirs.archive, name));
      } catch (err) {
        if (err.code === 'ENOENT') {
          lost++; // another reader claimed it between our read and our rename
          continue;
        }
        throw err;
      }
    }
    const m = { file: name, receivedAt: rec.receivedAt, envelope: rec.envelope };
    // A file a peer sent us unasked (web/agent/inbox-files.js): where it was saved.
    if (rec.received && typeof rec.received === 'object') m.received = rec.received;
    out.push(m);
  }
  return { messages: out, skipped, lost };
}

/** Archive records that prune-archive may delete, oldest first: valid inbox-kind records only. */
export function archiveEntries(dirs) {
  const out = [];
  for (const name of listRecords(dirs.archive)) {
    const rec = readRecord(dirs.archive, name, 'inbox');
    if (!rec) continue;
    let size = 0;
    try {
      size = fs.statSync(path.join(dirs.archive, name)).size;
    } catch {
      continue;
    }
    out.push({
      name,
      receivedAt: typeof rec.receivedAt === 'number' ? rec.receivedAt : 0,
      size,
      type: rec.envelope.type,
    });
  }
  return out;
}

/**
 * Plans a prune: entries older than `olderThanMs` and/or beyond the newest `keep`. With neither
 * limit nothing is selected (the preview only summarizes).
 */
export function planPrune(entries, { olderThanMs, keep, now = Date.now() }) {
  const selected = new Set();
  if (olderThanMs !== undefined)
    for (const e of entries) if (now - e.receivedAt > olderThanMs) selected.add(e.name);
  if (keep !== undefined) {
    const newestFirst = [...entries].sort((a, b) => (a.name < b.name ? 1 : -1));
    for (const e of newestFirst.slice(keep)) selected.add(e.name);
  }
  return entries.filter((e) => selected.has(e.name));
}
