// The mailbox Worker's module (wasm/module.cmake: the hosted mailbox core),
// for Cloudflare workerd: importing this file registers it with web/glue/load.js, with its .wasm
// imported precompiled (a CompiledWasm module; workerd forbids compiling WASM at run time).
import factory, { tetherModule } from '../../../build/wasm/tether-mailbox.mjs';
import wasmModule from '../../../build/wasm/tether-mailbox.wasm';
import { registerTetherModule } from '../load.js';

registerTetherModule({ ...tetherModule, factory, wasmModule });
