// Types for `tether/relay-cockpit` (web/glue/cockpit-relay.js).
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
  | 'finish_stream'
  | 'close_session';

export interface Action {
  kind: ActionKind;
  session: number;
  stream: number;
  bytes?: Uint8Array;
  /** open_stream */
  ch?: string;
  delivery?: 'latest' | 'reliable';
  sendOrder?: number;
  /** reset_stream */
  end?: 'expired' | 'aborted' | 'closing';
  /** close_session */
  code?: string | null;
  reason?: string;
}

export interface CockpitLimits {
  latestStaleMs: number;
  reapIntervalMs: number;
  reliableMaxFrames: number;
  reliableMaxBytes: number;
  maxPendingPublishes: number;
  publishTimeoutMs: number;
  maxCarrierBacklogBytes: number;
}

export interface CockpitRelay {
  limits: CockpitLimits;
  openSession(role: Role, lane: Lane, now: number): number;
  sessionClosed(session: number, now: number): void;
  controlData(session: number, bytes: Uint8Array, now: number): void;
  datagram(session: number, bytes: Uint8Array, now: number): void;
  incomingOpen(session: number, now: number): number;
  incomingData(stream: number, bytes: Uint8Array, now: number): void;
  incomingEnd(stream: number, now: number): void;
  wsMessage(session: number, bytes: Uint8Array, now: number): void;
  streamOpened(stream: number, now: number): void;
  writeDone(stream: number, now: number): void;
  streamFailed(stream: number, now: number): void;
  carrierFailed(session: number, now: number): void;
  tick(now: number): void;
  takeActions(): Action[];
  stats(): Record<string, unknown>;
  sessionCount(): number;
  dispose(): void;
}

export function loadCockpitRelay(options?: {
  authText?: string;
  sfu?: boolean;
  wasmModule?: WebAssembly.Module;
  wasmBinary?: Uint8Array;
}): Promise<CockpitRelay>;
export function createCockpitRelay(
  mod: object,
  options?: { authText?: string; sfu?: boolean },
): CockpitRelay;
