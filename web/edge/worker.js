// tether at the edge: the rooms Worker (wrangler.toml beside this file), and the front door of the
// edge's one public hostname. Routes GET /rooms/<name>?ticket=<t> (a WebSocket upgrade) and the
// HTTP room form to the Durable Object of that room after checking the ticket; a bad, expired or
// missing ticket is answered 401 before any WebSocket or object exists. The cockpit relay's
// routes (/api/info, /api/stats, /ws/robot, /ws/viewer) and the hosted mailbox's (/mailboxes/...)
// go, over service bindings, to their own Workers (routes.js); the cockpit's files are this
// Worker's static assets, served before it runs. Its WASM module (tether-rooms) holds only the room
// relay, admission, tickets and HTTP members, and arrives precompiled (a CompiledWasm import):
// workerd forbids compiling WASM at run time.
import wasm from '../../build/wasm/tether-rooms.wasm';
import '../glue/modules/tether-rooms.js';
import { createRelay, pathPrefixAcl } from '../glue/relay.js';
import { moduleInit } from './init.js';
import { defineRoomObject } from './room-object.js';
import { forward } from './routes.js';
import { handleRequest } from './router.js';

// One module instance (load.js shares it) for the relay, the admission limits and the tickets.
const init = moduleInit(wasm);

export const RoomObject = defineRoomObject({ relayImpl: { createRelay, pathPrefixAcl }, init });

export default {
  /** @param {Request} request @param {Record<string, any>} env */
  async fetch(request, env) {
    const other = forward(request, env); // another system's route: no WASM runs here for it
    if (other) return other;
    await init(); // the ticket check runs here, before any Durable Object
    return handleRequest(request, env);
  },
};
