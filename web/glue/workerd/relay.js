// `@tether-rt/tether/relay` under the `workerd` export condition: relay.js on the edge module
// (wasm/module.cmake), whose .wasm arrives precompiled with it.
import '../modules/tether-edge.js';
export * from '../relay.js';
