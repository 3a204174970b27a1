// tether/swarm over the WASM build: the golden vectors (the same ones the native suite checks),
// and a small swarm run end to end through the glue: a seeder and two downloaders exchanging real
// messages and binary frames in a loop driven by simulated time.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { loadSwarm } from '@tether-rt/tether/swarm';

const fixture = (name) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/swarm/${name}`, import.meta.url), 'utf8'));
const swarm = await loadSwarm();

test('swarm: golden messages parse to their canonical form or their refusal', () => {
  const f = fixture('messages.json');
  for (const v of f.valid) {
    const r = swarm.parseMessage(v.text);
    assert.equal(r.ok, true, v.name);
    assert.equal(r.type, v.type, v.name);
    assert.equal(
      JSON.stringify({ type: r.type, payload: JSON.parse(r.payload) }),
      v.canonical,
      v.name,
    );
  }
  for (const v of f.invalid) {
    const r = swarm.parseMessage(v.text);
    assert.equal(r.ok, false, v.name);
    assert.equal(r.code, v.code, v.name);
    assert.equal(r.field, v.field, v.name);
    assert.ok(r.detail.length > 0);
  }
});

test('swarm: golden bitfields (LSB first, partial last bytes, sparse holdings) read and written by the core', () => {
  const f = fixture('bitfields.json');
  assert.ok(f.bitfields.length >= 12);
  for (const v of f.bitfields) {
    const r = swarm.announceHeld(v.announce);
    assert.equal(r.ok, true, v.name);
    assert.equal(r.totalChunks, v.totalChunks, v.name);
    assert.deepEqual(r.held, v.held, v.name);
    const { payload } = JSON.parse(v.announce);
    const w = swarm.announcePayload({
      fileId: payload.fileId,
      totalChunks: v.totalChunks,
      held: v.held,
    });
    assert.equal(w.ok, true, v.name);
    assert.equal(w.payload, JSON.stringify(payload), v.name);
    assert.equal(JSON.parse(w.payload).chunks, v.chunks, v.name);
  }
});

test('swarm: golden binary-lane frames', () => {
  const f = fixture('frames.json');
  for (const v of f.frames) {
    const frame = Buffer.from(v.frame_b64, 'base64');
    const p = swarm.parseChunkFrame(new Uint8Array(frame));
    assert.ok(p, v.name);
    assert.equal(p.fileId, v.file_id);
    assert.equal(p.index, v.index);
    assert.deepEqual(Buffer.from(p.data), Buffer.from(v.data_b64, 'base64'));
    assert.deepEqual(Buffer.from(swarm.encodeChunkFrame(p.fileId, p.index, p.data)), frame);
    // Into a reused buffer (a sender whose transport copies on send): the same bytes, at its start,
    // and over whatever the previous frame left there.
    const into = new Uint8Array(frame.length + 7).fill(0xee);
    const view = swarm.encodeChunkFrame(p.fileId, p.index, p.data, into);
    assert.equal(view.buffer, into.buffer);
    assert.equal(view.byteOffset, 0);
    assert.deepEqual(Buffer.from(view), frame);
    assert.throws(
      () => swarm.encodeChunkFrame(p.fileId, p.index, p.data, new Uint8Array(frame.length - 1)),
      /into holds/,
    );
  }
  for (const v of f.ignored)
    assert.equal(
      swarm.parseChunkFrame(new Uint8Array(Buffer.from(v.frame_b64, 'base64'))),
      null,
      v.name,
    );
});

test('swarm: SHA-256 matches node:crypto, limits are the spec bounds', () => {
  const bytes = new Uint8Array(100_000).map((_, i) => (i * 7) & 255);
  assert.equal(swarm.sha256Hex(bytes), createHash('sha256').update(bytes).digest('hex'));
  assert.equal(swarm.limits.maxChunks, 1_000_000);
  assert.equal(swarm.limits.maxPageHashes, 256);
  assert.equal(swarm.limits.minChunkSize, 1024);
  assert.equal(swarm.limits.maxChunkSize, 16 * 1024 * 1024);
  assert.equal(swarm.limits.maxHaveIndexes, 4096);
  assert.equal(swarm.limits.maxFileNameChars, 1024);
  assert.equal(swarm.limits.timeoutFloorMs, 3000);
  assert.equal(swarm.limits.timeoutCeilingMs, 15000);
  assert.equal(swarm.decideLock({ owner: 'a', updatedMs: 0 }, 'b', 299_999).verdict, 'busy');
  assert.equal(swarm.decideLock({ owner: 'a', updatedMs: 0 }, 'b', 300_000).verdict, 'take_over');
  assert.notEqual(
    swarm.partFileName('a'.repeat(64), 'b'.repeat(64), '/x'),
    swarm.partFileName('a'.repeat(64), 'b'.repeat(64), '/y'),
  );
});

test('swarm: a seeder and two downloaders complete a paged file through the glue', () => {
  const chunkSize = 1024;
  const size = 300 * chunkSize + 17; // 301 chunks: a paged manifest
  const file = new Uint8Array(size).map((_, i) => (i * 13 + (i >> 10)) & 255);
  const chunks = [];
  for (let o = 0; o < size; o += chunkSize)
    chunks.push(file.subarray(o, Math.min(size, o + chunkSize)));
  const hashes = chunks.map((c) => createHash('sha256').update(c).digest('hex'));
  const fileId = createHash('sha256').update(file).digest('hex');
  const offer = swarm.makeOffer({
    fileId,
    name: 'f.bin',
    mimeType: 'application/octet-stream',
    size,
    chunkSize,
    hashes,
  });
  assert.equal(offer.ok, true);
  assert.equal(JSON.parse(offer.payload).manifestPages, 2);
  assert.equal(JSON.parse(offer.payload).chunkHashes, undefined);

  const nodes = [0, 1, 2].map(() => ({
    session: null,
    stored: new Map(),
    complete: false,
    queue: [],
  }));
  const seeded = swarm.seed(offer.payload, hashes, { seed: 1 });
  assert.equal(seeded.ok, true);
  nodes[0].session = seeded.session;
  for (const id of [1, 2]) {
    const f = swarm.fetch(offer.payload, 0, { seed: 10 + id }, 0);
    assert.equal(f.ok, true);
    nodes[id].session = f.session;
  }
  for (const [a, n] of nodes.entries())
    for (const b of [0, 1, 2])
      if (a !== b) n.session.handlePeerOpen(b, { binaryLane: true, maxMessageSize: 262144 }, 0);

  // A tiny transport: every message arrives 5 ms later, in order; frames are real bytes.
  let now = 0;
  const inflight = [];
  const deliver = (from, to, item) => inflight.push({ at: now + 5, from, to, item });
  const perform = (id) => {
    const n = nodes[id];
    for (let a; (a = n.session.pollAction());) {
      if (a.kind === 'control') {
        for (const to of [0, 1, 2])
          if (to !== id && (a.to === null || a.to === to))
            deliver(id, to, { type: a.type, payload: a.payload, directed: a.to !== null });
      } else if (a.kind === 'request') {
        n.session.handleSendResult(a.token, true, now);
        deliver(id, a.to, { type: a.type, payload: a.payload, directed: true });
      } else if (a.kind === 'serve') {
        const bytes = file.subarray(a.offset, a.offset + a.length);
        if (a.binary) deliver(id, a.to, { frame: swarm.encodeChunkFrame(fileId, a.index, bytes) });
        else
          deliver(id, a.to, {
            type: 'swarm_chunk',
            payload: n.session.chunkPayload(a.index, bytes),
            directed: true,
          });
      } else if (a.kind === 'manifestReady') {
        assert.equal(n.session.handleResumeDone(now), 0); // no part file: nothing to resume
      } else if (a.kind === 'completed') {
        n.complete = true;
      } else if (a.kind === 'failed') {
        assert.fail(`${a.code}: ${a.detail}`);
      }
    }
  };
  for (const id of [0, 1, 2]) perform(id);
  for (let step = 0; step < 20_000 && !(nodes[1].complete && nodes[2].complete); step++) {
    inflight.sort((x, y) => x.at - y.at);
    const next = inflight.shift();
    if (!next) {
      now += 50;
      for (const id of [0, 1, 2]) {
        nodes[id].session.handleTimeout(now);
        perform(id);
      }
      continue;
    }
    now = Math.max(now, next.at);
    const n = nodes[next.to];
    if (next.item.frame) {
      const f = swarm.parseChunkFrame(next.item.frame);
      // Downloader 2 hashes as a browser does (the platform's SHA-256, then handleChunkDigest);
      // downloader 1 lets the core hash.
      const outcome =
        next.to === 2
          ? n.session.handleChunkDigest(
              next.from,
              f.index,
              f.data.length,
              createHash('sha256').update(f.data).digest('hex'),
              now,
            )
          : n.session.handleChunk(next.from, f.index, f.data, now);
      assert.notEqual(outcome, 'unexpected');
      n.stored.set(f.index, Buffer.from(f.data));
    } else if (next.item.type === 'swarm_chunk') {
      const c = JSON.parse(next.item.payload);
      const data = new Uint8Array(Buffer.from(c.data, 'base64'));
      n.session.handleChunk(next.from, c.index, data, now);
      n.stored.set(c.index, Buffer.from(data));
    } else {
      const r = n.session.handleMessage(
        next.from,
        next.item.type,
        next.item.payload,
        { directed: next.item.directed },
        now,
      );
      assert.equal(r.ok, true, JSON.stringify(r));
    }
    perform(next.to);
  }
  for (const id of [1, 2]) {
    const st = nodes[id].session.status();
    assert.equal(
      nodes[id].complete,
      true,
      `downloader ${id} did not complete: ${JSON.stringify(st)}`,
    );
    assert.equal(st.have, 301);
    assert.deepEqual(
      Buffer.concat([...nodes[id].stored.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1])),
      Buffer.from(file),
    );
  }
  // A digest that is not 64 lowercase hex characters is the host's bug: nothing is stored.
  assert.equal(
    nodes[2].session.handleChunkDigest(0, 0, chunkSize, 'A'.repeat(64), now),
    'unexpected',
  );
  // A hostile message is refused by the session's parser, and the session lives on.
  const bad = nodes[1].session.handleMessage(0, 'swarm_manifest_page', { fileId: 'X' }, {}, now);
  assert.equal(bad.ok, false);
  assert.equal(bad.code, 'bad_hash');
  for (const n of nodes) n.session.dispose();
});

test('swarm: the resume pass, held requests and a new manifest source are decided by the core', () => {
  const chunkSize = 1024;
  const size = 4 * chunkSize - 100; // 4 chunks, the last one short: an inline offer
  const file = new Uint8Array(size).map((_, i) => (i * 31) & 255);
  const chunks = [0, 1, 2, 3].map((i) =>
    file.subarray(i * chunkSize, Math.min(size, (i + 1) * chunkSize)),
  );
  const sha = (b) => createHash('sha256').update(b).digest('hex');
  const hashes = chunks.map(sha);
  const offer = swarm.makeOffer({
    fileId: sha(file),
    name: 'r.bin',
    mimeType: 'x/y',
    size,
    chunkSize,
    hashes,
  });
  assert.equal(offer.ok, true);
  const f = swarm.fetch(offer.payload, 5, { seed: 3 }, 0);
  assert.equal(f.ok, true);
  const s = f.session;
  const drain = () => {
    const out = [];
    for (let a; (a = s.pollAction());) out.push(a);
    return out;
  };
  assert.deepEqual(
    drain().map((a) => a.kind),
    ['manifestReady'],
  );
  // The part file holds chunk 0 intact, chunk 1 torn (zeros), chunk 2 cut short, chunk 3 intact.
  assert.equal(s.resumeFeed(0, chunks[0].length, hashes[0]), true);
  assert.equal(s.resumeFeed(1, chunkSize, sha(new Uint8Array(chunkSize))), false);
  assert.equal(s.resumeFeed(2, chunkSize - 1, hashes[2]), false); // the right digest, the wrong length
  assert.equal(s.resumeFeed(3, chunks[3].length, hashes[3]), true);
  assert.equal(s.resumeFeed(9, chunkSize, hashes[0]), false); // past the end
  assert.equal(s.resumeFeed(0, chunks[0].length, 'not hex'), false);
  assert.deepEqual(s.resumed(), [0, 3]);
  // Storage is behind: the core plans nothing until it is released.
  s.holdRequests(true, 0);
  assert.equal(s.handleResumeDone(0), 2);
  assert.equal(s.status().have, 2);
  s.handlePeerOpen(5, { binaryLane: true, maxMessageSize: 262144 }, 0);
  const all = swarm.announcePayload({ fileId: sha(file), totalChunks: 4, held: [0, 1, 2, 3] });
  assert.equal(s.handleMessage(5, 'swarm_announce', all.payload, { directed: true }, 0).ok, true);
  assert.deepEqual(
    drain().filter((a) => a.kind === 'request'),
    [],
  );
  s.holdRequests(false, 1);
  const asked = drain().filter((a) => a.kind === 'request');
  assert.deepEqual(asked.map((a) => [a.to, a.index]).sort(), [
    [5, 1],
    [5, 2],
  ]);
  // A duplicate needs no digest; a chunk it still wants does.
  assert.equal(s.wantsChunk(0, chunks[0].length), false);
  assert.equal(s.handleChunkDigest(5, 0, chunks[0].length, null, 2), 'duplicate');
  assert.equal(s.wantsChunk(1, chunks[1].length), true);
  assert.equal(s.handleChunkDigest(5, 1, chunks[1].length, null, 2), 'unexpected');
  assert.equal(s.wantsChunk(1, chunkSize - 1), false); // the wrong length
  assert.equal(s.pollTimeout() > 2, true);
  s.dispose();

  // A paged manifest: pages only from the source asked; after a mismatch, the source the host names.
  const big = 300;
  const bigHashes = Array.from({ length: big }, (_, i) => sha(new Uint8Array([i & 255, i >> 8])));
  const paged = swarm.makeOffer({
    fileId: 'c'.repeat(64),
    name: 'p',
    mimeType: 'x/y',
    size: big * chunkSize,
    chunkSize,
    hashes: bigHashes,
  });
  const o = JSON.parse(paged.payload);
  const g = swarm.fetch(paged.payload, 1, { seed: 4 }, 0).session;
  for (const p of [1, 2]) g.handlePeerOpen(p, {}, 0);
  const sent = () => {
    const out = [];
    for (let a; (a = g.pollAction());) out.push(a);
    return out;
  };
  const asks = sent().filter((a) => a.type === 'swarm_manifest_request');
  assert.ok(asks.length >= 1 && asks.every((a) => a.to === 1), JSON.stringify(asks));
  assert.equal(g.manifestSource(), 1);
  const page = (n, list) => ({
    fileId: o.fileId,
    page: n,
    totalPages: o.manifestPages,
    pageSize: o.manifestPageSize,
    chunkHashesHash: o.chunkHashesHash,
    hashes: list.slice(n * o.manifestPageSize, (n + 1) * o.manifestPageSize),
  });
  // The right pages from a peer nobody asked are dropped: the manifest stays unassembled.
  for (let n = 0; n < o.manifestPages; n++)
    assert.equal(
      g.handleMessage(2, 'swarm_manifest_page', page(n, bigHashes), { directed: true }, 1).ok,
      true,
    );
  assert.equal(g.status().manifestReady, false);
  // The source's pages do not add up to the digest: the core fails the list and forgets the source.
  const lies = bigHashes.map((h, i) => (i === 7 ? 'f'.repeat(64) : h));
  for (let n = 0; n < o.manifestPages; n++)
    g.handleMessage(1, 'swarm_manifest_page', page(n, lies), { directed: true }, 2);
  const failed = sent().filter((a) => a.kind === 'failed');
  assert.deepEqual(
    failed.map((a) => a.code),
    ['manifest_digest_mismatch'],
  );
  assert.equal(g.manifestSource(), null);
  g.retryManifestFrom(2, 3);
  assert.ok(sent().some((a) => a.type === 'swarm_manifest_request' && a.to === 2));
  for (let n = 0; n < o.manifestPages; n++)
    g.handleMessage(2, 'swarm_manifest_page', page(n, bigHashes), { directed: true }, 4);
  assert.ok(sent().some((a) => a.kind === 'manifestReady'));
  assert.deepEqual(g.hashes(), bigHashes);
  g.dispose();
});

test('swarm: tsc type-checks a consumer of tether/swarm', async () => {
  const { spawnSync } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const repoDir = fileURLToPath(new URL('../../', import.meta.url));
  // A hang guard, not a performance assertion.
  const r = spawnSync(
    process.execPath,
    [`${repoDir}node_modules/.bin/tsc`, '--noEmit', '-p', 'tests/node/tsconfig.swarm-types.json'],
    {
      cwd: repoDir,
      encoding: 'utf8',
      timeout: 120_000,
      killSignal: 'SIGKILL',
    },
  );
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
});

// The node's per-chunk results come out of a record in WASM memory, its peers and files numbered
// by the binding (bindings/swarm_bindings.cpp): past its 4,096 names it forgets them and starts
// again, and what the glue hands out must still name the right peer and file.
test('swarm: a node names the right peer and file in its actions and frames, past 4096 names', () => {
  const node = swarm.createNode({
    self: { streamId: 'seed', role: 'peer', name: 'seed' },
    seed: 3,
  });
  const chunkSize = swarm.limits.minChunkSize;
  const files = [1, 2].map((k) => {
    const bytes = new Uint8Array(2 * chunkSize).map((_, i) => (i * k + k) & 255);
    const chunks = [bytes.subarray(0, chunkSize), bytes.subarray(chunkSize)];
    const hashes = chunks.map((c) => createHash('sha256').update(c).digest('hex'));
    const fileId = createHash('sha256').update(bytes).digest('hex');
    const offer = swarm.makeOffer({
      fileId,
      name: `f${k}.bin`,
      mimeType: 'application/octet-stream',
      size: bytes.length,
      chunkSize,
      hashes,
    });
    assert.equal(node.share(offer.payload, hashes, 0).ok, true);
    return { fileId, chunks };
  });
  const drain = () => {
    const out = [];
    for (let a = node.pollAction(); a !== null; a = node.pollAction()) out.push(a);
    return out;
  };
  drain();
  const frame = (f, index) => swarm.encodeChunkFrame(f.fileId, index, f.chunks[index]);
  for (let i = 0; i < 4200; i++) {
    const peer = `peer-${i}-${'x'.repeat(i % 7)}`;
    node.handlePeerOpen(peer, { binaryLane: true, maxMessageSize: 262144 }, i);
    const sent = drain();
    // Whoever joins learns what we seed, each file's swarm_offer and swarm_announce, to that peer.
    assert.equal(sent.length, 4, `peer ${i}`);
    for (const a of sent) {
      assert.equal(a.kind, 'send');
      assert.equal(a.peer, peer);
      assert.equal(JSON.parse(a.text).to, peer);
    }
    const offered = sent.map((a) => JSON.parse(a.text)).filter((e) => e.type === 'swarm_offer');
    assert.deepEqual(
      offered.map((e) => e.payload.fileId).sort(),
      files.map((f) => f.fileId).sort(),
    );
    if (i % 500 === 0 || i >= 4090) {
      const f = files[i % 2];
      const got = node.handleFrame(frame(f, i % 2));
      assert.equal(got.fileId, f.fileId);
      assert.equal(got.index, i % 2);
      assert.deepEqual(got.data, f.chunks[i % 2]);
    }
    node.handlePeerClosed(peer, i);
    drain();
  }
  assert.equal(node.handleFrame(new Uint8Array(64)), null, 'not one of our frames');
  assert.equal(node.pollTimeout() === null || Number.isFinite(node.pollTimeout()), true);
  node.dispose();
});
