// The rooms Worker's module (wasm/module.cmake: the room relay, admission, tickets and the HTTP members),
// for Cloudflare workerd: importing this file registers it with web/glue/load.js, with its .wasm
// imported precompiled (a CompiledWasm module; workerd forbids compiling WASM at run time).
import factory, { tetherModule } from '../../../build/wasm/tether-rooms.mjs';
import wasmModule from '../../../build/wasm/tether-rooms.wasm';
import { registerTetherModule } from '../load.js';

registerTetherModule({ ...tetherModule, factory, wasmModule });
