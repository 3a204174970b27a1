// Types of web/glue/cockpit-cores.js: the cockpit's client cores (src/cockpit/viewer_session.hpp,
// robot_session.hpp, teleop_safety.hpp), each a DrivenCore for web/glue/driver.js.
import type { DrivenCore } from './driver.js';
import type { ErrorCode, JsonObject, Manifest } from './wire.js';

export type Lane = 'webtransport' | 'websocket';

/** The names and numbers the client cores export. */
export interface ClientTables {
  viewerActions: ViewerAction['kind'][];
  viewerEvents: ViewerEvent['kind'][];
  robotActions: RobotAction['kind'][];
  robotEvents: RobotEvent['kind'][];
  sendResults: SendResult[];
  safetyCauses: SafetyCause[];
  robotSetupErrors: RobotSetupError[];
  record: Record<string, number>;
  limits: {
    viewerPingIntervalMs: number;
    /** On a WebSocket a ping waits for the previous pong, and comes at most this often. */
    viewerWsPingIntervalMs: number;
    twistResendMs: number;
    helloResendMs: number;
    helloTimeoutMs: number;
    robotPingIntervalMs: number;
    robotReconnectMs: number;
    defaultWatchdogMs: number;
    minWatchdogMs: number;
    maxWatchdogMs: number;
    sfuTrackTimeoutMs: number;
    rtcStallMs: number;
    rtcReopenMs: number;
    viewerBackoffMs: number[];
  };
}
export function clientTables(mod: object): ClientTables;

// --- the viewer -------------------------------------------------------------------------------
/** An ICE server as rtc_ice carries it (RTCIceServer). */
export interface IceServer {
  urls: string | string[];
  username?: string;
  credential?: string;
}
/** Which mid of the peer connection carries which track channel. */
export interface RtcTrack {
  mid: string;
  ch: string;
}
export interface ViewerAction {
  /** connect: open a transport; send_control / send_datagram / send_stream: these bytes on the
   * lane's control stream, as a datagram, or on a one-shot stream (one message on a WebSocket);
   * close: close the transport. WebRTC video: rtc_open: make a fresh recvonly peer connection
   * with `iceServers` (closing any old one) and hand its offer to handleRtcOffer; rtc_accept:
   * apply the relay's answer `sdp`; rtc_answer: apply the relay's offer `sdp` and hand the answer
   * to handleRtcAnswer (`tracks` are the watched robot's, empty when `current` is false). */
  kind:
    | 'connect'
    | 'send_control'
    | 'send_datagram'
    | 'send_stream'
    | 'close'
    | 'rtc_open'
    | 'rtc_accept'
    | 'rtc_answer';
  bytes: Uint8Array;
  reason?: string;
  iceServers?: IceServer[];
  sdp?: string;
  tracks?: RtcTrack[];
  robotId?: string;
  current?: boolean;
}
export type RtcTrackState = 'waiting' | 'connecting' | 'live' | 'stalled' | 'failed';
/** The viewer's WebRTC video, once the relay sent rtc_ice: its connection and each wanted track channel. */
export interface ViewerRtcState {
  pc: 'none' | 'opening' | 'offered' | 'ready';
  tracks: Record<string, { state: RtcTrackState; mid?: string }>;
}
export type TeleopLease = 'idle' | 'requesting' | 'held' | 'refused';
export interface ViewerState {
  link: {
    state: 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed';
    attempt?: number;
    delayMs?: number;
    /** The transport's reason; once closed for good, what the operator must fix. */
    detail?: string;
    /** closed for good: the relay's error that no reconnect can fix (auth_failed, ...). */
    code?: ErrorCode;
  };
  welcomed: boolean;
  robotId: string | null;
  teleop: TeleopLease;
  rttMs: number | null;
  lastError: { code: string; message: string; fix?: string; at: number } | null;
  drops: number;
  /** Latest frames that finished after a newer one and were not handed to the app. */
  stale: number;
  /** Present once the relay sent rtc_ice (it brokers WebRTC video). */
  rtc?: ViewerRtcState;
}
export type ViewerEvent =
  | ({ kind: 'state' } & ViewerState)
  | { kind: 'robots'; robots: RobotEntry[] }
  | {
      kind: 'manifest';
      robotId: string;
      manifest: Manifest | null;
      /** The robot's manifest is of a version this cockpit does not read. */
      error?: 'manifestUnsupported';
    }
  | { kind: 'message'; t: string; [field: string]: unknown }
  | { kind: 'drop'; reason: string; detail: string };
