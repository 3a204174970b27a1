# The machinery behind wasm/module.cmake's two lists (tether_module, tether_binding): the module
# list is what an engineer edits; nothing here needs to change when a binding or a module is added.

# Link settings every module shares (TOOLCHAIN.md).
set(TETHER_WASM_LINK_OPTIONS
    --bind -fno-exceptions
    -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createTetherModule
    # `node` in this emscripten references __dirname, which ES modules lack (TOOLCHAIN.md);
    # the glue hands the module its bytes in Node and Deno instead.
    -sENVIRONMENT=web,worker
    -sALLOW_MEMORY_GROWTH=1 -sDYNAMIC_EXECUTION=0 -sFILESYSTEM=0
    -sINCOMING_MODULE_JS_API=[wasmBinary,instantiateWasm,locateFile,print,printErr]
    -sEXPORTED_RUNTIME_METHODS=[HEAPU8])
# The SIZE flavour (bench/README.md § Module size): -Oz shrinks code that -O3 inlines and unrolls,
# and link-time optimisation drops what no binding reaches across the cores. (Embind's
# EMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES=0 would save a little more, but its type ids then differ from
# the prebuilt embind library's and every call fails with "unbound types".)
set(TETHER_WASM_SIZE_COMPILE -Oz -flto)
# TEXTDECODER=2: every runtime a SIZE module runs in (workerd, the browsers the cockpit supports)
# has TextDecoder, so emscripten's JS fallback decoder goes.
set(TETHER_WASM_SIZE_LINK -Oz -flto -sTEXTDECODER=2)
# After the link, binaryen's size passes once more until they change nothing (--converge): 1 KiB
# gzip of the rooms Worker's module, which has a budget (bench/README.md § Module size). The same
# wasm-opt emcc runs at the link. --enable-simd: emcc strips the target-features section that told
# its own run a module may hold WebAssembly SIMD (the cores built with -msimd128, CMakeLists.txt);
# the flag only admits SIMD the module already has, so modules without it come out the same.
find_program(TETHER_WASM_OPT wasm-opt)

function(tether_module name flavour)
  if(NOT flavour MATCHES "^(SPEED|SIZE)$")
    message(FATAL_ERROR "tether_module(${name} ${flavour}): the flavour is SPEED or SIZE")
  endif()
  set_property(GLOBAL APPEND PROPERTY TETHER_MODULES ${name})
  set_property(GLOBAL PROPERTY TETHER_MODULE_${name}_FLAVOUR ${flavour})
endfunction()

function(tether_binding binding)
  set(source "${CMAKE_SOURCE_DIR}/bindings/${binding}_bindings.cpp")
  if(NOT EXISTS "${source}")
    message(FATAL_ERROR "wasm/module.cmake names the binding '${binding}' but ${source} does not exist")
  endif()
  get_property(modules GLOBAL PROPERTY TETHER_MODULES)
  foreach(module ${ARGN})
    if(NOT module IN_LIST modules)
      message(FATAL_ERROR "tether_binding(${binding} ...): no module '${module}'; declare it with tether_module()")
    endif()
    set_property(GLOBAL APPEND PROPERTY TETHER_MODULE_${module}_BINDINGS ${source})
    set_property(GLOBAL APPEND PROPERTY TETHER_MODULE_${module}_NAMES ${binding})
  endforeach()
  set_property(GLOBAL APPEND PROPERTY TETHER_LISTED_BINDINGS ${source})
endfunction()

# A copy of every core library compiled for size (<core>_size), linked to the other cores' copies.
function(tether_size_flavour)
  foreach(core ${TETHER_CORES})
    get_target_property(sources ${core} SOURCES)
    add_library(${core}_size STATIC ${sources})
    foreach(prop INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS INTERFACE_INCLUDE_DIRECTORIES
                 INTERFACE_SYSTEM_INCLUDE_DIRECTORIES INTERFACE_COMPILE_DEFINITIONS INTERFACE_COMPILE_OPTIONS)
      get_target_property(value ${core} ${prop})
      if(value)
        set_target_properties(${core}_size PROPERTIES ${prop} "${value}")
      endif()
    endforeach()
    # Files of TETHER_WASM_HOT_FILES (wasm/module.cmake) in this copy only: the same source in the
    # SPEED copy (-O3 already) and the native build is untouched.
    foreach(source ${sources})
      file(RELATIVE_PATH rel "${CMAKE_SOURCE_DIR}" "${source}")
      if(rel IN_LIST TETHER_WASM_HOT_FILES)
        set_property(SOURCE "${source}" APPEND PROPERTY COMPILE_OPTIONS
                     "$<$<STREQUAL:$<TARGET_PROPERTY:NAME>,${core}_size>:${TETHER_WASM_HOT_FILE_COMPILE}>")
      endif()
    endforeach()
    string(REGEX REPLACE "^tether_" "" short ${core})
    if(short IN_LIST TETHER_WASM_HOT_CORES)
      target_compile_options(${core}_size PRIVATE -O3)
    else()
      target_compile_options(${core}_size PRIVATE ${TETHER_WASM_SIZE_COMPILE})
    endif()
    get_target_property(links ${core} LINK_LIBRARIES)
    set(mapped)
    foreach(lib ${links})
      if(lib IN_LIST TETHER_CORES)
        list(APPEND mapped ${lib}_size)
      elseif(lib)
        list(APPEND mapped ${lib})
      endif()
    endforeach()
    target_link_libraries(${core}_size PUBLIC ${mapped})
  endforeach()
