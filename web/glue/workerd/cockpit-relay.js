// `@tether-rt/tether/relay-cockpit` under the `workerd` export condition: cockpit-relay.js on the edge module
// (wasm/module.cmake), whose .wasm arrives precompiled with it.
import '../modules/tether-edge.js';
export * from '../cockpit-relay.js';