/** The relay's figures for a robot's link (docs/cockpit-protocol.md § Fleet link quality). */
export interface RobotLink {
  state: 'good' | 'degraded' | 'stalled';
  /** How long the relay had heard nothing from the robot when it sent this. */
  silentMs: number;
  fps: number;
  bytesPerS: number;
  /** The robot's own round trip to the relay; absent when the robot does not report it. */
  rttMs?: number;
}
/** A `robots` entry: `link` only for a viewer that asked (fleetLink(true)). */
export interface RobotEntry {
  id: string;
  name: string;
  model: string;
  link?: RobotLink;
}
export type PublishResult = 'sent' | 'not_connected' | 'no_watch' | 'invalid';

export interface ViewerCore extends DrivenCore<ViewerAction, ViewerEvent> {
  handleStart(now: number): void;
  handleConnected(lane: Lane, now: number): void;
  handleDisconnected(detail: string, now: number): void;
  handleControlData(bytes: Uint8Array, now: number): void;
  /** True when the message was the session's; false when it is a channel frame for the app. */
  handleWsMessage(bytes: Uint8Array, now: number): boolean;
  /**
   * A channel frame's channel and seq: true when the app should get it (a subscribed rx channel,
   * and on a latest channel a seq above the newest passed).
   */
  handleFrame(ch: string, seq: number, now: number): boolean;
  handleTimeout(now: number): void;
  handleStop(now: number): void;
  /** The session gave up for good (a final error); the state says why. */
  stopped(): boolean;
  /** False for an id no relay could list. */
  watch(robotId: string, now: number): boolean;
  /** Whether the app shows the fleet: the relay then adds its link figures to each `robots` entry. */
  fleetLink(on: boolean, now: number): void;
  want(channels: Iterable<string>, now: number): void;
  teleopStart(now: number): void;
  teleopStop(now: number): void;
  drive(vx: number, vy: number, wz: number, now: number): boolean;
  estop(now: number): void;
  publish(ch: string, payload: Uint8Array, id: string, now: number): PublishResult;
  /** The host's offer for an rtc_open; false unless one was asked for. */
  handleRtcOffer(sdp: string, now: number): boolean;
  /** The host's answer to the relay offer of the last rtc_answer action; false unless one is owed. */
  handleRtcAnswer(sdp: string, now: number): boolean;
  /** The peer connection's connectionState; 'failed' opens a fresh one. */
  handleRtcState(state: string, now: number): void;
  /** Frames of a track channel decoded since the last report. */
  handleRtcMedia(ch: string, frames: number, now: number): void;
  pollAction(): ViewerAction | null;
  pollEvent(): ViewerEvent | null;
  pollTimeout(): number | null;
  dispose(): void;
}
export function createViewerCore(mod: object, options?: { token?: string | null }): ViewerCore;

// --- the robot --------------------------------------------------------------------------------
export interface RobotConfig {
  id: string;
  name?: string;
  model?: string;
  /** Manifest v1 (cockpit-wire-protocol.md § Manifest). */
  manifest: object;
  token?: string;
  watchdogMs?: number;
  /** The SFU's collection window in ms (30 000, Cloudflare's); rtc_stalled follows a gap of about it. */
  trackTimeoutMs?: number;
}
export interface RobotAction {
  /** connect: open a transport; send_stream: a one-shot stream (a WebSocket message);
   * send_datagram: a datagram (a WebSocket message); close: close the transport. WebRTC video:
   * rtc_open: make a fresh peer connection with a sendonly transceiver per channel of `chs` and
   * `iceServers`, and hand its offer to handleRtcOffer; rtc_accept: apply the relay's answer `sdp`. */
  kind: 'connect' | 'send_stream' | 'send_datagram' | 'close' | 'rtc_open' | 'rtc_accept';
  bytes: Uint8Array;
  reason?: string;
  iceServers?: IceServer[];
  chs?: string[];
  sdp?: string;
}
export type SafetyCause =
  'teleop_start' | 'twist' | 'stop' | 'teleop_stop' | 'session_lost' | 'watchdog';
