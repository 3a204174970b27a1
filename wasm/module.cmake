# The WebAssembly modules: one per runtime, each an ES module + .wasm (build/wasm/<module>.mjs and
# .wasm) holding only the bindings, and so only the cores, that its runtime uses. web/glue/load.js
# loads them; package.json's `exports` conditions pick which one a runtime gets (`workerd`: the
# edge module, web/glue/workerd/; every other runtime: the full one, web/glue/full/). Emscripten
# settings are in wasm/modules.cmake, each with the reason it is needed. bench/README.md § Module size says where the bytes go and why the
# flavours below exist.

include(${CMAKE_CURRENT_LIST_DIR}/modules.cmake)

# --- the modules -------------------------------------------------------------------------------
# tether_module(<name> SPEED|SIZE):
#   SPEED  cores as the native build compiles them (-O3): Node, Deno, browsers by default, where
#          throughput matters and the bytes are read from disk or cached.
#   SIZE   cores at -Oz with link-time optimisation, for a module that is uploaded or downloaded
#          on first use. Cores listed in TETHER_WASM_HOT_CORES stay at -O3 even there.
set(TETHER_WASM_HOT_CORES decode)
tether_module(tether         SPEED)  # every binding: Node, Deno, browsers, bundlers (default)
tether_module(tether-edge    SIZE)   # workerd: the rooms Worker and its Durable Objects
tether_module(tether-cockpit SIZE)   # the browser cockpit (web/cockpit): viewer session, decoders

# --- which module holds which binding: one line per bindings/<name>_bindings.cpp ----------------
# A binding left out of every line fails the configure step, so a new one cannot go missing.
tether_binding(wire     tether tether-edge tether-cockpit)
tether_binding(decode   tether tether-cockpit)
tether_binding(cockpit_relay   tether tether-edge)     # the relay the Worker and the Deno host run
tether_binding(cockpit_clients tether tether-cockpit)  # viewer, robot, teleop safety: never on the edge
tether_binding(room     tether tether-edge)   # relay, client, admission, tickets: the Worker hosts rooms
tether_binding(member   tether)               # a peer's membership (web/peer): never on the edge
tether_binding(signaling tether)              # WebRTC negotiation between peers (web/peer)
tether_binding(sealed   tether)               # the encrypted relay transport's frames (web/peer): peers only
tether_binding(bus      tether)
tether_binding(swarm    tether)
tether_binding(mailbox  tether tether-edge)

tether_link_modules()
