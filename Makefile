# tether: `make demo` and `make test` are the two commands (README). Everything else is a step.
SHELL := /bin/bash
.DEFAULT_GOAL := test
export NODE_PATH := /usr/share/nodejs

BUILD        := build
NATIVE_DIR   := $(BUILD)/native
WASM_DIR     := $(BUILD)/wasm
FUZZ_DIR     := $(BUILD)/fuzz
SANITIZE_DIR := $(BUILD)/sanitize
JOBS         ?= 2
FUZZ_SECONDS ?= 600
FUZZ_RUNS    ?= 10000000
FUZZ_SMOKE_SECONDS ?= 20
NODE_TESTS   := $(shell find tests/node -name '*.test.mjs' 2>/dev/null | sort)
E2E_TESTS    := $(shell find tests/e2e -name '*.test.mjs' 2>/dev/null | sort)

.PHONY: setup build native wasm cockpit fuzz-build test lint test-native test-node test-e2e test-package \
        test-deploy test-sanitize fuzz fuzz-smoke fuzz-diff fixtures bench demo edge-dev edge-deploy edge-secret \
        format clean distclean

setup:
	@bash tools/setup.sh

build: native wasm cockpit

native:
	@echo "[build] native (cmake, $(NATIVE_DIR))"
	@cmake -S . -B $(NATIVE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(NATIVE_DIR) -j $(JOBS)

wasm:
	@echo "[build] wasm (emcmake, $(WASM_DIR))"
	@emcmake cmake -S . -B $(WASM_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(WASM_DIR) -j $(JOBS)

# The local stack: the local SFU, the Deno relay (WebTransport + WebSocket + the cockpit, brokering
# WebRTC video through the SFU) and the demo robot with its JPEG and WebRTC cameras. Prints the URL
# to open; Ctrl-C stops them all (web/host/demo.js stops its children by PID).
# DEMO_ARGS=--no-webrtc leaves the SFU and the WebRTC camera out.
DEMO_PORT ?= 7780
demo: setup build
	@node_modules/.bin/deno run --no-lock --unstable-net --allow-net=127.0.0.1 --allow-read \
	  --allow-write=/tmp --allow-run --allow-env web/host/demo.js --port $(DEMO_PORT) $(DEMO_ARGS)

# The browser cockpit, bundled with esbuild into build/cockpit/ (needs the WASM module).
cockpit: wasm
	@node web/cockpit/build.mjs

fuzz-build:
	@echo "[build] fuzz harnesses (clang, ASan + UBSan, $(FUZZ_DIR))"
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTETHER_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_DIR) -j $(JOBS) --target fuzzers

# Every suite: native, WASM/Node, end-to-end in each runtime, the package from its tarball, the
# deploy bundle, and a short fuzz smoke.
test: setup build
	@$(MAKE) --no-print-directory lint test-native test-sanitize test-node test-e2e test-package test-deploy fuzz-smoke

test-native:
	@echo "[test] native (ctest)"
	@ctest --test-dir $(NATIVE_DIR) --output-on-failure

test-node:
	@echo "[test] node --test (WASM build)"
	@node --test --test-reporter=spec $(NODE_TESTS)

test-e2e:
	@echo "[test] e2e: Chromium, Deno, workerd"
	@node --test --test-concurrency=1 --test-reporter=spec $(E2E_TESTS)

# npm pack (prepack builds the WASM module), installed offline into a fresh project, every subpath
# used from there in Node, Deno, Chromium, workerd and tsc --strict (tests/package/pack.test.mjs).
test-package:
	@echo "[test] package: npm pack, installed offline, used in Node, Deno, Chromium, workerd, tsc"
	@node --test --test-reporter=spec tests/package/pack.test.mjs

# The pinned wrangler's `deploy --dry-run` of every edge Worker (web/edge/workers.mjs), offline: each
# bundle's contents, the bundles running together in workerd, each Worker's upload size and cold
# start, and the rooms Worker's upload budget (needs `make wasm cockpit`).
test-deploy:
	@echo "[test] deploy: wrangler deploy --dry-run of each edge Worker (web/edge/workers.mjs)"
	@node --test --test-reporter=spec tests/package/wrangler.test.mjs

# The native Catch2 suite built with clang under ASan + UBSan (its own build dir); any report,
# leak or undefined behaviour fails the run.
test-sanitize:
	@echo "[test] native under ASan + UBSan ($(SANITIZE_DIR))"
	@CC=clang CXX=clang++ cmake -S . -B $(SANITIZE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DTETHER_SANITIZE=ON >/dev/null
	@cmake --build $(SANITIZE_DIR) -j $(JOBS) --target tether_tests
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  $(SANITIZE_DIR)/tether_tests --reporter compact --order decl

# Replays every seed and saved corpus input through its harness, then fuzzes each briefly.
fuzz-smoke: fuzz-build
	@bash tests/fuzz/run.sh smoke $(FUZZ_DIR) $(FUZZ_SMOKE_SECONDS)

# Each harness to FUZZ_RUNS executions or FUZZ_SECONDS, one after another (FUZZ_ONLY="a b" picks
# harnesses); what it finds is minimised into tests/fuzz/corpus/<name>/ (tests/fuzz/README.md).
fuzz: setup fuzz-build
	@bash tests/fuzz/run.sh depth $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_RUNS)

# The WASM build against the native one (tests/fuzz/diff.mjs): every saved corpus input, every
# seed and whatever `make fuzz` left in $(FUZZ_DIR)/corpus, through both builds' bus and room
# envelope parsers, compared byte for byte.
fuzz-diff: native wasm
	@rm -rf $(BUILD)/fuzz-diff && node tests/fuzz/seeds.mjs $(BUILD)/fuzz-diff/seeds >/dev/null
	@node tests/fuzz/diff.mjs $(NATIVE_DIR)/tether_fuzz_diff tests/fuzz/corpus $(BUILD)/fuzz-diff/seeds \
	  $(wildcard $(FUZZ_DIR)/corpus)

# Regenerates the golden vectors from the C++ codec (the only encoder).
fixtures: native
	@$(NATIVE_DIR)/tether_fixtures fixtures

# Every benchmark prints ratios against its reference from the same run: the wire codec first
# (bench/run.mjs), then each bench/*.bench.mjs.
# Each bench records the figures that meet or miss issue 20's targets; bench/targets.mjs prints
# them in one table at the end (bench/lib/targets.mjs).
BENCH_TARGETS := $(abspath $(BUILD))/bench-targets.jsonl
bench: setup build
	@: > $(BENCH_TARGETS)
	@node bench/run.mjs
	@for b in bench/*.bench.mjs; do echo "[bench] $$b"; TETHER_BENCH_TARGETS=$(BENCH_TARGETS) node "$$b" || exit 1; done
	@TETHER_BENCH_TARGETS=$(BENCH_TARGETS) node bench/targets.mjs

# The checks make test runs first: clang-format, prettier, eslint, tsc --checkJs (tools/lint.sh).
lint: setup
	@bash tools/lint.sh

format:
	@clang-format -i $$(find src bindings tests bench -name '*.cpp' -o -name '*.hpp')
	@node_modules/.bin/prettier --log-level warn --write 'web/**/*.{js,mjs,ts}' 'tests/**/*.mjs' 'bench/**/*.mjs' 'tools/**/*.mjs' '*.js'

# The edge relay (web/edge/) under the pinned `wrangler dev`: its real Workers in real workerd from
# the wrangler configs that deploy them, Durable Object storage persisted to build/edge-dev/, and a page
# that mints dev tickets so a browser can join rooms. Prints the URL; Ctrl-C stops it.
EDGE_PORT ?= 8787
edge-dev: setup wasm cockpit
	@node web/edge/dev.mjs --port $(EDGE_PORT) --page-port $$(( $(EDGE_PORT) + 1 )) --persist build/edge-dev

# Deploys every edge Worker to your Cloudflare account, in the order their bindings need
# (web/edge/deploy.mjs; README § Deploy at the edge).
edge-deploy: setup wasm cockpit
	@node web/edge/deploy.mjs

# Puts a secret on an edge Worker with the pinned wrangler, in your environment (web/edge/secret.mjs):
# NAME=TICKET_SECRET, COCKPIT_AUTH or COCKPIT_RTC goes to the Worker that reads it; CONFIG=FILE
# names another. wrangler asks for the value, or reads it from stdin (`... | make edge-secret NAME=...`).
edge-secret:
	@node web/edge/secret.mjs $(NAME) $(if $(CONFIG),--config $(CONFIG))

# Everything under build/ but build/deps/ (the sources and WASM libraries set-up fetches and builds:
# slow to make again): the builds, the cockpit bundle, edge-dev's state, test and bench output.
# distclean removes build/deps/ too.
clean:
	rm -rf $(filter-out $(BUILD)/deps,$(wildcard $(BUILD)/*))

distclean:
	rm -rf $(BUILD)
