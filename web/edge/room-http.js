// HTTP members of a room endpoint (docs/agent-bus.md § HTTP relay transport), shared by the Durable
// Object (room-object.js) and the Deno host (web/host/rooms-service.js) as room-host.js is: each
// HTTP member is one room connection whose socket is the HTTP members core (web/glue/http-member.js,
// src/room/http_member.hpp). The relay sends to it and closes it as it does a WebSocket; its
// bufferedAmount is what the member has not fetched, so the room's slow-reader rule applies to it
// as to any socket. Nothing here decides anything: the core answers every request.
import { HTTP_CORS, createHttpMembers } from '../glue/http-member.js';

/**
 * @param {ReturnType<import('./room-host.js').createRoomHost>} host
 */
export function createRoomHttp(host) {
  const conns = new Map(); // session -> room-host connection
  const members = createHttpMembers({
    attach(session, room, identity) {
      const socket = {
        send: (text) => members.outbound(session, String(text)),
        close: (code, reason) => members.relayClose(session, code, reason),
        get bufferedAmount() {
          return members.queuedBytes(session);
        },
        // Everything the member has not fetched: no acknowledgements are needed on top.
        exactBufferedAmount: true,
      };
      conns.set(session, host.open(socket, identity ?? { room }));
    },
    deliver(session, text) {
      conns.get(session)?.message(text);
    },
    detach(session) {
      const conn = conns.get(session);
      conns.delete(session);
      // As a socket's close event would: after the call that closed it (the relay may be inside
      // its own close of this connection) has returned.
      if (conn) queueMicrotask(() => conn.closed());
    },
  });

  return {
    /**
     * One request to /rooms/<room>/http/<op>, after room-request.js checkHttpRoomRequest: an open
     * carries the identity its ticket gave.
     * @param {Request} request
     * @param {any} h  {room, op, identity?} from checkHttpRoomRequest
     */
    async handle(request, { room, op, identity }) {
      if (op === 'open') {
        const refused = host.admit(room, identity.writer);
        if (refused)
          return new Response(`${refused.message}\n`, {
            status: refused.status,
            headers: { 'Retry-After': String(refused.retryAfter), ...HTTP_CORS },
          });
        return members.open(identity);
      }
      return members.request(request, room, op, identity);
    },
    members: () => members.members(),
    membersIn: (room) => members.membersIn(room),
  };
}
