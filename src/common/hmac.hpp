// HMAC-SHA256 (RFC 2104) over Mbed TLS's SHA-256. Mbed TLS has its own HMAC (mbedtls_md_hmac),
// but it lives in md.c, which pulls every digest in and is not part of the SHA-256-only build the
// WASM module links (tools/setup.sh); the construction is two hashes, so it is written here and
// checked against RFC 4231's vectors (tests/native/test_hmac.cpp).
#pragma once
#include "common/bytes.hpp"
#include "common/sha256.hpp"

namespace tether {

Sha256Digest hmac_sha256(ByteView key, ByteView message);

// Equal contents, in time that depends only on the lengths (for comparing MACs).
bool constant_time_equal(ByteView a, ByteView b);

}  // namespace tether
