// Types for `tether/bus` (web/glue/bus.js): the agent message bus over a PeerTransport
// (agent-bus-and-swarm.md § Delivery semantics, § Untrusted wire input, § Local state and CLI
// boundaries; wire shapes in agent-bus-notes.md). The rules live in the C++ bus core (src/bus/);
// this module only moves envelopes between the transport and the core.
//
// Every failure is a value with `ok: false`; nothing here throws on bad input.
import type { LoadOptions } from './load.js';
import type { PeerId, PeerTransport } from '../peer/transport.js';

export type { LoadOptions } from './load.js';
export type { PeerId, PeerTransport } from '../peer/transport.js';

export type JsonValue =
  null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Who sent an envelope. Self-asserted: the room is not a trust boundary. */
export interface BusIdentity {
  /** The peer's stable stream id (≤128 chars). Direct messages are addressed to it. */
  streamId: string;
  /** ≤64 chars, e.g. "agent", "browser". */
  role: string;
  /** ≤256 chars, for people. */
  name: string;
  /** ≤128 chars; per process, so a restart shows as a new instance. */
  instanceId: string;
}

export type TransientType =
  | 'file_offer'
  | 'file_chunk'
  | 'file_complete'
  | 'swarm_offer'
  | 'swarm_manifest_request'
  | 'swarm_manifest_page'
  | 'swarm_announce'
  | 'swarm_request'
  | 'swarm_chunk'
  | 'swarm_have';

/** The closed set of envelope types (agent-bus-notes.md § The envelope). */
export type BusMessageType =
  | 'chat'
  | 'announce'
  | 'skill_update'
  | 'command'
  | 'command_response'
  | 'file_ack'
  | 'event'
  | 'ping'
  | 'pong'
  | 'ack'
  | 'history_replay'
  | 'history_request'
  | 'handoff'
  | TransientType;

/** One data-channel message: `{v:1, id, type, from, to, topic, ts, payload}`. */
export interface Envelope<P = JsonValue> {
  v: 1;
  /** ≤128 chars; ours are 12 random bytes in base64url. */
  id: string;
  type: BusMessageType;
  from: BusIdentity;
  /** The recipient's streamId, or null for a broadcast. */
  to: string | null;
  /** ≤256 chars, or null. */
  topic: string | null;
  /** Unix milliseconds (finite). */
  ts: number;
  payload: P;
}

/** Every bound the core enforces (named constants in src/bus/limits.hpp). */
export interface BusLimits {
  /** Every envelope type but file_chunk. */
  maxEnvelopeBytes: number;
  /** A file_chunk envelope (one-to-one chunks of up to fileMaxChunkSize, base64). */
  maxFileChunkEnvelopeBytes: number;
  /** JSON nesting an envelope may have, the envelope object itself counting 1 (common/json.hpp). */
  maxJsonDepth: number;
  maxIdChars: number;
  maxTypeChars: number;
  maxStreamIdChars: number;
  maxRoleChars: number;
  maxNameChars: number;
  maxInstanceIdChars: number;
  /** Random bytes in an envelope id (base64url), as the public implementation makes them. */
  idRandomBytes: number;
  maxToChars: number;
  maxTopicChars: number;
  /** Ordinary direct messages waiting for one peer (beyond this, send fails with `queue_full`). */
  maxQueuedPerPeer: number;
  maxQueuedBytesPerPeer: number;
  /** Distinct peers that may have a backlog at once. */
  maxQueuedPeers: number;
  historyCapacity: number;
  historyMaxRequest: number;
  historyDefaultRequest: number;
  handoffMaxRequestBytes: number;
  handoffMaxTtlMs: number;
  handoffRetryInitialMs: number;
  handoffRetryMaxMs: number;
  fileMaxBytes: number;
  fileBrowserMaxBytes: number;
  fileReceiverMaxIncomplete: number;
  fileReceiverMaxPromisedBytes: number;
  /** One-to-one chunk sizes from 1 KiB to 1 MiB, the public implementation's range. */
  fileMinChunkSize: number;
  fileMaxChunkSize: number;
  fileDefaultChunkSize: number;
  /** Error text in a file_ack or command_response we send is cut to this many bytes. */
  maxErrorTextBytes: number;
  maxShareNameChars: number;
  maxSharePathChars: number;
  /** One list-files answer names at most this many entries (the public implementation's cap). */
  shareLevelMaxEntries: number;
  /** The owner's walk of a whole share stops at this many entries... */
  shareListMaxEntries: number;
  /** ...and this many folders down. */
  shareListMaxDepth: number;
}

