// Swarm glue: moves bytes between a real PeerTransport, a storage folder, timers and the swarm's
// file-set core (src/swarm/node.hpp, swarm.createNode) (agent-bus-and-swarm.md § Swarm transfer
// through § Concurrent downloads of the same file).
//
// The core decides: it builds and checks the agent-bus envelopes (a connection speaks only as the
// identity it was opened with), remembers the room's offers (one per file id, a second different
// offer refused), picks the offerer to ask for the manifest and the next after a digest mismatch,
// refuses manifest pages nobody asked for, de-duplicates and bounds the serves queued per peer,
// runs the resume pass one read at a time, checks the whole file's digest, holds requests while
// the disk is behind, and says when to refresh the lock. It runs on the one drive contract through
// web/glue/driver.js: every input goes through driver.input, the driver performs the core's
// actions in order and keeps one timer at its deadline.
//
// What stays here is I/O: the data channels (sending what the core wrote, pausing serves while a
// lane is full), the part file and lock file, hashing with the platform's SHA-256, memory for
// chunks not yet written or recently written (served from memory rather than queued behind the
// disk), and progress reports. web/peer/README.md lists what this file still decides.
import { createDriver } from '../glue/driver.js';

// How often progress is reported per file at most: a display rate, not protocol.
const PROGRESS_INTERVAL_MS = 100;