export interface TeleopCommand {
  vx: number;
  vy: number;
  wz: number;
  /** The lease obeyed, 0 for none. */
  active: number;
  /** The lowest lease generation still accepted. */
  floor: number;
}
export type RobotEvent =
  | {
      kind: 'link';
      state: 'connecting' | 'open' | 'welcomed' | 'reconnecting' | 'stopped';
      attempt?: number;
      delayMs?: number;
      detail?: string;
      code?: ErrorCode;
    }
  | { kind: 'error'; code: string; message: string; fix?: string }
  | { kind: 'subs'; chs: string[]; n: number }
  | {
      kind: 'publish';
      ch: string;
      id?: string;
      seq: number;
      ts: number;
      delivery: 'latest' | 'reliable';
      meta?: JsonObject;
      payload: Uint8Array;
    }
  | ({ kind: 'command'; cause: SafetyCause } & TeleopCommand)
  | { kind: 'drop'; reason: string; detail: string }
  | { kind: 'rtc'; pc: 'none' | 'opening' | 'offered' | 'ready' };
export type SendResult = 'sent' | 'not_welcomed' | 'not_wanted' | 'undeclared' | 'invalid';

export interface RobotCore extends DrivenCore<RobotAction, RobotEvent> {
  /** The manifest in normal form, as the relay will hold it. */
  readonly manifest: Manifest;
  handleStart(now: number): void;
  handleConnected(lane: Lane, now: number): void;
  handleDisconnected(detail: string, now: number): void;
  handleDatagram(bytes: Uint8Array, now: number): void;
  handleCarrierData(bytes: Uint8Array, now: number): void;
  /** The carrier ended or was reset: the session closes and the robot reconnects. */
  handleCarrierEnd(now: number): void;
  handleWsMessage(bytes: Uint8Array, now: number): void;
  handleTimeout(now: number): void;
  handleStop(now: number): void;
  send(
    ch: string,
    payload: Uint8Array,
    meta: JsonObject | undefined,
    ts: number,
    now: number,
  ): SendResult;
  ack(ch: string, id: string, now: number): boolean;
  nack(
    ch: string,
    id: string,
    code: string | undefined,
    message: string | undefined,
    now: number,
  ): boolean;
  /** The host's offer for an rtc_open; false unless asked for and one the relay would take. */
  handleRtcOffer(sdp: string, tracks: RtcTrack[], now: number): boolean;
  /** A track's media resumed after gapMs without any; true when rtc_stalled went out. */
  handleMediaResumed(ch: string, gapMs: number, now: number): boolean;
  handleRtcState(state: string, now: number): void;
  welcomed(): boolean;
  wants(ch: string): boolean;
  command(): TeleopCommand;
  pollAction(): RobotAction | null;
  pollEvent(): RobotEvent | null;
  pollTimeout(): number | null;
  dispose(): void;
}
/** Why a robot core could not be made; an unsupported manifest version is `manifestUnsupported`. */
export type RobotSetupError =
  'invalidConfig' | 'invalidManifest' | 'manifestUnsupported' | 'invalidHello';
/** The error createRobotCore and connectRobot throw. */
export interface RobotSetupFailure extends Error {
  code: RobotSetupError;
}
/**
 * Throws a RobotSetupFailure when the config is one the relay would refuse, naming the field (an
 * unsupported manifest version: code `manifestUnsupported`).
 */
export function createRobotCore(mod: object, config: RobotConfig): RobotCore;

// --- the safety chain alone -------------------------------------------------------------------
export interface TeleopSafety extends DrivenCore<
  never,
  { kind: 'command'; cause: SafetyCause } & TeleopCommand
> {
  readonly watchdogMs: number;
  /** A relay message (an object or JSON text); true when it was obeyed. */
  handleMessage(message: object | string, now: number): boolean;
  handleSessionLost(now: number): void;
  handleTimeout(now: number): void;
  pollTimeout(): number | null;
  command(): TeleopCommand;
  dispose(): void;
}
export function createTeleopSafety(mod: object, options?: { watchdogMs?: number }): TeleopSafety;
