// HMAC-SHA256 (hmac.hpp).
#include "common/hmac.hpp"

#include <array>

namespace tether {

Sha256Digest hmac_sha256(ByteView key, ByteView message) {
  constexpr std::size_t kBlock = 64;
  std::array<std::uint8_t, kBlock> k{};
  if (key.size > kBlock) {
    const Sha256Digest d = sha256(key);
    std::copy(d.begin(), d.end(), k.begin());
  } else if (key.size > 0) {
    std::copy(key.data, key.data + key.size, k.begin());
  }
  std::array<std::uint8_t, kBlock> pad{};
  for (std::size_t i = 0; i < kBlock; ++i) pad[i] = k[i] ^ 0x36;
  Sha256 inner;
  inner.update(ByteView(pad.data(), pad.size()));
  inner.update(message);
  const Sha256Digest inner_digest = inner.finish();
  for (std::size_t i = 0; i < kBlock; ++i) pad[i] = k[i] ^ 0x5c;
  Sha256 outer;
  outer.update(ByteView(pad.data(), pad.size()));
  outer.update(ByteView(inner_digest.data(), inner_digest.size()));
  return outer.finish();
}

bool constant_time_equal(ByteView a, ByteView b) {
  if (a.size != b.size) return false;
  volatile std::uint8_t diff = 0;
  for (std::size_t i = 0; i < a.size; ++i)
    diff = diff | static_cast<std::uint8_t>(a.data[i] ^ b.data[i]);
  return diff == 0;
}

}  // namespace tether
