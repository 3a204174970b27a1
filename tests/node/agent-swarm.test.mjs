// `tether agent swarm offer/fetch`: the swarm core (tether/swarm) driven by the peer swarm glue
// over the explicit relay transport, between real sidecars on a real ws room relay (127.0.0.1).
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { startRoomServer } from '../e2e/lib/room_server.mjs';
import { Harness, waitFor } from './lib/agent-harness.mjs';

test('swarm: one seeder, two fetchers over the relay transport; every file verifies; progress shows; a bad id fails clearly', async (t) => {
  const server = await startRoomServer();
  t.after(() => server.close());
  const h = new Harness(t);
  const [A, B, C] = ['alice', 'bob', 'carol'].map((n) => h.dir(n));
  const src = path.join(h.dir('src'), 'model.json');
  const data = randomBytes(1_500_000);
  fs.writeFileSync(src, data);
  const sha = createHash('sha256').update(data).digest('hex');
  await h.join(A, 'alice', server.url);
  await h.join(B, 'bob', server.url);
  await h.join(C, 'carol', server.url);
  await waitFor(
    'all see each other',
    async () => (await h.ok(A, ['peers'])).peers.filter((p) => p.open).length === 2,
  );

  const offer = await h.ok(A, ['swarm', 'offer', src]);
  assert.equal(offer.fileId, sha, 'the file id is the SHA-256 of the content');
  assert.equal(offer.size, data.length);
  await waitFor('bob saw the offer', async () =>
    Object.keys((await h.ok(B, ['swarm', 'list'])).offers).includes(sha),
  );
  // Its type comes from the extension, as a public peer offers it (not octet-stream for all).
  assert.equal((await h.ok(B, ['swarm', 'list'])).offers[sha].mimeType, 'application/json');

  const dests = [h.dir('dest-b'), h.dir('dest-c')];
  const [rb, rc] = await Promise.all([
    h.run(B, ['swarm', 'fetch', sha, '--to', dests[0]]),
    h.run(C, ['swarm', 'fetch', sha, '--to', dests[1]]),
  ]);
  for (const [r, d] of [
    [rb, dests[0]],
    [rc, dests[1]],
  ]) {
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.json.sha256, sha);
    assert.ok(fs.readFileSync(path.join(d, 'model.json')).equals(data));
    assert.match(r.stderr, /model\.json: \d+\/\d+ chunks/, 'progress lines');
  }

  const bad = await h.run(B, ['swarm', 'fetch', 'nothex', '--to', dests[0]], { json: false });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /64 lowercase hex characters/);
  for (const d of [A, B, C]) await h.ok(d, ['leave']);
});
