// tether/swarm's peer glue in a room with hand-built ninja-p2p peers (tests/node/lib/
// ninja_swarm_peer.mjs): a 13-chunk file (its last bitfield byte holds 5 chunks, not 8) split
// sparsely between two ninja-p2p holders whose bitfields are the golden bytes of
// fixtures/swarm/bitfields.json, fetched by the real glue into a real folder; then a ninja-p2p
// downloader that reads our bitfield with its own decoder. Both passed before only when both ends
// shared one bit order; against the public one, the old order asks holders for chunks they lack
// and hides the last byte's chunks from a ninja-p2p downloader.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadSwarm } from '@tether-rt/tether/swarm';
import { createSwarmPeer } from '../../web/peer/swarm-glue.js';
import { nodeFolder } from '../../web/peer/storage-node.js';
import { LoopNet } from './lib/loop_transport.mjs';
import { NinjaSwarmPeer, ninjaFile } from './lib/ninja_swarm_peer.mjs';

const vectors = Object.fromEntries(
  JSON.parse(
    readFileSync(new URL('../../fixtures/swarm/bitfields.json', import.meta.url), 'utf8'),
  ).bitfields.map((v) => [v.name, v]),
);
const swarm = await loadSwarm();

// Delivers until `done()` holds, letting the glue's hashing and disk writes run in between.
async function settle(net, done, what) {
  for (let i = 0; i < 4000; i++) {
    net.deliver();
    if (done()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('swarm + ninja-p2p: sparse holders of a 13-chunk file, read by their golden bitfields, and a ninja-p2p downloader reading ours', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'tether-ninja-swarm-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const a = vectors.sparse_13;
  const b = vectors.sparse_13_complement;
  assert.equal(a.totalChunks, 13);
  const bytes = Buffer.alloc(13 * 1024 - 200).map((_, i) => (i * 37 + (i >> 8)) & 255);
  const file = ninjaFile(bytes);
  assert.equal(file.chunks.length, 13);

  const net = new LoopNet();
  const ours = net.endpoint('tether');
  const holderA = new NinjaSwarmPeer(net.endpoint('ninja-a'), file, {
    holds: a.held,
    chunksB64: a.chunks,
  });
  const holderB = new NinjaSwarmPeer(net.endpoint('ninja-b'), file, {
    holds: b.held,
    chunksB64: b.chunks,
  });
  const peer = createSwarmPeer({ swarm, transport: ours });
  for (const id of ['ninja-a', 'ninja-b']) {
    net.connect('tether', id);
    net.open('tether', id);
  }
  net.deliver();
  const fetching = peer.fetch(file.offer.fileId, await nodeFolder(dir));
  let result = null;
  fetching.then(
    (r) => (result = r),
    (err) => (result = err),
  );
  await settle(net, () => result !== null, 'the fetch from the ninja-p2p holders');
  if (result instanceof Error) throw result;
  assert.deepEqual(await readFile(join(dir, file.offer.name)), bytes);
  // Every request went to a holder of that chunk: neither was asked for one it lacks.
  assert.equal(holderA.askedForMissing, 0);
  assert.equal(holderB.askedForMissing, 0);

  // A ninja-p2p downloader joins: it learns what we hold only from our bitfield, read its way,
  // and must find every chunk, the five in the last, partial byte included.
  const fetcher = new NinjaSwarmPeer(net.endpoint('ninja-c'), file);
  net.connect('tether', 'ninja-c');
  net.open('tether', 'ninja-c');
  await settle(net, () => fetcher.complete(), 'the ninja-p2p downloader');
  assert.deepEqual(fetcher.bytes(), bytes);
  assert.equal(createHash('sha256').update(fetcher.bytes()).digest('hex'), file.offer.fileId);
  assert.deepEqual(
    [...fetcher.views.get('tether')].sort((x, y) => x - y),
    [...Array(13).keys()],
  );
  await peer.close?.();
});

test('swarm: a chunk whose digest does not match is never written; the file completes from a good copy', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'tether-ninja-bad-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const bytes = Buffer.alloc(13 * 1024 - 200).map((_, i) => (i * 53 + (i >> 7)) & 255);
  const file = ninjaFile(bytes);
  const bad = 4;
  const net = new LoopNet();
  const ours = net.endpoint('tether');
  const all = [...Array(file.chunks.length).keys()];
  const bitfield = Buffer.alloc((all.length + 7) >> 3);
  for (const i of all) bitfield[i >> 3] |= 1 << (i & 7); // § swarm_announce bit order
  new NinjaSwarmPeer(net.endpoint('ninja-a'), file, {
    holds: all,
    chunksB64: bitfield.toString('base64'),
    corruptOnce: [bad],
  });
  const peer = createSwarmPeer({ swarm, transport: ours });
  net.connect('tether', 'ninja-a');
  net.open('tether', 'ninja-a');
  net.deliver();
  // The folder records every write that reaches it.
  const folder = await nodeFolder(dir);
  const writes = [];
  const openFile = folder.openFile.bind(folder);
  folder.openFile = async (name) => {
    const h = await openFile(name);
    const write = h.write.bind(h);
    h.write = (offset, data) => (
      writes.push({ offset, data: Buffer.from(data) }),
      write(offset, data)
    );
    return h;
  };
  let result = null;
  peer.fetch(file.offer.fileId, folder).then(
    (r) => (result = r),
    (err) => (result = err),
  );
  await settle(net, () => result !== null, 'the fetch past a corrupt chunk');
  if (result instanceof Error) throw result;
  assert.equal(peer.stats().chunks.bad_hash, 1);
  const chunkSize = file.offer.chunkSize;
  const good = Buffer.from(file.chunks[bad]);
  const atBad = writes.filter((w) => w.offset === bad * chunkSize);
  assert.deepEqual(
    atBad.map((w) => w.data.equals(good)),
    [true],
    'only the good copy of the chunk was written',
  );
  assert.deepEqual(await readFile(join(dir, file.offer.name)), bytes);
  await peer.close();
});
