// Swarm transfers between real peers over real RTCDataChannels (agent-bus-and-swarm.md § Swarm
// transfer, § Resume, § Surviving a network drop, § Concurrent downloads, § Untrusted wire input):
// Chromium pages with OPFS part files, a Node agent on node-datachannel with a disk folder, and a
// hostile Node peer, all signaling through the loopback room relay. Runs itself inside a private
// network namespace (tests/e2e/lib/netns.mjs).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { inNetns } from './lib/netns.mjs';

if (inNetns(import.meta.url)) {
  const { api, newPeerContext, openPeer, results, startPeerHarness, stopPeerHarness } =
    await import('./lib/peer_harness.mjs');
  const { makeBytes } = await import('./lib/peer_bytes.js');
  const { createWebRtcTransport, loopbackOnly } =
    await import('../../web/peer/webrtc-transport.js');
  const { createSwarmPeer } = await import('../../web/peer/swarm-glue.js');
  const { nodeFolder } = await import('../../web/peer/storage-node.js');
  const { loadSwarm } = await import('@tether-rt/tether/swarm');
  const { RTCPeerConnection } = await import('node-datachannel/polyfill');
  const { default: WebSocket } = await import('ws');

  const MiB = 1 << 20;
  const sha = (b) => createHash('sha256').update(b).digest('hex');
  // Resolves once `page` holds `n` verified chunks of `fileId` (the test's own timeout bounds it).
  const untilHave = (page, fileId, n) =>
    page.waitForFunction(([f, k]) => window.peerApi.have(f) >= k, [fileId, n], {
      timeout: 0,
      polling: 'raf',
    });
  let h;
  let tmp;
  const nodeThings = []; // closed in `after`, also on failure

  before(async () => {
    h = await startPeerHarness();
    tmp = await mkdtemp(join(tmpdir(), 'tether-peer-'));
  });
  after(async () => {
    for (const x of nodeThings.reverse()) await x.close().catch(() => {});
    await stopPeerHarness(h ?? {});
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const waitOpen = async (page, n) =>
    page.waitForFunction((k) => window.peerApi.openPeers().length >= k, n, {
      timeout: 0,
      polling: 50,
    });
  const problems = (pages) => pages.flatMap((p) => p.problems);

  /** A room with a seeder page and downloader pages (own contexts, own OPFS). */
  async function swarmRoom(room, ids, { size, seed }) {
    const seeder = await openPeer(h, await newPeerContext(h), { id: 'seed', room, seed: 1 });
    const downloaders = [];
    for (const [i, id] of ids.entries()) {
      const ctx = await newPeerContext(h);
      const page = await openPeer(h, ctx, { id, room, seed: 100 + i });
      page.ctx = ctx;
      downloaders.push(page);
    }
    await waitOpen(seeder, ids.length);
    for (const d of downloaders) await waitOpen(d, ids.length);
    const fileId = await api(seeder, 'share', { name: 'payload.bin', size, seed });
    return { seeder, downloaders, fileId };
  }

  async function assertSaved(page, fileId, expected, folder = 'downloads') {
    const r = await api(page, 'result', fileId);
    assert.equal(r.ok, true, `download failed: ${r.error}`);
    assert.equal(r.result.sha256, expected);
    // Independently: the bytes in OPFS hash to the file's id.
    assert.equal(await api(page, 'digestSaved', folder, r.result.name), expected);
    return r.result;
  }

  test(
    '1 seeder + 3 downloaders in Chromium: downloaders trade chunks and every SHA-256 verifies',
    { timeout: 600_000 },
    async () => {
      const size = 24 * MiB + 4321; // 385 chunks: a paged manifest
      const expected = sha(makeBytes(size, 7));
      const { seeder, downloaders, fileId } = await swarmRoom('swarm-4', ['d1', 'd2', 'd3'], {
        size,
        seed: 7,
      });
      assert.equal(fileId, expected);
      for (const d of downloaders) await api(d, 'startFetch', fileId, 'downloads');
      await results(downloaders, fileId);
      let peerToPeer = 0;
      for (const d of downloaders) {
        await assertSaved(d, fileId, expected);
        const p = await api(d, 'progress', fileId);
        assert.equal(p.have, p.total);
        const fromPeers = Object.entries(p.peers)
          .filter(([id]) => id !== 'seed')
          .reduce((n, [, v]) => n + v.received, 0);
        peerToPeer += fromPeers;
        assert.equal(
          Object.values(p.peers).reduce((n, v) => n + v.received, 0),
          size,
          'every byte came from exactly one peer',
        );
        // The page's progress bar is full and lists the peers it exchanged with.
        const [bar] = await api(d, 'bars');
        assert.equal(bar.state, 'complete');
        assert.equal(bar.value, bar.max);
        assert.ok(bar.peers.includes('seed'));
        const st = await api(d, 'stats');
        assert.equal(st.chunks.bad_hash ?? 0, 0);
        // A downloader serves what it announced from memory while it still holds it (RECENT_BYTES).
        if (st.framesSent > 0) assert.ok(st.servedFromMemory > 0, JSON.stringify(st));
      }
      assert.ok(peerToPeer > 0, 'no chunk travelled between downloaders');
      assert.deepEqual(problems([seeder, ...downloaders]), []);
      for (const p of [seeder, ...downloaders]) await p.close();
    },
  );

  test(
    "an OPFS folder's read-decide-write is one step for every page of the origin",
    { timeout: 120_000 },
    async () => {
      // Two pages of one origin (one context) race a read-modify-write of one file in one folder,
      // as two downloads race to take over a stale lock file. Without the Web Lock both read
      // nothing and both write 1.
      const ctx = await newPeerContext(h);
      const [a, b] = await Promise.all([ctx.newPage(), ctx.newPage()]);
      for (const p of [a, b]) {
        await p.goto(`${h.web.origin}/tests/e2e/pages/peer-swarm.html`);
        await p.waitForFunction(() => window.peerApiReady === true);
      }
      const reads = await Promise.all([
        api(a, 'counterUnderLock', 'race', 'counter.txt', 300),
        api(b, 'counterUnderLock', 'race', 'counter.txt', 300),
      ]);
      assert.deepEqual([...reads].sort(), ['1', null].sort());
      assert.equal(await api(a, 'readText', 'race', 'counter.txt'), '2');
      await a.close();
      await b.close();
    },
  );

  // Runs `fn` in a fresh peer page of its own (no peer started) and returns its result.
  async function onFreshPage(fn) {
    const p = await (await newPeerContext(h)).newPage();
    try {
      await p.goto(`${h.web.origin}/tests/e2e/pages/peer-swarm.html`);
      return await p.evaluate(fn);
    } finally {
      await p.close();
    }
  }

  test(
    'OPFS writes batched into one buffer land where and in the order they were made',
    { timeout: 120_000 },
    async () => {
      // storage-opfs.js copies each write into its batch's buffer and posts (offset, length) spans:
      // writes bigger than a buffer, a batch cut by a full buffer, overlapping writes and a caller
      // that reuses its bytes at once must all come out as if written one by one.
      const r = await onFreshPage(async () => {
        const { opfsFolder } = await import('/web/peer/storage-opfs.js');
        const f = await opfsFolder('batched');
        const part = await f.openFile('b.part');
        const sizes = [65536, 1, 3000, 2500000, 65536, 7, 131072, 65536, 900000, 12];
        const expected = new Uint8Array(sizes.reduce((a, b) => a + b, 0));
        const scratch = new Uint8Array(2500000);
        const writes = [];
        let at = 0;
        for (let round = 0; round < 3; round++) {
          at = 0;
          for (const [i, n] of sizes.entries()) {
            const v = (i * 37 + round * 101) & 255;
            scratch.fill(v, 0, n);
            expected.fill(v, at, at + n); // the last round's bytes win
            writes.push(part.write(at, scratch.subarray(0, n)));
            scratch.fill(0, 0, n); // reused at once
            at += n;
          }
        }
        await Promise.all(writes);
        await part.flush();
        const got = await f.readAll('b.part');
        let same = got.length === expected.length;
        for (let i = 0; same && i < got.length; i++) same = got[i] === expected[i];
        await part.close();
        f.close();
        return { same, length: got.length, expected: expected.length };
      });
      assert.deepEqual(r, { same: true, length: r.expected, expected: r.expected });
    },
  );

  test(
    'two OPFS folders of one page keep their files apart; closing one leaves the other working',
    { timeout: 120_000 },
    async () => {
      // The page's folders share one worker (web/peer/storage-opfs.js): the same names in two
      // folders are two files, and one folder's close() ends neither the worker nor the other.
      const r = await onFreshPage(async () => {
        const { opfsFolder } = await import('/web/peer/storage-opfs.js');
        const a = await opfsFolder('apart/a');
        const b = await opfsFolder('apart/b');
        await a.writeText('same.txt', 'in a');
        await b.writeText('same.txt', 'in b');
        const pa = await a.openFile('same.part');
        const pb = await b.openFile('same.part');
        await Promise.all([
          pa.write(0, new Uint8Array([1, 2, 3])),
          pb.write(0, new Uint8Array([9])),
        ]);
        const texts = [await a.readText('same.txt'), await b.readText('same.txt')];
        const parts = [
          Array.from(await a.readAll('same.part')),
          Array.from(await b.readAll('same.part')),
        ];
        a.close();
        let closed = null;
        try {
          await a.readText('same.txt');
        } catch (e) {
          closed = String(e.message);
        }
        await pb.write(1, new Uint8Array([8]));
        const bAfter = [await b.readText('same.txt'), Array.from(await b.readAll('same.part'))];
        const again = await opfsFolder('apart/a'); // its part file was closed with the folder
        const aAgain = [
          await again.readText('same.txt'),
          Array.from(await again.readAll('same.part')),
        ];
        b.close();
        again.close();
        return { texts, parts, closed, bAfter, aAgain };
      });
      assert.deepEqual(r.texts, ['in a', 'in b']);
      assert.deepEqual(r.parts, [[1, 2, 3], [9]]);
      assert.match(r.closed ?? '', /this folder was closed/);
      assert.deepEqual(r.bAfter, ['in b', [9, 8]]);
      assert.deepEqual(r.aAgain, ['in a', [1, 2, 3]]);
    },
  );

  test(
    'a second download of the same file into the same folder fails with a clear message',
    { timeout: 600_000 },
    async () => {
      const size = 8 * MiB;
      const room = 'swarm-lock';
      const seeder = await openPeer(h, await newPeerContext(h), { id: 'seed', room });
      const ctx = await newPeerContext(h); // one origin storage: the same OPFS folder
      const a = await openPeer(h, ctx, { id: 'da', room, seed: 2 });
      const b = await openPeer(h, ctx, { id: 'db', room, seed: 3 });
      await waitOpen(seeder, 2);
      const fileId = await api(seeder, 'share', { name: 'same.bin', size, seed: 9 });
      await Promise.all([
        api(a, 'startFetch', fileId, 'shared'),
        api(b, 'startFetch', fileId, 'shared'),
      ]);
      const [ra, rb] = await results([a, b], fileId);
      const failed = [ra, rb].filter((r) => !r.ok);
      assert.equal(failed.length, 1, JSON.stringify([ra, rb]));
      assert.match(failed[0].error, /already|another/i);
      assert.match(failed[0].error, /same\.bin|folder|download/i);
      const ok = [ra, rb].find((r) => r.ok);
      assert.equal(ok.result.sha256, sha(makeBytes(size, 9)));
      // Into another folder the same file downloads fine.
      const loser = ra.ok ? b : a;
      await api(loser, 'startFetch', fileId, 'elsewhere');
      const [again] = await results([loser], fileId);
      assert.equal(again.ok, true, again.error);
      for (const p of [seeder, a, b]) await p.close();
    },
  );

  test(
    'a downloader killed mid-transfer resumes after restart without re-fetching verified chunks',
    { timeout: 600_000 },
    async () => {
      const size = 48 * MiB;
      const expected = sha(makeBytes(size, 11));
      const { seeder, downloaders, fileId } = await swarmRoom('swarm-resume', ['d1'], {
        size,
        seed: 11,
      });
      const [d1] = downloaders;
      await api(d1, 'startFetch', fileId, 'downloads');
      await untilHave(d1, fileId, 200);
      const total = (await api(seeder, 'status', fileId)).totalChunks;
      await d1.close(); // the page and its OPFS worker die; unwritten chunks are lost
      const again = await openPeer(h, d1.ctx, { id: 'd1', room: 'swarm-resume', seed: 200 });
      await waitOpen(again, 1);
      await api(again, 'startFetch', fileId, 'downloads');
      await results([again], fileId);
      const saved = await assertSaved(again, fileId, expected);
      const resumed = await api(again, 'resumedIndexes', fileId);
      const received = await api(again, 'receivedIndexes', fileId);
      // Chunks verified in memory but not yet written when the page died are fetched again;
      // everything that reached the part file is credited.
      assert.ok(
        resumed.length >= 50,
        `only ${resumed.length} chunks were credited from the part file`,
      );
      assert.equal(saved.resumed, resumed.length);
      assert.deepEqual(
        resumed.filter((i) => received.includes(i)),
        [],
        'a verified chunk was fetched again',
      );
      assert.equal(resumed.length + received.length, total);
      assert.equal((await api(again, 'stats')).chunks.stored, total - resumed.length);
      for (const p of [seeder, again]) await p.close();
    },
  );

  test(
    'cutting every signaling socket mid-transfer: the transfer recovers',
    { timeout: 600_000 },
    async () => {
      const size = 32 * MiB;
      const expected = sha(makeBytes(size, 13));
      const { seeder, downloaders, fileId } = await swarmRoom('swarm-drop', ['d1', 'd2', 'd3'], {
        size,
        seed: 13,
      });
      for (const d of downloaders) await api(d, 'startFetch', fileId, 'downloads');
      await untilHave(downloaders[0], fileId, 60);
      h.rooms.dropAll();
      await results(downloaders, fileId, { explainAfterMs: 240_000 });
      for (const d of downloaders) {
        await assertSaved(d, fileId, expected);
        const ts = await api(d, 'transportStats');
        assert.ok(ts.signalingReconnects >= 1, 'the signaling socket was not cut');
      }
      assert.ok((await api(seeder, 'transportStats')).signalingReconnects >= 1);
      for (const p of [seeder, ...downloaders]) await p.close();
    },
  );

  test(
    'a path that silently stops delivering is torn down and rebuilt, and the transfer completes',
    { timeout: 600_000 },
    async () => {
      const size = 16 * MiB;
      const expected = sha(makeBytes(size, 29));
      const { seeder, downloaders, fileId } = await swarmRoom('swarm-dead-path', ['d1'], {
        size,
        seed: 29,
      });
      const [d1] = downloaders;
      await api(d1, 'startFetch', fileId, 'downloads');
      await untilHave(d1, fileId, 20);
      // Requests still reach the seeder and it still sends; the bytes never land (the spec's
      // case). Only the swarm's misses notice; the core asks for a rebuild.
      assert.equal(await api(d1, 'blackhole', 'seed'), true);
      await results([d1], fileId);
      await assertSaved(d1, fileId, expected);
      const st = await api(d1, 'status', fileId);
      assert.ok(st.timeouts >= 3, `timeouts: ${st.timeouts}`);
      assert.ok(st.rebuilds >= 1, `the core never asked for a rebuild: ${JSON.stringify(st)}`);
      assert.ok((await api(d1, 'transportStats')).rebuilds >= 1);
      for (const p of [seeder, d1]) await p.close();
    },
  );

  test(
    'hostile signaling is refused and the room keeps connecting',
    { timeout: 600_000 },
    async () => {
      const room = 'signal-hostile';
      const mk = (id) => {
        const t = createWebRtcTransport({
          url: h.rooms.url,
          room,
          selfId: id,
          RTCPeerConnection,
          WebSocket,
          rtcConfig: { iceServers: [], bindAddress: '127.0.0.1' },
          candidateFilter: loopbackOnly,
        });
        nodeThings.push(t);
        return t;
      };
      const victim = mk('m-node');
      await victim.ready;
      const raw = async (id) => {
        const ws = new WebSocket(`${h.rooms.url}?writer=${id}`);
        await new Promise((r) => ws.once('open', r));
        ws.send(JSON.stringify({ t: 'hello', room, origin: id, proto: 3, policyVersion: 1 }));
        await new Promise((r) => ws.once('message', r)); // welcome
        nodeThings.push({ close: async () => ws.terminate() });
        return (data) => ws.send(JSON.stringify({ t: 'signal', room, to: 'm-node', data }));
      };
      const low = await raw('a-raw'); // a legitimate offerer for m-node, sending garbage
      const high = await raw('z-raw'); // may never offer to m-node
      const junk = [
        'text',
        null,
        [1, 2],
        { k: 'offer' },
        { k: 'offer', gen: 'g'.repeat(100), sdp: 'v=0' },
        { k: 'answer', gen: 'nope', sdp: 'x' },
        { k: 'ice', gen: 'nope', c: { candidate: 7 } },
        { k: 'launch-missiles', gen: 'g' },
      ];
      for (const d of junk) low(d);
      high({ k: 'offer', gen: 'g1', sdp: 'v=0\r\n' }); // glare rule: only the lower id offers
      low({ k: 'offer', gen: 'g2', sdp: 'not an sdp at all' }); // well-formed signal, broken SDP
      for (let i = 0; i < 200 && victim.stats().refusedSignals < 8; i++)
        await new Promise((r) => setTimeout(r, 25));
      assert.ok(victim.stats().refusedSignals >= 8, JSON.stringify(victim.stats()));
      // The victim still negotiates with a real peer and carries both lanes.
      const friend = mk('b-node');
      const got = new Promise((resolve) =>
        victim.subscribe({ text: (p, t) => p === 'b-node' && resolve(t) }),
      );
      const bin = new Promise((resolve) =>
        victim.subscribe({ binary: (p, b) => p === 'b-node' && resolve(b) }),
      );
      for (
        let i = 0;
        i < 600 && !(friend.openPeers().includes('m-node') && friend.hasBinary('m-node'));
        i++
      )
        await new Promise((r) => setTimeout(r, 25));
      assert.equal(friend.send('m-node', '{"hello":1}'), true);
      assert.equal(friend.sendBinary('m-node', new Uint8Array([1, 2, 3])), true);
      assert.equal(await got, '{"hello":1}');
      assert.deepEqual([...(await bin)], [1, 2, 3]);
      // Over the negotiated limit is refused, not sent: the caller keeps the message.
      assert.equal(
        friend.sendBinary('m-node', new Uint8Array(friend.maxMessageSize('m-node') + 1)),
        false,
      );
      assert.equal(friend.send('nobody', 'x'), false);
    },
  );

  test(
    'Node agents: a live lock refuses, a stale one is taken over, a restarted agent resumes from disk',
    { timeout: 600_000 },
    async () => {
      const swarm = await loadSwarm();
      const room = 'node-resume';
      const size = 40 * MiB + 5;
      const bytes = makeBytes(size, 23);
      const expected = sha(bytes);
      const agentOn = (id, seed) => {
        const t = createWebRtcTransport({
          url: h.rooms.url,
          room,
          selfId: id,
          RTCPeerConnection,
          WebSocket,
          rtcConfig: { iceServers: [], bindAddress: '127.0.0.1' },
          candidateFilter: loopbackOnly,
        });
        const p = createSwarmPeer({ swarm, transport: t, identity: { role: 'agent' }, seed });
        nodeThings.push(t, p);
        return { t, p };
      };
      const { bytesSource } = await import('../../web/peer/swarm-glue.js');
      const seeder = agentOn('n-seed', 1);
      const first = agentOn('n-dl', 2);
      for (let i = 0; i < 600 && !first.t.openPeers().includes('n-seed'); i++)
        await new Promise((r) => setTimeout(r, 25));
      const { fileId, offer } = await seeder.p.share({
        name: 'agent-resume.bin',
        source: bytesSource(bytes),
      });
      for (let i = 0; i < 200 && !first.p.offers()[fileId]; i++)
        await new Promise((r) => setTimeout(r, 25));

      const folder = await nodeFolder(join(tmp, 'node-resume'));
      const lockName = `${swarm.partFileName(fileId, offer.chunkHashesHash, folder.key)}.lock`;
      // Another live download holds the lock: refused with the core's message, nothing started.
      await folder.writeText(
        lockName,
        JSON.stringify({ owner: 'other-agent', updatedMs: Date.now() }),
      );
      await assert.rejects(
        first.p.fetch(fileId, folder),
        /another download of this file into the same folder is running \(lock held by other-agent/,
      );
      // A lock nobody refreshed for over five minutes is stale: taken over.
      await folder.writeText(
        lockName,
        JSON.stringify({ owner: 'other-agent', updatedMs: Date.now() - 6 * 60_000 }),
      );
      const running = first.p.fetch(fileId, folder);
      running.catch(() => {}); // settled by the close below
      for (let i = 0; i < 2000 && (first.p.status(fileId)?.have ?? 0) < 200; i++)
        await new Promise((r) => setTimeout(r, 5));
      assert.ok(first.p.status(fileId).have >= 200);
      assert.equal(JSON.parse(await folder.readText(lockName)).owner, 'n-dl');
      // The agent stops mid-transfer (its process would exit here): part file and lock stay.
      await first.p.close();
      await first.t.close();
      const again = agentOn('n-dl', 3);
      for (let i = 0; i < 200 && !again.p.offers()[fileId]; i++)
        await new Promise((r) => setTimeout(r, 25));
      const saved = await again.p.fetch(fileId, folder);
      assert.equal(saved.sha256, expected);
      assert.equal(sha(await readFile(join(folder.path, saved.name))), expected);
      const resumed = again.p.resumedIndexes(fileId);
      const received = again.p.receivedIndexes(fileId);
      assert.ok(resumed.length >= 100, `only ${resumed.length} chunks credited`);
      assert.deepEqual(
        resumed.filter((i) => received.includes(i)),
        [],
      );
      assert.equal(resumed.length + received.length, offer.totalChunks);
      assert.equal(
        await folder.readText(lockName),
        null,
        'the lock is removed once the file is in place',
      );
    },
  );

  test(
    'a Node agent (node-datachannel) downloads from the browser; a hostile peer is refused',
    { timeout: 600_000 },
    async () => {
      const swarm = await loadSwarm();
      const room = 'swarm-node';
      const size = 20 * MiB + 77; // 321 chunks: paged
      const expected = sha(makeBytes(size, 17));
      const nodeTransport = (id) => {
        const t = createWebRtcTransport({
          url: h.rooms.url,
          room,
          selfId: id,
          RTCPeerConnection,
          WebSocket,
          rtcConfig: { iceServers: [], bindAddress: '127.0.0.1' },
          candidateFilter: loopbackOnly,
        });
        nodeThings.push(t);
        return t;
      };
      const seeder = await openPeer(h, await newPeerContext(h), { id: 'seed', room });
      const browserDl = await openPeer(h, await newPeerContext(h), { id: 'd1', room, seed: 5 });

      // The hostile peer replays the real offer as its own and lies about everything else.
      const evil = nodeTransport('a-evil'); // lowest id: it offers to everyone
      let realOffer = null;
      evil.subscribe({
        text(peer, text) {
          const env = JSON.parse(text);
          if (env.type === 'swarm_offer' && env.from.streamId === 'seed') realOffer = env.payload;
          if (env.type === 'swarm_manifest_request') {
            // Pages that carry the offer's digest but hashes that do not add up to it.
            for (const page of env.payload.pages) {
              const n = Math.min(
                env.payload.pageSize,
                realOffer.totalChunks - page * env.payload.pageSize,
              );
              const payload = {
                fileId: realOffer.fileId,
                page,
                totalPages: realOffer.manifestPages,
                pageSize: env.payload.pageSize,
                chunkHashesHash: realOffer.chunkHashesHash,
                hashes: Array.from({ length: n }, (_, i) => sha(`bogus ${page} ${i}`)),
              };
              evil.send(
                peer,
                JSON.stringify({
                  v: 1,
                  id: `evil-p${page}`,
                  type: 'swarm_manifest_page',
                  from: { streamId: 'a-evil', role: 'peer', name: 'evil', instanceId: 'e1' },
                  to: peer,
                  topic: null,
                  ts: Date.now(),
                  payload,
                }),
              );
            }
          }
        },
      });
      const agentT = nodeTransport('n-agent');
      const agent = createSwarmPeer({
        swarm,
        transport: agentT,
        identity: { role: 'agent' },
        seed: 77,
      });
      nodeThings.push(agent);
      await agentT.ready;
      for (
        let i = 0;
        i < 600 && !(agentT.openPeers().length >= 3 && evil.openPeers().length >= 3);
        i++
      )
        await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(agentT.openPeers().sort(), ['a-evil', 'd1', 'seed']);

      const fileId = await api(seeder, 'share', { name: 'agent.bin', size, seed: 17 });
      for (let i = 0; i < 200 && !realOffer; i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(realOffer, 'the hostile peer never saw the offer');
      const env = (type, payload, from = 'a-evil') =>
        JSON.stringify({
          v: 1,
          id: `evil-${type}-${Math.random()}`,
          type,
          from: { streamId: from, role: 'peer', name: 'evil', instanceId: 'e1' },
          to: null,
          topic: null,
          ts: Date.now(),
          payload,
        });
      for (const victim of ['n-agent', 'd1']) {
        evil.send(victim, env('swarm_offer', realOffer)); // the same offer, now also "from" the liar
        evil.send(
          victim,
          env('swarm_offer', { ...realOffer, fileId: 'f'.repeat(64), size: 10, totalChunks: 99 }),
        ); // inconsistent summary
        evil.send(victim, env('swarm_have', { fileId, indexes: [0, 1, 2] }, 'seed')); // forged identity
      }
      // Let the victims take the replayed offer before they start.
      for (let i = 0; i < 200 && !agent.offers()[fileId]?.offeredBy.includes('a-evil'); i++)
        await new Promise((r) => setTimeout(r, 50));

      const folder = await nodeFolder(join(tmp, 'agent-downloads'));
      const agentDone = agent.fetch(fileId, folder, { from: 'a-evil' }); // the liar is asked first
      await api(browserDl, 'startFetch', fileId, 'downloads');
      // Garbage on the binary lane while the transfer runs: random bytes, frames of an unknown
      // file, and well-formed frames of this file carrying the wrong bytes.
      const junk = [
        new Uint8Array(100).fill(7),
        swarm.encodeChunkFrame('e'.repeat(64), 0, new Uint8Array(10)),
        swarm.encodeChunkFrame(fileId, 3, new Uint8Array(64 * 1024).fill(1)),
      ];
      for (let round = 0; round < 5; round++) {
        for (const victim of ['n-agent', 'd1']) for (const j of junk) evil.sendBinary(victim, j);
        await new Promise((r) => setTimeout(r, 100));
      }

      const saved = await agentDone;
      assert.equal(saved.sha256, expected);
      assert.equal(sha(await readFile(join(folder.path, saved.name))), expected);
      await results([browserDl], fileId);
      await assertSaved(browserDl, fileId, expected);

      const st = agent.stats();
      const codes = new Set(st.refused.map((r) => r.code));
      assert.ok(codes.has('manifest_digest_mismatch'), JSON.stringify(st.refused));
      assert.ok(codes.has('inconsistent_shape'), JSON.stringify(st.refused));
      assert.ok(st.forgedIdentity >= 1);
      assert.ok(st.ignoredFrames >= 1);
      const bst = await api(browserDl, 'stats');
      assert.ok(new Set(bst.refused.map((r) => r.code)).has('inconsistent_shape'));
      assert.ok(bst.forgedIdentity >= 1);
      assert.ok(bst.ignoredFrames >= 1);
      // The agent's download came over WebRTC from the browser seeder, not from the liar.
      const ap = agent.progress(fileId);
      assert.equal(ap.peers['a-evil']?.received ?? 0, 0);
      assert.ok(ap.peers.seed.received > 0);
      for (const p of [seeder, browserDl]) await p.close();
    },
  );
}
