// SHA-256 for every core (swarm chunk hashes and manifest digests, agent-bus-and-swarm.md
// § Swarm transfer). The compression function is Mbed TLS's: Debian's libmbedtls-dev natively, and
// the same release's portable sha256.c compiled with emcc for WASM (tools/setup.sh). It is a
// well-kept library that builds for WASM without a port, which is why it was chosen over the
// browser's SubtleCrypto (asynchronous, so unusable inside a synchronous sans-IO core) and over a
// hand-written implementation. On the hot path of a download the host may still hash with its own
// platform (Swarm::on_chunk_digest): in Chromium SubtleCrypto runs on another thread at about ten
// times this code's speed in WASM.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.hpp"

namespace tether {

using Sha256Digest = std::array<std::uint8_t, 32>;

Sha256Digest sha256(ByteView bytes);

// Incremental hashing, for digests over many pieces (the ordered chunk-hash list).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(ByteView bytes);
  Sha256Digest finish();  // the object may be reused after finish(): it starts over

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Lowercase hex, as the swarm wire writes hashes.
std::string to_hex(ByteView bytes);
inline std::string to_hex(const Sha256Digest& d) {
  return to_hex(ByteView(d.data(), d.size()));
}
// Exactly 64 lowercase hex characters; anything else (uppercase included) is refused.
std::optional<Sha256Digest> parse_sha256_hex(std::string_view text);

}  // namespace tether
