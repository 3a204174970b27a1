// Loads the one tether WASM module in every runtime: browser, Node, Deno and Cloudflare workerd.
// The module is built with ENVIRONMENT=web,worker (TOOLCHAIN.md): in Node and Deno we hand it
// its bytes; in workerd, where compiling WASM at run time is forbidden, the caller passes the
// precompiled WebAssembly.Module that its bundler imported.
import createTetherModule from '../../build/wasm/tether.mjs';

// Resolved only when used: in workerd import.meta.url is not an absolute URL, so resolving it at
// module load throws, and that path never needs it (the caller passes wasmModule).
const wasmUrl = () => new URL('../../build/wasm/tether.wasm', import.meta.url);
let shared = null;
// One instance per precompiled module (workerd): every glue initialised with the same import shares
// it, so the relay, the admission limits and the tickets live in one WASM memory.
const byModule = new WeakMap();
// The instance the latest load resolved to, for glue that must start synchronously (the peer
// transports) once the app has loaded the module through any tether loader.
let lastLoaded = null;

/** The module instance a tether loader already resolved, or null. */
export function loadedTetherModule() {
  return lastLoaded;
}

async function readWasmBytes() {
  if (globalThis.Deno?.readFile) return globalThis.Deno.readFile(wasmUrl());
  if (globalThis.process?.versions?.node) {
    // getBuiltinModule (Node >= 20.16), not import('node:fs/promises'): workerd tooling
    // (Miniflare, wrangler) resolves every import it sees and rejects a Node builtin.
    const { readFile } = globalThis.process.getBuiltinModule('node:fs/promises');
    return readFile(wasmUrl());
  }
  return null; // a browser or worker: emscripten fetches (and streams) it from locateFile
}

/**
 * @param {{wasmModule?: WebAssembly.Module, wasmBinary?: Uint8Array}} [options]
 * @returns {Promise<object>} the raw Embind module
 */
export async function loadTetherModule(options = {}) {
  if (!options.wasmModule && !options.wasmBinary && shared) return shared;
  if (options.wasmModule && byModule.has(options.wasmModule))
    return byModule.get(options.wasmModule);
  const settings = { locateFile: () => wasmUrl().href, print: () => {}, printErr: () => {} };
  if (options.wasmModule) {
    const compiled = options.wasmModule;
    settings.locateFile = (p) => p;
    settings.instantiateWasm = (imports, done) => {
      WebAssembly.instantiate(compiled, imports).then((instance) => done(instance, compiled));
      return {};
    };
  } else {
    const bytes = options.wasmBinary ?? (await readWasmBytes());
    if (bytes) settings.wasmBinary = bytes;
  }
  const loading = createTetherModule(settings).catch((cause) => {
    throw new Error(
      `tether: could not load build/wasm/tether.wasm (${cause?.message ?? cause}). ` +
        'Run `make wasm` to build it; in workerd pass {wasmModule} from an import of the .wasm file.',
    );
  });
  if (!options.wasmModule && !options.wasmBinary) shared = loading;
  if (options.wasmModule) byModule.set(options.wasmModule, loading);
  loading.then(
    (m) => (lastLoaded = m),
    () => {},
  );
  return loading;
}
