// Types of web/sfu/sfu.js: the local SFU behind Cloudflare Realtime's API.
import type { RtcConfig } from './rtc-file.js';

export declare const TRACK_TIMEOUT_MS: number;
export declare const SESSION_IDLE_MS: number;
export declare const MAX_TURN_TTL_S: number;

export type SfuOp =
  'sessions/new' | 'tracks/new' | 'renegotiate' | 'tracks/close' | 'session' | 'turn';

export interface Fault {
  op: SfuOp;
  /** tracks/new only: fail only publishes (local) or only pulls (remote). */
  location?: 'local' | 'remote';
  count?: number;
  status?: number;
  errorCode?: string;
  errorDescription?: string;
}

export interface Sfu {
  readonly limits: { maxSdpBytes: number; maxRtcTracks: number };
  readonly trackTimeoutMs: number;
  readonly mediaAddress: string;
  readonly collected: number;
  readonly expired: number;
  /** Makes the next `count` calls of `op` fail with `status` and Cloudflare's error shape. */
  failNext(fault: Fault): void;
  /** Removes a session as if Cloudflare had lost it (later calls answer 410 session_error). */
  deleteSession(sessionId: string): Promise<boolean>;
  stats(): {
    sessions: object[];
    collected: number;
    expired: number;
    faults: { op: SfuOp; location?: string; count: number }[];
  };
}

export interface SfuOptions {
  host?: string;
  port?: number;
  apps?: { appId: string; appSecret: string }[];
  turnKeys?: { turnKeyId: string; turnKeyApiToken: string }[];
  /** Defaults to the wire core's maxSdpBytes and maxRtcTracks. */
  limits?: { maxSdpBytes: number; maxRtcTracks: number };
  /** The admin endpoints (/__admin/fail, /__admin/sessions/{id}/delete, /__admin/stats). */
  admin?: boolean;
  trackTimeoutMs?: number;
  sessionIdleMs?: number;
  mediaAddress?: string;
  maxSessions?: number;
  maxTracksPerSession?: number;
  /** A TURN server of your own whose credentials generate-ice-servers mints (TURN REST scheme). */
  turnUrls?: string[];
  turnSecret?: string;
  log?: (line: string) => void;
}

export interface RunningSfu {
  /** http://127.0.0.1:PORT: the baseUrl to give the client. */
  url: string;
  port: number;
  sfu: Sfu;
  /** The first app and TURN key, in the --rtc-file shape. */
  rtcFile: RtcConfig;
  close(): Promise<void>;
}

export declare function startSfu(options?: SfuOptions): Promise<RunningSfu>;
