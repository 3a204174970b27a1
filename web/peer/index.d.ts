// Types of `tether/peer` (web/peer/index.js).
import type { PeerId, PeerTransport, PeerTransportEvents } from './transport.js';
import type { Swarm, SwarmStatus } from '../glue/swarm.js';

export type { PeerId, PeerTransport, PeerTransportEvents } from './transport.js';

/** A candidate as RTCPeerConnection reports it (only the fields the transport reads). */
export interface CandidateLike {
  candidate?: string;
  sdpMid?: string | null;
  sdpMLineIndex?: number | null;
}

export interface WebRtcTransportOptions {
  /** The room relay's WebSocket URL (ws:// or wss://). */
  url: string;
  room: string;
  /** Our origin in the room: 1 to 128 characters. The lower id of a pair offers. */
  selfId: string;
  /** Defaults to globalThis.RTCPeerConnection; in Node pass a library's (node-datachannel/polyfill). */
  RTCPeerConnection?: unknown;
  /** Defaults to globalThis.WebSocket; in Node 20 pass `ws`. */
  WebSocket?: unknown;
  /** Passed to every RTCPeerConnection. Default `{iceServers: []}`. */
  rtcConfig?: object;
  /** Which local candidates to send and which remote ones to use. Default: all. */
  candidateFilter?: (candidate: CandidateLike) => boolean;
  policyVersion?: number;
  log?: (...args: unknown[]) => void;
}

export interface WebRtcTransportEvents extends PeerTransportEvents {
  /** Our signaling socket dropped: outstanding requests should be abandoned, rebuilds held. */
  signalingDown?(): void;
}

export interface WebRtcTransportStats {
  offers: number;
  answers: number;
  rebuilds: number;
  signalingReconnects: number;
  refusedSignals: number;
  peers: number;
}

export interface WebRtcTransport extends PeerTransport {
  /** Resolves at the first welcome from the relay. */
  readonly ready: Promise<void>;
  /** Members of the room other than us, connected or not. */
  roster(): PeerId[];
  /** The negotiated SCTP message limit with `peer` (65,536 when unknown). */
  maxMessageSize(peer: PeerId): number;
  signalingUp(): boolean;
  /** Tears down and rebuilds the connection to `peer`; held while signaling is down. */
  rebuild(peer: PeerId): void;
  /** Tests: silently drop `peer`'s binary frames on the current connection (a dead path). */
  blackhole(peer: PeerId): boolean;
  /** Closes our signaling socket (it reconnects by itself). */
  dropSignaling(): void;
  stats(): WebRtcTransportStats;
  subscribe(handlers: WebRtcTransportEvents): () => void;
}

export declare function createWebRtcTransport(options: WebRtcTransportOptions): WebRtcTransport;
/** Accepts only candidates on 127.0.0.1 (tests and benches stay on loopback). */
export declare function loopbackOnly(candidate: CandidateLike): boolean;
/**
 * Loads the WASM module the transports' cores run on where it cannot load itself (a bundled
 * browser app: pass { wasmModule }). Node and Deno load it on import, and any tether loader the
 * app already awaited (loadBus, loadSwarm) serves too.
 */
export declare function initPeer(options?: {
  wasmModule?: WebAssembly.Module;
  wasmBinary?: Uint8Array;
}): Promise<void>;

/** What a seeder reads chunks from. */
export interface SwarmSource {
  readonly size: number;
  read(offset: number, length: number): Promise<Uint8Array>;
  /** SHA-256 of the whole file, lowercase hex: the file id. */
  sha256(): Promise<string>;
}

export interface PartFile {
  read(offset: number, length: number): Promise<Uint8Array>;
  write(offset: number, bytes: Uint8Array): Promise<unknown>;
  size(): Promise<number>;
  flush(): Promise<unknown>;
  sha256(): Promise<string>;
  close(): Promise<unknown>;
}

/** A download folder: part files, lock files and the final files live in it. */
export interface SwarmFolder {
  /** Names the folder for part-file naming and messages. */
  readonly key: string;
  readText(name: string): Promise<string | null>;
  /** `exclusive`: fails (false) when the file exists. */
  writeText(name: string, text: string, options?: { exclusive?: boolean }): Promise<boolean>;
  remove(name: string): Promise<unknown>;
  /** When the file was last written (ms since the epoch), or null when it does not exist. */
  modifiedMs?(name: string): Promise<number | null>;
  /**
   * Runs `fn` under the folder's mutual exclusion for `name` (OPFS: a Web Lock, shared by every
   * tab and worker of the origin; disk: an exclusively created `<name>.mutex` file, shared by
   * every process), so a lock file's read, decision and write are one step.
   */
  exclusively?<T>(name: string, fn: () => Promise<T>): Promise<T>;
  openFile(name: string): Promise<PartFile>;
  /** Moves the part into place without overwriting anything; the handle then reads the final file. */
  finish(
    handle: PartFile,
    partName: string,
    finalName: string,
  ): Promise<{ name: string; handle: PartFile }>;
}

