// `@tether-rt/tether/cockpit-robot` under the `workerd` export condition: cockpit-robot.js on the edge module
// (wasm/module.cmake), whose .wasm arrives precompiled with it.
import '../modules/tether-edge.js';
export * from '../cockpit-robot.js';
