// `@tether-rt/tether/wire` under the `workerd` export condition: wire.js on tether-cockpit-relay
// (wasm/module.cmake: of the edge Workers' modules, the cockpit relay's holds the wire codec),
// whose .wasm arrives precompiled with it.
import '../modules/tether-cockpit-relay.js';
export * from '../wire.js';
