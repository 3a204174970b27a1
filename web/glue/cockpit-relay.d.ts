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
  | 'persist_lease_gen'
  | 'sfu_call'
  | 'sfu_cancel'
  | 'handoff'
  | 'presence'
  | 'fleet_robots';

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
  /**
   * persist_lease_gen (session 0): the newest teleop lease generation. A host with storage keeps
   * it and passes it back as `leaseGenFloor` when it makes the next relay; others ignore it.
   */
  gen?: number;
  /**
   * handoff: the robot whose object the session moves to; `bytes` is the ticket to hand that
   * object (handleHandoff) before anything else the client sent. presence (session 0): `bytes` is
   * the robot's identity JSON, or `null`, for the directory's handlePresence. fleet_robots
   * (session 0): `bytes` is the robots list for every robot object's handleFleetRobots.
   */
  robot?: string;
}

export interface RelayOptions {
  /** The auth file's contents ("" for none). */
  authText?: string;
  /** An SFU is configured (--rtc-file): the relay brokers WebRTC video. */
  sfu?: boolean;
  /** With `sfu`: a TURN key is configured, so rtc_ice carries minted credentials (else iceServers is []). */
  turn?: boolean;
  /** The wall clock (ms since the epoch) at the `now` the host calls 0. */
  wallClockMs?: number;
  /** The newest lease generation a persist_lease_gen action stored, if any. */
  leaseGenFloor?: number;
  /**
   * The host reports a WebSocket stream open and write done only once bufferedAmount is under
   * webSocketHighWaterBytes (Deno). False where sockets have no bufferedAmount (workerd): the core
   * paces them by acknowledged pongs (webSocketAckWindowBytes).
   */
  webSocketBufferedAmount?: boolean;
}

/** The relay's bounds (src/cockpit/*.hpp), for logs and tools; the core enforces them. */
export interface CockpitLimits {
  latestStaleMs: number;
  /** Client messages the edge's switchboard holds while a session moves between objects. */
  maxHandoffQueuedMessages: number;
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
  /** Without bufferedAmount: the unacknowledged bytes a WebSocket may be handed (the edge). */
  webSocketAckWindowBytes: number;
  /** A WebSocket session silent this long is closed (its lease released). */
  webSocketLivenessMs: number;
  leaseGensPerMs: number;
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
  /** `count` writes of one stream completed (they complete in order): one crossing for a turn's
   * completions, the same as `count` handleWriteDone calls; any beyond those outstanding are ignored. */
  handleWritesDone(stream: number, count: number, now: number): void;
  /** A viewer stream or a carrier failed (a failed carrier fails its robot: carrier_failed). */
  handleStreamFailed(stream: number, now: number): void;
  /** The Realtime client's result of an sfu_call ({ok, status, body?, errorCode?, ...} or its JSON). */
  handleSfuResult(call: number, result: object | string, now: number): void;
  handleTimeout(now: number): void;
  /** A fleet split over objects (docs/cockpit-fleet.md), before any session opens. */
  setFleetPart(part: 'whole' | 'directory' | 'robot', homeRobot?: string): void;
  handleHandoff(session: number, ticket: Uint8Array | string, now: number): void;
  handlePresence(link: number, report: Uint8Array | string, now: number): void;
  handleFleetRobots(robots: Uint8Array | string, now: number): void;
  handleDirectoryLost(now: number): void;
  pollTimeout(): number | null;
  pollAction(): Action | null;
  stats(): Record<string, unknown>;
  sessionCount(): number;
  dispose(): void;
}

export function loadCockpitRelay(
  options?: RelayOptions & { wasmModule?: WebAssembly.Module; wasmBinary?: Uint8Array },
): Promise<CockpitRelay>;
export function createCockpitRelay(mod: object, options?: RelayOptions): CockpitRelay;
export function heapViews(mod: object): { f64(): Float64Array };
