// `@tether-rt/tether/cockpit-robot` under the `workerd` export condition: cockpit-robot.js on the
// cockpit module (wasm/module.cmake: the edge modules host only the relay, not the client cores),
// whose .wasm arrives precompiled with it (workerd forbids compiling WASM at run time).
import factory, { tetherModule } from '../../../build/wasm/tether-cockpit.mjs';
import wasmModule from '../../../build/wasm/tether-cockpit.wasm';
import { registerTetherModule } from '../load.js';

registerTetherModule({ ...tetherModule, factory, wasmModule });
export * from '../cockpit-robot.js';
