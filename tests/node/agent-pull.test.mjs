// `tether agent pull`: one file from a peer's shared folder over the simple one-to-one transfer
// (tether/bus validates both ends), between two real sidecars on a real ws room relay. The
// owner applies the share's real-path containment; the puller never overwrites a file.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { startRoomServer } from '../e2e/lib/room_server.mjs';
import { Harness, waitFor } from './lib/agent-harness.mjs';

test('pull: a contained file arrives verified and never overwrites; escaping links and unknown shares are refused', async (t) => {
  const server = await startRoomServer();
  t.after(() => server.close());
  const h = new Harness(t);
  const A = h.dir('alice');
  const B = h.dir('bob');
  const share = h.dir('share');
  const outside = h.dir('outside');
  const dest = h.dir('dest');
  const data = randomBytes(700_000);
  fs.writeFileSync(path.join(share, 'data.bin'), data);
  fs.writeFileSync(path.join(outside, 'secret'), 'no');
  fs.symlinkSync(path.join(outside, 'secret'), path.join(share, 'escape'));
  await h.ok(A, ['share', 'add', 'proj', share]);
  await h.join(A, 'alice', server.url);
  await h.join(B, 'bob', server.url);
  await waitFor('bob sees alice', async () =>
    (await h.ok(B, ['peers'])).peers.some((p) => p.id === 'alice' && p.open),
  );

  const r1 = await h.run(B, ['pull', 'alice', 'proj', 'data.bin', '--to', dest]);
  assert.equal(r1.code, 0, r1.stderr);
  assert.equal(r1.json.savedPath, path.join(fs.realpathSync(dest), 'data.bin'));
  assert.equal(r1.json.sha256, createHash('sha256').update(data).digest('hex'));
  assert.ok(fs.readFileSync(r1.json.savedPath).equals(data));
  assert.match(r1.stderr, /pull proj\/data.bin: \d+ \/ 700000 bytes/);

  const r2 = await h.ok(B, ['pull', 'alice', 'proj', 'data.bin', '--to', dest]);
  assert.equal(path.basename(r2.savedPath), 'data (1).bin', 'the first copy is not overwritten');
  assert.ok(fs.readFileSync(r1.json.savedPath).equals(data));

  const esc = await h.run(B, ['pull', 'alice', 'proj', 'escape', '--to', dest], { json: false });
  assert.equal(esc.code, 2);
  assert.match(esc.stderr, /'alice' refused: 'escape' leads outside the share/);
  const none = await h.run(B, ['pull', 'alice', 'nope', 'x', '--to', dest], { json: false });
  assert.match(none.stderr, /unknown share: nope/);
  assert.deepEqual(
    fs.readdirSync(dest).sort(),
    ['data (1).bin', 'data.bin'],
    'no part files left behind',
  );
  await h.ok(B, ['leave']);
  await h.ok(A, ['leave']);
});
