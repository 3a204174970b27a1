// The cockpit module (wasm/module.cmake: the viewer session, the wire codec and the decoders), for
// the browser cockpit (web/cockpit): importing this file bundles its JS and registers it with
// web/glue/load.js. The app fetches its .wasm from beside the bundle and passes {wasmBinary}.
import factory, { tetherModule } from '../../../build/wasm/tether-cockpit.mjs';
import { registerTetherModule } from '../load.js';

registerTetherModule({
  ...tetherModule,
  factory,
  wasmUrl: () => new URL('../../../build/wasm/tether-cockpit.wasm', import.meta.url),
});
