// The Worker's front door, shared by every Worker built around room-object.js (worker.js, and the
// reference-relay Worker of bench/edge.bench.mjs): checks the ticket, then hands the upgrade to
// the room's Durable Object with the verified identity in X-Tether-* headers.
import {
  HEADER_EXPIRES,
  HEADER_HTTP_OP,
  HEADER_KIND,
  HEADER_ROOM,
  HEADER_WRITER,
} from './room-object.js';
import { checkHttpRoomRequest, checkRoomRequest } from './room-request.js';

// The HTTP relay transport (docs/agent-bus.md): the request goes to the room's object as it came,
// with the operation and, for an open, the identity its ticket verified.
async function routeHttp(request, env, h) {
  const url = new URL(request.url);
  const headers = new Headers(request.headers);
  for (const k of [HEADER_WRITER, HEADER_KIND, HEADER_ROOM, HEADER_HTTP_OP, HEADER_EXPIRES])
    headers.delete(k);
  headers.set(HEADER_ROOM, encodeURIComponent(h.room));
  headers.set(HEADER_HTTP_OP, h.op);
  if (h.identity) {
    headers.set(HEADER_WRITER, encodeURIComponent(h.identity.writer));
    headers.set(HEADER_KIND, h.identity.kind);
    if (Number.isFinite(h.identity.exp)) headers.set(HEADER_EXPIRES, String(h.identity.exp));
  }
  const stub = env.ROOMS.get(env.ROOMS.idFromName(h.room));
  return stub.fetch(
    new Request(`https://room${url.pathname}${url.search}`, {
      method: request.method,
      headers,
      body: request.method === 'POST' ? request.body : undefined,
    }),
  );
}

export async function routeToRoom(request, env) {
  const h = await checkHttpRoomRequest(request, env.TICKET_SECRET);
  if (h) return h.response ?? routeHttp(request, env, h);
  const v = await checkRoomRequest(request, env.TICKET_SECRET);
  if ('response' in v) return v.response;
  const { room } = v;
  const headers = new Headers(request.headers);
  headers.delete(HEADER_HTTP_OP); // a client's own would make the object read this as HTTP
  headers.set(HEADER_WRITER, encodeURIComponent(v.writer));
  headers.set(HEADER_KIND, v.kind);
  headers.set(HEADER_ROOM, encodeURIComponent(room));
  const stub = env.ROOMS.get(env.ROOMS.idFromName(room));
  return stub.fetch(new Request(`https://room${new URL(request.url).pathname}`, { headers }));
}

export async function handleRequest(request, env) {
  const url = new URL(request.url);
  // Test-only hooks reach the room object directly (TETHER_TEST_HOOKS=1, never deployed).
  if (env.TETHER_TEST_HOOKS === '1' && url.pathname.startsWith('/__test/')) {
    const room = url.searchParams.get('room') ?? '';
    return env.ROOMS.get(env.ROOMS.idFromName(room)).fetch(
      new Request(`https://room${url.pathname}${url.search}`),
    );
  }
  return routeToRoom(request, env);
}
