// tether at the edge: the Worker (wrangler.toml beside this file). Routes
// GET /rooms/<name>?ticket=<t> (a WebSocket upgrade) to the Durable Object of that room after
// checking the ticket; a bad, expired or missing ticket is answered 401 before any WebSocket or
// object exists. The cockpit relay's routes (/api/info, /api/stats, /ws/robot, /ws/viewer) go to
// its own Durable Object (cockpit.js), and the cockpit's files are the Worker's static assets. The WASM relay arrives precompiled (a CompiledWasm import): workerd forbids
// compiling WASM at run time.
import wasm from '../../build/wasm/tether.wasm';
import { createRelay, pathPrefixAcl } from '../glue/relay.js';
import { moduleInit } from './init.js';
import { defineRoomObject } from './room-object.js';
import { handleRequest } from './router.js';
import { CockpitRelayObject, routeCockpit } from './cockpit.js';

// One module instance (load.js shares it) for the relay, the admission limits and the tickets.
const init = moduleInit(wasm);

export const RoomObject = defineRoomObject({ relayImpl: { createRelay, pathPrefixAcl }, init });

export { CockpitRelayObject };

export default {
  async fetch(request, env) {
    await init(); // the ticket check runs here, before any Durable Object
    return routeCockpit(request, env) ?? handleRequest(request, env);
  },
};
