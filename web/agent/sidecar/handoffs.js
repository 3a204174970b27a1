// Confirmed handoffs on disk (agent-bus-and-swarm.md § Local state and CLI boundaries). The bus
// core runs both ends (announce, retries, the stored ack); this keeps what must survive a
// restart:
//   handoffs/sent/      one record per handoff we sent, until the stored receipt or expiresAt;
//                       a restarted sidecar resumes the same envelope (same id and instance)
//   handoffs/received/  the receiver's dedup markers: a retry after a read or a restart is
//                       re-acked by the bus without a second inbox record
import fs from 'node:fs';
import path from 'node:path';
import { handoffKey, recordHash } from '../envelope.js';
import { writeAtomic } from '../store.js';
import { readJson } from '../state.js';

export class Handoffs {
  /**
   * @param {{dirs: object, mailbox: import('./mailbox.js').Mailbox, log: (msg: string) => void, dropAcks?: boolean}} o
   *   dropAcks: tests only, stores handoffs but never acks them (forces sender retries)
   */
  constructor({ dirs, mailbox, log, dropAcks = false }) {
    this.dirs = dirs;
    this.mailbox = mailbox;
    this.log = log;
    this.dropAcks = dropAcks;
    this.bus = null;
    this.sent = new Map(); // envelope id -> sender record
    for (const n of fs.readdirSync(dirs.handoffsOut)) {
      if (!n.endsWith('.json')) continue;
      const rec = readJson(path.join(dirs.handoffsOut, n));
      if (
        !rec ||
        rec.kind !== 'handoff-sent' ||
        !rec.envelope ||
        typeof rec.envelope.id !== 'string'
      )
        continue;
      rec.file = path.join(dirs.handoffsOut, n);
      this.sent.set(rec.envelope.id, rec);
    }
  }

  /** The bus handlers this concern answers. */
  busHandlers() {
    return {
      handoff: (h) => this.storeIncoming(h),
      handoffStored: (h) => this.done(h, 'stored'),
      handoffExpired: (h) => this.done(h, 'expired'),
    };
  }

  /** Handoff receipts are the bus's to correlate (handoffStored), never mail. */
  receive(env) {
    return env.type === 'ack' && env.payload?.forType === 'handoff';
  }

  /** Gives the bus what earlier lives stored and sent: re-acks without redelivery, and retries. */
  attach(bus) {
    this.bus = bus;
    if (!this.dropAcks) bus.rememberHandoffs(this.storedKeys());
    for (const rec of this.sent.values()) {
      if (rec.state !== 'pending') continue;
      if (Date.now() >= rec.envelope.payload.expiresAt) {
        this.done({ id: rec.envelope.id, attempts: rec.sends ?? 0 }, 'expired');
        continue;
      }
      const r = bus.resumeHandoff(rec.envelope);
      if (!r.ok) this.log(`handoff ${rec.envelope.id} cannot be resumed: ${r.code} ${r.detail}`);
    }
  }

  save(rec) {
    const { file, ...body } = rec;
    writeAtomic(file, JSON.stringify(body));
  }

  // ---- sender ---------------------------------------------------------------------------

  create(to, request, expiresInMs) {
    const r = this.bus.handoff(to, request, { ttlMs: expiresInMs });
    if (!r.ok) {
      if (r.code === 'handoff_unsupported')
        return {
          ok: false,
          error: `'${to}' has no current handoff-v1 announcement (offline, restarting, or not a tether agent); check \`tether agent peers\` and try again when it is online`,
        };
      return { ok: false, error: `cannot hand off: ${r.code} at ${r.field}: ${r.detail}` };
    }
    const env = r.handoff.envelope;
    const rec = {
      v: 1,
      kind: 'handoff-sent',
      state: 'pending',
      createdAt: Date.now(),
      envelope: env,
      sends: r.handoff.attempts,
      file: path.join(this.dirs.handoffsOut, `${recordHash(env)}.json`),
    };
    // Kept on disk first thing: a restart resumes the same envelope (same id and instance).
    this.save(rec);
    this.sent.set(env.id, rec);
    // The bus sent it at once if it could (attempts); either way it retries until a receipt.
    return { ok: true, id: env.id, expiresAt: env.payload.expiresAt, sends: r.handoff.attempts };
  }

  done(h, state) {
    const rec = this.sent.get(h.id);
    if (!rec || rec.state !== 'pending') return;
    rec.state = state;
    rec.sends = Math.max(rec.sends ?? 0, h.attempts ?? 0);
    rec[state === 'stored' ? 'storedAt' : 'expiredAt'] = Date.now();
    this.save(rec);
    if (state === 'expired') this.log(`handoff ${h.id} to ${rec.envelope.to} expired unconfirmed`);
  }

  list() {
    const attempts = new Map(this.bus.pendingHandoffs().map((h) => [h.id, h.attempts]));
    return [...this.sent.values()].map((r) => ({
      id: r.envelope.id,
      to: r.envelope.to,
      state: r.state,
      sends: Math.max(r.sends ?? 0, attempts.get(r.envelope.id) ?? 0),
      createdAt: r.createdAt,
      expiresAt: r.envelope.payload.expiresAt,
      storedAt: r.storedAt ?? null,
      expiredAt: r.expiredAt ?? null,
    }));
  }

  // ---- receiver -------------------------------------------------------------------------

  /** A new handoff from the bus: store it, mark it, and only then let the bus ack it. */
  storeIncoming(h) {
    const env = h.envelope;
    const marker = path.join(this.dirs.handoffsIn, `${handoffKey(env)}.json`);
    if (!fs.existsSync(marker)) {
      // Store first (unless an earlier life stored it and died before the marker), then mark.
      if (!this.mailbox.has(env)) this.mailbox.store(env, { peer: h.peer });
      try {
        writeAtomic(
          marker,
          JSON.stringify({
            v: 1,
            kind: 'handoff-received',
            busKey: h.key,
            id: env.id,
            from: env.from,
            storedAt: Date.now(),
            expiresAt: h.expiresAt,
          }),
          { exclusive: true },
        );
      } catch (err) {
        if (err.code !== 'EEXIST') throw err;
      }
    }
    if (this.dropAcks) return;
    this.bus.confirmHandoff(h.key);
  }

  /** Keys stored in earlier lives: their retries are re-acked by the bus without redelivery. */
  storedKeys() {
    const keys = [];
    for (const n of fs.readdirSync(this.dirs.handoffsIn)) {
      const m = n.endsWith('.json') ? readJson(path.join(this.dirs.handoffsIn, n)) : null;
      if (m?.kind === 'handoff-received' && typeof m.busKey === 'string') keys.push(m.busKey);
    }
    return keys;
  }

  rpcHandlers() {
    return {
      handoff: (a) => this.create(a.to, a.request, a.expiresInMs),
      handoffs: () => ({ ok: true, handoffs: this.list() }),
    };
  }
}
