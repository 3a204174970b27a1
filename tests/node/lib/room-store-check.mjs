// The durable room store (web/edge/room-store.js) over node:sqlite, the seam the Deno host uses
// (run by tests/node/room-store.test.mjs under Deno: this Node has no node:sqlite): the journal
// as one rowid table, and stores written before it (tether_journal keyed (room, seq)) opening
// with nothing lost. Prints "ok <name>" per check; throws on the first that fails.
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { RoomStore, sqliteSql } from '../../../web/edge/room-store.js';

const checks = [];
const test = (name, fn) => checks.push([name, fn]);

const env = (seq, v) => ({ seq, origin: 'o', v });
// What the relay hands onCommit, enough for the store: seq, instance, and a checkpoint.
const state = (seq, instance = 'i1') => ({
  seq,
  instance,
  schemaVersion: 0,
  checkpoint: () => [],
  ranges: {},
  settled: {},
  wm: {},
});

function append(store, room, seq, instance) {
  return store.append(room, JSON.stringify(env(seq, `${room}${seq}`)), state(seq, instance));
}

test('room store: the journal is one rowid table, with no index beside it', () => {
  const db = new DatabaseSync(':memory:');
  const store = new RoomStore(sqliteSql(db), { checkpointEvery: 4, journalTail: 2 });
  for (let s = 1; s <= 10; s++) append(store, 'a', s);
  for (let s = 1; s <= 3; s++) append(store, 'b', s);
  const log = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'tether_log'").get();
  assert.match(log.sql, /id INTEGER PRIMARY KEY, env TEXT NOT NULL/);
  const indexes = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tether_log'")
    .all();
  assert.deepEqual(indexes, [], 'an append writes one b-tree');
  assert.equal(
    db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'tether_journal'").get().n,
    0,
  );
  // Checkpoints at 1 (a new generation), 5 and 9; the tail keeps seq 8 and 9 below the last.
  const again = new RoomStore(sqliteSql(db), { checkpointEvery: 4, journalTail: 2 });
  const a = again.load('a');
  assert.equal(a.snapshot.seq, 9);
  assert.deepEqual(
    a.snapshot.journal.map((e) => e.seq),
    [8, 9],
  );
  assert.deepEqual(
    a.after.map((e) => e.v),
    ['a10'],
  );
  const b = again.load('b');
  assert.equal(b.snapshot.seq, 1);
  assert.deepEqual(
    b.after.map((e) => e.v),
    ['b2', 'b3'],
    "another room's journal is its own",
  );
  assert.equal(again.load('never'), null);
});

test('room store: a store written with the old (room, seq) journal opens with its journal moved', () => {
  const db = new DatabaseSync(':memory:');
  // The schema and rows as the store wrote them before the rowid journal.
  db.exec(
    'CREATE TABLE tether_journal (room TEXT NOT NULL, seq INTEGER NOT NULL, env TEXT NOT NULL, PRIMARY KEY (room, seq))',
  );
  db.exec(
    'CREATE TABLE tether_checkpoint (room TEXT PRIMARY KEY, seq INTEGER NOT NULL, state TEXT NOT NULL)',
  );
  db.exec(
    'CREATE TABLE tether_budget (room TEXT NOT NULL, writer TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (room, writer))',
  );
  const put = db.prepare('INSERT INTO tether_journal (room, seq, env) VALUES (?, ?, ?)');
  for (const [room, seqs] of [
    ['doc', [3, 4, 5, 6, 7]],
    ['other', [1, 2]],
  ]) {
    for (const s of seqs) put.run(room, s, JSON.stringify(env(s, `${room}${s}`)));
  }
  const cp = db.prepare('INSERT INTO tether_checkpoint (room, seq, state) VALUES (?, ?, ?)');
  cp.run('doc', 5, JSON.stringify({ seq: 5, instance: 'i1', registers: [] }));
  cp.run('other', 1, JSON.stringify({ seq: 1, instance: 'i2', registers: [] }));
  db.prepare('INSERT INTO tether_budget (room, writer, state) VALUES (?, ?, ?)').run(
    'doc',
    'w',
    '{"kept":true}',
  );

  const store = new RoomStore(sqliteSql(db), { checkpointEvery: 64 });
  const doc = store.load('doc');
  assert.equal(doc.snapshot.instance, 'i1');
  assert.deepEqual(
    doc.snapshot.journal.map((e) => e.v),
    ['doc3', 'doc4', 'doc5'],
  );
  assert.deepEqual(
    doc.after.map((e) => e.v),
    ['doc6', 'doc7'],
  );
  assert.deepEqual(
    store.load('other').after.map((e) => e.v),
    ['other2'],
  );
  assert.equal(store.budgetStore().get('doc', 'w'), '{"kept":true}');
  assert.equal(
    db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'tether_journal'").get().n,
    0,
    'the old table is gone once its rows moved',
  );
  // The room goes on where it was, and opens again the same.
  append(store, 'doc', 8, 'i1');
  const reopened = new RoomStore(sqliteSql(db)).load('doc');
  assert.deepEqual(
    reopened.after.map((e) => e.v),
    ['doc6', 'doc7', 'doc8'],
  );
});

for (const [name, fn] of checks) {
  fn();
  console.log(`ok ${name}`);
}
