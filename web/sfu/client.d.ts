// Types of web/sfu/client.js: Cloudflare Realtime's Connection API and TURN key API (the shapes
// of its OpenAPI schema that the cockpit relay uses).

export declare const CLOUDFLARE_BASE_URL: 'https://rtc.live.cloudflare.com';
export declare const MAX_RESPONSE_BYTES: number;
export declare function normalizeBaseUrl(baseUrl: string): string;

export interface SessionDescription {
  type: 'offer' | 'answer';
  sdp: string;
}

/** A track of a tracks/new request: local (publish, with its mid) or remote (pull by sessionId + trackName). */
export type TrackRequest =
  | { location: 'local'; mid: string; trackName: string }
  | { location: 'remote'; sessionId: string; trackName: string };

/** A track in an answer; a failed one carries errorCode and errorDescription. */
export interface TrackResult {
  trackName?: string;
  mid?: string;
  sessionId?: string;
  location?: 'local' | 'remote';
  errorCode?: string;
  errorDescription?: string;
}

export interface NewSessionBody {
  sessionId: string;
  sessionDescription?: SessionDescription;
}
export interface TracksBody {
  requiresImmediateRenegotiation: boolean;
  tracks: TrackResult[];
  sessionDescription?: SessionDescription;
}
export interface CloseTracksBody {
  requiresImmediateRenegotiation: boolean;
  tracks: { mid: string; errorCode?: string; errorDescription?: string }[];
  sessionDescription?: SessionDescription;
}
export interface SessionStateBody {
  tracks: (TrackResult & { status: 'active' | 'inactive' | 'initializing' })[];
  dataChannels: unknown[];
}
export interface IceServer {
  urls: string | string[];
  username?: string;
  credential?: string;
}
export interface IceServersBody {
  iceServers: IceServer[];
}

export type RealtimeResult<T> =
  | { ok: true; status: number; body: T }
  | {
      ok: false;
      /** 0 when no HTTP answer came (network_error, aborted, no_turn_key, unknown_op). */
      status: number;
      /** Cloudflare's errorCode (unauthorized, session_error, ...) or this client's own. */
      errorCode: string;
      errorDescription: string;
      body?: unknown;
    };

export interface CallOptions {
  signal?: AbortSignal;
}

export interface RealtimeClientOptions {
  /** https://rtc.live.cloudflare.com (the default) or the local SFU's URL; a trailing /v1 is accepted. */
  baseUrl?: string;
  appId: string;
  appSecret: string;
  turnKeyId?: string;
  turnKeyApiToken?: string;
  fetch?: typeof fetch;
  maxResponseBytes?: number;
}

export type RealtimeOp =
  'newSession' | 'newTracks' | 'renegotiate' | 'closeTracks' | 'getSession' | 'generateIceServers';

export interface RealtimeClient {
  newSession(options?: {
    sessionDescription?: SessionDescription;
    correlationId?: string;
    signal?: AbortSignal;
  }): Promise<RealtimeResult<NewSessionBody>>;
  newTracks(
    sessionId: string,
    body: {
      tracks: TrackRequest[];
      sessionDescription?: SessionDescription;
      autoDiscover?: boolean;
    },
    options?: CallOptions,
  ): Promise<RealtimeResult<TracksBody>>;
  renegotiate(
    sessionId: string,
    sessionDescription: SessionDescription,
    options?: CallOptions,
  ): Promise<RealtimeResult<Record<string, never>>>;
  closeTracks(
    sessionId: string,
    body: { tracks: { mid: string }[]; force: boolean; sessionDescription?: SessionDescription },
    options?: CallOptions,
  ): Promise<RealtimeResult<CloseTracksBody>>;
  getSession(sessionId: string, options?: CallOptions): Promise<RealtimeResult<SessionStateBody>>;
  generateIceServers(
    body: { ttl: number },
    options?: CallOptions,
  ): Promise<RealtimeResult<IceServersBody>>;
  /** One call by name, for hosts that execute a core's SFU actions. */
  call(request: {
    op: RealtimeOp;
    sessionId?: string;
    body?: unknown;
    signal?: AbortSignal;
  }): Promise<RealtimeResult<unknown>>;
}

export declare function createRealtimeClient(options: RealtimeClientOptions): RealtimeClient;
