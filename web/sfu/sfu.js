// The local SFU: Cloudflare Realtime's Connection API subset over real werift peer connections,
// on loopback (docs/webrtc-video.md). `startSfu()` starts it in this process; `server.js` is its CLI.
// This file holds the state every session shares: apps and TURN keys, the sessions, track
// collection after a window without media, session expiry, TURN credentials, and the failure
// injection the end-to-end tests use to produce rtc_failed and rtc_session_gone.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { createApiHandler } from './api.js';
import { Session } from './session.js';
import { SESSION_IDLE_MS, TRACK_TIMEOUT_MS, wireLimits } from './limits.js';

export { MAX_TURN_TTL_S, SESSION_IDLE_MS, TRACK_TIMEOUT_MS } from './limits.js';

const hex = (bytes) => randomBytes(bytes).toString('hex');

export class Sfu {
  /** @param {import('./sfu.d.ts').SfuOptions & {now?: () => number}} options */
  constructor({
    apps,
    turnKeys = [],
    limits,
    trackTimeoutMs = TRACK_TIMEOUT_MS,
    sessionIdleMs = SESSION_IDLE_MS,
    mediaAddress = '127.0.0.1',
    maxSessions = 256,
    maxTracksPerSession = 64,
    turnUrls = [],
    turnSecret = hex(32),
    log = () => {},
    now = () => Date.now(),
  }) {
    this.apps = new Map(apps.map((a) => [a.appId, a.appSecret]));
    this.turnKeys = new Map(turnKeys.map((k) => [k.turnKeyId, k.turnKeyApiToken]));
    this.limits = limits;
    this.trackTimeoutMs = trackTimeoutMs;
    this.sessionIdleMs = sessionIdleMs;
    this.mediaAddress = mediaAddress;
    this.maxSessions = maxSessions;
    this.maxTracksPerSession = maxTracksPerSession;
    this.turnUrls = turnUrls;
    this.turnSecret = turnSecret;
    this.log = log;
    this.now = now;
    this.sessions = new Map();
    this.faults = []; // {op, location?, count, status, errorCode, errorDescription}
    this.collected = 0;
    this.expired = 0;
    // One sweep for every track and session: a timer per packet would cost more than the packet.
    const every = Math.max(
      25,
      Math.min(1000, Math.floor(Math.min(trackTimeoutMs, sessionIdleMs) / 10)),
    );
    this.timer = setInterval(() => this.sweep(), every);
    this.timer.unref?.();
  }

  // --- authorisation -------------------------------------------------------------------------
  /** Whether `secret` is the app's secret (constant time); the app must exist. */
  appSecretMatches(appId, secret) {
    return equalSecrets(this.apps.get(appId), secret);
  }
  turnTokenMatches(keyId, token) {
    return equalSecrets(this.turnKeys.get(keyId), token);
  }
  /** Whether `secret` is any app's secret: the admin endpoints take one. */
  anyAppSecret(secret) {
    for (const s of this.apps.values()) if (equalSecrets(s, secret)) return true;
    return false;
  }

  // --- sessions ------------------------------------------------------------------------------
  newSession(appId) {
    if (this.sessions.size >= this.maxSessions) return null;
    const session = new Session(this, hex(16), appId);
    this.sessions.set(session.id, session);
    this.log(`session ${session.id} created`);
    return session;
  }

  session(appId, id) {
    const s = this.sessions.get(id);
    return s && s.appId === appId ? s : null;
  }

  /** Removes a session as if Cloudflare had lost it: later calls on it answer 410 session_error. */
  async deleteSession(id, why = 'deleted') {
    const s = this.sessions.get(id);
    if (!s) return false;
    this.sessions.delete(id);
    this.log(`session ${id} ${why}`);
    await s.destroy();
    return true;
  }

  findPublication(appId, sessionId, trackName) {
    const pub = this.session(appId, sessionId)?.publications.get(trackName);
    return pub && pub.status === 'active' ? pub : null;
  }

  /** Ends a publication and every pull of it (they stay listed as inactive). */
  collect(pub, why) {
    if (pub.status !== 'active') return;
    pub.status = 'inactive';
    for (const pull of pub.subscribers) pull.status = 'inactive';
    pub.subscribers.clear();
    if (why === 'no media') this.collected++;
    this.log(`track ${pub.trackName} of session ${pub.session.id} collected (${why})`);
  }

  unsubscribe(pull) {
    pull.status = 'inactive';
    pull.publication.subscribers.delete(pull);
  }

