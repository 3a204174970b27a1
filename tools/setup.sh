#!/usr/bin/env bash
# Installs everything `make test` and `make demo` need on a fresh Debian 12 machine that has Node
# 20.16+ with npm, idempotently, and builds the WASM module. Installing Debian packages takes root
# (sudo when not run as root).
# When nothing is missing it only checks, and takes seconds. The comment above each step says why
# it looks the way it does.
set -euo pipefail
cd "$(dirname "$0")/.."
DEPS=build/deps
step() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
die() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; exit 1; }

# Node 20.16 or newer with npm, before anything else: the glue's loader needs
# process.getBuiltinModule (Node 20.16+, package.json engines) and set-up runs `npm ci`. Debian
# bookworm's own nodejs package is 18 and comes without npm, so set-up does not install Node itself.
node_fix="install Node 20.16 or newer with npm (e.g. NodeSource's nodejs 20.x package: https://github.com/nodesource/distributions), then run make setup again"
if ! command -v node >/dev/null 2>&1; then
  die "node not found: $node_fix"
fi
node_version=$(node -p process.versions.node)
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 16) ? 0 : 1)'; then
  die "node $node_version is too old (tether needs 20.16 or newer): $node_fix"
fi
if ! command -v npm >/dev/null 2>&1; then
  die "npm not found (node $node_version has no npm beside it; Debian's nodejs package ships none): $node_fix"
fi

debian_packages=(emscripten nlohmann-json3-dev catch2 chromium clang libclang-rt-14-dev
                 zlib1g-dev libdeflate-dev libmbedtls-dev cmake ninja-build openssl dpkg-dev iproute2 util-linux nodejs
                 ffmpeg clang-format)
missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

# Root only for what needs it (apt-get update/install, a file under /etc), and only when something
# is missing: through sudo when set-up runs as another user, and without sudo it stops.
as_root() {
  local what=$1
  shift
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "$what needs root: run as root (or install sudo)"
  fi
}

# The sources built for WASM below come from `apt-get source` (emscripten's cache is frozen, so
# -sUSE_ZLIB cannot be used), which needs a deb-src entry for bookworm main. Set-up adds its own
# entry only when one of those sources is still missing from build/deps and none is configured, and
# refreshes the index only when that source index is absent.
need_sources=0
for f in zlib-src/zlib.h libdeflate-src/libdeflate.h mbedtls-src/library/sha256.c; do
  [ -f "$DEPS/$f" ] || need_sources=1
