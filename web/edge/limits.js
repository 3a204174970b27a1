// Abuse limits for a room endpoint (room-relay.md § Trust, the paragraph on denial of service):
// every check here runs before the relay core parses a byte. Runtime-independent; shared by the
// Worker (web/edge/room-object.js) and the Deno host (web/host/rooms.js) through room-host.js.
//
// What answers what (documented in README.md § Deploy at the edge):
//   HTTP 401            bad, expired or missing ticket (before any WebSocket exists)
//   HTTP 429            the principal is cooling down after exhausting its budget (Retry-After)
//   HTTP 503            the room already holds maxConnectionsPerRoom sockets (Retry-After)
//   close 1003          a binary frame: the room protocol is JSON text
//   close 1007          a frame the relay core could not read (not JSON, wrong room, ...)
//   close 1008          ejected by the room's policy (a hostile or broken envelope)
//   close 1009          a frame larger than maxFrameBytes
//   close 1011          the room's storage failed; reconnect and the client resends its tail
//   close 4008          this connection sent more than its message rate
//   close 4009          the principal (writer) spent its budget across all its connections
//   close 4010          a slow reader: more than maxBufferedBytes queued for it

export const CLOSE = Object.freeze({
  BINARY: 1003,
  INVALID: 1007,
  EJECTED: 1008,
  TOO_BIG: 1009,
  STORAGE: 1011,
  RATE: 4008,
  BUDGET: 4009,
  SLOW_READER: 4010,
});

export const DEFAULT_LIMITS = Object.freeze({
  /** Largest frame, in UTF-8 bytes. Envelopes are small; files go over WebRTC, not the room. */
  maxFrameBytes: 256 * 1024,
  /** Per connection: a token bucket refilled at this rate, holding `connectionBurst`. */
  connectionMessagesPerSecond: 50,
  connectionBurst: 200,
  /** Per principal (writer) across all its connections and reconnects, persisted. */
  principalMessagesPerSecond: 100,
  principalBurst: 1000,
  /** How long a principal that spent its budget is refused (HTTP 429) before it may return. */
  cooldownMs: 30_000,
  maxConnectionsPerRoom: 256,
  /** Outgoing bytes queued for one socket before it is closed as a slow reader. */
  maxBufferedBytes: 4 * 1024 * 1024,
});

/** Merges a partial limits object (from config) over the defaults; refuses nonsense loudly. */
export function resolveLimits(partial) {
  const out = { ...DEFAULT_LIMITS };
  for (const [k, v] of Object.entries(partial ?? {})) {
    if (!(k in DEFAULT_LIMITS)) {
      throw new Error(
        `tether edge: unknown limit ${JSON.stringify(k)}; known: ${Object.keys(DEFAULT_LIMITS).join(', ')}`,
      );
    }
    if (!(typeof v === 'number' && v > 0 && Number.isFinite(v))) {
      throw new Error(
        `tether edge: limit ${k} must be a positive number, not ${JSON.stringify(v)}`,
      );
    }
    out[k] = v;
  }
  return Object.freeze(out);
}

/** A token bucket: `take` spends one token if there is one. State is plain numbers (persistable). */
export class TokenBucket {
  constructor(rate, burst, nowMs, tokens = burst) {
    this.rate = rate;
    this.burst = burst;
    this.tokens = Math.min(burst, tokens);
    this.at = nowMs;
  }
  refill(nowMs) {
    if (nowMs > this.at) {
      this.tokens = Math.min(this.burst, this.tokens + ((nowMs - this.at) * this.rate) / 1000);
      this.at = nowMs;
    }
  }
  take(nowMs) {
    this.refill(nowMs);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

const encoder = new TextEncoder();
let scratch = null;

/**
 * The frame's size verdict before anything parses it: null when it may pass, else the close to
 * answer with. Text length in UTF-16 units bounds the UTF-8 size from below (every unit is at
 * least one byte) and from above (at most three), so only frames in between are measured.
 */
export function checkFrame(data, limits) {
  if (typeof data !== 'string')
    return {
      code: CLOSE.BINARY,
      reason: 'binary frames are not part of the room protocol; send JSON text',
    };
  const max = limits.maxFrameBytes;
  if (data.length > max) return tooBig(max);
  if (data.length * 3 > max) {
    if (scratch === null || scratch.length < max + 4) scratch = new Uint8Array(max + 4);
    const { read } = encoder.encodeInto(data, scratch.subarray(0, max + 1));
    if (read < data.length) return tooBig(max);
  }
  return null;
}

const tooBig = (max) => ({
  code: CLOSE.TOO_BIG,
  reason: `frame larger than ${max} bytes; split the write`,
});

/**
 * Per-principal budgets that outlive connections: a bucket and a cooldown per writer, loaded from
 * and saved to a small key-value seam ({get(writer) -> {tokens, at, cooldownUntil}|null,
 * put(writer, state)}) so a writer cannot refill its budget by reconnecting, and a restarted or
 * woken room still remembers a cooldown. Saved on disconnect and when a cooldown starts, not per
 * message.
 */
export class PrincipalBudgets {
  constructor(limits, persist) {
    this.limits = limits;
    this.persist = persist;
    this.live = new Map(); // writer -> { bucket, cooldownUntil, conns }
  }
  #entry(writer, nowMs) {
    let e = this.live.get(writer);
    if (!e) {
      const saved = this.persist?.get(writer) ?? null;
      const bucket = new TokenBucket(
        this.limits.principalMessagesPerSecond,
        this.limits.principalBurst,
        saved?.at ?? nowMs,
        saved?.tokens,
      );
      e = { bucket, cooldownUntil: saved?.cooldownUntil ?? 0, conns: 0 };
      this.live.set(writer, e);
    }
    return e;
  }
  /** Before accepting a socket: ms the writer must still wait, or 0. */
  cooldown(writer, nowMs) {
    const e = this.#entry(writer, nowMs);
    return Math.max(0, e.cooldownUntil - nowMs);
  }
  opened(writer, nowMs) {
    this.#entry(writer, nowMs).conns++;
  }
  /** One incoming message. false: the budget is spent and the cooldown has started (persisted). */
  take(writer, nowMs) {
    const e = this.#entry(writer, nowMs);
    if (e.cooldownUntil > nowMs) return false;
    if (e.bucket.take(nowMs)) return true;
    e.cooldownUntil = nowMs + this.limits.cooldownMs;
    this.#save(writer, e);
    return false;
  }
  closed(writer, nowMs) {
    const e = this.live.get(writer);
    if (!e) return;
    e.bucket.refill(nowMs);
    this.#save(writer, e);
    if (--e.conns <= 0) this.live.delete(writer);
  }
  #save(writer, e) {
    try {
      this.persist?.put(writer, {
        tokens: e.bucket.tokens,
        at: e.bucket.at,
        cooldownUntil: e.cooldownUntil,
      });
    } catch {
      // A budget that fails to save is only less strict after a restart; never fail the socket.
    }
  }
}
