// Durable rooms over SQL (room-relay.md § Persistence, § Telling a client a write is safe): the
// envelope is the persistence record, so a room on disk is a register checkpoint plus the journal
// of envelopes after it, compacted by re-checkpointing. Runtime-independent: it talks to a small
// synchronous SQL seam that both Durable Object storage (ctx.storage.sql) and SQLite files
// (node:sqlite in Deno and Node) provide, so the Worker and the Deno host share every line.
//
// Per envelope the cost is one INSERT (plus the storage's durability barrier); every
// `checkpointEvery` envelopes, and whenever the room's generation changes, the whole register
// state is written once and the journal is trimmed to the last `journalTail` envelopes, which are
// kept only so clients connected before a restart get a cheap `delta` answer.

// The journal is one rowid table: an envelope's row id is its room's key (tether_room) times
// 2^40 plus its seq, so an append writes one b-tree and no secondary index (the old
// `tether_journal`, keyed (room, seq), wrote its table and its key's index per envelope:
// bench/README.md § The edge relay under workerd), and a room's journal is one range of ids, in
// seq order. The arithmetic runs in SQL (64-bit integers): JS only binds a key and a seq. 2^40
// envelopes per room, 2^23 rooms per store.
export const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS tether_room (key INTEGER PRIMARY KEY, room TEXT NOT NULL UNIQUE)`,
  `CREATE TABLE IF NOT EXISTS tether_log (id INTEGER PRIMARY KEY, env TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS tether_checkpoint (room TEXT PRIMARY KEY, seq INTEGER NOT NULL, state TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS tether_budget (room TEXT NOT NULL, writer TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (room, writer))`,
];

const SPAN = 1099511627776; // 2^40: a room's range of journal ids
const INSERT_ENVELOPE = `INSERT INTO tether_log (id, env) VALUES (?1 * ${SPAN} + ?2, ?3)`;
const SELECT_JOURNAL = `SELECT id - ?1 * ${SPAN} AS seq, env FROM tether_log WHERE id >= ?1 * ${SPAN} AND id < (?1 + 1) * ${SPAN} ORDER BY id`;
const TRIM_JOURNAL = `DELETE FROM tether_log WHERE id >= ?1 * ${SPAN} AND id <= ?1 * ${SPAN} + ?2`;

// Stores written before the rowid journal keep theirs in `tether_journal` (room, seq, env): moved
// into tether_log in one transaction the first time a store opens them, then dropped.
function migrate(sql) {
  const old = sql.all(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'tether_journal'",
  );
  if (old.length === 0) return;
  sql.transaction(() => {
    sql.run('INSERT OR IGNORE INTO tether_room (room) SELECT DISTINCT room FROM tether_journal');
    sql.run(
      `INSERT INTO tether_log (id, env) SELECT r.key * ${SPAN} + j.seq, j.env FROM tether_journal j JOIN tether_room r ON r.room = j.room`,
    );
    sql.run('DROP TABLE tether_journal');
  });
}

export const DEFAULT_CHECKPOINT_EVERY = 64;
export const DEFAULT_JOURNAL_TAIL = 256;

/**
 * The SQL seam over Durable Object storage. Writes inside `transaction` are atomic; `sync()`
 * resolves once everything written so far is durable (storage.sync(); older runtimes without it
 * rely on the output gate, which holds outgoing messages until writes are confirmed).
 */
export function durableObjectSql(storage) {
  return {
    run: (q, ...p) => void storage.sql.exec(q, ...p),
    all: (q, ...p) => storage.sql.exec(q, ...p).toArray(),
    transaction: (fn) => storage.transactionSync(fn),
    sync: () => (typeof storage.sync === 'function' ? storage.sync() : Promise.resolve()),
  };
}

/**
 * The SQL seam over a node:sqlite DatabaseSync (Deno, Node). The file runs in WAL mode with
 * synchronous=FULL, so a transaction that returned is on disk (fsync'd) and sync() has nothing
 * left to wait for.
 */
export function sqliteSql(db) {
  db.exec('PRAGMA journal_mode=WAL');
  db.exec('PRAGMA synchronous=FULL');
  const stmts = new Map();
  const prep = (q) => {
    let s = stmts.get(q);
    if (!s) stmts.set(q, (s = db.prepare(q)));
    return s;
  };
  return {
    run: (q, ...p) => void prep(q).run(...p),
    all: (q, ...p) => prep(q).all(...p),
    transaction: (fn) => {
      db.exec('BEGIN IMMEDIATE');
      try {
        const v = fn();
        db.exec('COMMIT');
        return v;
      } catch (e) {
        try {
          db.exec('ROLLBACK');
        } catch {
          // already rolled back by SQLite
        }
        throw e;
      }
    },
    sync: () => Promise.resolve(),
  };
}

export class RoomStore {
  constructor(
    sql,
    { checkpointEvery = DEFAULT_CHECKPOINT_EVERY, journalTail = DEFAULT_JOURNAL_TAIL } = {},
  ) {
    this.sql = sql;
    this.every = checkpointEvery;
    this.tail = journalTail;
    this.meta = new Map(); // room -> { seq: last checkpoint seq, instance, failed: cause | null }
    this.keys = new Map(); // room -> its key in tether_room (written once, never changes)
    for (const q of SCHEMA) sql.run(q);
    migrate(sql);
  }

  /** The room's journal key; `create`: add it when the room has none yet. */
  #key(room, create) {
    let key = this.keys.get(room);
    if (key !== undefined) return key;
    const select = () => this.sql.all('SELECT key FROM tether_room WHERE room = ?', room)[0];
    let row = select();
    if (!row && create) {
      // Its own statement, before any envelope's: a key outlives a write that failed.
      this.sql.run('INSERT OR IGNORE INTO tether_room (room) VALUES (?)', room);
      row = select();
    }
    if (!row) return null;
    key = Number(row.key);
    this.keys.set(room, key);
    return key;
  }

  /**
   * What a relay needs to rebuild `room`: the checkpoint (a RoomSnapshot with seq, instance,
   * registers, ranges, settled, schemaVersion) with the journal tail at or below its seq, and the
   * envelopes after it, to replay in order. null when the room was never written.
   */
  load(room) {
    const cp = this.sql.all('SELECT seq, state FROM tether_checkpoint WHERE room = ?', room)[0];
    const key = this.#key(room, false);
    const rows = key === null ? [] : this.sql.all(SELECT_JOURNAL, key);
    if (!cp) {
      this.meta.set(room, { seq: 0, instance: null, failed: null });
      if (rows.length > 0) {
        throw new Error(
          `tether rooms: room ${JSON.stringify(room)} has a journal but no checkpoint; the store is damaged`,
        );
      }
      return null;
    }
    const snapshot = JSON.parse(cp.state);
    const tail = [];
    const after = [];
    for (const r of rows) (Number(r.seq) <= snapshot.seq ? tail : after).push(JSON.parse(r.env));
    this.meta.set(room, { seq: snapshot.seq, instance: snapshot.instance, failed: null });
    return { snapshot: { ...snapshot, journal: tail }, after };
  }

  /**
   * onCommit: stores one envelope (and a checkpoint when due) atomically, and returns the promise
   * that resolves once it is durable. `env` is the envelope, or its JSON text as the relay core
   * wrote it (tether's relay, `commitText`; then its seq is `state.seq`). Throws when the write
   * fails; after one failure every later append of the room fails too, so the journal never holds
   * a gap, until `reset`.
   */
  append(room, env, state) {
    let m = this.meta.get(room);
    if (!m) this.meta.set(room, (m = { seq: 0, instance: null, failed: null }));
    if (m.failed)
      throw new Error(
        `room storage failed earlier (${m.failed?.message ?? m.failed}); the room is recovering`,
      );
    const text = typeof env === 'string' ? env : JSON.stringify(env);
    const seq = typeof env === 'string' ? state.seq : env.seq;
    try {
      const key = this.#key(room, true);
      // A new generation (a migration, or the room's first envelope) must be checkpointed at
      // once: replaying across it would mint a different nonce than the clients hold.
      if (m.instance !== state.instance || seq - m.seq >= this.every) {
        this.sql.transaction(() => {
          this.sql.run(INSERT_ENVELOPE, key, seq, text);
          this.#checkpoint(room, key, m, state);
        });
      } else {
        // One statement is atomic on its own: most envelopes need no transaction around it
        // (on workerd one costs about as much as the INSERT; bench/README.md § The edge relay).
        this.sql.run(INSERT_ENVELOPE, key, seq, text);
      }
    } catch (cause) {
      m.failed = cause;
      throw cause;
    }
    return this.sql.sync();
  }

  /** Compaction: writes the full state and trims the journal to its tail. */
  #checkpoint(room, key, m, state) {
    const snapshot = {
      seq: state.seq,
      instance: state.instance,
      schemaVersion: state.schemaVersion,
      registers: state.checkpoint(),
      ranges: state.ranges,
      settled: state.settled,
      wm: state.wm,
    };
    this.sql.run(
      'INSERT INTO tether_checkpoint (room, seq, state) VALUES (?, ?, ?) ON CONFLICT (room) DO UPDATE SET seq = excluded.seq, state = excluded.state',
      room,
      state.seq,
      JSON.stringify(snapshot),
    );
    this.sql.run(TRIM_JOURNAL, key, state.seq - this.tail);
    m.seq = state.seq;
    m.instance = state.instance;
  }

  /** Forgets the in-memory view of `room` (after a failure): the next load reads the substrate. */
  reset(room) {
    this.meta.delete(room);
  }

  failed(room) {
    return this.meta.get(room)?.failed ?? null;
  }

  /**
   * The persistence seam for the admission core's principal budgets (limits.js createAdmission):
   * the state is the core's own text, kept per room and writer.
   */
  budgetStore() {
    return {
      get: (room, writer) =>
        this.sql.all(
          'SELECT state FROM tether_budget WHERE room = ? AND writer = ?',
          room,
          writer,
        )[0]?.state ?? null,
      put: (room, writer, state) =>
        this.sql.run(
          'INSERT INTO tether_budget (room, writer, state) VALUES (?, ?, ?) ON CONFLICT (room, writer) DO UPDATE SET state = excluded.state',
          room,
          writer,
          state,
        ),
    };
  }
}
