// The full module (every binding: wasm/module.cmake), for browsers and bundlers: importing this
// file bundles its JS and registers it with web/glue/load.js. Its .wasm is fetched beside this
// file's package path, or passed as {wasmModule} / {wasmBinary} (package export
// `@tether-rt/tether/tether.wasm`).
import factory, { tetherModule } from '../../../build/wasm/tether.mjs';
import { registerTetherModule } from '../load.js';

registerTetherModule({
  ...tetherModule,
  factory,
  wasmUrl: () => new URL('../../../build/wasm/tether.wasm', import.meta.url),
});