/** One child of a shared folder as the owner read it, its containment applied. */
export interface ShareEntry {
  name: string;
  dir: boolean;
  /** A file's size in bytes (ignored for a folder). */
  size?: number;
}

/** The list-files answer's result, in the public implementation's shape. */
export interface ListFilesResult {
  share: string;
  path: string;
  entries: { name: string; path: string; type: 'dir' | 'file'; size: number | null }[];
  truncated: boolean;
  omitted: number;
}

export type BusErrorCode =
  // the envelope itself
  | 'too_large'
  | 'not_json'
  | 'not_object'
  | 'bad_version'
  | 'missing_field'
  | 'unknown_field'
  | 'bad_field'
  | 'empty_string'
  | 'too_long'
  | 'nul_in_string'
  | 'not_finite'
  | 'unknown_type'
  // identity and routing
  | 'forged_identity'
  | 'not_for_us'
  | 'unknown_peer'
  // payloads with rules (handoff, ack, history, file transfer)
  | 'bad_payload'
  | 'handoff_too_large'
  | 'handoff_expiry'
  | 'handoff_expired'
  | 'handoff_unsupported'
  | 'handoff_unknown'
  // sending
  | 'queue_full'
  | 'not_accepted'
  | 'closed'
  // simple one-to-one transfer
  | 'file_too_large'
  | 'too_many_transfers'
  | 'over_promised'
  | 'unknown_transfer'
  | 'not_owner'
  | 'duplicate_transfer'
  | 'bad_chunk'
  | 'size_mismatch'
  | 'sha256_mismatch';

/** A refusal. `field` names the offending field ("from.name", "payload.expiresAt", ...). */
export interface BusError {
  ok: false;
  code: BusErrorCode;
  field: string;
  /** What went wrong and what to do about it. */
  detail: string;
}

/** `sent`: the transport accepted it now. `queued`: kept in that peer's ordered backlog. */
export type SendStatus = 'sent' | 'queued';

export type SendResult =
  { ok: true; id: string; status: SendStatus; envelope: Envelope } | BusError;

/** Broadcasts are best-effort: offered to every open peer once, never queued. */
export type BroadcastResult =
  { ok: true; id: string; envelope: Envelope; sentTo: PeerId[]; rejectedBy: PeerId[] } | BusError;

export interface SendOptions {
  topic?: string | null;
}

/** What we know about one connection of the room. */
export interface BusPeer {
  /** The transport's id for the connection. */
  peer: PeerId;
  /** The stream this connection is bound to (from its first envelope), or null until then. */
  streamId: string | null;
  /** The identity from the latest envelope on this connection. */
  identity: BusIdentity | null;
  open: boolean;
  /** Ordinary direct messages waiting for this stream. */
  queued: number;
  /** The latest `announce` payload from this stream's current instance, or null. */
  announce: JsonValue | null;
  /** The current instance announced `handoff-v1`. */
  handoff: boolean;
}

export interface DeliveryInfo {
  /** The connection it arrived on. */
  peer: PeerId;
  /** Came from a history_replay rather than live. */
  replayed: boolean;
}

