// Bounded zlib inflation (RFC 1950) into a buffer of exactly the promised size. Output that would
// pass the promised size stops the inflate at once, so a small hostile payload cannot make us
// write (or allocate) more than the meta allowed (cockpit-wire-v7-notes.md: decompression-bomb
// guard). Uses the zlib library; the WASM build links zlib compiled from Debian's source.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/bytes.hpp"
#include "decode/errors.hpp"

namespace tether::decode {

// Inflates `compressed` into out[0..expected). Succeeds only if the stream produces exactly
// `expected` bytes and ends there.
std::optional<DecodeError> inflate_exact(ByteView compressed, std::uint8_t* out,
                                         std::size_t expected);

}  // namespace tether::decode
