// `@tether-rt/tether/peer` in every runtime but workerd (Node, Deno, browsers, bundlers): the peer
// transports with the full module's JS registered statically (web/glue/modules/tether.js), which
// holds the member and signaling bindings they run on. Nothing loads at import in a browser:
// `initPeer()` (or any tether loader) does.
import '../modules/tether.js';
export * from '../../peer/index.js';