/** A handoff waiting for our app to store it (the receiver side). */
export interface IncomingHandoff {
  envelope: Envelope<{ request: string; expiresAt: number }>;
  request: string;
  expiresAt: number;
  /** The dedup key (sender streamId, sender instanceId, message id) as JSON text `["stream","instance","id"]`. Persist it with the record. */
  key: string;
  peer: PeerId;
}

/** A handoff we sent and keep retrying (the sender side). */
export interface OutgoingHandoff {
  id: string;
  to: string;
  expiresAt: number;
  attempts: number;
  /** When the core next retries it (ms), or null while the peer lacks a current handoff-v1 announcement. */
  nextAttemptMs: number | null;
  envelope: Envelope<{ request: string; expiresAt: number }>;
}

/** An ack / command_response matching a direct message we sent (by message id and peer). */
export interface Confirmation {
  messageId: string;
  /** The peer's streamId (the one we sent to). */
  from: string;
  type: 'ack' | 'command_response';
  /** The type of the message it confirms. */
  forType: BusMessageType;
  envelope: Envelope;
}

/** The result of matching a stored envelope against a request (for `receipt` over inbox/archive). */
export interface Receipt {
  kind: 'ack' | 'command_response' | 'handoff_stored';
  requestId: string;
  peer: string;
  /** false when the report says the request failed (payload `ok: false` or an `error`). */
  ok: boolean;
  envelope: Envelope;
}

export interface BusHandlers {
  /** Every valid envelope addressed to us or broadcast (except internal history traffic). */
  message?(envelope: Envelope, info: DeliveryInfo): void;
  /** An envelope refused locally; nothing was torn down. */
  rejected?(error: BusError, peer: PeerId): void;
  /** A new handoff: store it durably, then call `bus.confirmHandoff(h.key)`. Already-confirmed keys are re-acked without this call. */
  handoff?(h: IncomingHandoff): void;
  /** The receiver confirmed storage of a handoff we sent. */
  handoffStored?(h: OutgoingHandoff): void;
  /** A handoff we sent reached its expiresAt without a receipt. */
  handoffExpired?(h: OutgoingHandoff): void;
  confirmation?(c: Confirmation): void;
  /** A connection appeared, opened, closed, got bound to a stream or announced. */
  peer?(p: BusPeer): void;
}

export interface BusOptions extends BusHandlers {
  self: BusIdentity;
  transport: PeerTransport;
  /** Clock in Unix ms (default Date.now). */
  now?: () => number;
  /** Our announce payload, sent to every peer when its control lane opens. `handoff-v1` is added to skills when `acceptHandoffs`. */
  announce?: {
    skills?: string[];
    status?: string;
    statusDetail?: string;
    version?: string;
    topics?: string[];
    agent?: JsonValue;
  };
  /** We store handoffs (announce `handoff-v1`). Default false. */
  acceptHandoffs?: boolean;
  /**
   * The transport's peer ids are the peers' stream ids, made unique by the room relay (true for
   * the WebRTC and relay transports): an envelope whose `from.streamId` is not the peer it came
   * from is refused as `forged_identity`. Default false: a connection binds to the stream its first
   * envelope names.
   */
  peerIdsAreStreams?: boolean;
  /**
   * The id the transport knows us by, when it is not our streamId (a VDO.Ninja UUID): a ninja-p2p
   * peer that has not learned our streamId may address its first announce to it, and that announce
   * is taken as addressed to us. Nothing else is.
   */
  transportId?: string;
  /** Seed for message ids (default: 8 bytes from crypto.getRandomValues). */
  seed?: number;
  /** Run handoff retries and expiry on an internal timer (default true). Set false to drive them with `tick()`. */
  autoTick?: boolean;
  /** Module loading options (workerd needs { wasmModule }). */
  wasm?: LoadOptions;
}

