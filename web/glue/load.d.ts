// Types for web/glue/load.js: loading the one tether WASM module in any runtime.

export interface LoadOptions {
  /**
   * A precompiled module. Required in Cloudflare workerd, which forbids compiling WASM at run
   * time: import `build/wasm/tether.wasm` (a CompiledWasm module) and pass it here.
   */
  wasmModule?: WebAssembly.Module;
  /** The bytes of tether.wasm, when the caller already has them. */
  wasmBinary?: Uint8Array | ArrayBuffer;
}

/**
 * The raw Embind module. Its bindings are marshalling only and may change with the build; use the
 * typed wrappers (`tether/wire`) rather than calling them directly.
 */
export interface TetherModule {
  readonly HEAPU8: Uint8Array;
  readonly [binding: string]: unknown;
}

/**
 * Loads the module. Without options, Node and Deno read tether.wasm from disk and a browser
 * fetches it; that instance is shared by every later call without options.
 */
export function loadTetherModule(options?: LoadOptions): Promise<TetherModule>;
