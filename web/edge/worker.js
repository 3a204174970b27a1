// tether at the edge: the Worker (wrangler.toml beside this file). Routes
// GET /rooms/<name>?ticket=<t> (a WebSocket upgrade) to the Durable Object of that room after
// checking the ticket; a bad, expired or missing ticket is answered 401 before any WebSocket or
// object exists. The cockpit relay's routes (/api/info, /api/stats, /ws/robot, /ws/viewer) go to
// its own Durable Object (cockpit.js), the hosted mailbox's (/mailboxes/...) to one Durable Object
// per mailbox (mailbox-object.js), and the cockpit's files are the Worker's static assets. The WASM relay arrives precompiled (a CompiledWasm import): workerd forbids
// compiling WASM at run time.
import wasm from '../../build/wasm/tether-edge.wasm';
import '../glue/modules/tether-edge.js';
import { createRelay, pathPrefixAcl } from '../glue/relay.js';
import { moduleInit } from './init.js';
import { defineRoomObject } from './room-object.js';
import { handleRequest } from './router.js';
import { CockpitRelayObject, routeCockpit } from './cockpit.js';
import { loadMailbox } from '../glue/mailbox.js';
import { defineMailboxObject, routeMailbox } from './mailbox-object.js';

// One module instance (load.js shares it) for the relay, the admission limits and the tickets.
const init = moduleInit(wasm);

export const RoomObject = defineRoomObject({ relayImpl: { createRelay, pathPrefixAcl }, init });

export { CockpitRelayObject };

// The hosted mailbox (mailbox-object.js): /mailboxes/... to one Durable Object per mailbox.
let mailboxApi = null;
const mailbox = () => (mailboxApi ??= loadMailbox({ wasmModule: wasm }));
export const MailboxObject = defineMailboxObject({ init: mailbox });

export default {
  async fetch(request, env) {
    await init(); // the ticket check runs here, before any Durable Object
    return (
      routeCockpit(request, env) ??
      routeMailbox(request, env, mailbox) ??
      handleRequest(request, env)
    );
  },
};
