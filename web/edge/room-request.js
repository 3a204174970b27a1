// The front door of a room endpoint, shared by the Worker (router.js) and the Deno twin
// (web/host/rooms.js): `/rooms/<name>?ticket=<t>` with a WebSocket upgrade. Answers with an HTTP
// error before any socket or room exists, or with the verified identity the relay will trust
// (room-relay.md: the relay never mints identity; the adapter derives it).
import { HTTP_CORS } from '../glue/http-member.js';
import { verifyTicket } from './tickets.js';

/** Where rooms live: `${ROOMS_PATH}<name>` (clients build their URL from this). */
export const ROOMS_PATH = '/rooms/';
const ROOM_PATH = /^\/rooms\/([^/]{1,1536})$/;
// The HTTP form of the relay transport (docs/agent-bus.md § HTTP relay transport).
const HTTP_PATH = /^\/rooms\/([^/]{1,1536})\/http\/([a-z]{1,16})$/;

const text = (status, body, headers) => ({ response: new Response(body, { status, headers }) });

/**
 * A 401's body: `<reason>: <message>`, reason one of verifyTicket's (missing, malformed,
 * signature, expired, room), so a client can say which without parsing prose.
 */
export const refusalBody = (reason, message) => `${reason}: ${message}\n`;

/** The reason and message of a 401 body, or null when it is not one of ours. */
export function parseRefusal(body) {
  const m = /^([a-z]+): (.*)$/s.exec(String(body ?? '').trim());
  return m ? { reason: m[1], message: m[2] } : null;
}

/**
 * @returns {Promise<{room: string, writer: string, kind: string} | {response: Response}>}
 */
export async function checkRoomRequest(request, secret) {
  const url = new URL(request.url);
  const m = ROOM_PATH.exec(url.pathname);
  if (!m) return text(404, 'tether rooms: connect a WebSocket to /rooms/<name>?ticket=<ticket>\n');
  let room;
  try {
    room = decodeURIComponent(m[1]);
  } catch {
    return text(400, 'the room name is not valid percent-encoding\n');
  }
  if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket')
    return text(426, 'this endpoint takes a WebSocket upgrade\n', { Upgrade: 'websocket' });
  return verified(url, room, secret);
}

async function verified(url, room, secret) {
  if (!secret)
    return text(
      500,
      'the server has no TICKET_SECRET; at the edge put it on the rooms Worker from a clone of ' +
        'tether: `make edge-secret NAME=TICKET_SECRET CONFIG=web/edge/wrangler.toml`\n',
    );
  let v;
  try {
    v = await verifyTicket(secret, url.searchParams.get('ticket') ?? '', { room });
  } catch (e) {
    // A misconfigured secret (too short) is the operator's error, not the client's.
    return text(500, `${e.message}\n`);
  }
  if ('reason' in v) return text(401, refusalBody(v.reason, v.message));
  return { room, writer: v.writer, kind: v.kind, exp: v.exp };
}

/**
 * `/rooms/<name>/http/<op>`: null when the path is not one, else the room and operation with the
 * identity its ticket verified. Every call carries the ticket, not only the open (the session the
 * open returned names the member, the ticket still authorises each call): one that expired, or
 * is not for this room, is refused here, and the core binds the session to the ticket's writer
 * and expiry.
 * @returns {Promise<any>} null, {response}, or {room, op, identity}
 */
export async function checkHttpRoomRequest(request, secret) {
  const url = new URL(request.url);
  const m = HTTP_PATH.exec(url.pathname);
  if (!m) return null;
  let room;
  try {
    room = decodeURIComponent(m[1]);
  } catch {
    return text(400, 'the room name is not valid percent-encoding\n', HTTP_CORS);
  }
  const op = m[2];
  if (op === 'open' && request.method !== 'POST')
    return text(405, 'method: open is POST\n', HTTP_CORS);
  const v = await verified(url, room, secret);
  if (!v.response) return { room, op, identity: v };
  // A refused open is readable by a browser page too (web/glue/http-member.js HTTP_CORS).
  const headers = new Headers(v.response.headers);
  for (const [k, val] of Object.entries(HTTP_CORS)) headers.set(k, val);
  return { response: new Response(v.response.body, { status: v.response.status, headers }) };
}
