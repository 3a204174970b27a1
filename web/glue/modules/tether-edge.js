// The edge module (wasm/module.cmake: the bindings the rooms Worker and its Durable Objects use),
// for Cloudflare workerd: importing this file registers it with web/glue/load.js, with its .wasm
// imported precompiled (a CompiledWasm module; workerd forbids compiling WASM at run time).
import factory, { tetherModule } from '../../../build/wasm/tether-edge.mjs';
import wasmModule from '../../../build/wasm/tether-edge.wasm';
import { registerTetherModule } from '../load.js';

registerTetherModule({ ...tetherModule, factory, wasmModule });
