// A client for Cloudflare Realtime's Connection API and TURN key API: one function per call the
// cockpit relay makes, on `fetch` alone, so it runs the same in Deno, Node and workerd. Point
// `baseUrl` at the local SFU (web/sfu/server.js) or leave it at Cloudflare's: nothing else
// changes. The relay's hosts execute the cockpit core's SFU actions with it.
//
// Results are values, never exceptions: {ok: true, status, body} or {ok: false, status,
// errorCode, errorDescription, body}. A network failure is status 0. The client decides nothing
// (no retry, no timeout): the core owns that policy and may cancel a call through `signal`.
// Per-track errors inside a successful answer (body.tracks[i].errorCode) are the caller's to read.

/** @typedef {import('./client.d.ts').RealtimeClient} RealtimeClient */
/** @typedef {import('./client.d.ts').RealtimeResult<any>} AnyResult */
/**
 * Argument `I` of the client's method `M`.
 * @template {keyof RealtimeClient} M
 * @template {number} I
 * @typedef {Parameters<RealtimeClient[M]>[I]} Arg
 */

export const CLOUDFLARE_BASE_URL = 'https://rtc.live.cloudflare.com';
/** What the client reads of one answer before it gives up on it: SDPs are tens of KiB. */
export const MAX_RESPONSE_BYTES = 1 << 20;

/** `baseUrl` as an origin: Cloudflare documents the API root as `.../v1`, so that suffix is accepted too. */
export function normalizeBaseUrl(baseUrl) {
  return String(baseUrl).replace(/\/+$/, '').replace(/\/v1$/, '');
}

/**
 * @param {Partial<import('./client.d.ts').RealtimeClientOptions>} [options]
 * @returns {RealtimeClient}
 */