// Every chunk's digest goes through here: a table and one string of 64 characters, not an array
// of 32 padded strings joined (2-5% of a downloader's main thread, bench/README.md § Swarm 1 -> 1).
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));
const hex = (bytes) => {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]];
  return out;
};

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
 *   session?: {windowPerPeer?: number, windowTotal?: number},
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
  const node = swarm.createNode({
    self: {
      streamId: selfId,
      role: options.identity?.role ?? 'peer',
      name: options.identity?.name ?? selfId,
      instanceId: options.identity?.instanceId ?? '',
    },
    seed: options.seed ?? (Math.random() * 0x7fffffff) | 0,
    ...options.session, // the core's download settings (requests in flight); its defaults otherwise
  });
  const identity = node.identity();

  /** @type {Map<string, any>} fileId -> what the host holds for a file (storage, memory, progress) */
  const files = new Map();
  const waiting = new Map(); // fileId -> [{resolve, reject}] for fetches waiting on an offer
  const activeParts = new Set(); // `${folderKey}/${partName}` held by this process
  const serveQueues = new Map(); // peerId -> {items: [], pumping: bool}
  // Every served frame is built here when the transport copies on send (transport.d.ts): one
  // buffer, grown to the largest frame, instead of a new one per chunk.
  let frameScratch = transport.copiesBinary ? new Uint8Array(0) : null;
  const frameBuffer = (length) => {
    if (!frameScratch) return undefined;
    const n = length + L.chunkFrameHeaderBytes;
    if (frameScratch.length < n) frameScratch = new Uint8Array(n);
    return frameScratch;
  };
  const stats = {
    framesSent: 0,
    base64ChunksSent: 0,
    signalingDrops: 0,
    serveErrors: 0,
    servedFromMemory: 0, // chunk reads for serving answered from memory (unwritten or recent)
    servedFromDisk: 0,
    chunks: {}, // arrivals by the core's verdict: stored, duplicate, bad_hash, unexpected
  };

  const driver = createDriver(
    node,
    { perform, event: onEvent },
    { now, onError: (err, where) => log(where, err) },
  );
  // After close() the core is gone: late I/O completions (a read, a write, a digest) are dropped.
  let closed = false;
  let finalStats = null;
  const input = (fn) => (closed ? undefined : driver.input(fn));
  const serveDone = (peer, it) => {
    if (!closed) node.handleServeDone(peer, it.fileId, it.index);
  };

  function capsOf(peer) {
    return {
      binaryLane: transport.binaryCapable ?? transport.hasBinary(peer),
      maxMessageSize: transport.maxMessageSize?.(peer) ?? L.minSctpMessageSize,
    };
  }

  // --- progress ---------------------------------------------------------------------------
  function progressOf(e) {
    const st = node.file(e.fileId) ?? e.last;
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

  // --- the core's actions and events ------------------------------------------------------
  // A result the transport gives at once (a request accepted or not) goes straight back in: the
  // driver's running drain picks up what it causes.
  function perform(a) {
    const e = a.fileId === undefined ? null : files.get(a.fileId);
    switch (a.kind) {
      case 'send': {
        const ok = transport.send(a.peer, a.text);
        if (a.token) input((t) => node.handleSendResult(a.token, ok, t));
        break;
      }
      case 'serve':
        if (e) enqueueServe(a.peer, { e, ...a });
        else serveDone(a.peer, a);
        break;
      case 'openPart':
        if (e) openPart(e).catch((err) => fail(e, err));
        break;
      case 'resumeRead':
        if (e) resumeRead(e, a).catch((err) => fail(e, err));
        break;
      case 'verifyFile':
        if (e) verifyFile(e).catch((err) => fail(e, err));
        break;
      case 'saveFile':
        if (e) saveFile(e).catch((err) => fail(e, err));
        break;
      case 'refreshLock':
        if (e) refreshLock(e.storage, e.lockName).catch((err) => log('lock refresh', err));
        break;
      case 'rebuild':
        log('rebuild', a.peer);
        transport.rebuild?.(a.peer);
        break;
      case 'failed':
        if (e) release(e, new Error(a.message));
        break;
    }
  }

  function onEvent(ev) {
    const e = files.get(ev.fileId);
    switch (ev.kind) {
      case 'offerReady':
      case 'offerMissing': {
        const list = waiting.get(ev.fileId) ?? [];
        waiting.delete(ev.fileId);
        for (const w of list)
          ev.kind === 'offerReady' ? w.resolve() : w.reject(new Error(ev.message));
        break;
      }
      case 'downloadStarted':
        if (!e) break;
        e.resumed = ev.resumed;
        e.resumedIndexes = node.resumedIndexes(e.fileId);
        if (e.state === 'manifest') e.state = 'downloading';
        reportProgress(e, true);
        break;
      case 'complete':
        if (e) finished(e).catch((err) => log('complete', err));
        break;
    }
  }

  // --- serving ----------------------------------------------------------------------------
  // The core queued each serve once and within its bound; this runs them in order, pausing while
  // the peer's lane holds serveHighWaterBytes, and tells the core when each is done.
  function enqueueServe(peer, item) {
    let q = serveQueues.get(peer);
    if (!q) serveQueues.set(peer, (q = { items: [], pumping: false }));
    q.items.push(item);
    pumpServe(peer);
  }

  async function pumpServe(peer) {
    const q = serveQueues.get(peer);
    if (!q || q.pumping) return;
    q.pumping = true;
    let it = null;
    try {
      while (q.items.length) {
        if (transport.bufferedAmount(peer) > L.serveHighWaterBytes) return; // `drain` resumes us
        it = q.items.shift();
        if (it.e.disposed) {
          it = null;
          continue;
        }
        const bytes = await it.e.read(it.offset, it.length);
        if (closed) return;
        if (it.binary) {
          const frame = swarm.encodeChunkFrame(
            it.e.fileId,
            it.index,
            bytes,
            frameBuffer(bytes.length),
          );
          if (frame && transport.sendBinary(peer, frame)) {
            stats.framesSent++;
            peerCounters(it.e, peer).served += it.length;
            serveDone(peer, it);
            it = null;
            continue;
          }
          if (transport.hasBinary(peer) && transport.bufferedAmount(peer) > L.serveHighWaterBytes) {
            q.items.unshift(it); // full: wait for drain
            it = null;
            return;
          }
          // No binary lane (yet): answer on the control lane instead.
        }
        const text = node.chunkEnvelope(peer, it.fileId, it.index, bytes, now());
        if (transport.send(peer, text)) {
          stats.base64ChunksSent++;
          peerCounters(it.e, peer).served += it.length;
        } // else the requester times out and asks again
        serveDone(peer, it);
        it = null;
      }
    } catch (err) {
      stats.serveErrors++;
      log('serve', peer, err);
      if (it) serveDone(peer, it);
    } finally {
      q.pumping = false;
    }
  }

  // --- receiving --------------------------------------------------------------------------
  function onText(peer, text) {
    const c = input((t) => node.handleText(peer, text, t));
    if (c) onChunk(peer, c.fileId, c.index, c.data).catch((err) => log('chunk', err));
  }

  function onBinary(peer, bytes) {
    if (closed) return;
    const f = node.handleFrame(bytes);
    if (f) onChunk(peer, f.fileId, f.index, f.data).catch((err) => log('chunk', err));
  }

  // Chunk bytes are hashed with the platform's SHA-256 (SubtleCrypto: native code, the thread pool
  // in Node; Chromium runs it on the page's thread, 12% of a downloader's main thread in a trace),
  // faster than the WASM hash; the core compares the digest and decides. Without SubtleCrypto the
  // core hashes.
  const subtle = globalThis.crypto?.subtle;
  async function onChunk(peer, fileId, index, data) {
    const e = files.get(fileId);
    if (!e || e.disposed) return;
    let outcome;
    if (!node.wantsChunk(fileId, index, data.byteLength)) {
      // A duplicate, a wrong length or too early: the core's verdict needs no digest.
      outcome = input((t) => node.handleChunkDigest(peer, fileId, index, data.byteLength, null, t));
    } else if (subtle) {
      let digest;
      try {
        digest = hex(new Uint8Array(await subtle.digest('SHA-256', data)));
      } catch (err) {
        log('sha256', err);
      }
      if (e.disposed || closed) return;
      outcome =
        digest === undefined
          ? input((t) => node.handleChunk(peer, fileId, index, data, t))
          : input((t) => node.handleChunkDigest(peer, fileId, index, data.byteLength, digest, t));
    } else {
      outcome = input((t) => node.handleChunk(peer, fileId, index, data, t));
    }
    stats.chunks[outcome] = (stats.chunks[outcome] ?? 0) + 1;
    if (outcome !== 'stored' || e.disposed) return;
    // `data` views a buffer the lane handed to us alone (or a decoded base64 chunk): kept, not
    // copied; the folder copies what it hands to its writer.
    e.receivedIndexes.add(index);
    peerCounters(e, peer).received += data.byteLength;
    // Held in memory until written: the core already announced the chunk (swarm_have), so a peer
    // may ask for it before the write lands. Writes are issued at once, not chained: the folder
    // applies them in order (one file handle, one worker queue), and waiting for each round trip
    // would let the disk fall behind the network.
    e.unwritten.set(index, data);
    const w = e.part.write(index * e.chunkSize, data).then(
      () => {
        e.pendingWrites.delete(w);
        if (e.disposed || e.unwritten.get(index) !== data) return;
        e.unwritten.delete(index);
        keepRecent(e, index, data);
        input((t) => node.handleChunkWritten(fileId, index, t));
      },
      (err) => fail(e, err),
    );
    e.pendingWrites.add(w);
    reportProgress(e);
  }

  // The newest recentServeBytes of written chunks, oldest dropped first (a Map iterates in
  // insertion order).
  function keepRecent(e, index, bytes) {
    e.recent.set(index, bytes);
    e.recentBytes += bytes.byteLength;
    for (const [old, b] of e.recent) {
      if (e.recentBytes <= L.recentServeBytes) break;
      e.recent.delete(old);
      e.recentBytes -= b.byteLength;
    }
  }
  function dropRecent(e) {
    e.recent.clear();
    e.recentBytes = 0;
  }

  // --- transport events -------------------------------------------------------------------
  const unsubscribe = transport.subscribe({
    open(peer) {
      input((t) => node.handlePeerOpen(peer, capsOf(peer), t));
    },
    close(peer) {
      serveQueues.delete(peer);
      input((t) => node.handlePeerClosed(peer, t));
    },
    text: onText,
    binary: onBinary,
    drain(peer) {
      pumpServe(peer);
    },
    // Our signaling dropping does not stop the data channels, so transfers go on over them
    // meanwhile; the transport holds any rebuild until signaling is back (§ Surviving a network
    // drop). Once back, the core abandons and re-plans everything outstanding.
    signalingDown() {
      stats.signalingDrops++;
    },
    reconnect() {
      input((t) => node.handleReconnect(t));
    },
  });
  for (const p of transport.openPeers()) input((t) => node.handlePeerOpen(p, capsOf(p), t));

  function newEntry(fields) {
    return {
      disposed: false,
      perPeer: new Map(),
      lastProgress: 0,
      progressTimer: null,
      pendingWrites: new Set(),
      receivedIndexes: new Set(),
      resumedIndexes: [],
      unwritten: new Map(), // chunk index -> verified bytes not yet on disk
      recent: new Map(), // chunk index -> written bytes, in write order, at most recentServeBytes
      recentBytes: 0,
      resumed: 0,
      last: null,
      ...fields,
    };
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
    if (offer.ok === false)
      throw new Error(`cannot offer ${name}: ${offer.field}: ${offer.detail}`);
    const e = newEntry({
      fileId,
      name,
      role: 'seed',
      state: 'seeding',
      size: source.size,
      chunkSize,
      read: (o, l) => source.read(o, l),
    });
    const prior = files.get(fileId);
    files.set(fileId, e);
    const opened = input((t) => node.share(offer.payload, hashes, t));
    if (!opened.ok) {
      if (prior) files.set(fileId, prior);
      else files.delete(fileId);
      throw new Error(`cannot seed ${name}: ${opened.detail}`);
    }
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
    await new Promise((resolve, reject) => {
      const list = waiting.get(fileId) ?? [];
      list.push({ resolve, reject });
      waiting.set(fileId, list);
      input((t) => node.wantOffer(fileId, waitForOfferMs, t));
    });
    const o = node.offers()[fileId].payload;
    const partName = node.partName(fileId, storage.key);
    const lockName = `${partName}.lock`;
    const activeKey = `${storage.key}/${partName}`;
    if (activeParts.has(activeKey))
      throw new Error(
        `${o.name} is already being downloaded into ${storage.key} by this peer; wait for it or choose another folder`,
      );
    activeParts.add(activeKey);
    try {
      await acquireLock(storage, lockName);
    } catch (err) {
      activeParts.delete(activeKey);
      throw err;
    }
    let resolveDone, rejectDone;
    const done = new Promise((res, rej) => ((resolveDone = res), (rejectDone = rej)));
    const e = newEntry({
      fileId,
      name: o.name,
      role: 'fetch',
      state: 'manifest',
      size: o.size,
      chunkSize: o.chunkSize,
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
    });
    const prior = files.get(fileId);
    files.set(fileId, e);
    const opened = input((t) => node.fetch(fileId, from, t));
    if (!opened.ok) {
      if (prior) files.set(fileId, prior);
      else files.delete(fileId);
      activeParts.delete(activeKey);
      await storage.remove(lockName).catch(() => {});
      throw new Error(opened.message);
    }
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

  // § Resume: the core asks for the part file's chunks one at a time and credits the ones that
  // hash to the manifest.
  async function openPart(e) {
    e.part = await e.storage.openFile(e.partName);
    const size = await e.part.size();
    if (!e.disposed) input((t) => node.handlePartOpened(e.fileId, size, t));
  }

  async function resumeRead(e, a) {
    const digest = await sha256HexAsync(await e.part.read(a.offset, a.length));
    if (!e.disposed) input((t) => node.handleResumeChunk(e.fileId, a.index, a.length, digest, t));
  }

  async function verifyFile(e) {
    e.state = 'finishing';
    while (e.pendingWrites.size) await Promise.all([...e.pendingWrites]);
    await e.part.flush();
    const digest = await e.part.sha256();
    e.digest = digest;
    if (!e.disposed) input((t) => node.handleFileDigest(e.fileId, digest, t));
  }

  async function saveFile(e) {
    /** @type {(value?: unknown) => void} */
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
    if (!e.disposed) input((t) => node.handleFileSaved(e.fileId, t));
  }

  async function finished(e) {
    await e.storage.remove(e.lockName).catch(() => {});
    activeParts.delete(e.activeKey);
    dropRecent(e); // every write has landed: the disk answers at once from now on
    e.state = 'complete';
    reportProgress(e, true);
    e.resolveDone({
      fileId: e.fileId,
      name: e.savedName,
      size: e.size,
      sha256: e.digest,
      resumed: e.resumed,
    });
  }

  // The host's own failure (storage): the core forgets the file too.
  function fail(e, err) {
    if (e.disposed || e.state === 'complete') return;
    if (!closed) node.removeFile(e.fileId);
    release(e, err);
  }

  // The file is gone from the core: let go of what the host held for it.
  async function release(e, err) {
    if (e.disposed) return;
    log('transfer failed', e.fileId, err);
    dispose(e);
    if (e.lockName) await e.storage.remove(e.lockName).catch(() => {});
    e.rejectDone?.(err);
  }

  function dispose(e) {
    if (!closed) e.last = node.file(e.fileId) ?? e.last;
    e.disposed = true;
    clearTimeout(e.progressTimer);
    if (e.activeKey) activeParts.delete(e.activeKey);
    dropRecent(e);
    if (files.get(e.fileId) === e) files.delete(e.fileId);
  }

  return {
    identity,
    share,
    fetch: fetchFile,
    /**
     * Offers seen so far: fileId -> the offer payload plus the peers that offered it.
     * @type {() => Record<string, any>}
     */
    offers: () =>
      Object.fromEntries(
        Object.entries(node.offers()).map(([k, v]) => [
          k,
          { ...v.payload, offeredBy: v.offeredBy },
        ]),
      ),
    progress: (fileId) => (files.has(fileId) ? progressOf(files.get(fileId)) : null),
    /** Chunk indexes this process received over the network for `fileId` (not resumed ones). */
    receivedIndexes: (fileId) => [...(files.get(fileId)?.receivedIndexes ?? [])],
    resumedIndexes: (fileId) => [...(files.get(fileId)?.resumedIndexes ?? [])],
    status: (fileId) => (files.has(fileId) && !closed ? node.file(fileId) : null),
    stats: () => ({ ...(finalStats ?? node.stats()), ...stats, chunks: { ...stats.chunks } }),
    async close() {
      if (closed) return;
      unsubscribe();
      driver.close();
      finalStats = node.stats();
      const all = [...files.values()];
      for (const e of all) dispose(e);
      closed = true;
      node.dispose();
      for (const e of all) await e.part?.close?.().catch?.(() => {});
    },
  };
}