export interface Bus {
  readonly self: BusIdentity;
  readonly limits: BusLimits;
  /** A direct message to a streamId. Ordinary types queue behind that peer's backlog; transient types are sent now or fail with `not_accepted`. */
  send(to: string, type: BusMessageType, payload: JsonValue, options?: SendOptions): SendResult;
  broadcast(type: BusMessageType, payload: JsonValue, options?: SendOptions): BroadcastResult;
  /** Asks `to` for up to `count` recent messages (capped at 200; invalid or ≤0 means 50). Replayed envelopes arrive via `message` with `replayed: true`, deduplicated. */
  requestHistory(to: string, count?: number): SendResult;
  /** Our own ring, newest last, filtered as a replay to `forPeer` would be (all of it when omitted). */
  history(count?: number, forPeer?: string): Envelope[];
  /** Acknowledges an envelope we received: `ack {messageId, ...extra}` to its sender. */
  ack(envelope: Envelope, extra?: { [key: string]: JsonValue }): SendResult;
  /**
   * Answers a command: `command_response {requestId: command.id, ok: true, result}` for
   * `{result}`, `{requestId, ok: false, error}` for `{error}` (the public shape; anything else is
   * refused with `bad_payload`).
   */
  respond(command: Envelope, outcome: { result?: JsonValue } | { error: string }): SendResult;
  /**
   * Hands work to `to` and retries with backoff until it confirms storage or the handoff expires.
   * Fails with `handoff_unsupported` unless `to`'s current instance announced `handoff-v1`.
   * `ttlMs` defaults to the maximum, 24 h.
   */
  handoff(
    to: string,
    request: string,
    options?: { ttlMs?: number; expiresAt?: number },
  ): { ok: true; handoff: OutgoingHandoff } | BusError;
  /** Resumes retrying a handoff we sent before a restart (its original envelope, same id and instance). */
  resumeHandoff(envelope: Envelope): { ok: true; handoff: OutgoingHandoff } | BusError;
  /**
   * A direct message of ours that left through another path (a durable disk outbox that keeps
   * ids stable across restarts): kept in history and remembered for ack correlation, as if
   * `send` had sent it. Refused unless it is ours, direct and not transient.
   */
  noteSent(envelope: Envelope): { ok: true } | BusError;
  /** Stops retrying one of our handoffs. */
  cancelHandoff(id: string): boolean;
  pendingHandoffs(): OutgoingHandoff[];
  /** After storing an incoming handoff: sends the `stored` ack and remembers the key. */
  confirmHandoff(key: string): SendResult;
  /** Keys already stored in an earlier run (so their retries are re-acked without redelivery). */
  rememberHandoffs(keys: Iterable<string>): void;
  peers(): BusPeer[];
  /** Queued ordinary messages for one streamId, or in total. */
  queued(streamId?: string): number;
  /**
   * Would a direct message to `peer` go out now? `peer` is a streamId, or the id of a connection
   * not yet bound to one (as `BusPeer` names it: `streamId ?? peer`). False while the room roster
   * has dropped it, or re-listed it on a channel that has not carried a message since. Cheap: for
   * per-flush checks where `peers()` would cost the room size.
   */
  isOpen(peer: string): boolean;
  /** Adds handlers; returns the function that removes them. */
  subscribe(handlers: BusHandlers): () => void;
  /** Replaces our announce payload and broadcasts it. */
  setAnnounce(announce: NonNullable<BusOptions['announce']>): BroadcastResult;
  /** Runs handoff retries and expiries due at `now()` (the internal timer does this unless autoTick is false). */
  tick(): void;
  /** When the core next has timed work (Unix ms), or null. */
  nextWakeMs(): number | null;
  /** Unsubscribes from the transport and frees the core (does not close the transport). */
  close(): void;
}

// --- the simple one-to-one transfer (file_offer / file_chunk / file_complete / file_ack) -----

export interface FileOffer {
  transferId: string;
  name: string;
  mimeType: string;
  kind: 'file' | 'image';
  size: number;
  sha256: string;
  chunkSize: number;
  totalChunks: number;
}

