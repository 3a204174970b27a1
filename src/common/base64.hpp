// Standard base64 (RFC 4648 § 4, with padding), used by golden fixtures and by swarm messages
// that carry bytes inside JSON. Decoding is strict: a stray character or bad padding is an error.
// Hand-written: Debian ships no base64 library that builds for WASM without an emscripten port,
// and the cache here is frozen (TOOLCHAIN.md).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.hpp"

namespace tether {

std::string base64_encode(ByteView bytes);
std::optional<Bytes> base64_decode(std::string_view text);

}  // namespace tether
