// `@tether-rt/tether/wire` under the `workerd` export condition: wire.js on the edge module
// (wasm/module.cmake), whose .wasm arrives precompiled with it.
import '../modules/tether-edge.js';
export * from '../wire.js';
