// `@tether-rt/tether/tickets` under the `workerd` export condition: the ticket codec on
// tether-rooms (wasm/module.cmake: the rooms Worker's module), whose .wasm arrives precompiled.
import '../modules/tether-rooms.js';
export * from '../../edge/tickets.js';
