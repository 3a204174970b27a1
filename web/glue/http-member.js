// The HTTP relay transport for JavaScript (src/room/http_member.hpp; docs/agent-bus.md § HTTP
// relay transport). Two halves, each a core run through the one driver (web/glue/driver.js):
//  - createHttpMembers: the relay side, in a rooms host. The core decides sessions, order, the
//    receive cursor, bounds, expiry and every error; this file turns its actions into answers to
//    pending requests and calls on the room endpoint's connections, and reads request bodies no
//    further than the core's bound.
//  - createHttpSocket: the peer side, a WebSocket-shaped link (readyState, send, close,
//    bufferedAmount, open/message/close events) so web/peer/relay-transport.js runs its member core
//    over it unchanged. The core numbers sends, keeps the cursor and decides retries; this file
//    runs fetch on exactly the requests it hands out.
import { createDriver } from './driver.js';
import { loadTetherModule, loadedTetherModule } from './load.js';

let mod = null;
if (globalThis.process?.versions?.node || globalThis.Deno) mod = await loadTetherModule({}, 'http');

function ready() {
  if (!mod) {
    mod = loadedTetherModule('http');
    if (!mod) {
      throw new Error(
        "tether: the WASM module is not loaded; load it through any tether loader first (initPeer, or the Worker's init)",
      );
    }
  }
  return mod;
}

const registry =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((core) => core.delete())
    : null;

/**
 * Headers every answer of the HTTP form carries so that a browser page of any origin (the app is
 * rarely served by its relay) may read it. Safe for any origin: the form's only credentials are in
 * the URL (the ticket of an open, then the session), never a cookie, and its requests are all
 * CORS-simple (GET, or POST of text/plain), so there is no preflight to answer.
 */
export const HTTP_CORS = Object.freeze({ 'access-control-allow-origin': '*' });

/** The protocol's bounds, as the core defines them. */
export function httpLimits() {
  return ready().httpLimits();
}

/** The status and text body the core answers for an error code (`too_large`, `bad_request`...). */
export function httpRefusal(code) {
  return ready().httpRefusal(code);
}

/**
 * A request body as text, read no further than `max` bytes: null when it is longer (the stream is
 * cancelled there, so an oversized body is never held whole).
 */
export async function readBoundedText(request, max) {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > max) return null;
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

/** A verified ticket's expiry in Unix ms (its `exp` is seconds), or 0 when none is known. */
const expiresMs = (identity) => (Number.isFinite(identity?.exp) ? identity.exp * 1000 : 0);

/**
 * The relay side: HTTP members of the rooms one host serves.
 * @param {{attach(session: string, room: string, identity: object): void,
 *   deliver(session: string, text: string): void,
 *   detach(session: string, code: number, reason: string): void}} host
 */
export function createHttpMembers(host) {
  const m = ready();
  const core = new m.HttpMembersCore();
  const pending = new Map(); // req -> { resolve, identity }
  let nextReq = 1;
  const driver = createDriver(
    {
      pollAction: () => core.pollAction(),
      pollTimeout: () => core.pollTimeout(),
      handleTimeout: (now) => core.timeout(now),
    },
    {
      perform(a) {
        if (a.kind === 'respond') {
          const p = pending.get(a.req);
          pending.delete(a.req);
          p?.resolve(
            new Response(a.body, {
              status: a.status,
              headers: {
                'content-type': a.status === 200 ? 'application/json' : 'text/plain; charset=utf-8',
                'cache-control': 'no-store',
                ...HTTP_CORS,
              },
            }),
          );
        } else if (a.kind === 'attach') {
          host.attach(a.session, a.room, pending.get(a.req)?.identity ?? null);
        } else if (a.kind === 'deliver') {
          host.deliver(a.session, a.text);
        } else if (a.kind === 'detach') {
          host.detach(a.session, a.code, a.text);
        }
      },
    },
  );
  registry?.register(driver, core);
  const limits = m.httpLimits();

  function ask(feed, identity = null) {
    const req = nextReq++;
    return new Promise((resolve) => {
      pending.set(req, { resolve, identity });
      driver.input((now) => feed(req, now));
    });
  }

  return {
    /** An `open` whose ticket verified: identity is {writer, kind, room, exp?} (exp: seconds). */
    open(identity) {
      // The session's randomness (embind takes a Uint8Array as a std::string's bytes).
      const random = crypto.getRandomValues(new Uint8Array(limits.sessionBytes));
      return ask(
        (req, now) =>
          core.open(req, identity.room, random, now, identity.writer, expiresMs(identity)),
        identity,
      );
    },
    /**
     * Any other operation, with the identity of the ticket the call carried when the host
     * verified one (the core binds the session to its writer and expiry). The body is read no
     * further than the core's bound; the ticket is left out of the query the core reads.
     */
    async request(request, room, op, identity = null) {
      const url = new URL(request.url);
      url.searchParams.delete('ticket');
      const body =
        request.method === 'POST' ? await readBoundedText(request, limits.maxBodyBytes) : '';
      if (body === null) {
        const r = m.httpRefusal('too_large');
        return new Response(r.body, { status: r.status, headers: HTTP_CORS });
      }
      return ask((req, now) =>
        core.request(
          req,
          request.method,
          room,
          op,
          url.search.slice(1),
          body,
          now,
          identity?.writer ?? '',
          expiresMs(identity),
        ),
      );
    },
    outbound: (session, text) => driver.input((now) => core.outbound(session, text, now)),
    relayClose: (session, code, reason) =>
      driver.input((now) => core.relayClose(session, code ?? 1000, String(reason ?? ''), now)),
    queuedBytes: (session) => core.queuedBytes(session),
    members: () => core.members(),
    membersIn: (room) => core.membersIn(room),
    limits,
  };
}

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 3;

