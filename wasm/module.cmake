# The one WebAssembly module: every core's bindings in one ES module + .wasm, loaded by
# web/glue/load.js in the browser, Node, Deno and workerd. Settings follow TOOLCHAIN.md.
# One module for every core: one binding translation unit per core (bindings/*.cpp).
file(GLOB TETHER_BINDINGS CONFIGURE_DEPENDS bindings/*.cpp)
add_executable(tether ${TETHER_BINDINGS})
target_link_libraries(tether PRIVATE ${TETHER_CORES})
set_target_properties(tether PROPERTIES OUTPUT_NAME "tether" SUFFIX ".mjs")
target_link_options(tether PRIVATE
    --bind -fno-exceptions
    -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createTetherModule
    # `node` in this emscripten references __dirname, which ES modules lack (TOOLCHAIN.md);
    # the glue hands the module its bytes in Node and Deno instead.
    -sENVIRONMENT=web,worker
    -sALLOW_MEMORY_GROWTH=1 -sDYNAMIC_EXECUTION=0 -sFILESYSTEM=0
    -sINCOMING_MODULE_JS_API=[wasmBinary,instantiateWasm,locateFile,print,printErr]
    -sEXPORTED_RUNTIME_METHODS=[HEAPU8])
