// `tether/swarm`: the swarm transfer core for JavaScript (agent-bus-and-swarm.md § Swarm
// transfer). A thin wrapper over src/swarm: it moves JSON text and bytes in and out of WASM memory
// and hands back the core's actions. It makes no protocol decisions (DESIGN.md rule 4): the
// caller's transport sends what the actions say and reports what happened.
import { heapF64 } from './heap-view.js';
import { loadTetherModule } from './load.js';

/**
 * Loads the swarm core. In workerd pass { wasmModule } (the imported tether.wasm).
 * @param {{wasmModule?: WebAssembly.Module, wasmBinary?: Uint8Array}} [options]
 */
export async function loadSwarm(options) {
  return createSwarm(await loadTetherModule(options, 'swarm'));
}

/** Wraps a loaded module. */
export function createSwarm(mod) {
  const codec = new mod.SwarmCodec();
  const limits = mod.swarmLimits();
  const layout = mod.swarmNodeRecordLayout();
  const utf8 = new TextDecoder();

  // A node's per-chunk calls leave their results in a record of doubles in WASM memory instead of
  // building an Embind object (bindings/swarm_bindings.cpp, bench/README.md § Swarm 1 -> 1).
  const f64 = heapF64(mod);

  function stage(target, bytes) {
    target.input(bytes.length).set(bytes);
    return bytes.length;
  }
  const text = (v) => (typeof v === 'string' ? v : JSON.stringify(v));

  // A session on the one drive contract (web/glue/driver.js): handle*(…, nowMs) inputs, then
  // pollAction() until null and pollTimeout() for the next handleTimeout.
  class Session {
    #inner;
    constructor(inner) {
      this.#inner = inner;
    }
    /**
     * § Resume: the host read chunk `index` of the part file (`length` bytes) and hashed it; the
     * core credits it when it matches the manifest. Returns whether it verified.
     */
    resumeFeed(index, length, sha256Hex) {
      return this.#inner.resumeFeed(index, length, sha256Hex);
    }
    /** The indexes resumeFeed verified so far. */
    resumed() {
      return this.#inner.resumed();
    }
    /** The resume pass is over: the download starts from what verified. Returns their count. */
    handleResumeDone(nowMs) {
      return this.#inner.handleResumeDone(nowMs);
    }
    handlePeerOpen(
      peer,
      { binaryLane = true, maxMessageSize = limits.minSctpMessageSize } = {},
      nowMs = 0,
    ) {
      this.#inner.handlePeerOpen(peer, binaryLane, maxMessageSize, nowMs);
    }
    handlePeerClosed(peer, nowMs) {
      this.#inner.handlePeerClosed(peer, nowMs);
    }
    /** A swarm_* message from `peer`; `directed` when the envelope was addressed to us alone. */
    handleMessage(peer, type, payload, { directed = false } = {}, nowMs = 0) {
      return this.#inner.handleMessage(peer, type, text(payload), directed, nowMs);
    }
    /** Chunk bytes from a binary frame or a swarm_chunk message. */
    handleChunk(peer, index, bytes, nowMs) {
      return this.#inner.handleChunk(peer, index, stage(this.#inner, bytes), nowMs);
    }
    /**
     * A chunk the host hashed itself (SubtleCrypto, native code): its byte length and
     * SHA-256 as 64 lowercase hex characters. The core decides as handleChunk does; when
     * wantsChunk said no, any digest (or none) gets the same verdict.
     */
    handleChunkDigest(peer, index, length, sha256Hex, nowMs) {
      return this.#inner.handleChunkDigest(peer, index, length, sha256Hex ?? '', nowMs);
    }
    /** Whether a chunk of this index and length would be hashed at all. */
    wantsChunk(index, length) {
      return this.#inner.wantsChunk(index, length);
    }
    handleSendResult(token, accepted, nowMs) {
      this.#inner.handleSendResult(token, accepted, nowMs);
    }
    handleTransportDown(nowMs) {
      this.#inner.handleTransportDown(nowMs);
    }
    handleTransportUp(nowMs) {
      this.#inner.handleTransportUp(nowMs);
    }
    /** The host's storage is behind: no new requests while held. */
    holdRequests(held, nowMs) {
      this.#inner.holdRequests(held, nowMs);
    }
    /** After a manifest_digest_mismatch: assemble the manifest again from `peer`. */
    retryManifestFrom(peer, nowMs) {
      this.#inner.retryManifestFrom(peer, nowMs);
    }
    /** The peer manifest pages are taken from, or null. */
    manifestSource() {
      const p = this.#inner.manifestSource();
      return p < 0 ? null : p;
    }
    handleTimeout(nowMs) {
      this.#inner.handleTimeout(nowMs);
    }
    /** When handleTimeout next has work (absolute ms), or null. */
    pollTimeout() {
      return this.#inner.pollTimeout();
    }
    /** The next action, or null. */
    pollAction() {
      return this.#inner.pollAction();
    }
    /** The base64 swarm_chunk payload answering a request without `bin`. */
    chunkPayload(index, bytes) {
      return this.#inner.chunkPayload(index, stage(this.#inner, bytes));
    }
    status() {
      return this.#inner.status();
    }
    hashes() {
      return this.#inner.hashes();
    }
    dispose() {
      this.#inner.delete();
    }
  }

  // The file-set core (src/swarm/node.hpp) on the one drive contract: every file a peer offers or
  // fetches, the envelopes, the offers and the serve queue. Peers are transport names.
  class Node {
    #inner;
    #record; // the record's index in f64()
    #names = []; // peers and file ids, by the numbers the record carries
    #slots = new Map(); // and the other way round, for the inputs that name them
    #generation = 0;
    constructor(config) {
      this.#inner = new mod.SwarmNode(JSON.stringify(config));
      this.#record = this.#inner.record() / 8;
    }
    // The record after a call, with the names it numbers learnt first (a call that may grow WASM
    // memory, so the view is taken after it).
    #read() {
      let f = f64();
      const r = this.#record;
      if (f[r + layout.generation] !== this.#generation) {
        this.#generation = f[r + layout.generation];
        this.#names = [];
        this.#slots.clear();
      }
      const names = this.#names;
      if (names.length < f[r + layout.nameCount]) {
        while (names.length < f[r + layout.nameCount]) {
          const name = this.#inner.name(names.length);
          this.#slots.set(name, names.length);
          names.push(name);
        }
        f = f64();
      }
      return f;
    }
    // A peer's or a file's number for an input, or -1 when it has none yet (then the string goes).
    #slot(name) {
      return this.#slots.get(name) ?? -1;
    }
    #text(f, at) {
      const addr = f[this.#record + at];
      return utf8.decode(mod.HEAPU8.subarray(addr, addr + f[this.#record + at + 1]));
    }
    identity() {
      return this.#inner.identity();
    }
    handlePeerOpen(
      peer,
      { binaryLane = true, maxMessageSize = limits.minSctpMessageSize } = {},
      nowMs = 0,
    ) {
      this.#inner.handlePeerOpen(peer, binaryLane, maxMessageSize, nowMs);
    }
    handlePeerClosed(peer, nowMs) {
      this.#inner.handlePeerClosed(peer, nowMs);
    }
    handleReconnect(nowMs) {
      this.#inner.handleReconnect(nowMs);
    }
    /** An envelope's text from `peer`: null, or {fileId, index, data} (a copy) to hash. */
    handleText(peer, text, nowMs) {
      const c = this.#inner.handleText(peer, text, nowMs);
      return c === null ? null : { fileId: c.fileId, index: c.index, data: c.data.slice() };
    }
    /** A binary-lane frame: {fileId, index, data} (a view into `frame`) or null. */
    handleFrame(frame) {
      const head = frame.subarray(0, limits.chunkFrameHeaderBytes);
      const index = this.#inner.handleFrame(stage(this.#inner, head), frame.byteLength);
      if (index < 0) return null;
      const f = this.#read();
      const r = this.#record;
      const offset = f[r + layout.offset];
      return {
        fileId: this.#names[f[r + layout.file]],
        index,
        data: frame.subarray(offset, offset + f[r + layout.length]),
      };
    }
    wantsChunk(fileId, index, length) {
      const file = this.#slot(fileId);
      return this.#inner.wantsChunk(file, file < 0 ? fileId : '', index, length);
    }
    handleChunk(peer, fileId, index, bytes, nowMs) {
      const n = this.#inner.handleChunk(peer, fileId, index, stage(this.#inner, bytes), nowMs);
      return layout.outcomes[n];
    }
    handleChunkDigest(peer, fileId, index, length, sha256Hex, nowMs) {
      const p = this.#slot(peer);
      const file = this.#slot(fileId);
      const n = this.#inner.handleChunkDigest(
        p,
        p < 0 ? peer : '',
        file,
        file < 0 ? fileId : '',
        index,
        length,
        sha256Hex ?? '',
        nowMs,
      );
      return layout.outcomes[n];
    }
    handleChunkWritten(fileId, index, nowMs) {
      const file = this.#slot(fileId);
      this.#inner.handleChunkWritten(file, file < 0 ? fileId : '', index, nowMs);
    }
    handleSendResult(token, accepted, nowMs) {
      this.#inner.handleSendResult(token, accepted, nowMs);
    }
    handleServeDone(peer, fileId, index) {
      const p = this.#slot(peer);
      const file = this.#slot(fileId);
      this.#inner.handleServeDone(p, p < 0 ? peer : '', file, file < 0 ? fileId : '', index);
    }
    chunkEnvelope(peer, fileId, index, bytes, nowMs) {
      return this.#inner.chunkEnvelope(peer, fileId, index, stage(this.#inner, bytes), nowMs);
    }
    share(offerPayload, hashes, nowMs) {
      return this.#inner.share(text(offerPayload), JSON.stringify(hashes), nowMs);
    }
    wantOffer(fileId, waitMs, nowMs) {
      this.#inner.wantOffer(fileId, waitMs, nowMs);
    }
    /** fileId -> {payload, offeredBy}. */
    offers() {
      return JSON.parse(this.#inner.offers());
    }
    partName(fileId, destination) {
      return this.#inner.partName(fileId, destination);
    }
    fetch(fileId, from, nowMs) {
      return this.#inner.fetch(fileId, from ?? '', nowMs);
    }
    handlePartOpened(fileId, size, nowMs) {
      this.#inner.handlePartOpened(fileId, size, nowMs);
    }
    handleResumeChunk(fileId, index, length, sha256Hex, nowMs) {
      this.#inner.handleResumeChunk(fileId, index, length, sha256Hex ?? '', nowMs);
    }
    handleFileDigest(fileId, sha256Hex, nowMs) {
      this.#inner.handleFileDigest(fileId, sha256Hex, nowMs);
    }
    handleFileSaved(fileId, nowMs) {
      this.#inner.handleFileSaved(fileId, nowMs);
    }
    removeFile(fileId) {
      this.#inner.removeFile(fileId);
    }
    handleTimeout(nowMs) {
      this.#inner.handleTimeout(nowMs);
    }
    pollTimeout() {
      const t = this.#inner.pollTimeout();
      return Number.isNaN(t) ? null : t;
    }
    /** The next action as a plain object (the same fields the core's action has), or null. */
    pollAction() {
      const kind = layout.actions[this.#inner.pollAction()];
      if (!kind) return null;
      const f = this.#read();
      const r = this.#record;
      const names = this.#names;
      switch (kind) {
        case 'send':
          return {
            kind,
            peer: names[f[r + layout.peer]],
            text: this.#text(f, layout.textAddr),
            token: f[r + layout.token],
          };
        case 'serve':
          return {
            kind,
            peer: names[f[r + layout.peer]],
            fileId: names[f[r + layout.file]],
            index: f[r + layout.index],
            binary: f[r + layout.binary] === 1,
            offset: f[r + layout.offset],
            length: f[r + layout.length],
          };
        case 'resumeRead':
          return {
            kind,
            fileId: names[f[r + layout.file]],
            index: f[r + layout.index],
            offset: f[r + layout.offset],
            length: f[r + layout.length],
          };
        case 'rebuild':
          return { kind, peer: names[f[r + layout.peer]] };
        case 'failed':
          return {
            kind,
            fileId: names[f[r + layout.file]],
            code: this.#text(f, layout.codeAddr),
            message: this.#text(f, layout.textAddr),
          };
        default: // openPart, verifyFile, saveFile, refreshLock
          return { kind, fileId: names[f[r + layout.file]] };
      }
    }
    pollEvent() {
      return this.#inner.pollEvent();
    }
    file(fileId) {
      return this.#inner.file(fileId);
    }
    resumedIndexes(fileId) {
      return this.#inner.resumedIndexes(fileId);
    }
    stats() {
      return this.#inner.stats();
    }
    dispose() {
      this.#inner.delete();
    }
  }

  function open(setup) {
    const inner = new mod.SwarmSession();
    const r = setup(inner);
    if (!r.ok) {
      inner.delete();
      return r;
    }
    return { ok: true, session: new Session(inner) };
  }

  return {
    limits,
    /**
     * A file-set core: {self: {streamId, role, name, instanceId?}, seed, ...session options}.
     * @param {object} config
     */
    createNode: (config) => new Node(config),
    /** Parses {type, payload} text (an agent-bus envelope works): canonical payload or a refusal. */
    parseMessage: (input) => mod.swarmParseMessage(text(input)),
    makeOffer: ({ fileId, name, mimeType, size, chunkSize = limits.defaultChunkSize, hashes }) =>
      mod.swarmMakeOffer(fileId, name, mimeType, size, chunkSize, JSON.stringify(hashes)),
    seed: (offerPayload, hashes, config = {}) =>
      open((s) => s.seed(text(offerPayload), JSON.stringify(hashes), JSON.stringify(config))),
    fetch: (offerPayload, offeredBy, config = {}, nowMs = 0) =>
      open((s) => s.fetch(text(offerPayload), offeredBy, JSON.stringify(config), nowMs)),
    /**
     * The chunks a swarm_announce ({type, payload} text or object) says its sender holds, as the
     * core reads the bitfield (chunk i at bit i & 7 of byte i >> 3): {ok, totalChunks, held}.
     */
    announceHeld: (input) => mod.swarmAnnounceHeld(text(input)),
    /** The swarm_announce payload (JSON text) the core writes for a peer holding `held`. */
    announcePayload: ({ fileId, totalChunks, held }) =>
      mod.swarmAnnouncePayload(fileId, totalChunks, JSON.stringify([...held])),
    /**
     * A binary-lane frame: the core's head, then the chunk, copied once. Into new bytes, or into
     * `into` when given (a view of its start is returned): a sender whose transport copies on send
     * reuses one buffer for every frame instead of allocating 64 KiB per chunk, which was a fifth
     * of a seeder's main thread with its page faults and GC (bench/README.md § Swarm 1 -> 1).
     */
    encodeChunkFrame(fileId, index, bytes, into) {
      const head = codec.encodeFrameHead(fileId, index, bytes.length);
      if (head === null) return null;
      const n = head.length + bytes.length;
      if (into && into.length < n)
        throw new RangeError(`encodeChunkFrame: into holds ${into.length} bytes, the frame ${n}`);
      const frame = into ? into.subarray(0, n) : new Uint8Array(n);
      frame.set(head);
      frame.set(bytes, head.length);
      return frame;
    },
    /** {fileId, index, data} for one of our frames, null for anything else on the lane. */
    parseChunkFrame(frame) {
      const f = codec.parseFrame(stage(codec, frame));
      if (f === null) return null;
      return {
        fileId: f.fileId,
        index: f.index,
        data: frame.subarray(f.offset, f.offset + f.length),
      };
    },
    sha256Hex: (bytes) => codec.sha256Hex(stage(codec, bytes)),
    partFileName: (fileId, chunkHashesHash, destination) =>
      mod.swarmPartFileName(fileId, chunkHashesHash, destination),
    decideLock: (existing, owner, nowMs) =>
      mod.swarmDecideLock(
        existing?.owner ?? '',
        existing?.updatedMs ?? 0,
        existing != null,
        owner,
        nowMs,
      ),
  };
}
