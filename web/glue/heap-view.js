// A Float64Array over a loaded module's memory, for the glue modules that read results the
// bindings leave in WASM memory instead of building Embind objects (bench/README.md). Growing
// that memory replaces its buffer: the view is rebuilt when that happened, so call the returned
// function again after every call into the module instead of holding a view across one.
/** @param {{HEAPU8: Uint8Array}} mod @returns {() => Float64Array} */
export function heapF64(mod) {
  let buffer = null;
  let view = null;
  return () => {
    if (mod.HEAPU8.buffer !== buffer) {
      buffer = mod.HEAPU8.buffer;
      view = new Float64Array(buffer);
    }
    return view;
  };
}