export interface PeerProgress {
  received: number;
  served: number;
}

export interface SwarmProgress {
  fileId: string;
  name: string;
  role: 'seed' | 'fetch';
  state: 'seeding' | 'manifest' | 'downloading' | 'finishing' | 'complete';
  have: number;
  total: number;
  size: number;
  bytes: number;
  /** Chunks credited from an existing part file. */
  resumed: number;
  peers: Record<PeerId, PeerProgress>;
}

export interface SwarmOffer {
  fileId: string;
  name: string;
  mimeType: string;
  size: number;
  chunkSize: number;
  totalChunks: number;
  chunkHashesHash: string;
  chunkHashes?: string[];
  manifestPageSize?: number;
  manifestPages?: number;
}

export interface FetchResult {
  fileId: string;
  name: string;
  size: number;
  sha256: string;
  resumed: number;
}

export interface SwarmPeerStats {
  refused: { peer: PeerId | null; code: string; detail: string }[];
  refusedCount: number;
  forgedIdentity: number;
  ignoredFrames: number;
  badChunks: number;
  framesSent: number;
  base64ChunksSent: number;
  sendRejected: number;
  manifestFailures: number;
  controlReceived: number;
  signalingDrops: number;
  serveErrors: number;
  servesDropped: number;
  /** Requests repeated while their serve was still queued: served once (the core's rule). */
  servesDeduplicated: number;
  /** Manifest pages from a peer nobody asked: refused. */
  unsolicitedPages: number;
  servedFromMemory: number;
  servedFromDisk: number;
  chunks: Partial<Record<'stored' | 'duplicate' | 'bad_hash' | 'unexpected', number>>;
}

export interface SwarmPeer {
  readonly identity: { streamId: string; role: string; name: string; instanceId: string };
  share(file: {
    name: string;
    mimeType?: string;
    source: SwarmSource;
    chunkSize?: number;
  }): Promise<{ fileId: string; offer: SwarmOffer }>;
  /** Rejects with a clear message when this file is already downloading into this folder. */
  fetch(
    fileId: string,
    folder: SwarmFolder,
    options?: { waitForOfferMs?: number; from?: PeerId },
  ): Promise<FetchResult>;
  offers(): Record<string, SwarmOffer & { offeredBy: PeerId[] }>;
  progress(fileId: string): SwarmProgress | null;
  receivedIndexes(fileId: string): number[];
  resumedIndexes(fileId: string): number[];
  status(fileId: string): SwarmStatus | null;
  stats(): SwarmPeerStats;
  close(): Promise<void>;
}

export declare function createSwarmPeer(options: {
  swarm: Swarm;
  transport: PeerTransport;
  identity?: { role?: string; name?: string; instanceId?: string };
  now?: () => number;
  onProgress?: (progress: SwarmProgress) => void;
  log?: (...args: unknown[]) => void;
  /** Seeds the core's random tie-breaking (§ Why ties are broken at random). */
  seed?: number;
  /** The core's download settings: requests in flight per peer and in all (its defaults, 16). */
  session?: { windowPerPeer?: number; windowTotal?: number };
}): SwarmPeer;
export declare function bytesSource(bytes: Uint8Array): SwarmSource;
export declare function sha256HexAsync(bytes: Uint8Array): Promise<string>;

export interface OpfsFolder extends SwarmFolder {
  readAll(name: string): Promise<Uint8Array>;
  close(): void;
}
/** An OPFS folder ('downloads', 'a/b'); the file I/O runs in a worker. */
export declare function opfsFolder(path: string): Promise<OpfsFolder>;

export interface ProgressView {
  /** Drawn at once when the file is new or its state changed, else within `intervalMs`. */
  update(progress: SwarmProgress): void;
  /** Draws every report not drawn yet, now. */
  flush(): void;
}
/** `intervalMs` (250): at most one redraw per that long while a file's state stays the same. */
export declare function createProgressView(
  container: HTMLElement,
  options?: { intervalMs?: number },
): ProgressView;
