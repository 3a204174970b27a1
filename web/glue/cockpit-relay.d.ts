// Types for `tether/relay-cockpit` (web/glue/cockpit-relay.js): the cockpit relay core, driven by
// web/glue/driver.js (docs/cockpit-protocol.md § Driving the relay).
import type { ErrorCode } from './wire.js';

export type Role = 'robot' | 'viewer';
export type Lane = 'webtransport' | 'websocket';
export type ActionKind =
  | 'send_datagram'
  | 'write_control'
  | 'open_carrier'
  | 'write_carrier'
  | 'open_stream'
  | 'write_stream'
  | 'reset_stream'
  | 'close_session'
  | 'sfu_call'
  | 'sfu_cancel';

/** The Realtime client's call names (web/sfu/client.js `call({op})`). */
export type SfuOp =
  'newSession' | 'newTracks' | 'renegotiate' | 'closeTracks' | 'generateIceServers';

export interface Action {
  kind: ActionKind;
  session: number;
  /** open_carrier, write_carrier, open_stream, write_stream, reset_stream; else 0. */
  stream: number;
  /** The bytes to send or write; the same array for every viewer of one frame. */
  bytes?: Uint8Array;
  /** open_stream */
  ch?: string;
  delivery?: 'latest' | 'reliable';
  sendOrder?: number;
  /** reset_stream */
  end?: 'expired' | 'aborted' | 'closing';
  /** close_session: the error sent just before, or null for a plain close. */
  code?: ErrorCode | null;
  reason?: string;
  /** sfu_call, sfu_cancel: the call's token, for handleSfuResult. */
  call?: number;
  /** sfu_call: the Realtime call, and the SFU session it names ('' for none); `bytes` is its JSON body. */
  op?: SfuOp;
  sfuSession?: string;
}

/** The relay's bounds (src/cockpit/*.hpp), for logs and tools; the core enforces them. */
export interface CockpitLimits {
  latestStaleMs: number;
  reliableMaxFrames: number;
  reliableMaxBytes: number;
  reliableWritesInFlight: number;
  maxLatestWritesInFlight: number;
  maxPendingPublishes: number;
  publishTimeoutMs: number;
  publishRatePerSecond: number;
  publishBurst: number;
  maxCarrierBacklogBytes: number;
  maxSessions: number;
  maxIncomingStreamsPerSession: number;
  maxSubsPerViewer: number;
  /** What a viewer's WebSocket may buffer before its streams wait (the WebSocket lane's bound). */
  webSocketHighWaterBytes: number;
  turnTtlSeconds: number;
  turnRefreshMs: number;
  sfuCallTimeoutMs: number;
  maxPullsPerRtcSession: number;
  maxSfuResultBytes: number;
  rtcRetryMs: number[];
}

export interface CockpitRelay {
  readonly limits: CockpitLimits;
  handleSessionOpen(role: Role, lane: Lane, now: number): number;
  handleSessionClosed(session: number, now: number): void;
  handleControlData(session: number, bytes: Uint8Array, now: number): void;
  handleDatagram(session: number, bytes: Uint8Array, now: number): void;
  handleIncomingOpen(session: number, now: number): number;
  handleIncomingData(stream: number, bytes: Uint8Array, now: number): void;
  handleIncomingEnd(stream: number, now: number): void;
  handleWsMessage(session: number, bytes: Uint8Array, now: number): void;
  handleStreamOpened(stream: number, now: number): void;
  /** A viewer stream's write or a carrier's write completed. */
  handleWriteDone(stream: number, now: number): void;
  /** A viewer stream or a carrier failed (a failed carrier fails its robot: carrier_failed). */
  handleStreamFailed(stream: number, now: number): void;
  /** The Realtime client's result of an sfu_call ({ok, status, body?, errorCode?, ...} or its JSON). */
  handleSfuResult(call: number, result: object | string, now: number): void;
  handleTimeout(now: number): void;
  pollTimeout(): number | null;
  pollAction(): Action | null;
  stats(): Record<string, unknown>;
  sessionCount(): number;
  dispose(): void;
}

export function loadCockpitRelay(options?: {
  authText?: string;
  sfu?: boolean;
  turn?: boolean;
  wasmModule?: WebAssembly.Module;
  wasmBinary?: Uint8Array;
}): Promise<CockpitRelay>;
export function createCockpitRelay(
  mod: object,
  options?: { authText?: string; sfu?: boolean; turn?: boolean },
): CockpitRelay;
export function heapViews(mod: object): { f64(): Float64Array };
