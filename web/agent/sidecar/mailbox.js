// The inbox side of the sidecar (agent-bus-and-swarm.md § Local state and CLI boundaries): every
// mail envelope the bus accepted is stored once, as one record in inbox/, unless a record of it is
// already in inbox/ or archive/ (a resend, a replay, a retry after our restart). History replays
// arriving for a pending `history` call are collected here too.
import path from 'node:path';
import { recordHash } from '../envelope.js';
import { listRecords, nameHash, recordName, writeAtomic } from '../store.js';

const HISTORY_WAIT_MS = 5000;
const HISTORY_QUIET_MS = 300; // replays are sent back to back: this long without one ends the wait
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export class Mailbox {
  /**
   * @param {{dirs: ReturnType<typeof import('../store.js').stateDirs>, onNewMail?: () => void}} o
   */
  constructor({ dirs, onNewMail = () => {} }) {
    this.dirs = dirs;
    this.onNewMail = onNewMail;
    this.replayed = []; // history replays arriving for a pending `history` call
    this.hashes = new Set(); // record hashes in inbox + archive: a resend of a stored id is dropped
    for (const d of [dirs.inbox, dirs.archive])
      for (const n of listRecords(d)) this.hashes.add(nameHash(n));
  }

  /** Whether a record of `env` is already in the inbox or the archive. */
  has(env) {
    return this.hashes.has(recordHash(env));
  }

  /**
   * Stores one envelope in the inbox unless a record of it is already there or archived.
   * `received`: for a file a peer sent us unasked, where it was saved (web/agent/inbox-files.js).
   */
  store(env, info, received = null) {
    const h = recordHash(env);
    const fresh = !this.hashes.has(h);
    if (info?.replayed) this.replayed.push({ env, fresh });
    if (!fresh) return false;
    const rec = {
      v: 1,
      kind: 'inbox',
      receivedAt: Date.now(),
      replayed: !!info?.replayed,
      envelope: env,
      ...(received ? { received } : {}),
    };
    writeAtomic(path.join(this.dirs.inbox, recordName(env)), JSON.stringify(rec));
    this.hashes.add(h);
    this.onNewMail();
    return true;
  }

  /**
   * Asks `peer` to replay recent messages (the bus caps and filters them). Replays we have not
   * stored arrive as mail and land in the inbox; the reply lists all of them and which are new.
   */
  async requestHistory(bus, peer, count) {
    const start = this.replayed.length;
    const r = bus.requestHistory(peer, count);
    if (!r.ok) return { ok: false, error: `cannot ask '${peer}' for history: ${r.detail}` };
    if (r.status !== 'sent')
      return { ok: false, error: `'${peer}' is not reachable now; see \`tether agent peers\`` };
    // A replay is one history_replay per message, sent back to back: wait for the first, then
    // until none has come for a moment, or give up quietly (a replay of nothing new is nothing).
    for (let i = 0; i < HISTORY_WAIT_MS / 50 && this.replayed.length === start; i++)
      await sleep(50);
    for (let seen = -1, i = 0; seen !== this.replayed.length && i < HISTORY_WAIT_MS / 50; i++) {
      seen = this.replayed.length;
      await sleep(HISTORY_QUIET_MS);
    }
    const got = this.replayed.splice(start);
    // `fresh`: not in our inbox or archive before this replay (it is in the inbox now).
    return {
      ok: true,
      replayed: got.map((g) => g.env),
      fresh: got.filter((g) => g.fresh).map((g) => g.env.id),
    };
  }
}
