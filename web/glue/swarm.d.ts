// Types for `tether/swarm` (web/glue/swarm.js).

export interface SwarmLimits {
  maxChunks: number;
  maxPageHashes: number;
  maxInlineHashes: number;
  /** Chunk sizes from minChunkSize (1 KiB) to maxChunkSize (16 MiB), the public implementation's range. */
  minChunkSize: number;
  maxChunkSize: number;
  /** Indexes one swarm_have may carry (4,096). */
  maxHaveIndexes: number;
  /** Offered names and MIME types, in UTF-16 code units (string.length). */
  maxFileNameChars: number;
  maxMimeTypeChars: number;
  defaultChunkSize: number;
  minSctpMessageSize: number;
  chunkFrameHeaderBytes: number;
  timeoutFloorMs: number;
  timeoutCeilingMs: number;
  rebuildGraceMs: number;
  staleLockMs: number;
  /** How often a running download refreshes its lock file. */
  lockRefreshMs: number;
  /** Read-judge-write rounds for taking the lock (a second sees a racing creator's record). */
  lockAttempts: number;
  /** Offers a peer remembers, one per file id. */
  maxKnownOffers: number;
  /** How long fetch waits for an offer unless told otherwise. */
  defaultOfferWaitMs: number;
  /** Verified chunks awaiting their write; at this many, requests are held. */
  maxUnwrittenChunks: number;
  /** Serves queued for one peer; more are dropped (the requester asks again). */
  maxPendingServesPerPeer: number;
  /** Refused messages kept for display. */
  maxRefusalsKept: number;
  /** Serving pauses while a peer's binary lane holds this many bytes, until its drain. */
  serveHighWaterBytes: number;
  /** Written chunks a download keeps in memory for serving. */
  recentServeBytes: number;
  /** The agent-bus envelope version swarm control messages travel in. */
  envelopeVersion: number;
}

export type SwarmRefusalCode =
  | 'not_json'
  | 'not_object'
  | 'unknown_type'
  | 'missing_field'
  | 'bad_field'
  | 'out_of_range'
  | 'inconsistent_shape'
  | 'too_many_chunks'
  | 'bad_hash'
  | 'too_many_hashes'
  | 'bad_frame';

export interface SwarmRefusal {
  ok: false;
  code: SwarmRefusalCode;
  field: string;
  detail: string;
}

export type SwarmMessageType =
  | 'swarm_offer'
  | 'swarm_manifest_request'
  | 'swarm_manifest_page'
  | 'swarm_announce'
  | 'swarm_have'
  | 'swarm_request'
  | 'swarm_chunk';

export type SwarmAction =
  | { kind: 'control'; to: number | null; type: SwarmMessageType; payload: string }
  | {
      kind: 'request';
      to: number;
      index: number;
      token: number;
      type: 'swarm_request';
      payload: string;
    }
  | { kind: 'serve'; to: number; index: number; binary: boolean; offset: number; length: number }
  | { kind: 'manifestReady' }
  | { kind: 'rebuild'; peer: number }
  | { kind: 'completed' }
  | { kind: 'failed'; code: string; detail: string };

export type ChunkOutcome = 'stored' | 'duplicate' | 'bad_hash' | 'unexpected';

export interface SwarmConfig {
  seed?: number;
  /** Outstanding requests per peer (default 16). */
  windowPerPeer?: number;
  /** Outstanding requests across all peers of the download (default 16). */
  windowTotal?: number;
  binaryLane?: boolean;
  startupReply?: boolean;
  indexTies?: boolean;
}

export interface SwarmStatus {
  fileId: string;
  totalChunks: number;
  have: number;
  complete: boolean;
  manifestReady: boolean;
  outstanding: number;
  requestsSent: number;
  timeouts: number;
  rebuilds: number;
  chunksStored: number;
}

