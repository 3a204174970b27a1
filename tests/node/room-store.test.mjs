// The durable room store (web/edge/room-store.js): its checks run under Deno, whose node:sqlite
// is the seam the Deno host stores rooms through (this Node has none): tests/node/lib/room-store-check.mjs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('room store under Deno: a rowid journal, and an old (room, seq) journal migrated on open', () => {
  const r = spawnSync(
    path.join(ROOT, 'node_modules/.bin/deno'),
    ['run', '--allow-read', path.join(ROOT, 'tests/node/lib/room-store-check.mjs')],
    { encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /ok room store: the journal is one rowid table/);
  assert.match(r.stdout, /ok room store: a store written with the old/);
});
