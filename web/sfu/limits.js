// The bounds the local SFU's API enforces. The SDP and track-count bounds are the cockpit
// protocol's (§ WebRTC video: MAX_SDP_LEN, MAX_RTC_TRACKS), read from the wire core so that the
// stand-in never accepts what the relay would refuse; the rest is the SFU's own.
import { loadWire } from '../glue/wire.js';

/** {maxSdpBytes, maxRtcTracks} from the C++ wire core (build/wasm must be built). */
export async function wireLimits() {
  const { maxSdpBytes, maxRtcTracks } = (await loadWire()).limits;
  return { maxSdpBytes, maxRtcTracks };
}

/**
 * A request body's bound: an SDP's JSON escaping at most doubles it (each CR LF becomes four
 * bytes), and every track entry's names are bounded by MAX_NAME_CHARS.
 */
export const bodyLimit = ({ maxSdpBytes, maxRtcTracks }) =>
  2 * maxSdpBytes + maxRtcTracks * 4 * MAX_NAME_CHARS + 1024;

/** A trackName, sessionId or mid: the SFU's own bound (Cloudflare publishes none). */
export const MAX_NAME_CHARS = 256;

/**
 * Cloudflare collects a track that received no media for 30 s, across every session pulling it
 * (Realtime limits § Inactivity timeout); the cockpit protocol's rtc_stalled exists because of
 * it. Named so tests can shorten it (startSfu({trackTimeoutMs}), --track-timeout-ms).
 */
export const TRACK_TIMEOUT_MS = 30_000;
/** Cloudflare's window to reuse a session whose connection was lost; here also the window for a session that never connected. */
export const SESSION_IDLE_MS = 30_000;
/** Cloudflare's longest TURN credential lifetime: 48 hours (Realtime TURN FAQ). */
export const MAX_TURN_TTL_S = 48 * 3600;