/** A prepared send: the offer, each chunk payload and the completion, as wire payloads. */
export interface FileSendPlan {
  offer: FileOffer;
  chunk(index: number): { transferId: string; index: number; totalChunks: number; data: string };
  complete: { transferId: string; totalChunks: number; size: number; sha256: string };
  /** Frees the buffered copy of the file. */
  dispose(): void;
}

export interface FileReceiverOptions {
  /** Per-file cap; use limits.fileBrowserMaxBytes for in-memory receives in a browser. */
  maxFileBytes?: number;
  maxIncomplete?: number;
  maxPromisedBytes?: number;
}

export interface FileReceiver {
  /** Validates an offer from `from` (streamId) and reserves its promised bytes. */
  offer(from: string, payload: JsonValue): { ok: true; offer: FileOffer } | BusError;
  /** Validates the next chunk (in order); returns its bytes and where they go. */
  chunk(
    from: string,
    payload: JsonValue,
  ): { ok: true; transferId: string; index: number; offset: number; data: Uint8Array } | BusError;
  /** Validates the completion against everything received (size, chunk count, SHA-256). Only then move the file into place, exclusively. */
  complete(from: string, payload: JsonValue): { ok: true; offer: FileOffer } | BusError;
  /** Drops an incomplete transfer (the app gave up or the peer left). */
  abort(transferId: string): boolean;
  incomplete(): number;
  promisedBytes(): number;
  dispose(): void;
}

/** The module-level API. */
export interface BusApi {
  limits: BusLimits;
  /** The envelope `v` this core writes and accepts. */
  envelopeVersion: number;
  /** Throws only on invalid options (an unbounded or empty `self` field): a programming error, not wire input. */
  createBus(options: BusOptions): Bus;
  /** Strict envelope parse (the same checks the bus applies to every incoming message). */
  parseEnvelope(text: string): { ok: true; envelope: Envelope } | BusError;
  /** Canonical JSON text of an envelope (validated first). */
  serializeEnvelope(envelope: Envelope): { ok: true; text: string } | BusError;
  isTransient(type: string): boolean;
  /** Does `envelope` report on request `requestId` sent to `peer`? null when it does not. */
  matchReceipt(
    envelope: Envelope | string,
    request: { requestId: string; peer: string; senderInstanceId?: string },
  ): Receipt | null;
  planFileSend(file: {
    bytes: Uint8Array;
    name: string;
    mimeType?: string;
    kind?: 'file' | 'image';
    /**
     * The largest message the peer's transport takes (a data channel's negotiated SCTP limit);
     * the core picks the largest chunk whose envelope fits it. 0 or absent: no known limit.
     */
    maxMessageBytes?: number;
    /** An explicit chunk size (1 KiB to 1 MiB) instead of the one the core picks. */
    chunkSize?: number;
    transferId?: string;
  }): { ok: true; plan: FileSendPlan } | BusError;
  createFileReceiver(options?: FileReceiverOptions): FileReceiver;
  /**
   * A shared-folder command (`command {command: "shares" | "list-files" | "get-file", args?}`):
   * null when the envelope is not one; its refusal when its arguments are bad (answer it with
   * `respond(envelope, {error: detail})`).
   */
  parseShareCommand(envelope: Envelope | string): ShareCommand | BusError | null;
  /**
   * A path inside a share as its owner reads it: trimmed, backslashes as slashes, `.` and `..`
   * folded, no outer slashes; '' is the share's root. parseShareCommand and shareCommandPayload
   * hand paths over read this way.
   */
  sharePath(path: string): string;
  /**
   * Whether a user may name a share `name`: 1 to `limits.maxShareNameChars` letters, digits, '.',
   * '_' or '-', and neither '.' nor '..'.
   */
  validShareName(name: unknown): boolean;
  /**
   * The list-files result for the children the host read (names that are not well-formed text
   * left out and counted in `omitted`): folders first, then files, each by name, at most
   * `limits.shareLevelMaxEntries`, `truncated` when there were more.
   */
  listFilesResult(
    share: string,
    path: string,
    entries: ShareEntry[],
    omitted: number,
  ): ListFilesResult;
  /** The types a person or an MCP client sends directly, in the order a refusal lists them. */
  readonly directSendTypes: readonly string[];
  /** The command payload asking a peer for `shares`, `list-files {share, path?}` or `get-file {share, path}`. */
  shareCommandPayload(c: {
    command: ShareCommand['command'];
    share?: string;
    path?: string;
  }): { ok: true; payload: JsonValue } | BusError;
  /**
   * The payload a direct message of `type` carries when its words are `text` (docs/agent-bus.md
   * § Payloads with fixed shapes): chat and event `{text}`; a command `{command, args?}` (one word;
   * `argsJson`, JSON text, goes with a command only); an ack `{messageId}` (one word, an id).
   * command_response is `commandResponse`'s; every other type is refused.
   */
  typedPayload(type: string, text: string, argsJson?: string): WordsPayload;
  /**
   * The command_response answering command `requestId`: `{requestId, ok: true, result}`
   * (`resultJson` parsed, or null), or `{requestId, ok: false, error}` when `error` is given (cut
   * to `limits.maxErrorTextBytes`).
   */
  commandResponse(
    requestId: string,
    outcome?: { resultJson?: string; error?: string },
  ): WordsPayload;
  /** `file_ack {transferId, ok: false, error}` refusing the offer, chunk or completion `payload`. */
  fileAckRefusal(
    payload: JsonValue,
    error: string,
  ): { transferId: string; ok: false; error: string };
  /** `file_ack {transferId, ok: true, name, mimeType, kind, size, sha256, savedPath?}` for a verified offer. */
  fileAckReceived(
    offer: FileOffer,
    savedPath?: string,
  ): { ok: true; payload: JsonValue } | BusError;
}

