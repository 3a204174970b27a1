// The disk outbox (agent-bus-and-swarm.md § Delivery semantics): a direct message stays in
// outbox/ (envelope id and sender identity intact across restarts) until the transport accepts
// it, per peer and in order; a blocked peer blocks nobody else. Malformed records are skipped
// and left on disk.
import fs from 'node:fs';
import path from 'node:path';
import { makeEnvelope } from '../envelope.js';
import { listRecords, readRecord, recordName, writeAtomic } from '../store.js';

/** Every well-formed queued record, oldest first: {name, file, rec}. */
export function queuedRecords(dirs) {
  const out = [];
  for (const name of listRecords(dirs.outbox)) {
    const rec = readRecord(dirs.outbox, name, 'outbox');
    if (rec) out.push({ name, file: path.join(dirs.outbox, name), rec });
  }
  return out;
}

/**
 * Removes queued messages: the given ids, or every one for `peer`. With a sidecar running this
 * runs inside it (between flushes, so a message is either sent or dropped, never both).
 * @returns {{ok: true, dropped: string[], names: string[]} | {ok: false, error: string}} `dropped`:
 *   the message ids; `names`: their record names (the sidecar's per-peer index drops them)
 */
export function dropQueued(dirs, { ids = [], peer }) {
  const all = queuedRecords(dirs);
  const missing = ids.filter((id) => !all.some((q) => q.rec.id === id));
  if (missing.length)
    return {
      ok: false,
      error: `nothing queued with id ${missing.join(', ')} (sent already, or a typo?); \`tether agent outbox\` lists what waits`,
    };
  const pick =
    peer !== undefined
      ? all.filter((q) => q.rec.to === peer)
      : all.filter((q) => ids.includes(q.rec.id));
  if (peer !== undefined && !pick.length)
    return { ok: false, error: `nothing is queued for '${peer}'` };
  const dropped = [];
  for (const q of pick) {
    try {
      fs.unlinkSync(q.file);
      dropped.push(q.rec.id);
    } catch (err) {
      if (err.code !== 'ENOENT') throw err;
    }
  }
  return { ok: true, dropped, names: pick.map((q) => q.name) };
}

export class Outbox {
  /**
   * @param {{dirs: ReturnType<typeof import('../store.js').stateDirs>, from: object,
   *   whyNotNow?: (peer: string) => string | null}} o
   *   whyNotNow: what keeps a message to `peer` from leaving now (for the queued answer)
   */
  constructor({ dirs, from, whyNotNow = () => null }) {
    this.dirs = dirs;
    this.from = from;
    this.whyNotNow = whyNotNow;
    this.bus = null;
    this.transport = null;
    // Per-peer index (record names, oldest first), so a flush touches only that peer's backlog.
    this.byPeer = new Map();
    for (const n of listRecords(dirs.outbox)) {
      const rec = readRecord(dirs.outbox, n, 'outbox');
      if (rec) this.list(rec.to).push(n);
    }
  }

  /** Starts flushing through `bus` and `transport` (what is open now leaves now). */
  attach(bus, transport) {
    this.bus = bus;
    this.transport = transport;
    for (const peer of transport.openPeers()) this.flush(peer);
  }

  rpcHandlers() {
    return {
      'outbox-drop': (a) => {
        const r = dropQueued(this.dirs, { ids: a.ids ?? [], peer: a.peer });
        if (r.ok === true)
          for (const [p, l] of this.byPeer) {
            const left = l.filter((n) => !r.names.includes(n));
            if (left.length) this.byPeer.set(p, left);
            else this.byPeer.delete(p);
          }
        return r;
      },
    };
  }

  list(peer) {
    let l = this.byPeer.get(peer);
    if (!l) this.byPeer.set(peer, (l = []));
    return l;
  }

  enqueue(to, type, payload, topic = null) {
    const e = makeEnvelope({ from: this.from, type, to, topic, payload });
    if (!e.ok) return { ok: false, error: `cannot send: ${e.detail}` };
    // The bus refuses an envelope over its size bound here (too_large), so a message no transport
    // would take never sits at the head of a peer's backlog.
    const name = recordName(e.env);
    writeAtomic(
      path.join(this.dirs.outbox, name),
      JSON.stringify({
        v: 1,
        kind: 'outbox',
        to,
        type,
        id: e.env.id,
        queuedAt: Date.now(),
        envelope: e.env,
      }),
    );
    const list = this.list(to);
    list.push(name);
    this.flush(to);
    if (!list.includes(name)) return { ok: true, id: e.env.id, state: 'sent' };
    const why = this.whyNotNow(to) ?? 'the transport did not take it yet (its buffer is full)';
    return { ok: true, id: e.env.id, state: 'queued', reason: why };
  }

  /**
   * Sends `peer`'s backlog in order and removes each record only once the transport accepted it;
   * the first refusal stops the flush and keeps the rest in order. Other peers' records are not
   * touched.
   */
  flush(peer) {
    // Only to a peer the bus holds open (src/bus/bus.hpp, Reachability): a peer the room roster
    // dropped may still have a channel that looks open for seconds (a closed tab), and what the
    // transport accepts there is lost.
    if (!this.bus || !this.bus.isOpen(peer)) return 0;
    const list = this.byPeer.get(peer);
    let sent = 0;
    while (list && list.length) {
      const name = list[0];
      const rec = readRecord(this.dirs.outbox, name, 'outbox');
      if (!rec || rec.to !== peer) {
        list.shift(); // damaged or removed on disk since: skipped, left as it is
        continue;
      }
      if (!this.transport.send(peer, JSON.stringify(rec.envelope))) break;
      // In our history for `peer` to replay, and correlated when it acks (the bus's own sends do
      // both; this one left from disk with the id it was given when queued).
      this.bus.noteSent(rec.envelope);
      list.shift();
      try {
        fs.unlinkSync(path.join(this.dirs.outbox, name));
      } catch {}
      sent++;
    }
    if (list && !list.length) this.byPeer.delete(peer);
    return sent;
  }
}
