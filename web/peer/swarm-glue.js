// Swarm glue: drives the swarm core (tether/swarm, src/swarm) over a real PeerTransport
// (agent-bus-and-swarm.md § Swarm transfer through § Concurrent downloads of the same file).
//
// - Control messages travel as agent-bus envelopes (agent-bus-notes.md) on the control lane; chunk
//   bytes as x-bin frames on the binary lane, or base64 swarm_chunk envelopes for a peer without it.
// - Part files live in a storage folder (web/peer/storage-node.js on disk, storage-opfs.js in the
//   browser's OPFS). A download hashes an existing part file before it starts and credits the
//   chunks that verify (§ Resume). A lock file keyed like the part file makes a second download of
//   the same file into the same folder fail with a clear message; a lock nobody refreshed for five
//   minutes is stale (decided by the core: decideLock).
// - Progress per file and per peer is reported through `onProgress`.
//
// Each file's session runs on the one drive contract through web/glue/driver.js: every input goes
// through driver.input, the driver performs the core's actions in order and keeps one timer at its
// deadline. The glue performs the actions and reports what the transport did (accepted or not),
// what arrived, and the clock. The bounds it keeps (lock refresh, unwritten chunks, queued serves,
// offers remembered) are the core's constants (swarm.limits). web/peer/README.md lists what this
// file still decides.
import { createDriver } from '../glue/driver.js';

// Serving stops while this much is queued on a peer's binary lane, and resumes on `drain`. Bytes
// queued there are latency for every request behind them: at 4 MiB a seeder serving three
// downloaders on a starved machine answered later than the 3 s timeout floor, and every timeout
// is a chunk sent twice. The spec's SDK bounds its send buffer at a 1 MB high-water mark
// (§ What was measured); so do we, the lane's own low-water mark.
const SERVE_HIGH_WATER = 1 << 20;
const PROGRESS_INTERVAL_MS = 100;
// Written chunks kept in memory for serving, newest first, per download. Other downloaders ask
// for chunks we announced (swarm_have batches), and a disk read queues behind every write still
// waiting in the folder's worker: serving peers waited up to 0.5 s per read in a 1 -> 3 bench,
// and a serve queue waits for each read in turn. Released when the download completes.
const RECENT_BYTES = 16 << 20;

const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/** SHA-256 of bytes as lowercase hex (WebCrypto: browsers and Node both have it). */
export async function sha256HexAsync(bytes) {
  return hex(new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes)));
}

/** A seeding source over bytes in memory. */
export function bytesSource(bytes) {
  return {
    size: bytes.byteLength,
    read: async (offset, length) => bytes.subarray(offset, offset + length),
    sha256: () => sha256HexAsync(bytes),
  };
}

/**
 * @param {{
 *   swarm: import('../glue/swarm.d.ts').Swarm,
 *   transport: import('./transport.d.ts').PeerTransport & {maxMessageSize?(p: string): number, binaryCapable?: boolean},
 *   identity?: {role?: string, name?: string, instanceId?: string},
 *   now?: () => number,
 *   onProgress?: (p: object) => void,
 *   log?: (...a: unknown[]) => void,
 *   seed?: number,
 * }} options
 */
