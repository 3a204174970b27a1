// Types of `tether/cockpit-robot` (web/glue/cockpit-robot.js): the robot SDK.
import type { DriverOptions } from './driver.js';
import type { JsonObject, Manifest } from './wire.js';
import type {
  IceServer,
  RobotConfig,
  RobotEvent,
  RtcTrack,
  SendResult,
  TeleopCommand,
} from './cockpit-cores.js';

export type { RobotConfig, RobotEvent, SendResult, TeleopCommand } from './cockpit-cores.js';
export { createRobotCore, createTeleopSafety } from './cockpit-cores.js';

export interface RobotOptions extends RobotConfig {
  /** The relay's HTTP origin (its /api/info says where to connect). */
  relay?: string;
  /** An /api/info already known; `relay` is then not asked. */
  info?: { version: number; wtUrl?: string; certHash?: string; wsUrl: string };
  /** 'auto' takes WebTransport when the relay offers it and the runtime has it. */
  lane?: 'auto' | 'webtransport' | 'websocket';
  /** The driver's clock and timers (tests pass a manual clock). */
  clock?: DriverOptions;
  /** A WebSocket constructor (default: the runtime's). */
  WebSocket?: new (url: string) => WebSocket;
  wasmModule?: WebAssembly.Module;
  wasmBinary?: Uint8Array;
  /** WebRTC video for the manifest's video.webrtc.v1 channels (web/sfu/camera.js is one). */
  webrtc?: RobotWebRtc;
}

/** What holds the robot's peer connection and media; the robot session core drives it. */
export interface RobotWebRtc {
  /** A fresh peer connection (closing any old one) with a sendonly transceiver per channel. */
  open(options: {
    iceServers: IceServer[];
    chs: string[];
  }): Promise<{ sdp: string; tracks: RtcTrack[] }>;
  /** The relay's answer to the last offer. */
  accept(sdp: string): Promise<void>;
}

export interface Robot {
  readonly manifest: Manifest;
  /** One frame on an rx channel some viewer wants; `ts` (seconds) defaults to now. */
  send(ch: string, payload: Uint8Array, options?: { meta?: JsonObject; ts?: number }): SendResult;
  ack(ch: string, id: string): boolean;
  nack(ch: string, id: string, code?: string, message?: string): boolean;
  /** A track's media resumed after `gapMs` without any (a camera outage); true when rtc_stalled went out. */
  mediaResumed(ch: string, gapMs: number): boolean;
  /** The peer connection's connectionState; 'failed' opens a fresh one. */
  rtcState(state: string): void;
  wants(ch: string): boolean;
  readonly welcomed: boolean;
  /** The teleop command to apply now (the safety chain's). */
  command(): TeleopCommand;
  /** Resolves with the final link event once the robot stopped. */
  readonly done: Promise<RobotEvent>;
  /** Leaves the relay for good. */
  stop(waitMs?: number): Promise<void>;
}

export function connectRobot(
  options: RobotOptions,
  handlers?: {
    event?: (e: RobotEvent) => void;
    /** The `webrtc` object failed to open a connection or apply an answer (the core retries). */
    rtcError?: (error: unknown) => void;
  },
): Promise<Robot>;
