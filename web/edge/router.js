// The Worker's front door, shared by every Worker built around room-object.js (worker.js, and the
// reference-relay Worker of bench/edge.bench.mjs): checks the ticket, then hands the upgrade to
// the room's Durable Object with the verified identity in X-Tether-* headers.
import { HEADER_KIND, HEADER_ROOM, HEADER_WRITER } from './room-object.js';
import { verifyTicket } from './tickets.js';

const ROOM_PATH = /^\/rooms\/([^/]{1,1536})$/;

export async function routeToRoom(request, env) {
  const url = new URL(request.url);
  const m = ROOM_PATH.exec(url.pathname);
  if (!m)
    return new Response('tether rooms: connect a WebSocket to /rooms/<name>?ticket=<ticket>\n', {
      status: 404,
    });
  let room;
  try {
    room = decodeURIComponent(m[1]);
  } catch {
    return new Response('the room name is not valid percent-encoding\n', { status: 400 });
  }
  if (request.headers.get('Upgrade')?.toLowerCase() !== 'websocket') {
    return new Response('this endpoint takes a WebSocket upgrade\n', {
      status: 426,
      headers: { Upgrade: 'websocket' },
    });
  }
  if (!env.TICKET_SECRET) {
    return new Response(
      'the Worker has no TICKET_SECRET; run `wrangler secret put TICKET_SECRET`\n',
      { status: 500 },
    );
  }
  const ticket = url.searchParams.get('ticket') ?? '';
  let v;
  try {
    v = await verifyTicket(env.TICKET_SECRET, ticket, { room });
  } catch (e) {
    // A misconfigured secret (too short) is the operator's error, not the client's.
    return new Response(`${e.message}\n`, { status: 500 });
  }
  if (!v.ok) return new Response(`${v.reason}: ${v.message}\n`, { status: 401 });
  const headers = new Headers(request.headers);
  headers.set(HEADER_WRITER, encodeURIComponent(v.writer));
  headers.set(HEADER_KIND, v.kind);
  headers.set(HEADER_ROOM, encodeURIComponent(room));
  const stub = env.ROOMS.get(env.ROOMS.idFromName(room));
  return stub.fetch(new Request(`https://room${url.pathname}`, { headers }));
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