export function createSwarmPeer(options) {
  const {
    swarm,
    transport,
    now = () => Date.now(),
    onProgress = () => {},
    log = () => {},
  } = options;
  const selfId = transport.selfId;
  const L = swarm.limits;
  const identity = {
    streamId: selfId,
    role: options.identity?.role ?? 'peer',
    name: options.identity?.name ?? selfId,
    instanceId:
      options.identity?.instanceId ?? `${selfId}.${Math.random().toString(36).slice(2, 10)}`,
  };
  let rngSeed = options.seed ?? (Math.random() * 0x7fffffff) | 0;
  let msgCounter = 0;

  // The core names peers by number.
  const numOf = new Map();
  const idOf = new Map();
  const peerNum = (id) => {
    let n = numOf.get(id);
    if (n === undefined) {
      n = numOf.size + 1;
      numOf.set(id, n);
      idOf.set(n, id);
    }
    return n;
  };

  /** @type {Map<string, any>} fileId -> entry */
  const files = new Map();
  const offers = new Map(); // fileId -> {payload, offerers: Set<peerId>}
  const waiting = new Map(); // fileId -> [resolve] for fetches waiting on an offer
  const activeParts = new Set(); // `${folderKey}/${partName}` held by this process
  const serveQueues = new Map(); // peerId -> {items: [], pumping: bool}
  const stats = {
    refused: [], // {peer, code, detail} of refused swarm messages (bounded)
    refusedCount: 0,
    forgedIdentity: 0,
    ignoredFrames: 0,
    badChunks: 0,
    framesSent: 0,
    base64ChunksSent: 0,
    sendRejected: 0,
    manifestFailures: 0,
    controlReceived: 0,
    signalingDrops: 0,
    serveErrors: 0,
    servesDropped: 0,
    servedFromMemory: 0, // chunk reads for serving answered from memory (unwritten or recent)
    servedFromDisk: 0,
    chunks: {}, // arrivals by the core's verdict: stored, duplicate, bad_hash, unexpected
  };
  const refuse = (peer, code, detail) => {
    stats.refusedCount++;
    if (stats.refused.length < L.maxRefusalsKept) stats.refused.push({ peer, code, detail });
  };

  function envelope(type, to, payloadText) {
    // The payload is already canonical JSON from the core: spliced in, not re-encoded.
    const head = {
      v: L.envelopeVersion,
      id: `${identity.instanceId}.${++msgCounter}`,
      type,
      from: identity,
      to,
      topic: null,
      ts: now(),
    };
    const h = JSON.stringify(head);
    return `${h.slice(0, -1)},"payload":${payloadText}}`;
  }

  function sendControl(to, type, payloadText) {
    if (to !== null) return transport.send(to, envelope(type, to, payloadText));
    // Broadcast: one envelope per open peer, addressed to the room (to: null).
    const text = envelope(type, null, payloadText);
    for (const p of transport.openPeers()) transport.send(p, text);
    return true;
  }

  function capsOf(peer) {
    return {
      binaryLane: transport.binaryCapable ?? transport.hasBinary(peer),
      maxMessageSize: transport.maxMessageSize?.(peer) ?? L.minSctpMessageSize,
    };
  }

  // --- progress ---------------------------------------------------------------------------
  function progressOf(e) {
    const st = e.session.status();
    const peers = {};
    for (const [p, v] of e.perPeer) peers[p] = { ...v };
    return {
      fileId: e.fileId,
      name: e.name,
      role: e.role,
      state: e.state,
      have: st.have,
      total: st.totalChunks,
      size: e.size,
      bytes: Math.min(e.size, st.have * e.chunkSize),
      resumed: e.resumed,
      peers,
    };
  }
  function reportProgress(e, force = false) {
    const t = now();
    if (!force && t - e.lastProgress < PROGRESS_INTERVAL_MS) {
      if (!e.progressTimer)
        e.progressTimer = setTimeout(
          () => ((e.progressTimer = null), reportProgress(e, true)),
          PROGRESS_INTERVAL_MS,
        );
      return;
    }
    e.lastProgress = t;
    try {
      onProgress(progressOf(e));
    } catch (err) {
      log('onProgress', err);
    }
  }
  const peerCounters = (e, peer) => {
    let v = e.perPeer.get(peer);
    if (!v) e.perPeer.set(peer, (v = { received: 0, served: 0 }));
    return v;
  };

  // --- the action loop --------------------------------------------------------------------
  // One action of e's core; the driver calls this for each in order. A result the transport gives
  // at once (a request accepted or not) goes straight back in: the driver's running drain picks
  // up what it causes.
  function performAction(e, a) {
    if (e.disposed) return;
    switch (a.kind) {
      case 'control':
        sendControl(a.to === null ? null : idOf.get(a.to), a.type, a.payload);
        break;
      case 'request': {
        const to = idOf.get(a.to);
        const ok = transport.send(to, envelope(a.type, to, a.payload));
        if (!ok) stats.sendRejected++;
        e.session.handleSendResult(a.token, ok, now());
        break;
      }
      case 'serve':
        enqueueServe(idOf.get(a.to), {
          e,
          index: a.index,
          binary: a.binary,
          offset: a.offset,
          length: a.length,
        });
        break;
      case 'manifestReady':
        startDownload(e).catch((err) => fail(e, err));
        break;
      case 'rebuild': {
        const p = idOf.get(a.peer);
        log('rebuild', p);
        e.session.handlePeerClosed(a.peer, now());
        transport.rebuild?.(p);
        break;
      }
      case 'completed':
        complete(e).catch((err) => fail(e, err));
        break;
      case 'failed':
        onFailed(e, a);
        break;
    }
  }

  // Runs `fn(now)` against e's session, then drains what it caused (nothing once disposed).
  function input(e, fn) {
    if (e.disposed) return undefined;
    return e.driver.input(fn);
  }

  // Disk backpressure: while maxUnwrittenChunks verified chunks wait for their write, the core
  // plans no new requests (a slow disk slows the download rather than filling memory).
  function holdForDisk(e) {
    const held = e.unwritten.size >= L.maxUnwrittenChunks;
    if (held !== e.heldForDisk) {
      e.heldForDisk = held;
      input(e, (t) => e.session.holdRequests(held, t));
    }
  }

  // --- serving ----------------------------------------------------------------------------
  function enqueueServe(peer, item) {
    let q = serveQueues.get(peer);
    if (!q) serveQueues.set(peer, (q = { items: [], pumping: false }));
    // A request repeated after its timeout while the first is still queued is served once; past
    // the core's bound the rest are dropped, and their requesters time out and ask again.
    if (q.items.some((it) => it.e === item.e && it.index === item.index)) return;
    if (q.items.length >= L.maxPendingServesPerPeer) return void stats.servesDropped++;
    q.items.push(item);
    pumpServe(peer);
  }

  async function pumpServe(peer) {
    const q = serveQueues.get(peer);
    if (!q || q.pumping) return;
    q.pumping = true;
    try {
      while (q.items.length) {
        if (transport.bufferedAmount(peer) > SERVE_HIGH_WATER) return; // `drain` resumes us
        const it = q.items.shift();
        if (it.e.disposed) continue;
        const bytes = await it.e.read(it.offset, it.length);
        if (it.binary) {
          const frame = swarm.encodeChunkFrame(it.e.fileId, it.index, bytes);
          if (frame && transport.sendBinary(peer, frame)) {
            stats.framesSent++;
            peerCounters(it.e, peer).served += it.length;
            continue;
          }
          if (transport.hasBinary(peer) && transport.bufferedAmount(peer) > SERVE_HIGH_WATER) {
            q.items.unshift(it); // full: wait for drain
            return;
          }
          // No binary lane (yet): answer on the control lane instead.
        }
        if (sendControl(peer, 'swarm_chunk', it.e.session.chunkPayload(it.index, bytes))) {
          stats.base64ChunksSent++;
          peerCounters(it.e, peer).served += it.length;
        } else stats.sendRejected++; // the requester times out and asks again
      }
    } catch (err) {
      stats.serveErrors++;
      log('serve', peer, err);
    } finally {
      q.pumping = false;
    }
  }

  // --- receiving --------------------------------------------------------------------------
  function onText(peer, text) {
    let env;
    try {
      env = JSON.parse(text);
    } catch {
      return refuse(peer, 'not_json', 'the control message is not JSON');
    }
    if (
      !env ||
      typeof env !== 'object' ||
      typeof env.type !== 'string' ||
      !env.type.startsWith('swarm_')
    )
      return;
    // A connection is bound to the identity it was opened with (§ Untrusted wire input).
    if (env.v !== L.envelopeVersion || !env.from || env.from.streamId !== peer) {
      stats.forgedIdentity++;
      return refuse(
        peer,
        'identity',
        `envelope from ${JSON.stringify(env.from?.streamId)} on ${peer}'s connection`,
      );
    }
    if (env.to !== null && env.to !== undefined && env.to !== selfId) return; // not ours
    const parsed = swarm.parseMessage({ type: env.type, payload: env.payload });
    if (!parsed.ok) return refuse(peer, parsed.code, `${parsed.field}: ${parsed.detail}`);
    const payload = JSON.parse(parsed.payload);
    const directed = env.to === selfId;
    const num = peerNum(peer);
    if (parsed.type === 'swarm_offer') return onOffer(peer, parsed.payload, payload);
    const e = files.get(payload.fileId);
    if (!e) return;
    if (parsed.type === 'swarm_chunk') {
      const bytes = Uint8Array.from(atob(payload.data), (c) => c.charCodeAt(0));
      return void onChunk(e, peer, num, payload.index, bytes).catch((err) => log('chunk', err));
    }
    stats.controlReceived++;
    // Manifest pages from anyone but the peer the core asked are dropped by the core.
    const r = input(e, (t) =>
      e.session.handleMessage(num, parsed.type, parsed.payload, { directed }, t),
    );
    if (r && !r.ok) refuse(peer, r.code, `${r.field}: ${r.detail}`);
  }

  function onBinary(peer, bytes) {
    const f = swarm.parseChunkFrame(bytes);
    if (!f) return void stats.ignoredFrames++;
    const e = files.get(f.fileId);
    if (!e) return void stats.ignoredFrames++;
    onChunk(e, peer, peerNum(peer), f.index, f.data).catch((err) => log('chunk', err));
  }

  // Chunk bytes are hashed with the platform's SHA-256 (SubtleCrypto: native code, the thread pool
  // in Node; Chromium runs it on the page's thread, 12% of a downloader's main thread in a trace),
  // faster than the WASM hash; the core compares the digest and decides. Without SubtleCrypto the
  // core hashes.
  const subtle = globalThis.crypto?.subtle;
  async function onChunk(e, peer, num, index, data) {
    let outcome;
    if (!e.session.wantsChunk(index, data.byteLength)) {
      // A duplicate, a wrong length or too early: the core's verdict needs no digest.
      outcome = input(e, (t) => e.session.handleChunkDigest(num, index, data.byteLength, null, t));
    } else if (subtle) {
      let digest;
      try {
        digest = hex(new Uint8Array(await subtle.digest('SHA-256', data)));
      } catch (err) {
        log('sha256', err);
      }
      outcome =
        digest === undefined
          ? input(e, (t) => e.session.handleChunk(num, index, data, t))
          : input(e, (t) => e.session.handleChunkDigest(num, index, data.byteLength, digest, t));
    } else {
      outcome = input(e, (t) => e.session.handleChunk(num, index, data, t));
    }
    if (outcome === undefined) return; // disposed meanwhile
    stats.chunks[outcome] = (stats.chunks[outcome] ?? 0) + 1;
    if (outcome === 'stored') {
      // `data` views a buffer the lane handed to us alone (or a decoded base64 chunk): kept, not
      // copied; the folder copies what it hands to its writer.
      const copy = data;
      e.receivedIndexes.add(index);
      peerCounters(e, peer).received += copy.byteLength;
      // Held in memory until written: the core already announced the chunk (swarm_have), so a
      // peer may ask for it before the write lands.
      // Writes are issued at once, not chained: the folder applies them in order (one file
      // handle, one worker queue), and waiting for each round trip would let the disk fall
      // behind the network.
      e.unwritten.set(index, copy);
      const w = e.part.write(index * e.chunkSize, copy).then(
        () => {
          e.pendingWrites.delete(w);
          if (e.unwritten.get(index) !== copy) return;
          e.unwritten.delete(index);
          keepRecent(e, index, copy);
          holdForDisk(e);
        },
        (err) => fail(e, err),
      );
      e.pendingWrites.add(w);
      holdForDisk(e);
      reportProgress(e);
    } else if (outcome === 'bad_hash') {
      stats.badChunks++;
      refuse(peer, 'bad_chunk', `chunk ${index} of ${e.fileId} failed verification`);
    }
  }

  // The newest RECENT_BYTES of written chunks, oldest dropped first (a Map iterates in insertion
  // order).
  function keepRecent(e, index, bytes) {
    e.recent.set(index, bytes);
    e.recentBytes += bytes.byteLength;
    for (const [old, b] of e.recent) {
      if (e.recentBytes <= RECENT_BYTES) break;
      e.recent.delete(old);
      e.recentBytes -= b.byteLength;
    }
  }
  function dropRecent(e) {
    e.recent.clear();
    e.recentBytes = 0;
  }

  function onOffer(peer, canonical, payload) {
    let o = offers.get(payload.fileId);
    if (!o && offers.size >= L.maxKnownOffers)
      return refuse(peer, 'too_many_offers', `already ${offers.size} offers remembered`);
    if (!o)
      offers.set(
        payload.fileId,
        (o = { payload: canonical, parsed: payload, offerers: new Set() }),
      );
    if (o.payload !== canonical) {
      // A different shape under the same id: keep the first, which the offerer set vouches for.
      return refuse(peer, 'conflicting_offer', `a second, different offer for ${payload.fileId}`);
    }
    o.offerers.add(peer);
    for (const resolve of waiting.get(payload.fileId) ?? []) resolve();
    waiting.delete(payload.fileId);
  }

  // --- transport events -------------------------------------------------------------------
  const unsubscribe = transport.subscribe({
    open(peer) {
      const num = peerNum(peer);
      for (const e of files.values()) {
        input(e, (t) => e.session.handlePeerOpen(num, capsOf(peer), t));
        if (e.role === 'seed' || e.state === 'complete')
          sendControl(peer, 'swarm_offer', e.offerPayload);
      }
    },
    close(peer) {
      const num = numOf.get(peer);
      serveQueues.delete(peer);
      if (num === undefined) return;
      for (const e of files.values()) input(e, (t) => e.session.handlePeerClosed(num, t));
    },
    text: onText,
    binary: onBinary,
    drain(peer) {
      pumpServe(peer);
    },
    // Our signaling dropping does not stop the data channels, so transfers go on over them
    // meanwhile; the transport holds any rebuild until signaling is back (§ Surviving a network
    // drop: rebuilding underneath a reconnect races it). Once back, everything outstanding is
    // abandoned and re-planned, charging nobody, and rebuilds wait out the core's grace.
    signalingDown() {
      stats.signalingDrops++;
    },
    reconnect() {
      for (const e of files.values()) {
        // Outstanding requests are abandoned and re-planned; nobody is charged (§ Surviving).
        input(e, (t) => {
          e.session.handleTransportDown(t);
          e.session.handleTransportUp(t);
        });
      }
    },
  });

  function newEntry(fields) {
    const e = {
      disposed: false,
      heldForDisk: false,
      perPeer: new Map(),
      lastProgress: 0,
      progressTimer: null,
      pendingWrites: new Set(),
      receivedIndexes: new Set(),
      unwritten: new Map(), // chunk index -> verified bytes not yet on disk
      recent: new Map(), // chunk index -> written bytes, in write order, at most RECENT_BYTES
      recentBytes: 0,
      resumed: 0,
      ...fields,
    };
    // The driven core is e's current session, silent once e is disposed (a failure met while
    // draining disposes it, and the drain must not poll a deleted session).
    const core = {
      pollAction: () => (e.disposed ? null : e.session.pollAction()),
      pollTimeout: () => (e.disposed ? null : e.session.pollTimeout()),
      handleTimeout: (t) => {
        if (!e.disposed) e.session.handleTimeout(t);
      },
    };
    e.driver = createDriver(
      core,
      { perform: (a) => performAction(e, a) },
      { now, onError: (err, where) => log(where, err) },
    );
    return e;
  }

  function attachPeers(e) {
    input(e, (t) => {
      for (const p of transport.openPeers()) e.session.handlePeerOpen(peerNum(p), capsOf(p), t);
    });
  }

  // --- seeding ----------------------------------------------------------------------------
  /**
   * Offers a file: hashes every chunk, then answers requests from anyone in the room.
   * @param {{name: string, mimeType?: string, source: {size: number, read(o: number, l: number): Promise<Uint8Array>, sha256(): Promise<string>}, chunkSize?: number}} f
   */
  async function share({
    name,
    mimeType = 'application/octet-stream',
    source,
    chunkSize = L.defaultChunkSize,
  }) {
    const hashes = [];
    for (let off = 0; off < source.size; off += chunkSize)
      hashes.push(swarm.sha256Hex(await source.read(off, Math.min(chunkSize, source.size - off))));
    const fileId = await source.sha256();
    const offer = swarm.makeOffer({ fileId, name, mimeType, size: source.size, chunkSize, hashes });
    if (!offer.ok) throw new Error(`cannot offer ${name}: ${offer.field}: ${offer.detail}`);
    const opened = swarm.seed(offer.payload, hashes, { seed: rngSeed++ });
    if (!opened.ok) throw new Error(`cannot seed ${name}: ${opened.detail}`);
    const e = newEntry({
      fileId,
      name,
      role: 'seed',
      state: 'seeding',
      size: source.size,
      chunkSize,
      session: opened.session,
      offerPayload: offer.payload,
      read: (o, l) => source.read(o, l),
    });
    files.set(fileId, e);
    attachPeers(e);
    sendControl(null, 'swarm_offer', offer.payload);
    return { fileId, offer: JSON.parse(offer.payload) };
  }

  // --- downloading ------------------------------------------------------------------------
  /**
   * Downloads `fileId` into `storage` (a folder). Resolves once the file is verified and in place.
   * Rejects at once with a clear message when another download of this file into this folder is
   * running (here or in another process/page).
   */
  async function fetchFile(
    fileId,
    storage,
    { waitForOfferMs = L.defaultOfferWaitMs, from = null } = {},
  ) {
    if (files.has(fileId)) throw new Error(`already transferring ${fileId} in this peer`);
    if (!offers.has(fileId)) {
      await new Promise((resolve, reject) => {
        const t = setTimeout(
          () =>
            reject(
              new Error(
                `no peer offered ${fileId} within ${waitForOfferMs} ms: is the seeder in the room?`,
              ),
            ),
          waitForOfferMs,
        );
        const list = waiting.get(fileId) ?? [];
        list.push(() => (clearTimeout(t), resolve()));
        waiting.set(fileId, list);
      });
    }
    const o = offers.get(fileId);
    const offerer = from && o.offerers.has(from) ? from : [...o.offerers][0];
    const partName = swarm.partFileName(fileId, o.parsed.chunkHashesHash, storage.key);
    const lockName = `${partName}.lock`;
    const activeKey = `${storage.key}/${partName}`;
    if (activeParts.has(activeKey))
      throw new Error(
        `${o.parsed.name} is already being downloaded into ${storage.key} by this peer; wait for it or choose another folder`,
      );
    activeParts.add(activeKey);
    try {
      await acquireLock(storage, lockName);
    } catch (err) {
      activeParts.delete(activeKey);
      throw err;
    }
    const opened = swarm.fetch(o.payload, peerNum(offerer), { seed: rngSeed++ }, now());
    if (!opened.ok) {
      activeParts.delete(activeKey);
      await storage.remove(lockName).catch(() => {});
      throw new Error(`cannot fetch ${fileId}: ${opened.field}: ${opened.detail}`);
    }
    let resolveDone, rejectDone;
    const done = new Promise((res, rej) => ((resolveDone = res), (rejectDone = rej)));
    const e = newEntry({
      fileId,
      name: o.parsed.name,
      role: 'fetch',
      state: 'manifest',
      size: o.parsed.size,
      chunkSize: o.parsed.chunkSize,
      session: opened.session,
      offerPayload: o.payload,
      manifestSource: offerer,
      storage,
      partName,
      lockName,
      activeKey,
      part: null,
      async read(off, len) {
        const held = e.unwritten.get(off / e.chunkSize) ?? e.recent.get(off / e.chunkSize);
        if (held) {
          stats.servedFromMemory++;
          return held;
        }
        stats.servedFromDisk++;
        // While the finished part file is moved into place, serving waits for the final file.
        while (e.moving) await e.moving;
        return e.part.read(off, len);
      },
      moving: null,
      resolveDone,
      rejectDone,
      lockTimer: setInterval(
        () => refreshLock(storage, lockName).catch((err) => log('lock refresh', err)),
        L.lockRefreshMs,
      ),
    });
    files.set(fileId, e);
    attachPeers(e);
    return done;
  }

  // The read, the core's decision and the write happen under the folder's own mutual exclusion
  // (OPFS: a Web Lock; disk: an exclusively created mutex file), so two pages or two processes
  // finding the same stale lock cannot both take it over.
  function acquireLock(storage, lockName) {
    if (storage.exclusively)
      return storage.exclusively(lockName, () => takeLock(storage, lockName));
    return takeLock(storage, lockName);
  }

  async function takeLock(storage, lockName) {
    for (let attempt = 0; attempt < L.lockAttempts; attempt++) {
      const text = await storage.readText(lockName);
      let existing = null;
      if (text !== null) {
        try {
          const r = JSON.parse(text);
          existing = { owner: String(r.owner ?? ''), updatedMs: Number(r.updatedMs) || 0 };
        } catch {
          // Unreadable: being written this instant, or torn by a crash. Its age is the file's.
          existing = { owner: '', updatedMs: (await storage.modifiedMs?.(lockName)) ?? 0 };
        }
      }
      const d = swarm.decideLock(existing, identity.streamId, now());
      if (d.verdict === 'busy') throw new Error(d.message);
      const record = JSON.stringify({
        owner: identity.streamId,
        instance: identity.instanceId,
        updatedMs: now(),
      });
      if (await storage.writeText(lockName, record, { exclusive: d.verdict === 'acquire' })) return;
      // Lost a race to create it: decide again on what the winner wrote.
    }
    throw new Error(
      `could not take the download lock ${lockName} in ${storage.key}; another download of this file into this folder is starting`,
    );
  }

  async function refreshLock(storage, lockName) {
    await storage.writeText(
      lockName,
      JSON.stringify({ owner: identity.streamId, instance: identity.instanceId, updatedMs: now() }),
      { exclusive: false },
    );
  }

  async function startDownload(e) {
    // § Resume: read what the part file already holds and hash it; the core credits only the
    // chunks that match the manifest.
    e.part = await e.storage.openFile(e.partName);
    const have = await e.part.size();
    const total = e.session.status().totalChunks;
    for (let i = 0; i < total && !e.disposed; i++) {
      const off = i * e.chunkSize;
      const len = Math.min(e.chunkSize, e.size - off);
      if (off + len > have) break; // chunks are read in order: nothing further is in the file
      e.session.resumeFeed(i, len, await sha256HexAsync(await e.part.read(off, len)));
    }
    if (e.disposed) return;
    e.resumedIndexes = e.session.resumed();
    e.state = 'downloading';
    e.resumed = input(e, (t) => e.session.handleResumeDone(t));
    reportProgress(e, true);
  }

  async function complete(e) {
    if (e.role !== 'fetch' || e.state === 'finishing' || e.state === 'complete') return;
    e.state = 'finishing';
    while (e.pendingWrites.size) await Promise.all([...e.pendingWrites]);
    await e.part.flush();
    const digest = await e.part.sha256();
    if (digest !== e.fileId)
      throw new Error(
        `${e.name}: every chunk verified but the file's SHA-256 is ${digest}, not the offered ${e.fileId}; the offer was wrong, the part file is kept`,
      );
    let moved;
    e.moving = new Promise((r) => (moved = r));
    try {
      const saved = await e.storage.finish(e.part, e.partName, e.name);
      e.part = saved.handle; // keep serving from the final file
      e.savedName = saved.name;
    } finally {
      e.moving = null;
      moved();
    }
    await e.storage.remove(e.lockName).catch(() => {});
    clearInterval(e.lockTimer);
    activeParts.delete(e.activeKey);
    dropRecent(e); // every write has landed: the disk answers at once from now on
    e.state = 'complete';
    reportProgress(e, true);
    // Now a seeder of the whole file for late joiners.
    sendControl(null, 'swarm_offer', e.offerPayload);
    e.resolveDone({
      fileId: e.fileId,
      name: e.savedName,
      size: e.size,
      sha256: digest,
      resumed: e.resumed,
    });
  }

  function onFailed(e, a) {
    if (a.code === 'manifest_digest_mismatch') {
      // The source's pages do not add up to the offer's digest. Nothing touched the disk. Ask
      // another peer that offered the file; the liar is not asked again.
      stats.manifestFailures++;
      const liar = e.manifestSource;
      refuse(liar, a.code, a.detail);
      const o = offers.get(e.fileId);
      o?.offerers.delete(liar);
      const next = o && [...o.offerers][0];
      if (!next)
        return fail(
          e,
          new Error(
            `${e.name}: the manifest from ${liar} does not match the offer's digest and no other peer offers it; try again when a trusted peer is in the room`,
          ),
        );
      // Called from the driver's drain: the input runs, and the same drain sends its requests.
      e.manifestSource = next;
      e.session.retryManifestFrom(peerNum(next), now());
      return;
    }
    fail(e, new Error(`${a.code}: ${a.detail}`));
  }

  async function fail(e, err) {
    if (e.disposed || e.state === 'complete') return;
    log('transfer failed', e.fileId, err);
    dispose(e);
    if (e.lockName) await e.storage.remove(e.lockName).catch(() => {});
    e.rejectDone?.(err);
  }

  function dispose(e) {
    e.disposed = true;
    e.driver.close();
    clearTimeout(e.progressTimer);
    clearInterval(e.lockTimer);
    if (e.activeKey) activeParts.delete(e.activeKey);
    dropRecent(e);
    files.delete(e.fileId);
    e.session.dispose();
  }

  return {
    identity,
    share,
    fetch: fetchFile,
    /** Offers seen so far: fileId -> the offer payload plus the peers that offered it. */
    offers: () =>
      Object.fromEntries(
        [...offers].map(([k, v]) => [k, { ...v.parsed, offeredBy: [...v.offerers] }]),
      ),
    progress: (fileId) => (files.has(fileId) ? progressOf(files.get(fileId)) : null),
    /** Chunk indexes this process received over the network for `fileId` (not resumed ones). */
    receivedIndexes: (fileId) => [...(files.get(fileId)?.receivedIndexes ?? [])],
    resumedIndexes: (fileId) => [...(files.get(fileId)?.resumedIndexes ?? [])],
    status: (fileId) => files.get(fileId)?.session.status() ?? null,
    stats: () => ({ ...stats, refused: stats.refused.slice() }),
    async close() {
      unsubscribe();
      for (const e of [...files.values()]) {
        dispose(e);
        await e.part?.close?.().catch?.(() => {});
      }
    },
  };
}
