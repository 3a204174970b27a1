// `@tether-rt/tether/tickets` under the `workerd` export condition: the ticket codec on the edge
// module (wasm/module.cmake), whose .wasm arrives precompiled with it.
import '../modules/tether-edge.js';
export * from '../../edge/tickets.js';
