// The local SFU's HTTP API: the subset of Cloudflare Realtime's Connection API and TURN key API
// that the cockpit relay brokers with (docs/webrtc-video.md § API), with the same paths, bodies,
// statuses and error shapes, plus admin endpoints for failure injection when enabled.
//
// Every request is checked in the same order: route, then bearer auth, then the body (bounded
// before it is buffered, UTF-8, JSON), then an injected failure, then the session, then the
// fields, and only then does anything touch a peer connection.
import { ApiError, fail } from './errors.js';
import { missingWebRtcLines } from './peer.js';
import { bodyLimit, MAX_NAME_CHARS, MAX_TURN_TTL_S } from './limits.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const json = (status, body, extra = {}) => ({ status, body, headers: extra });

/** The operations failNext can target (the admin endpoint and Sfu.failNext). */
export const OPS = ['sessions/new', 'tracks/new', 'renegotiate', 'tracks/close', 'session', 'turn'];

export function createApiHandler(sfu, { admin = false } = {}) {
  const maxBody = bodyLimit(sfu.limits);
  const { maxSdpBytes, maxRtcTracks } = sfu.limits;

  // --- field checks: a wrong type is decoding_error (400), a wrong value invalid_params (406) --
  const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  function name(v, what) {
    if (typeof v !== 'string') fail('decoding_error', `${what} must be a string`);
    if (!v.length) fail('invalid_params', `${what} must not be empty`);
    if (v.length > MAX_NAME_CHARS)
      fail('invalid_params', `${what} is ${v.length} characters; at most ${MAX_NAME_CHARS}`);
    return v;
  }
  function description(v, type, what = 'sessionDescription') {
    if (!isObject(v)) fail('decoding_error', `${what} must be an object {type, sdp}`);
    if (typeof v.sdp !== 'string' || typeof v.type !== 'string')
      fail('decoding_error', `${what}.sdp and ${what}.type must be strings`);
    const bytes = Buffer.byteLength(v.sdp);
    if (bytes > maxSdpBytes)
      fail(
        'payload_too_large',
        `${what}.sdp is ${bytes} bytes; an SDP is at most ${maxSdpBytes} bytes (MAX_SDP_LEN): offer fewer transceivers`,
      );
    if (v.type !== type)
      fail(
        'invalid_session_description',
        `${what}.type is "${v.type}"; this call takes an ${type}`,
      );
    if (!v.sdp.startsWith('v=0'))
      fail(
        'invalid_session_description',
        `${what}.sdp is not an SDP (it must start with "v=0"): send your peer connection's description unchanged`,
      );
    const missing = missingWebRtcLines(v.sdp);
    if (missing)
      fail(
        'invalid_session_description',
        `${what}.sdp has no ${missing} line: it is not a complete WebRTC description; send your peer connection's description unchanged`,
      );
    return { type: v.type, sdp: v.sdp };
  }
  function trackList(v, what = 'tracks') {
    if (v === undefined)
      fail('invalid_params', `${what} is required: list the tracks of this call`);
    if (!Array.isArray(v)) fail('decoding_error', `${what} must be an array`);
    if (!v.length) fail('invalid_params', `${what} is empty: list at least one track`);
    if (v.length > maxRtcTracks)
      fail(
        'invalid_params',
        `${what} has ${v.length} entries; at most ${maxRtcTracks} tracks per request (MAX_RTC_TRACKS): split them over several calls`,
      );
    v.forEach((t, i) => isObject(t) || fail('decoding_error', `${what}[${i}] must be an object`));
    return v;
  }
  const notHere = (what) =>
    fail(
      'invalid_params',
      `${what} is not implemented by the local SFU (docs/webrtc-video.md lists what is)`,
    );

  // --- the operations --------------------------------------------------------------------------
  async function newSession(appId, body, query) {
    if (query.get('thirdparty') === 'true') notHere('thirdparty=true (ICE-lite peers)');
    const offer =
      body?.sessionDescription === undefined ? null : description(body.sessionDescription, 'offer');
    const session = sfu.newSession(appId);
    if (!session)
      fail(
        'temporarily_unavailable_error',
        `the local SFU holds ${sfu.maxSessions} sessions, its most: close unused ones or wait for idle ones to expire`,
      );
    if (!offer) return json(201, { sessionId: session.id });
    try {
      const answer = await session.run(() => session.answer(offer));
      return json(201, { sessionId: session.id, sessionDescription: answer });
    } catch (e) {
      await sfu.deleteSession(session.id, 'not created: its offer failed');
      throw e;
    }
  }

  async function newTracks(session, body) {
    const tracks = trackList(body.tracks);
    if (body.autoDiscover !== undefined) notHere('autoDiscover');
    const location = tracks[0].location;
    if (location !== 'local' && location !== 'remote')
      fail(
        'invalid_params',
        `tracks[0].location is ${JSON.stringify(location)}; it is "local" (publish) or "remote" (pull)`,
      );
    tracks.forEach((t, i) => {
      if (t.location !== location)
        fail(
          'invalid_params',
          `tracks[${i}].location is ${JSON.stringify(t.location)} but tracks[0]'s is "${location}": keep every entry of one call local or every entry remote`,
        );
      if (t.simulcast !== undefined) notHere('simulcast');
      if (t.bidirectionalMediaStream !== undefined) notHere('bidirectionalMediaStream');
    });
    if (location === 'local') {
      const offer =
        body.sessionDescription === undefined
          ? null
          : description(body.sessionDescription, 'offer');
      const seen = new Set();
      const list = tracks.map((t, i) => {
        const entry = {
          mid: name(t.mid, `tracks[${i}].mid`),
          trackName: name(t.trackName, `tracks[${i}].trackName`),
        };
        for (const key of [`mid ${entry.mid}`, `trackName ${entry.trackName}`]) {
          if (seen.has(key))
            fail(
              'invalid_params',
              `tracks[${i}] repeats ${key}: each local track needs its own mid and trackName`,
            );
          seen.add(key);
        }
        return entry;
      });
      return json(200, await session.run(() => session.publish(offer, list)));
    }
    if (body.sessionDescription !== undefined) notHere('an endpoint offer with remote tracks');
    const list = tracks.map((t, i) => {
      if (t.mid !== undefined)
        notHere(`tracks[${i}].mid on a remote track (reusing a transceiver)`);
      return {
        sessionId: name(t.sessionId, `tracks[${i}].sessionId`),
        trackName: name(t.trackName, `tracks[${i}].trackName`),
      };
    });
    return json(200, await session.run(() => session.pull(list)));
  }

  async function renegotiate(session, body) {
    const answer = description(body.sessionDescription, 'answer');
    return json(200, await session.run(() => session.renegotiate(answer)));
  }

  async function closeTracks(session, body) {
    const tracks = trackList(body.tracks);
    if (body.force === undefined)
      fail(
        'invalid_params',
        'force is required: true closes without an SDP exchange, false with your offer in sessionDescription',
      );
    if (typeof body.force !== 'boolean') fail('decoding_error', 'force must be a boolean');
    const offer = body.force
      ? null
      : body.sessionDescription === undefined
        ? fail(
            'invalid_params',
            'force is false, so sessionDescription must hold your offer with the closed transceivers stopped (or pass force: true)',
          )
        : description(body.sessionDescription, 'offer');
    const mids = tracks.map((t, i) => name(t.mid, `tracks[${i}].mid`));
    return json(200, await session.run(() => session.close(mids, body.force, offer)));
  }

  function turnCredentials(keyId, body) {
    if (!isObject(body)) fail('decoding_error', 'the body must be a JSON object {ttl}');
    if (body.ttl === undefined)
      fail('invalid_params', "ttl is required: the credentials' lifetime in seconds");
    if (typeof body.ttl !== 'number') fail('decoding_error', 'ttl must be a number of seconds');
    if (!Number.isInteger(body.ttl) || body.ttl < 1 || body.ttl > MAX_TURN_TTL_S)
      fail(
        'invalid_params',
        `ttl is ${body.ttl}; it is a whole number of seconds from 1 to ${MAX_TURN_TTL_S} (48 hours)`,
      );
    return json(201, { iceServers: sfu.iceServers(keyId, body.ttl) });
  }

  // --- admin (failure injection for the tests; only with `admin: true`) -----------------------
  async function adminCall(method, parts, body) {
    if (method === 'POST' && parts[1] === 'fail' && parts.length === 2) {
      if (!isObject(body))
        fail(
          'decoding_error',
          'the body must be a JSON object {op, count?, status?, errorCode?, errorDescription?, location?}',
        );
      if (!OPS.includes(body.op))
        fail('invalid_params', `op is ${JSON.stringify(body.op)}; one of ${OPS.join(', ')}`);
      const count = body.count ?? 1;
      const status = body.status ?? 503;
      if (!Number.isInteger(count) || count < 1)
        fail('invalid_params', 'count is a whole number of calls, at least 1');
      if (!Number.isInteger(status) || status < 400 || status > 599)
        fail('invalid_params', 'status is an HTTP error status (400..599)');
      if (body.location !== undefined && body.location !== 'local' && body.location !== 'remote')
        fail('invalid_params', 'location is "local" or "remote" (tracks/new only)');
      sfu.failNext({ ...body, count, status });
      return json(200, { faults: sfu.stats().faults });
    }
    if (
      method === 'POST' &&
      parts[1] === 'sessions' &&
      parts[3] === 'delete' &&
      parts.length === 4
    ) {
      if (!(await sfu.deleteSession(parts[2], 'deleted (admin)')))
        fail('session_error', `no session ${parts[2]}`);
      return json(200, { deleted: parts[2] });
    }
    if (method === 'GET' && parts[1] === 'stats' && parts.length === 2)
      return json(200, sfu.stats());
    return null;
  }

  // --- routing ---------------------------------------------------------------------------------
  /** What a path names: {kind, method, appId?, sessionId?, keyId?} or null. */
  function route(parts) {
    const [v1, apps, appId, sessions, sessionId, a, b] = parts;
    if (v1 === 'v1' && apps === 'apps' && appId && sessions === 'sessions') {
      if (sessionId === 'new' && parts.length === 5)
        return { op: 'sessions/new', method: 'POST', appId };
      if (parts.length === 5) return { op: 'session', method: 'GET', appId, sessionId };
      if (a === 'tracks' && b === 'new' && parts.length === 7)
        return { op: 'tracks/new', method: 'POST', appId, sessionId };
      if (a === 'tracks' && b === 'close' && parts.length === 7)
        return { op: 'tracks/close', method: 'PUT', appId, sessionId };
      if (a === 'renegotiate' && parts.length === 6)
        return { op: 'renegotiate', method: 'PUT', appId, sessionId };
    }
    if (
      v1 === 'v1' &&
      apps === 'turn' &&
      appId === 'keys' &&
      sessions &&
      sessionId === 'credentials' &&
      a === 'generate-ice-servers' &&
      parts.length === 6
    )
      return { op: 'turn', method: 'POST', keyId: sessions };
    return null;
  }

  async function readBody(req) {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBody)
      fail(
        'payload_too_large',
        `the body is ${declared} bytes; this endpoint takes at most ${maxBody}`,
      );
    const chunks = [];
    let size = 0;
    for await (const chunk of req) {
      size += chunk.length;
      if (size > maxBody)
        fail('payload_too_large', `the body is over ${maxBody} bytes, this endpoint's most`);
      chunks.push(chunk);
    }
    if (!size) return undefined;
    let text;
    try {
      text = utf8.decode(Buffer.concat(chunks));
    } catch {
      fail('decoding_error', 'the body is not valid UTF-8 JSON');
    }
    try {
      return JSON.parse(text);
    } catch (e) {
      fail(
        'decoding_error',
        `the body is not JSON (${e.message}): send Content-Type application/json with a JSON object`,
      );
    }
  }

  const bearer = (req) => /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? null;

  async function handle(req) {
    const url = new URL(req.url, 'http://sfu.invalid');
    const parts = url.pathname
      .split('/')
      .filter(Boolean)
      .map((p) => {
        try {
          return decodeURIComponent(p);
        } catch {
          fail('not_found', `no such endpoint: ${url.pathname}`, 404);
        }
      });
    if (admin && parts[0] === '__admin') {
      if (!sfu.anyAppSecret(bearer(req)))
        fail('unauthorized', 'the admin endpoints take Authorization: Bearer <an app secret>');
      const out = await adminCall(req.method, parts, await readBody(req));
      return out ?? fail('not_found', `no admin endpoint ${req.method} ${url.pathname}`, 404);
    }
    const r = route(parts);
    if (!r)
      fail(
        'not_found',
        `no such endpoint: ${req.method} ${url.pathname} (docs/webrtc-video.md lists the API)`,
        404,
      );
    if (req.method !== r.method)
      fail('invalid_params', `${url.pathname} takes ${r.method}, not ${req.method}`, 405);
    const token = bearer(req);
    if (r.op === 'turn') {
      if (!sfu.turnKeys.has(r.keyId))
        fail('not_found', `no TURN key ${r.keyId}: check turnKeyId`, 404);
      if (!sfu.turnTokenMatches(r.keyId, token))
        fail(
          'unauthorized',
          'the TURN key API token was not accepted: send Authorization: Bearer <turnKeyApiToken> of this key',
        );
    } else {
      if (!sfu.apps.has(r.appId)) fail('not_found', `no app ${r.appId}: check appId`, 404);
      if (!sfu.appSecretMatches(r.appId, token))
        fail(
          'unauthorized',
          'the app secret was not accepted: send Authorization: Bearer <appSecret> of this app',
        );
    }
    const body = r.method === 'GET' ? undefined : await readBody(req);
    if (body !== undefined && !isObject(body))
      fail('decoding_error', 'the body must be a JSON object');
    const fault = sfu.takeFault(
      r.op,
      r.op === 'tracks/new' ? body?.tracks?.[0]?.location : undefined,
    );
    if (fault) throw new ApiError(fault.errorCode, fault.errorDescription, fault.status);
    if (r.op === 'turn') return turnCredentials(r.keyId, body);
    if (r.op === 'sessions/new') return newSession(r.appId, body, url.searchParams);
    const session = sfu.session(r.appId, r.sessionId);
    if (!session)
      fail(
        'session_error',
        `session ${r.sessionId} does not exist (never created, expired or deleted): create a new session and negotiate again`,
      );
    if (r.op === 'session') return json(200, session.state());
    if (body === undefined) fail('decoding_error', 'the body must be a JSON object');
    if (r.op === 'tracks/new') return newTracks(session, body);
    if (r.op === 'renegotiate') return renegotiate(session, body);
    return closeTracks(session, body);
  }

  return async (req, res) => {
    let out;
    try {
      out = await handle(req);
    } catch (thrown) {
      let e = thrown;
      if (!(e instanceof ApiError)) {
        sfu.log(`internal error on ${req.method} ${req.url}: ${e?.stack ?? e}`);
        e = new ApiError('internal_error', `the local SFU failed: ${e?.message ?? e}`);
      }
      out = json(
        e.status,
        e.body,
        e.errorCode === 'payload_too_large' ? { connection: 'close' } : {},
      );
    }
    const text = JSON.stringify(out.body);
    res.writeHead(out.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      vary: 'Origin',
      ...out.headers,
    });
    // A refused oversized body is not read to its end: the connection closes after the answer.
    const socket = req.socket;
    res.end(text, () => {
      if (out.headers.connection === 'close') socket?.destroy();
    });
  };
}
