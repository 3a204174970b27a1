// Types for web/glue/load.js: loading tether's WASM modules (wasm/module.cmake) in any runtime.

export interface LoadOptions {
  /**
   * A precompiled module, e.g. in Cloudflare workerd, which forbids compiling WASM at run time. It
   * must be the .wasm of the module this runtime uses for the binding (the package export
   * `@tether-rt/tether/tether.wasm` under the same conditions, or `@tether-rt/tether/wasm/<module>.wasm`).
   */
  wasmModule?: WebAssembly.Module;
  /** The bytes of that .wasm, when the caller already has them. */
  wasmBinary?: Uint8Array | ArrayBuffer;
}

/** What a file in web/glue/modules/ registers: one module's JS, and where its .wasm is. */
export interface TetherModuleDescriptor {
  /** The module's name (wasm/module.cmake), e.g. `tether-rooms`. */
  readonly name: string;
  /** The bindings it holds, e.g. `['wire', 'cockpit_relay', 'room']`. */
  readonly bindings: readonly string[];
  /** Emscripten's module factory (the module's .mjs default export). */
  readonly factory: (settings: object) => Promise<TetherModule>;
  /** Its .wasm, precompiled (workerd). */
  readonly wasmModule?: WebAssembly.Module;
  /** Where its .wasm is (read from disk in Node and Deno, fetched elsewhere). */
  readonly wasmUrl?: () => URL;
}

/**
 * The raw Embind module. Its bindings are marshalling only and may change with the build; use the
 * typed wrappers (`tether/wire`) rather than calling them directly.
 */
export interface TetherModule {
  readonly HEAPU8: Uint8Array;
  readonly [binding: string]: unknown;
}

/** Makes a module available to every glue in this program (web/glue/modules/ call this). */
export function registerTetherModule(descriptor: TetherModuleDescriptor): void;

/**
 * The instance of a module holding `binding` that a tether loader already resolved (the newest),
 * or null; without `binding`, the newest instance of any module. For glue that must start
 * synchronously (the peer transports) in a bundled app that loaded a module through any loader.
 */
export function loadedTetherModule(binding?: string): TetherModule | null;

/** The names of the modules this program has instantiated so far. */
export function loadedTetherModules(): string[];

/**
 * Loads the module that holds `binding`: the first registered one that does, else the full module
 * read from beside this file. Without a wasm of its own, one instance per module is shared by
 * every later call.
 */
export function loadTetherModule(options?: LoadOptions, binding?: string): Promise<TetherModule>;