done
bookworm_sources_index() {
  apt-get indextargets --format '$(FILENAME)' 'Identifier: Sources' 'Codename: bookworm' 'Component: main' \
    2>/dev/null | head -1
}
need_update=0
[ ${#missing[@]} -eq 0 ] || need_update=1
if [ "$need_sources" = 1 ]; then
  if [ -z "$(bookworm_sources_index)" ]; then
    src_list=/etc/apt/sources.list.d/tether-deb-src.sources
    mirror=$(grep -hoE '^URIs: *http[^ ]+/debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 | sed 's/^URIs: *//')
    [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
    step "adding a deb-src entry for bookworm main ($mirror, $src_list) to fetch the sources built for WASM"
    printf 'Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$mirror" | as_root "writing $src_list" tee "$src_list" >/dev/null
  fi
  index=$(bookworm_sources_index)
  [ -n "$index" ] && [ -e "$index" ] || need_update=1
fi

if [ "$need_update" = 1 ]; then
  step "apt-get update"
  as_root "apt-get update" apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  step "installing Debian packages: ${missing[*]}"
  as_root "installing Debian packages (${missing[*]})" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

mkdir -p "$DEPS"
if ! ls -d "$DEPS"/zlib-src/zlib.h >/dev/null 2>&1; then
  step "fetching the zlib source (apt-get source zlib)"
  rm -rf "$DEPS/zlib-fetch" && mkdir -p "$DEPS/zlib-fetch"
  (cd "$DEPS/zlib-fetch" && apt-get source -qq --download-only zlib >/dev/null && dpkg-source -x --skip-patches ./*.dsc out >/dev/null)
  rm -rf "$DEPS/zlib-src" && mv "$DEPS/zlib-fetch/out" "$DEPS/zlib-src" && rm -rf "$DEPS/zlib-fetch"
fi

# emcc needs acorn, which Debian installs (node-acorn) under /usr/share/nodejs, outside node's own search path.
export NODE_PATH=/usr/share/nodejs
if [ ! -f "$DEPS/zlib-wasm/libz.a" ]; then
  step "building zlib for WASM"
  rm -rf "$DEPS/zlib-wasm" && mkdir -p "$DEPS/zlib-wasm/include"
  objs=()
  for f in adler32 crc32 inffast inflate inftrees zutil deflate trees compress uncompr; do
    emcc -O3 -c "$DEPS/zlib-src/$f.c" -o "$DEPS/zlib-wasm/$f.o"
    objs+=("$DEPS/zlib-wasm/$f.o")
  done
  emar rcs "$DEPS/zlib-wasm/libz.a" "${objs[@]}"
  cp "$DEPS/zlib-src/zlib.h" "$DEPS/zlib-src/zconf.h" "$DEPS/zlib-wasm/include/"
fi

# libdeflate for the decode core's inflate (src/decode/inflate.cpp; bench/README.md § Decode): the
# Debian package natively, the same release's decompressor built with emcc here for WASM.
if ! ls -d "$DEPS"/libdeflate-src/libdeflate.h >/dev/null 2>&1; then
  step "fetching the libdeflate source (apt-get source libdeflate)"
  rm -rf "$DEPS/libdeflate-fetch" && mkdir -p "$DEPS/libdeflate-fetch"
  (cd "$DEPS/libdeflate-fetch" && apt-get source -qq --download-only libdeflate >/dev/null && dpkg-source -x --skip-patches ./*.dsc out >/dev/null)
  rm -rf "$DEPS/libdeflate-src" && mv "$DEPS/libdeflate-fetch/out" "$DEPS/libdeflate-src" && rm -rf "$DEPS/libdeflate-fetch"
fi
if [ ! -f "$DEPS/libdeflate-wasm/libdeflate.a" ]; then
  step "building the libdeflate decompressor for WASM"
  rm -rf "$DEPS/libdeflate-wasm" && mkdir -p "$DEPS/libdeflate-wasm/include"
  objs=()
  for f in deflate_decompress utils; do
    emcc -O3 -I"$DEPS/libdeflate-src" -c "$DEPS/libdeflate-src/lib/$f.c" -o "$DEPS/libdeflate-wasm/$f.o"
    objs+=("$DEPS/libdeflate-wasm/$f.o")
  done
  emar rcs "$DEPS/libdeflate-wasm/libdeflate.a" "${objs[@]}"
  cp "$DEPS/libdeflate-src/libdeflate.h" "$DEPS/libdeflate-wasm/include/"
fi

# SHA-256 for the WASM build comes from the same Mbed TLS release Debian ships for the native
# build (libmbedtls-dev): its sha256.c is portable C with no platform dependencies.
if ! ls -d "$DEPS"/mbedtls-src/library/sha256.c >/dev/null 2>&1; then
  step "fetching the Mbed TLS source (apt-get source mbedtls)"
  rm -rf "$DEPS/mbedtls-fetch" && mkdir -p "$DEPS/mbedtls-fetch"
  (cd "$DEPS/mbedtls-fetch" && apt-get source -qq --download-only mbedtls >/dev/null 2>&1 && dpkg-source -x --skip-patches ./*.dsc out >/dev/null 2>&1)
  rm -rf "$DEPS/mbedtls-src" && mv "$DEPS/mbedtls-fetch/out" "$DEPS/mbedtls-src" && rm -rf "$DEPS/mbedtls-fetch"
fi
if [ ! -f "$DEPS/mbedtls-wasm/libmbedcrypto.a" ]; then
  step "building Mbed TLS SHA-256 for WASM"
  rm -rf "$DEPS/mbedtls-wasm" && mkdir -p "$DEPS/mbedtls-wasm"
  objs=()
  for f in sha256 platform_util; do
    emcc -O3 -I"$DEPS/mbedtls-src/include" -c "$DEPS/mbedtls-src/library/$f.c" -o "$DEPS/mbedtls-wasm/$f.o"
    objs+=("$DEPS/mbedtls-wasm/$f.o")
  done
  emar rcs "$DEPS/mbedtls-wasm/libmbedcrypto.a" "${objs[@]}"
  cp -r "$DEPS/mbedtls-src/include" "$DEPS/mbedtls-wasm/include"
fi

# npm ci whenever the lockfile's content differs from the one node_modules was installed from
# (timestamps are not enough: git checkouts and merges rewrite them).
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -d node_modules ] || [ "$(cat node_modules/.tether-lock-hash 2>/dev/null)" != "$lock_hash" ]; then
  step "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_hash" > node_modules/.tether-lock-hash
fi
# The WASM module every runtime loads (build/wasm/tether.mjs + .wasm): the agent CLI, the relays
# and `import '@tether-rt/tether/...'` all need it, so set-up builds it (incremental: a no-op
# build takes under a second).
step "building the WASM module (make wasm)"
make --no-print-directory wasm
step "ready"
