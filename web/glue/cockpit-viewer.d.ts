// Types of `tether/cockpit-viewer` (web/glue/cockpit-viewer.js): a viewer's client.
import type { DriverOptions } from './driver.js';
import type { DataFrame, DecodeDataFrameResult, FrameError, Wire } from './wire.js';
import type { IceServer, PublishResult, RtcTrack, ViewerEvent } from './cockpit-cores.js';

export type { PublishResult, ViewerEvent, ViewerState } from './cockpit-cores.js';

export interface ViewerOptions {
  token?: string | null;
  /** What the session reports: state, robots, manifest, every relay message, drops. */
  event?: (e: ViewerEvent) => void;
  /**
   * A channel frame, decoded by the wire core, that the session core passed: a subscribed rx
   * channel, and on a latest channel only a frame newer by seq than every one before it.
   */
  frame?: (f: DataFrame | Extract<DecodeDataFrameResult, { ok: true }>) => void;
  /** A channel stream whose framing failed (that stream alone ends). */
  frameError?: (e: FrameError) => void;
  clock?: DriverOptions;
  WebSocket?: new (url: string) => WebSocket;
  /** WebRTC video: what holds the one recvonly peer connection (the cockpit's video-rtc.js). */
  webrtc?: ViewerWebRtc;
  /** `webrtc` failed a step (the core opens a fresh connection in its slot). */
  rtcError?: (error: unknown) => void;
}

/** What holds a viewer's peer connection; the viewer session core drives it. */
export interface ViewerWebRtc {
  /** A fresh recvonly peer connection (closing any old one); resolves with its offer's SDP. */
  open(options: { iceServers: IceServer[] }): Promise<string>;
  /** The relay's answer to that offer. */
  accept(sdp: string): Promise<void>;
  /** A relay offer (a pull) applied; resolves with the answer's SDP. `tracks` are the watched
   * robot's (none when `current` is false: the viewer switched robots meanwhile). */
  answer(offer: {
    sdp: string;
    tracks: RtcTrack[];
    robotId: string;
    current: boolean;
  }): Promise<string>;
}

export interface Viewer {
  start(): void;
  /** The lane of the open transport, or null. */
  readonly lane: 'webtransport' | 'websocket' | null;
  watch(robotId: string): boolean;
  /** Whether the app shows the fleet: the relay then adds its link figures to each `robots` entry. */
  fleetLink(on: boolean): void;
  want(channels: Iterable<string>): void;
  teleopStart(): void;
  teleopStop(): void;
  /** The command to drive with while the lease is held; false without the lease. */
  drive(vx: number, vy: number, wz: number): boolean;
  estop(): void;
  publish(ch: string, payload: Uint8Array, id: string): PublishResult;
  /** True once the session gave up for good (a final error such as auth_failed). */
  readonly stopped: boolean;
  /** Frames of a track channel shown since the last report (the core decides live and stalled). */
  rtcMedia(ch: string, frames: number): void;
  /** The peer connection's connectionState; 'failed' opens a fresh one. */
  rtcState(state: string): void;
  /** Leaves for good. */
  close(): void;
}

export function connectViewer(
  mod: object,
  wire: Wire,
  info: { version: number; wtUrl?: string; certHash?: string; wsUrl: string },
  options?: ViewerOptions,
): Viewer;
