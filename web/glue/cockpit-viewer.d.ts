// Types of `tether/cockpit-viewer` (web/glue/cockpit-viewer.js): a viewer's client.
import type { DriverOptions } from './driver.js';
import type { DataFrame, DecodeDataFrameResult, FrameError, Wire } from './wire.js';
import type { PublishResult, ViewerEvent } from './cockpit-cores.js';

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
}

export interface Viewer {
  start(): void;
  /** The lane of the open transport, or null. */
  readonly lane: 'webtransport' | 'websocket' | null;
  watch(robotId: string): boolean;
  want(channels: Iterable<string>): void;
  teleopStart(): void;
  teleopStop(): void;
  /** The command to drive with while the lease is held; false without the lease. */
  drive(vx: number, vy: number, wz: number): boolean;
  estop(): void;
  publish(ch: string, payload: Uint8Array, id: string): PublishResult;
  /** True once the session gave up for good (a final error such as auth_failed). */
  readonly stopped: boolean;
  /** Leaves for good. */
  close(): void;
}

export function connectViewer(
  mod: object,
  wire: Wire,
  info: { version: number; wtUrl?: string; certHash?: string; wsUrl: string },
  options?: ViewerOptions,
): Viewer;
