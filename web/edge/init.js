// The one WASM module instance a Worker's room code runs on (the relay, the admission limits, the
// tickets), initialised once from the module workerd hands over precompiled (it forbids compiling
// at run time). Shared by web/edge/worker.js and the reference-relay Worker of the edge bench.
import { initRelay } from '../glue/relay.js';
import { initLimits } from './limits.js';
import { initTickets } from './tickets.js';

/** A function that loads everything once and resolves when it is ready. */
export function moduleInit(wasmModule) {
  let loading = null;
  return () =>
    (loading ??= Promise.all([
      initRelay({ wasmModule }),
      initLimits({ wasmModule }),
      initTickets({ wasmModule }),
    ]));
}
