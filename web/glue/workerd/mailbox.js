// `@tether-rt/tether/mailbox` under the `workerd` export condition: mailbox.js on the edge module
// (wasm/module.cmake), whose .wasm arrives precompiled with it.
import '../modules/tether-edge.js';
export * from '../mailbox.js';
