// The types of a generated module's JS (build/wasm/<module>.mjs), copied beside it by
// wasm/modules.cmake: emscripten's JS has none, so tsc (`make lint`) and editors read this instead.
// What the bindings export is typed where it is used (web/glue/*.d.ts).
export interface TetherModuleInfo {
  /** The module's name (wasm/module.cmake): tether, tether-cockpit, tether-rooms, ... */
  name: string;
  /** The bindings it holds (web/glue/load.js picks a module by binding). */
  bindings: string[];
}
export declare const tetherModule: TetherModuleInfo;
/** The emscripten factory (MODULARIZE): resolves to the instantiated module. */
declare function factory(options?: Record<string, unknown>): Promise<any>;
export default factory;
