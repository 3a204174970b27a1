# The WebAssembly modules: one per runtime, each an ES module + .wasm (build/wasm/<module>.mjs and
# .wasm) holding only the bindings, and so only the cores, that its runtime uses. web/glue/load.js
# loads them; package.json's `exports` conditions pick which one a runtime gets (`workerd`: the
# edge module of that subpath's Worker, web/glue/workerd/; every other runtime: the full one, web/glue/full/). Emscripten
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
# Files of a SIZE copy compiled for speed (bench/README.md § -Oz against -O3): -finline-functions
# is needed because emcc turns any -Oz on the line into -fno-inline-functions (every function
# noinline), which a later -O3 does not undo. The scanner alone fits the 120 KiB budget (+0.6 KiB);
# relay.cpp too would be +22 KiB.
set(TETHER_WASM_HOT_FILES src/room/json_scan.cpp)
set(TETHER_WASM_HOT_FILE_COMPILE -O3 -finline-functions)
tether_module(tether         SPEED)  # every binding: Node, Deno, browsers, bundlers (default)
tether_module(tether-cockpit SIZE)   # the browser cockpit (web/cockpit): viewer session, decoders
# workerd: one module per edge Worker (web/edge/workers.mjs), each only what its Worker serves, so
# each Worker uploads and cold-starts only its own system (bench/README.md § Module size).
tether_module(tether-rooms         SIZE)   # the rooms Worker: room relay, admission, tickets, HTTP members
tether_module(tether-cockpit-relay SIZE)   # the cockpit relay Worker: the relay core and the wire codec
tether_module(tether-mailbox       SIZE)   # the mailbox Worker: the hosted mailbox core

# --- which module holds which binding: one line per bindings/<name>_bindings.cpp ----------------
# A binding left out of every line fails the configure step, so a new one cannot go missing.
tether_binding(wire     tether tether-cockpit tether-cockpit-relay)
tether_binding(decode   tether tether-cockpit)
tether_binding(cockpit_relay   tether tether-cockpit-relay)  # the relay the Worker and the Deno host run
tether_binding(cockpit_clients tether tether-cockpit)  # viewer, robot, teleop safety: never on the edge
tether_binding(room     tether tether-rooms)   # relay, admission, tickets: the Worker hosts rooms
tether_binding(room_client tether)            # the room client and the reference's checks: peers, never a host
tether_binding(member   tether)               # a peer's membership (web/peer): never on the edge
tether_binding(signaling tether)              # WebRTC negotiation between peers (web/peer)
tether_binding(sealed   tether)               # the encrypted relay transport's frames (web/peer): peers only
tether_binding(bus      tether)
tether_binding(swarm    tether)
tether_binding(mailbox  tether tether-mailbox)
tether_binding(http     tether tether-rooms)   # the HTTP relay transport's sessions, in the rooms hosts
tether_binding(http_link tether)              # its peer side, the link (web/peer): never on the edge

tether_link_modules()

# The rooms Worker's module has an upload budget (120 KiB gzip with its JS, issue #20; `make
# test-deploy` checks it): emscripten's smaller allocator saves 2.2 KiB gzip there. Its cost on
# the relay's hot path was within the noise of bench/room-relay.bench.mjs (bench/README.md § Module
# size); the other modules keep dlmalloc.
target_link_options(tether-rooms PRIVATE -sMALLOC=emmalloc)