export function createRealtimeClient({
  baseUrl = CLOUDFLARE_BASE_URL,
  appId,
  appSecret,
  turnKeyId,
  turnKeyApiToken,
  fetch: fetchImpl,
  maxResponseBytes = MAX_RESPONSE_BYTES,
} = {}) {
  const root = `${normalizeBaseUrl(baseUrl)}/v1`;
  const doFetch = fetchImpl ?? ((url, init) => globalThis.fetch(url, init));
  const app = `${root}/apps/${encodeURIComponent(appId)}`;
  const session = (id) => `${app}/sessions/${encodeURIComponent(id)}`;

  /** @returns {Promise<AnyResult>} */
  async function request(method, url, token, body, signal) {
    let res;
    try {
      res = await doFetch(url, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (e) {
      const aborted = e?.name === 'AbortError';
      return failure(
        0,
        aborted ? 'aborted' : 'network_error',
        aborted ? `${method} ${url} was cancelled` : `${method} ${url} failed: ${e?.message ?? e}`,
      );
    }
    const text = await readText(res, maxResponseBytes);
    if (text === null)
      return failure(
        res.status,
        'response_too_large',
        `${method} ${url} answered more than ${maxResponseBytes} bytes`,
      );
    let parsed;
    if (text.length) {
      try {
        parsed = JSON.parse(text);
      } catch {
        return failure(
          res.status,
          'invalid_response',
          `${method} ${url} answered ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`,
        );
      }
    }
    const topError =
      parsed && typeof parsed === 'object' && typeof parsed.errorCode === 'string' ? parsed : null;
    if (res.ok && !topError) return { ok: true, status: res.status, body: parsed ?? {} };
    return failure(
      res.status,
      topError?.errorCode ?? `http_${res.status}`,
      topError?.errorDescription ??
        `${method} ${url} answered ${res.status} ${res.statusText ?? ''}`.trim(),
      parsed,
    );
  }

  const withApp = (method, url, body, signal) => request(method, url, appSecret, body, signal);
  /** @type {RealtimeClient} */
  const client = {
    /** POST /apps/{appId}/sessions/new; with an offer, the answer comes back with the sessionId. */
    newSession({ sessionDescription, correlationId, signal } = {}) {
      const query =
        correlationId === undefined ? '' : `?correlationId=${encodeURIComponent(correlationId)}`;
      return withApp(
        'POST',
        `${app}/sessions/new${query}`,
        sessionDescription ? { sessionDescription } : undefined,
        signal,
      );
    },
    /** POST .../sessions/{sessionId}/tracks/new: publish local tracks (an offer) or pull remote ones. */
    newTracks(sessionId, { tracks, sessionDescription, autoDiscover }, { signal } = {}) {
      return withApp(
        'POST',
        `${session(sessionId)}/tracks/new`,
        { sessionDescription, tracks, autoDiscover },
        signal,
      );
    },
    /** PUT .../sessions/{sessionId}/renegotiate with the endpoint's answer to an SFU offer. */
    renegotiate(sessionId, sessionDescription, { signal } = {}) {
      return withApp('PUT', `${session(sessionId)}/renegotiate`, { sessionDescription }, signal);
    },
    /** PUT .../sessions/{sessionId}/tracks/close: tracks [{mid}], force, and the endpoint's offer unless forced. */
    closeTracks(sessionId, { tracks, force, sessionDescription }, { signal } = {}) {
      return withApp(
        'PUT',
        `${session(sessionId)}/tracks/close`,
        { tracks, force, sessionDescription },
        signal,
      );
    },
    /** GET .../sessions/{sessionId}: the session's tracks and their status. */
    getSession(sessionId, { signal } = {}) {
      return withApp('GET', session(sessionId), undefined, signal);
    },
    /** POST /turn/keys/{turnKeyId}/credentials/generate-ice-servers: ICE servers valid for `ttl` seconds. */
    generateIceServers({ ttl }, { signal } = {}) {
      if (!turnKeyId || !turnKeyApiToken)
        return Promise.resolve(
          failure(
            0,
            'no_turn_key',
            'no TURN key is configured: add turnKeyId and turnKeyApiToken to the rtc file (Cloudflare dashboard: Realtime > TURN)',
          ),
        );
      return request(
        'POST',
        `${root}/turn/keys/${encodeURIComponent(turnKeyId)}/credentials/generate-ice-servers`,
        turnKeyApiToken,
        { ttl },
        signal,
      );
    },
    /**
     * One call named by `op` (a method name above) with its arguments, so a host can execute a
     * core's SFU action in one line: {op: 'newTracks', sessionId, body: {tracks, ...}}.
     * @param {Partial<Parameters<RealtimeClient['call']>[0]>} [request]
     */
    call({ op, sessionId, body, signal } = {}) {
      switch (op) {
        // `body` is the op's own argument (the core's SFU action carries it), checked by the API.
        case 'newSession':
          return client.newSession({ .../** @type {Arg<'newSession', 0>} */ (body), signal });
        case 'newTracks':
          return client.newTracks(sessionId, /** @type {Arg<'newTracks', 1>} */ (body ?? {}), {
            signal,
          });
        case 'renegotiate':
          return client.renegotiate(
            sessionId,
            /** @type {{sessionDescription?: Arg<'renegotiate', 1>}} */ (body)?.sessionDescription,
            { signal },
          );
        case 'closeTracks':
          return client.closeTracks(sessionId, /** @type {Arg<'closeTracks', 1>} */ (body ?? {}), {
            signal,
          });
        case 'getSession':
          return client.getSession(sessionId, { signal });
        case 'generateIceServers':
          return client.generateIceServers(
            /** @type {Arg<'generateIceServers', 0>} */ (body ?? {}),
            { signal },
          );
        default:
          return Promise.resolve(
            failure(0, 'unknown_op', `no Realtime call named ${JSON.stringify(op)}`),
          );
      }
    },
  };
  return client;
}

/**
 * @param {number} status
 * @param {string} errorCode
 * @param {string} errorDescription
 * @param {unknown} [body]
 * @returns {AnyResult & {ok: false}}
 */
function failure(status, errorCode, errorDescription, body) {
  return {
    ok: false,
    status,
    errorCode,
    errorDescription,
    ...(body === undefined ? {} : { body }),
  };
}

/** The answer's text, or null once it passes `limit` bytes (the rest is never buffered). */
async function readText(res, limit) {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    let step;
    try {
      step = await reader.read();
    } catch {
      break; // a cut-off answer: parse what came
    }
    if (step.done) break;
    size += step.value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(step.value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}
