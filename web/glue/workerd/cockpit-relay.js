// `@tether-rt/tether/relay-cockpit` under the `workerd` export condition: cockpit-relay.js on
// tether-cockpit-relay (wasm/module.cmake: the cockpit relay Worker's module), whose .wasm
// arrives precompiled with it.
import '../modules/tether-cockpit-relay.js';
export * from '../cockpit-relay.js';
