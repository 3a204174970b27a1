// Types for `tether/wire` (web/glue/wire.js), the cockpit v7 codec. Names mirror the C++ wire core
// (src/wire/errors.hpp, messages.hpp, manifest.hpp); the specs are cockpit-wire-protocol.md and
// cockpit-wire-v7-notes.md. Every failure is a value with `ok: false`; nothing here throws.
import type { LoadOptions, TetherModule } from './load.js';

export type { LoadOptions, TetherModule } from './load.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export type Delivery = 'reliable' | 'latest';
/** Who writes a message; each message type may come only from certain senders. */
export type Sender = 'robot' | 'viewer' | 'relay';

/** A data frame's header: {ch, seq, ts, delivery, meta?} (§ Framing). */
export interface DataFrameHeader {
  ch: string;
  /** A per-channel sequence number, an integer in [0, 2^53 - 1]. */
  seq: number;
  /** Seconds. */
  ts: number;
  delivery: Delivery;
  meta?: JsonObject;
}

/** Codes carried by `error {code, message}` (§ Sessions and messages). */
export type ErrorCode =
  | 'hello_required'
  | 'version_mismatch'
  | 'role_mismatch'
  | 'missing_robot_id'
  | 'auth_failed'
  | 'invalid_manifest'
  | 'rtc_unavailable'
  | 'hello_mismatch'
  | 'robot_id_conflict'
  | 'invalid_control'
  | 'control_too_large'
  | 'carrier_failed'
  | 'unknown_robot'
  | 'unknown_channel'
  | 'no_watch'
  | 'teleop_held'
  | 'duplicate_request'
  | 'publish_too_large'
  | 'not_publishable'
  | 'pending_limit'
  | 'rate_limited'
  | 'publish_timeout'
  | 'robot_disconnected'
  | 'rtc_failed'
  | 'rtc_session_gone';

export interface ErrorCodeInfo {
  /** The relay closes the session after sending it. */
  terminal: boolean;
  /** Reconnecting with the same credentials and manifest cannot succeed. */
  finalForClient: boolean;
  /** What the receiver should do about it, for logs and UIs. */
  fix: string;
}

/** Why bytes could not become a frame. A framing error fails its own stream and nothing else. */
export type FrameErrorReason =
  | 'header_too_large'
  | 'frame_too_large'
  | 'control_too_large'
  | 'invalid_utf8'
  | 'too_deep'
  | 'invalid_json'
  | 'invalid_header'
  | 'truncated'
  | 'empty_message'
  | 'trailing_bytes';

export interface FrameError {
  reason: FrameErrorReason;
  /** What went wrong and what to do about it. */
  message: string;
  /** The code to send the peer whose stream failed. */
  code: ErrorCode;
}

/** Why a well-framed message is dropped. A dropped message never ends the session. */
export type DropReason =
  | 'invalid_utf8'
  | 'too_deep'
  | 'invalid_json'
  | 'too_large'
  | 'not_an_object'
  | 'missing_type'
  | 'unknown_type'
  | 'wrong_sender'
  | 'missing_field'
  | 'unknown_field'
  | 'wrong_type'
  | 'out_of_range'
  | 'reserved_channel'
  /** The `sender` argument was not 'robot', 'viewer' or 'relay'. */
  | 'bad_sender';

export interface Drop {
  reason: DropReason;
  /** The offending field's path, e.g. "robot.id"; empty for the whole message. */
  field: string;
  /** A sentence for logs: what was wrong and what is expected. */
  detail: string;
}

/** The v7 message set (cockpit-wire-v7-notes.md § Message set). */
export type MessageType =
  | 'hello'
  | 'welcome'
  | 'error'
  | 'ping'
  | 'pong'
  | 'robots'
  | 'watch'
  | 'manifest'
  | 'sub'
  | 'unsub'
  | 'subs'
  | 'teleop_start'
  | 'teleop_started'
  | 'teleop_stop'
  | 'twist'
  | 'stop'
  | 'pub_ack'
  | 'pub_nack'
  | 'rtc_ice'
  | 'rtc_offer'
  | 'rtc_answer'
  | 'rtc_stalled'
  | 'fleet';

/**
 * A validated message. The core checks every field of every type; the shapes are not repeated
 * here, so that the C++ schemas stay the only definition.
 */
export interface Message {
  t: MessageType;
  [field: string]: JsonValue;
}

/** A message to validate: JSON text, UTF-8 bytes, or an object (serialised with JSON.stringify). */
export type MessageInput = string | Uint8Array | object;

export type ParseResult =
  | { ok: true; type: MessageType; message: Message; /** canonical JSON text */ json: string }
  | { ok: false; drop: Drop };

export type DropResult = { ok: false; drop: Drop };
export type BytesResult = { ok: true; bytes: Uint8Array };
export type FrameErrorResult = { ok: false; error: FrameError };

/** On success `payload` is a view of the bytes passed in, not a copy. */
export type DecodeDataFrameResult =
  { ok: true; header: DataFrameHeader; payload: Uint8Array } | FrameErrorResult;

export interface DataFrame {
  header: DataFrameHeader;
  /**
   * A view of the caller's bytes when the frame arrived whole inside one chunk (no copy), else a
   * fresh copy. Copy it before reusing the buffer you pushed (a BYOB reader, say).
   */
  payload: Uint8Array;
}

