// Worker for tests/e2e/workerd.test.mjs. workerd forbids compiling WASM at run time, so the module
// arrives precompiled through a CompiledWasm import and is handed to the glue (TOOLCHAIN.md).
// POST a data frame: answers with its header, payload and the frame re-encoded from those two.
import wasm from '../../../build/wasm/tether-cockpit-relay.wasm';
import '../../../web/glue/modules/tether-cockpit-relay.js';
import { loadWire } from '../../../web/glue/wire.js';
import { roundTrip } from '../lib/wire_smoke.js';

let wire = null; // loaded on the first request, then reused by this isolate

export default {
  async fetch(request) {
    if (request.method !== 'POST') return new Response('POST a data frame', { status: 405 });
    wire ??= await loadWire({ wasmModule: wasm });
    const frame = new Uint8Array(await request.arrayBuffer());
    const result = roundTrip(wire, frame);
    // A frame the codec refuses is a client error, reported as the codec's own error value.
    return Response.json(
      { runtime: 'workerd', wasmIsModule: wasm instanceof WebAssembly.Module, ...result },
      { status: result.ok ? 200 : 422 },
    );
  },
};