/** Why `typedPayload` or `commandResponse` refused (src/bus/typed_payload.hpp). */
export type WordsErrorCode =
  | 'not_words_type'
  | 'use_respond'
  | 'args_not_command'
  | 'no_word'
  | 'many_words'
  | 'no_text'
  | 'text_too_large'
  | 'args_too_large'
  | 'args_not_json'
  | 'args_too_deep'
  | 'no_request_id'
  | 'result_and_error'
  | 'no_error_text'
  | 'result_too_large'
  | 'result_not_json'
  | 'result_too_deep'
  | 'id_too_long'
  | 'nul_in_id'
  | 'not_utf8';

export type WordsPayload =
  | { ok: true; payload: JsonValue }
  | {
      ok: false;
      code: WordsErrorCode;
      /** many_words: how many; *_too_large: the bytes; id_too_long: the id's length. */
      count: number;
      /** The bound a *_too_large, *_too_deep or id_too_long broke. */
      bound: number;
      /** *_not_json: why the text did not parse. */
      json?: 'invalid_utf8' | 'too_deep' | 'invalid_json' | 'number_out_of_range';
      /** not_utf8: which input is not UTF-8 (the words, the command's id, the error text). */
      input?: 'text' | 'requestId' | 'error';
    };

export interface ShareCommand {
  ok: true;
  command: 'shares' | 'list-files' | 'get-file';
  /** The share's name (empty for `shares`). */
  share: string;
  /** Relative to the share; empty for its root (list-files) or for `shares`. */
  path: string;
}

/** Loads the WASM module once and returns the bus API. */
export function loadBus(options?: LoadOptions): Promise<BusApi>;
/** Wraps an already loaded module. */
export function createBusApi(mod: unknown): BusApi;
/** Shorthand: loads the module (options.wasm) and creates one bus. */
export function createBus(options: BusOptions): Promise<Bus>;