/** Incremental decoder for a stream of data frames (one per reliable stream or carrier). */
export interface DataFrameStream {
  /** Feeds a chunk; returns the frames it completed and, once the stream failed, its error. */
  push(chunk: Uint8Array): { frames: DataFrame[]; error: FrameError | null };
  /** The stream ended or was reset: reports a frame cut off mid-way. */
  finish(): FrameError | null;
  /** Bytes held while waiting for the rest of a frame. */
  readonly buffered: number;
  /** Frees the decoder's WASM memory. */
  close(): void;
}

/** Incremental decoder for a length-prefixed control stream written by `sender`. */
export interface ControlStream {
  /** One parse result per complete message (drops included) and the stream's error. */
  push(chunk: Uint8Array): { messages: ParseResult[]; error: FrameError | null };
  finish(): FrameError | null;
  readonly buffered: number;
  close(): void;
}

export interface WireLimits {
  protocolVersion: number;
  manifestVersion: number;
  maxHeaderBytes: number;
  maxFrameBytes: number;
  maxControlBytes: number;
  maxPublishBytes: number;
  maxChannelIdChars: number;
  maxSdpBytes: number;
  maxRtcTracks: number;
  /** Robot, panel and request ids, in characters. */
  maxIdChars: number;
  /** Names, models, titles, encodings, scopes. */
  maxShortTextChars: number;
  /** Error messages, tokens. */
  maxMessageTextChars: number;
  maxManifestChannels: number;
  maxManifestPanels: number;
  /** Robots, subs, ICE servers. */
  maxListEntries: number;
  /** The channel id of control frames ("@control"). */
  controlChannel: string;
}

/** The closed sets the core defines, by the names it gives them (indexes are the core's values). */
export interface WireEnums {
  messageTypes: MessageType[];
  dropReasons: Exclude<DropReason, 'bad_sender'>[];
  frameErrors: FrameErrorReason[];
  manifestErrors: ManifestErrorCode[];
  errorCodes: ErrorCode[];
  deliveries: Delivery[];
  senders: Sender[];
}

/** A manifest channel in normal form: every default filled (§ Manifest). */
export interface ManifestChannel {
  ch: string;
  dir: 'rx' | 'tx';
  encoding: string;
  delivery: Delivery;
  maxHz?: number;
  params: JsonObject;
  publish: boolean;
  requiredScope?: string;
}

export interface ManifestPanel {
  id: string;
  /** Known kinds are checked against their channels; unknown kinds pass through. */
  kind: string;
  title: string;
  /** Channel ids. */
  channels: string[];
  params: JsonObject;
}

/** A panel id, or a row or column of at least one node with optional relative sizes. */
export type LayoutNode =
  string | { row: LayoutNode[]; shares?: number[] } | { col: LayoutNode[]; shares?: number[] };

/** Manifest v1 in normal form. */
export interface Manifest {
  version: 1;
  channels: ManifestChannel[];
  panels: ManifestPanel[];
  /** null only when no panel is left to place (none declared, or every one on a page). */
  layout: LayoutNode | null;
  pages: string[];
}

export type ManifestErrorCode =
  | 'not_an_object'
  | 'unsupported_version'
  | 'missing_field'
  | 'wrong_type'
  | 'bad_channel_id'
  | 'duplicate_channel'
  | 'bad_value'
  | 'publish_needs_tx'
  | 'duplicate_panel'
  | 'unknown_channel'
  | 'panel_rule'
  | 'bad_layout'
  | 'unknown_panel'
  | 'too_many';

export interface ManifestError {
  code: ManifestErrorCode;
  /** The offending value's path, e.g. "channels[2].ch"; empty for the whole manifest. */
  path: string;
  message: string;
}

export type ValidateManifestResult =
  { ok: true; manifest: Manifest } | { ok: false; errors: ManifestError[] };

/** The codec API returned by loadWire() and createWire(). */
export interface Wire {
  readonly limits: WireLimits;
  readonly enums: WireEnums;
  readonly errorCodes: Readonly<Record<ErrorCode, ErrorCodeInfo>>;
  readonly DataFrameStream: new () => DataFrameStream;
  readonly ControlStream: new (sender: Sender) => ControlStream;

  /** Encodes one data frame: u32-LE headerLen | u32-LE payloadLen | header JSON | payload. */
  encodeDataFrame(header: DataFrameHeader, payload?: Uint8Array): BytesResult | FrameErrorResult;
  /** Decodes a buffer holding exactly one data frame (one WebSocket message). */
  decodeDataFrame(bytes: Uint8Array): DecodeDataFrameResult;

  parseMessage(input: MessageInput, sender: Sender): ParseResult;
  /** Validates a message and returns its canonical JSON text. */
  encodeMessage(message: MessageInput, sender: Sender): { ok: true; json: string } | DropResult;
  /** A validated message, length-prefixed for a control stream. */
  encodeControlFrame(
    message: MessageInput,
    sender: Sender,
  ): BytesResult | DropResult | FrameErrorResult;
  /** A validated message as datagram bytes. */
  encodeDatagram(message: MessageInput, sender: Sender): BytesResult | DropResult;

  /** The relay's session checks on a hello: null when it passes, else the error code to send. */
  checkHello(message: MessageInput, endpoint: 'robot' | 'viewer'): ErrorCode | null;
  /** Manifest v1: the normal form, or every error found (up to the core's limit). */
  validateManifest(manifest: MessageInput): ValidateManifestResult;
}

/**
 * Loads the module (see loadTetherModule) and wraps it. Under workerd the package's `workerd`
 * condition brings its own precompiled module: call it with no options.
 */
export function loadWire(options?: LoadOptions): Promise<Wire>;

/** Wraps an already loaded module. */
export function createWire(mod: TetherModule): Wire;
