// See sha256.hpp: a thin wrapper over Mbed TLS's SHA-256.
#include "common/sha256.hpp"

#include <mbedtls/sha256.h>

namespace tether {

struct Sha256::State {
  mbedtls_sha256_context ctx;
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
  mbedtls_sha256_init(&state_->ctx);
  mbedtls_sha256_starts_ret(&state_->ctx, /*is224=*/0);
}
Sha256::~Sha256() {
  if (state_) mbedtls_sha256_free(&state_->ctx);
}
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&& other) noexcept {
  if (this != &other) {
    if (state_) mbedtls_sha256_free(&state_->ctx);
    state_ = std::move(other.state_);
  }
  return *this;
}

void Sha256::update(ByteView bytes) {
  if (bytes.size) mbedtls_sha256_update_ret(&state_->ctx, bytes.data, bytes.size);
}

Sha256Digest Sha256::finish() {
  Sha256Digest out{};
  mbedtls_sha256_finish_ret(&state_->ctx, out.data());
  mbedtls_sha256_starts_ret(&state_->ctx, 0);
  return out;
}

Sha256Digest sha256(ByteView bytes) {
  Sha256Digest out{};
  // The one-shot call cannot fail for SHA-256 in Mbed TLS 2.28 (no hardware back end configured).
  mbedtls_sha256_ret(bytes.data, bytes.size, out.data(), 0);
  return out;
}

std::string to_hex(ByteView bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(bytes.size * 2, '0');
  for (std::size_t i = 0; i < bytes.size; ++i) {
    out[2 * i] = kDigits[bytes.data[i] >> 4];
    out[2 * i + 1] = kDigits[bytes.data[i] & 15];
  }
  return out;
}

namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}
}  // namespace

std::optional<Sha256Digest> parse_sha256_hex(std::string_view text) {
  if (text.size() != 64) return std::nullopt;
  Sha256Digest out{};
  for (std::size_t i = 0; i < 32; ++i) {
    const int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = std::uint8_t(hi << 4 | lo);
  }
  return out;
}

}  // namespace tether