/** One file's swarm, on the one drive contract (web/glue/driver.js can run it). */
export interface SwarmSession {
  /** § Resume: chunk `index` of the part file, read and hashed by the host; true when it verified. */
  resumeFeed(index: number, length: number, sha256Hex: string): boolean;
  /** The indexes resumeFeed verified so far. */
  resumed(): number[];
  /** The resume pass is over: the download starts. Returns how many chunks verified. */
  handleResumeDone(nowMs: number): number;
  handlePeerOpen(
    peer: number,
    caps?: { binaryLane?: boolean; maxMessageSize?: number },
    nowMs?: number,
  ): void;
  handlePeerClosed(peer: number, nowMs: number): void;
  handleMessage(
    peer: number,
    type: string,
    payload: string | object,
    options?: { directed?: boolean },
    nowMs?: number,
  ): { ok: true } | SwarmRefusal;
  handleChunk(peer: number, index: number, bytes: Uint8Array, nowMs: number): ChunkOutcome;
  /** A chunk the host hashed itself (SubtleCrypto): length and SHA-256 hex (none when wantsChunk said no). */
  handleChunkDigest(
    peer: number,
    index: number,
    length: number,
    sha256Hex: string | null,
    nowMs: number,
  ): ChunkOutcome;
  /** Whether a chunk of this index and length would be hashed at all. */
  wantsChunk(index: number, length: number): boolean;
  handleSendResult(token: number, accepted: boolean, nowMs: number): void;
  handleTransportDown(nowMs: number): void;
  handleTransportUp(nowMs: number): void;
  /** The host's storage is behind: no new requests while held. */
  holdRequests(held: boolean, nowMs: number): void;
  /** After a manifest_digest_mismatch: assemble the manifest again from `peer`. */
  retryManifestFrom(peer: number, nowMs: number): void;
  /** The peer manifest pages are taken from, or null. */
  manifestSource(): number | null;
  handleTimeout(nowMs: number): void;
  /** When handleTimeout next has work (absolute ms), or null. */
  pollTimeout(): number | null;
  /** The next action, or null. */
  pollAction(): SwarmAction | null;
  chunkPayload(index: number, bytes: Uint8Array): string;
  status(): SwarmStatus;
  hashes(): string[];
  dispose(): void;
}

export type Opened = { ok: true; session: SwarmSession } | SwarmRefusal;

export interface LockDecision {
  verdict: 'acquire' | 'ours' | 'take_over' | 'busy';
  message: string;
}

/** What the file-set core asks its host to do (src/swarm/node.hpp). */
export type SwarmNodeAction =
  | { kind: 'send'; peer: string; text: string; token: number }
  | {
      kind: 'serve';
      peer: string;
      fileId: string;
      index: number;
      binary: boolean;
      offset: number;
      length: number;
    }
  | { kind: 'openPart'; fileId: string }
  | { kind: 'resumeRead'; fileId: string; index: number; offset: number; length: number }
  | { kind: 'verifyFile'; fileId: string }
  | { kind: 'saveFile'; fileId: string }
  | { kind: 'refreshLock'; fileId: string }
  | { kind: 'rebuild'; peer: string }
  | { kind: 'failed'; fileId: string; code: string; message: string };

export type SwarmNodeEvent =
  | { kind: 'offerReady'; fileId: string }
  | { kind: 'offerMissing'; fileId: string; message: string }
  | { kind: 'downloadStarted'; fileId: string; resumed: number }
  | { kind: 'complete'; fileId: string };

export interface SwarmNodeFile extends SwarmStatus {
  role: 'seed' | 'fetch';
  state: 'seeding' | 'manifest' | 'resuming' | 'downloading' | 'verifying' | 'saving' | 'complete';
  name: string;
  size: number;
  chunkSize: number;
  resumed: number;
}

export interface SwarmNodeStats {
  refused: { peer: string; code: string; detail: string }[];
  refusedCount: number;
  forgedIdentity: number;
  ignoredFrames: number;
  badChunks: number;
  manifestFailures: number;
  controlReceived: number;
  sendRejected: number;
  servesDropped: number;
  servesDeduplicated: number;
  unsolicitedPages: number;
}

type ChunkVerdict = 'stored' | 'duplicate' | 'bad_hash' | 'unexpected';

