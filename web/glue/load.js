// Loads tether's WASM modules in every runtime: browser, Node, Deno and Cloudflare workerd.
// There is one module per runtime (wasm/module.cmake): `tether` holds every binding; smaller ones
// (`tether-rooms`, `tether-cockpit-relay` and `tether-mailbox` for the edge Workers,
// `tether-cockpit` for the cockpit app) hold only what their runtime uses. A runtime's module is registered by importing its descriptor (web/glue/modules/): the
// package's export conditions do that (`workerd`: web/glue/workerd/, an edge module; every other
// runtime: web/glue/full/), and an app can import one itself (the cockpit does). Without a
// registered module that holds the binding asked for, the full module is loaded by URL (files
// imported by path). This file imports no module statically, so a bundle carries only its own.
//
// The modules are built with ENVIRONMENT=web,worker (TOOLCHAIN.md): in Node and Deno we hand them
// their bytes; in workerd, where compiling WASM at run time is forbidden, the module arrives
// precompiled (a CompiledWasm import, by the descriptor or by the caller as {wasmModule}).

/** @type {Array<{name: string, bindings: string[], factory: Function, wasmModule?: WebAssembly.Module, wasmUrl?: () => URL}>} */
const registered = [];
const shared = new Map(); // module name -> loading promise, for calls that pass no module of their own
// One instance per precompiled module: every glue initialised with the same import shares it.
const byModule = new WeakMap();
// The latest instance of each module, newest last, for glue that must start synchronously (the peer
// transports, the tickets in a browser) once the app has loaded a module through any tether loader.
// Bounded by the number of modules.
const resolved = new Map(); // module name -> {bindings, instance}

/**
 * The instance of a module holding `binding` that a tether loader already resolved (the newest
 * one), or null. Without `binding`, the newest instance of any module.
 */
export function loadedTetherModule(binding) {
  const found = [...resolved.values()]
    .reverse()
    .find((r) => binding === undefined || r.bindings.includes(binding));
  return found?.instance ?? null;
}

// The full module, found beside this file. Resolved only when used: in workerd import.meta.url is
// not an absolute URL, and that runtime always has its module registered or passed.
const fullUrl = (ext) => new URL(`../../build/wasm/tether${ext}`, import.meta.url);

/** The names of the modules this program has instantiated (diagnostics, tests). */
export function loadedTetherModules() {
  return [...shared.keys()].filter((name) => shared.get(name).settled).sort();
}

/**
 * Makes a module available to every glue in this program: the descriptor a file in
 * web/glue/modules/ builds from the module's own JS (`tetherModule`: its name and bindings).
 */
export function registerTetherModule(descriptor) {
  if (!registered.some((d) => d.name === descriptor.name)) registered.push(descriptor);
}

// The fallback for files imported by path rather than through the package (this repository's
// hosts, tests and unbundled pages): the full module, imported by URL. Not an import() expression,
// so that neither a bundler nor Miniflare's module walk pulls the full module into a Worker that
// registered its own.
const importUrl = (url) => new Function('url', 'return import(url)')(url);
async function defaultModule() {
  if (globalThis.navigator?.userAgent === 'Cloudflare-Workers')
    throw new Error(
      "tether: no WASM module is registered in this Worker: import the one it runs on, e.g. '@tether-rt/tether/modules/tether-rooms' " +
        '(web/glue/modules/), or import the subpaths through the package (workerd condition)',
    );
  const { default: factory, tetherModule } = await importUrl(fullUrl('.mjs').href);
  return { ...tetherModule, factory, wasmUrl: () => fullUrl('.wasm') };
}

async function readWasmBytes(url) {
  if (globalThis.Deno?.readFile) return globalThis.Deno.readFile(url);
  if (globalThis.process?.versions?.node) {
    // getBuiltinModule (Node >= 20.16), not import('node:fs/promises'): workerd tooling
    // (Miniflare, wrangler) resolves every import it sees and rejects a Node builtin.
    const { readFile } = globalThis.process.getBuiltinModule('node:fs/promises');
    return readFile(url);
  }
  return null; // a browser or worker: emscripten fetches (and streams) it from locateFile
}

async function instantiate(descriptor, options) {
  const wasmUrl = () =>
    descriptor.wasmUrl ? descriptor.wasmUrl().href : `${descriptor.name}.wasm`;
  const settings = { locateFile: wasmUrl, print: () => {}, printErr: () => {} };
  const compiled = options.wasmModule ?? descriptor.wasmModule;
  if (compiled) {
    settings.locateFile = (p) => p;
    settings.instantiateWasm = (imports, done) => {
      WebAssembly.instantiate(compiled, imports).then(
        (instance) => done(instance, compiled),
        (cause) => failed(cause),
      );
      return {};
    };
  } else {
    const bytes =
      options.wasmBinary ?? (descriptor.wasmUrl ? await readWasmBytes(descriptor.wasmUrl()) : null);
    if (bytes) settings.wasmBinary = bytes;
  }
  let failed;
  const linkFailure = new Promise((_, reject) => (failed = reject));
  const fix =
    options.wasmModule || options.wasmBinary
      ? `pass ${descriptor.name}.wasm, the module whose JS glue this runtime loaded (package export ` +
        `@tether-rt/tether/wasm/${descriptor.name}.wasm)`
      : 'run `make wasm` to build it; in workerd import its descriptor (web/glue/modules/) or pass {wasmModule}';
  return Promise.race([descriptor.factory(settings), linkFailure]).then(
    (instance) => {
      resolved.delete(descriptor.name); // re-inserted last: the newest instance wins
      resolved.set(descriptor.name, { bindings: descriptor.bindings, instance });
      return instance;
    },
    (cause) => {
      throw new Error(
        `tether: could not load ${descriptor.name}.wasm (${cause?.message ?? cause}): ${fix}.`,
      );
    },
  );
}

/**
 * @param {{wasmModule?: WebAssembly.Module, wasmBinary?: Uint8Array}} [options]
 * @param {string} [binding] the binding the caller needs (`wire`, `room`, …; wasm/module.cmake)
 * @returns {Promise<object>} the raw Embind module
 */
export async function loadTetherModule(options = {}, binding) {
  const descriptor =
    registered.find((d) => binding === undefined || d.bindings.includes(binding)) ??
    (await defaultModule());
  if (options.wasmModule && options.wasmModule !== descriptor.wasmModule) {
    let loading = byModule.get(options.wasmModule);
    if (!loading) byModule.set(options.wasmModule, (loading = instantiate(descriptor, options)));
    return loading;
  }
  if (options.wasmBinary) return instantiate(descriptor, options);
  let loading = shared.get(descriptor.name);
  if (!loading) {
    loading = instantiate(descriptor, options);
    shared.set(descriptor.name, loading);
    loading.then(
      () => (loading.settled = true),
      () => shared.delete(descriptor.name), // a later call may succeed (e.g. after a build)
    );
  }
  return loading;
}
