// Bounded zlib inflation (RFC 1950) into a buffer of exactly the promised size. Output that would
// pass the promised size stops the inflate at once, so a small hostile payload cannot make us
// write (or allocate) more than the meta allowed (cockpit-wire-v7-notes.md: decompression-bomb
// guard). libdeflate inflates a whole stream in one call; zlib checks its Adler-32 and judges
// every stream libdeflate does not accept, so each refusal keeps zlib's error. The WASM build links
// both compiled from Debian's sources (tools/setup.sh).
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
