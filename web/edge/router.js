// The Worker's front door, shared by every Worker built around room-object.js (worker.js, and the
// reference-relay Worker of bench/edge.bench.mjs): checks the ticket, then hands the upgrade to
// the room's Durable Object with the verified identity in X-Tether-* headers.
import { HEADER_KIND, HEADER_ROOM, HEADER_WRITER } from './room-object.js';
import { checkRoomRequest } from './room-request.js';

export async function routeToRoom(request, env) {
  const v = await checkRoomRequest(request, env.TICKET_SECRET);
  if (v.response) return v.response;
  const { room } = v;
  const headers = new Headers(request.headers);
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
