// `@tether-rt/tether/relay` under the `workerd` export condition: relay.js on tether-rooms
// (wasm/module.cmake: the rooms Worker's module), whose .wasm arrives precompiled with it.
import '../modules/tether-rooms.js';
export * from '../relay.js';
