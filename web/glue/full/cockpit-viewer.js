// `@tether-rt/tether/cockpit-viewer` in every runtime but workerd (Node, Deno, browsers, bundlers):
// the viewer client with the full module's JS registered statically (web/glue/modules/tether.js),
// so a bundle that imports only this subpath still holds the module it runs on, and loadViewer,
// which loads that module and its wire codec for connectViewer.
import '../modules/tether.js';
import { loadTetherModule } from '../load.js';
import { createWire } from '../wire.js';

export * from '../cockpit-viewer.js';

/**
 * Loads the module the viewer session runs on and the wire codec on it: the two first arguments
 * of connectViewer. A bundle passes {wasmModule} or {wasmBinary} (`@tether-rt/tether/tether.wasm`).
 * @param {import('../load.d.ts').LoadOptions} [options]
 */
export async function loadViewer(options) {
  const mod = await loadTetherModule(options, 'cockpit_clients');
  return { mod, wire: createWire(mod) };
}