endfunction()

function(tether_link_modules)
  # Every binding belongs to some module.
  file(GLOB bindings CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/bindings/*_bindings.cpp")
  get_property(listed GLOBAL PROPERTY TETHER_LISTED_BINDINGS)
  foreach(source ${bindings})
    if(NOT source IN_LIST listed)
      get_filename_component(file ${source} NAME)
      string(REGEX REPLACE "_bindings\\.cpp$" "" binding ${file})
      message(FATAL_ERROR "bindings/${file} is in no WASM module: add `tether_binding(${binding} tether ...)` "
                          "to wasm/module.cmake, naming every module whose runtime uses it")
    endif()
  endforeach()

  get_property(modules GLOBAL PROPERTY TETHER_MODULES)
  set(have_size OFF)
  foreach(module ${modules})
    get_property(flavour GLOBAL PROPERTY TETHER_MODULE_${module}_FLAVOUR)
    if(flavour STREQUAL "SIZE" AND NOT have_size)
      tether_size_flavour()
      set(have_size ON)
    endif()
    get_property(sources GLOBAL PROPERTY TETHER_MODULE_${module}_BINDINGS)
    if(NOT sources)
      message(FATAL_ERROR "the WASM module '${module}' holds no binding: list it in a tether_binding() line")
    endif()
    add_executable(${module} ${sources})
    set_target_properties(${module} PROPERTIES OUTPUT_NAME "${module}" SUFFIX ".mjs")
    target_link_options(${module} PRIVATE ${TETHER_WASM_LINK_OPTIONS})
    # The module's JS says which module it is and what it holds (web/glue/load.js picks by binding).
    get_property(names GLOBAL PROPERTY TETHER_MODULE_${module}_NAMES)
    list(JOIN names "\", \"" quoted)
    set(post "${CMAKE_BINARY_DIR}/${module}.post.js")
    # Written only when it changes (configure_file), so `make wasm` does not relink every time.
    file(WRITE "${post}.new" "export const tetherModule = { name: \"${module}\", bindings: [\"${quoted}\"] };\n")
    configure_file("${post}.new" "${post}" COPYONLY)
    # Types for the generated JS (it has none), so tsc and editors never read emscripten's output.
    configure_file("${CMAKE_SOURCE_DIR}/wasm/module.d.mts" "${CMAKE_BINARY_DIR}/${module}.d.mts" COPYONLY)
    target_link_options(${module} PRIVATE "SHELL:--extern-post-js ${post}")
    set_property(TARGET ${module} APPEND PROPERTY LINK_DEPENDS "${post}")
    if(flavour STREQUAL "SIZE")
      set(cores)
      foreach(core ${TETHER_CORES})
        list(APPEND cores ${core}_size)
      endforeach()
      target_compile_options(${module} PRIVATE ${TETHER_WASM_SIZE_COMPILE})
      target_link_options(${module} PRIVATE ${TETHER_WASM_SIZE_LINK})
      if(NOT TETHER_WASM_OPT)
        message(FATAL_ERROR "wasm-opt (binaryen, which emscripten depends on) is not on the PATH: "
                            "install Debian's emscripten, which brings it (tools/setup.sh)")
      endif()
      add_custom_command(TARGET ${module} POST_BUILD
        COMMAND ${TETHER_WASM_OPT} -Oz --converge --enable-simd "${CMAKE_BINARY_DIR}/${module}.wasm"
                -o "${CMAKE_BINARY_DIR}/${module}.wasm"
        VERBATIM)
    else()
      set(cores ${TETHER_CORES})
    endif()
    target_link_libraries(${module} PRIVATE ${cores})
  endforeach()
endfunction()