/** A peer's set of swarmed files on the one drive contract (web/glue/driver.js). */
export interface SwarmNode {
  identity(): { streamId: string; role: string; name: string; instanceId: string };
  handlePeerOpen(
    peer: string,
    caps?: { binaryLane?: boolean; maxMessageSize?: number },
    nowMs?: number,
  ): void;
  handlePeerClosed(peer: string, nowMs: number): void;
  handleReconnect(nowMs: number): void;
  handleText(
    peer: string,
    text: string,
    nowMs: number,
  ): { fileId: string; index: number; data: Uint8Array } | null;
  handleFrame(frame: Uint8Array): { fileId: string; index: number; data: Uint8Array } | null;
  wantsChunk(fileId: string, index: number, length: number): boolean;
  handleChunk(
    peer: string,
    fileId: string,
    index: number,
    bytes: Uint8Array,
    nowMs: number,
  ): ChunkVerdict;
  handleChunkDigest(
    peer: string,
    fileId: string,
    index: number,
    length: number,
    sha256Hex: string | null,
    nowMs: number,
  ): ChunkVerdict;
  handleChunkWritten(fileId: string, index: number, nowMs: number): void;
  handleSendResult(token: number, accepted: boolean, nowMs: number): void;
  handleServeDone(peer: string, fileId: string, index: number): void;
  chunkEnvelope(
    peer: string,
    fileId: string,
    index: number,
    bytes: Uint8Array,
    nowMs: number,
  ): string;
  share(
    offerPayload: string | object,
    hashes: string[],
    nowMs: number,
  ): { ok: true } | SwarmRefusal;
  wantOffer(fileId: string, waitMs: number, nowMs: number): void;
  /** fileId -> the offer payload as sent (name, size, chunkSize, ...) and who offered it. */
  offers(): Record<string, { payload: Record<string, any>; offeredBy: string[] }>;
  partName(fileId: string, destination: string): string;
  fetch(
    fileId: string,
    from: string | null,
    nowMs: number,
  ): { ok: true } | { ok: false; message: string };
  handlePartOpened(fileId: string, size: number, nowMs: number): void;
  handleResumeChunk(
    fileId: string,
    index: number,
    length: number,
    sha256Hex: string | null,
    nowMs: number,
  ): void;
  handleFileDigest(fileId: string, sha256Hex: string, nowMs: number): void;
  handleFileSaved(fileId: string, nowMs: number): void;
  removeFile(fileId: string): void;
  handleTimeout(nowMs: number): void;
  pollTimeout(): number | null;
  pollAction(): SwarmNodeAction | null;
  pollEvent(): SwarmNodeEvent | null;
  file(fileId: string): SwarmNodeFile | null;
  resumedIndexes(fileId: string): number[];
  stats(): SwarmNodeStats;
  dispose(): void;
}

export interface Swarm {
  limits: SwarmLimits;
  /** A file-set core for one peer. */
  createNode(
    config: {
      self: { streamId: string; role?: string; name?: string; instanceId?: string };
      seed?: number;
    } & SwarmConfig,
  ): SwarmNode;
  parseMessage(
    input: string | object,
  ): { ok: true; type: SwarmMessageType; payload: string } | SwarmRefusal;
  makeOffer(file: {
    fileId: string;
    name: string;
    mimeType: string;
    size: number;
    chunkSize?: number;
    hashes: string[];
  }): { ok: true; payload: string } | SwarmRefusal;
  seed(offerPayload: string | object, hashes: string[], config?: SwarmConfig): Opened;
  fetch(
    offerPayload: string | object,
    offeredBy: number,
    config?: SwarmConfig,
    nowMs?: number,
  ): Opened;
  /** The chunks a swarm_announce says its sender holds, as the core reads the bitfield (LSB first). */
  announceHeld(
    input: string | object,
  ): { ok: true; totalChunks: number; held: number[] } | SwarmRefusal;
  /** The swarm_announce payload (JSON text) the core writes for a peer holding `held`. */
  announcePayload(bitfield: {
    fileId: string;
    totalChunks: number;
    held: Iterable<number>;
  }): { ok: true; payload: string } | SwarmRefusal;
  /** A new frame, or with `into` (at least 40 + bytes.length long) a view of it holding the frame. */
  encodeChunkFrame(
    fileId: string,
    index: number,
    bytes: Uint8Array,
    into?: Uint8Array,
  ): Uint8Array | null;
  parseChunkFrame(frame: Uint8Array): { fileId: string; index: number; data: Uint8Array } | null;
  sha256Hex(bytes: Uint8Array): string;
  partFileName(fileId: string, chunkHashesHash: string, destination: string): string;
  decideLock(
    existing: { owner: string; updatedMs: number } | null,
    owner: string,
    nowMs: number,
  ): LockDecision;
}

export function loadSwarm(options?: {
  wasmModule?: WebAssembly.Module;
  wasmBinary?: Uint8Array;
}): Promise<Swarm>;
export function createSwarm(mod: unknown): Swarm;