/**
 * The peer side: a WebSocket-shaped HTTP link to `url` (ws:// or http://.../rooms/<name>?ticket=T).
 * @param {string} url
 * @param {{fetch?: typeof fetch}} [options]
 */
export function createHttpSocket(url, options = {}) {
  const m = ready();
  const doFetch = options.fetch ?? globalThis.fetch;
  const u = new URL(url);
  u.protocol = u.protocol === 'wss:' ? 'https:' : u.protocol === 'ws:' ? 'http:' : u.protocol;
  const base = `${u.origin}${u.pathname.replace(/\/$/, '')}/http/`;
  const ticketQuery = u.search.slice(1);
  const core = new m.HttpLinkCore();
  const listeners = { open: [], message: [], close: [], error: [] };
  const controllers = new Set();
  const emit = (name, ev) => {
    for (const f of [...listeners[name]]) f(ev);
  };
  const sock = {
    readyState: CONNECTING,
    get bufferedAmount() {
      return core.bufferedBytes();
    },
    addEventListener(name, f) {
      listeners[name]?.push(f);
    },
    send(text) {
      if (sock.readyState !== OPEN) throw new Error('the HTTP link is not open');
      let ok = false;
      driver.input(() => {
        ok = core.send(String(text));
      });
      if (!ok) throw new Error('the HTTP link refused the frame (its queue is full)');
    },
    close() {
      if (sock.readyState === CLOSED) return;
      driver.input(() => core.close());
      finish(1000, 'closed');
    },
  };
  function finish(code, reason) {
    if (sock.readyState === CLOSED) return;
    sock.readyState = CLOSED;
    for (const c of controllers) c.abort();
    controllers.clear();
    queueMicrotask(() => {
      driver.close?.();
      emit('close', { code, reason });
    });
  }
  async function run(r) {
    const controller = new AbortController();
    if (r.op !== 'close') controllers.add(controller);
    let status = 0;
    let body = '';
    try {
      // Every call carries the ticket, not only the open: the relay checks it each time, so a
      // session ends with its ticket (docs/agent-bus.md § HTTP relay transport).
      const query = [ticketQuery, r.query].filter(Boolean).join('&');
      const res = await doFetch(`${base}${r.op}${query ? `?${query}` : ''}`, {
        method: r.method,
        body: r.method === 'POST' && r.body ? r.body : undefined,
        headers: r.body ? { 'content-type': 'text/plain; charset=utf-8' } : undefined,
        signal: r.op === 'close' ? undefined : controller.signal,
      });
      status = res.status;
      body = await res.text();
    } catch {
      status = 0; // the network, or our own abort
    }
    controllers.delete(controller);
    if (sock.readyState === CLOSED) return;
    driver.input((now) => core.response(r.req, status, body, now));
  }
  const driver = createDriver(
    {
      pollAction: () => core.pollAction(),
      pollEvent: () => core.pollEvent(),
      pollTimeout: () => core.pollTimeout(),
      handleTimeout: (now) => core.timeout(now),
    },
    {
      perform(r) {
        run(r);
      },
      event(e) {
        if (e.kind === 'open') {
          sock.readyState = OPEN;
          emit('open', {});
        } else if (e.kind === 'message') {
          emit('message', { data: e.text });
        } else if (e.kind === 'closed') {
          finish(e.code, e.text);
        }
      },
    },
  );
  registry?.register(sock, core);
  queueMicrotask(() => driver.input((now) => core.start(now)));
  return sock;
}