  requestKeyframe(pub) {
    const r = pub.session.receivers.get(pub.mid);
    if (!r?.track.ssrc) return; // no media yet: the first keyframe is on its way anyway
    pub.keyframeRequests++;
    r.receiver.sendRtcpPLI(r.track.ssrc).catch(() => {});
  }

  sweep() {
    const now = this.now();
    for (const s of this.sessions.values()) {
      for (const pub of s.publications.values())
        if (pub.status === 'active' && now - pub.lastMediaAt > this.trackTimeoutMs)
          this.collect(pub, 'no media');
      if (s.notConnectedSince !== null && now - s.notConnectedSince > this.sessionIdleMs) {
        this.expired++;
        this.deleteSession(s.id, `expired: not connected for ${this.sessionIdleMs} ms`);
      }
    }
  }

  // --- TURN ----------------------------------------------------------------------------------
  /**
   * Cloudflare's generate-ice-servers answer. Locally there is no TURN server, and inside a
   * loopback-only network none is needed: the SFU offers 127.0.0.1 host candidates, which every
   * peer reaches directly. So the list is empty unless `turnUrls` names a TURN server of your
   * own; then it carries credentials that server checks with the TURN REST scheme coturn uses
   * (`use-auth-secret`): username `<expiry unix s>:<key id>`, credential base64(HMAC-SHA1(secret,
   * username)), valid for `ttl` seconds.
   */
  iceServers(keyId, ttl) {
    if (!this.turnUrls.length) return [];
    const username = `${Math.floor(this.now() / 1000) + ttl}:${keyId}`;
    const credential = createHmac('sha1', this.turnSecret).update(username).digest('base64');
    return [{ urls: this.turnUrls, username, credential }];
  }

  // --- failure injection ---------------------------------------------------------------------
  /** Makes the next `count` calls of `op` (optionally only local or remote tracks/new) fail. */
  failNext({
    op,
    location,
    count = 1,
    status = 503,
    errorCode = 'temporarily_unavailable_error',
    errorDescription,
  }) {
    this.faults.push({
      op,
      location,
      count,
      status,
      errorCode,
      errorDescription:
        errorDescription ??
        `injected failure of ${op}: the local SFU was told to fail this call; retry`,
    });
  }

  /** The injected failure for this call, if one is armed (and uses it up). */
  takeFault(op, location) {
    const i = this.faults.findIndex((f) => f.op === op && (!f.location || f.location === location));
    if (i < 0) return null;
    const f = this.faults[i];
    if (--f.count <= 0) this.faults.splice(i, 1);
    return f;
  }

  stats() {
    return {
      sessions: [...this.sessions.values()].map((s) => s.stats()),
      collected: this.collected,
      expired: this.expired,
      faults: this.faults.map(({ op, location, count }) => ({ op, location, count })),
    };
  }

  async close() {
    clearInterval(this.timer);
    await Promise.all(
      [...this.sessions.keys()].map((id) => this.deleteSession(id, 'closed: the SFU stopped')),
    );
  }
}

function equalSecrets(expected, given) {
  if (typeof expected !== 'string' || typeof given !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Starts the SFU's HTTP API on `host:port` (port 0 picks one). Without `apps`, one app with a
 * fresh id and secret is made (and `turnKeys` likewise). Returns the base URL, the credentials in
 * the --rtc-file shape (`rtcFile`), the Sfu (stats, failNext, deleteSession) and `close()`.
 * @param {import('./sfu.d.ts').SfuOptions} [options]
 */
export async function startSfu({
  host = '127.0.0.1',
  port = 0,
  apps = [{ appId: hex(16), appSecret: hex(32) }],
  turnKeys = [{ turnKeyId: hex(16), turnKeyApiToken: hex(32) }],
  limits,
  admin = false,
  ...options
} = {}) {
  const sfu = new Sfu({ apps, turnKeys, limits: limits ?? (await wireLimits()), ...options });
  const server = createServer(
    { requestTimeout: 30_000, headersTimeout: 10_000 },
    createApiHandler(sfu, { admin }),
  );
  /** @type {Promise<void>} */
  const listening = new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  await listening;
  const bound = /** @type {import('node:net').AddressInfo} */ (server.address());
  const url = `http://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`;
  return {
    url,
    port: bound.port,
    sfu,
    rtcFile: {
      appId: apps[0].appId,
      appSecret: apps[0].appSecret,
      ...(turnKeys[0] ?? {}),
      baseUrl: url,
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve()));
      await sfu.close();
    },
  };
}
