#include "common/base64.hpp"

#include <array>

namespace tether {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<std::int8_t, 256> make_reverse() {
  std::array<std::int8_t, 256> r{};
  for (auto& v : r) v = -1;
  for (int i = 0; i < 64; ++i) r[static_cast<unsigned char>(kAlphabet[i])] = std::int8_t(i);
  return r;
}
constexpr auto kReverse = make_reverse();

}  // namespace

std::string base64_encode(ByteView bytes) {
  std::string out;
  out.reserve((bytes.size + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size; i += 3) {
    const std::uint32_t v = bytes.data[i] << 16 | bytes.data[i + 1] << 8 | bytes.data[i + 2];
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  const std::size_t rest = bytes.size - i;
  if (rest > 0) {
    std::uint32_t v = bytes.data[i] << 16;
    if (rest == 2) v |= bytes.data[i + 1] << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<Bytes> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  Bytes out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    std::uint32_t v = 0;
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + k];
      if (c == '=' && last && k >= 2) {
        ++pad;
        v <<= 6;
        continue;
      }
      const int d = kReverse[static_cast<unsigned char>(c)];
      if (d < 0 || pad > 0) return std::nullopt;
      v = v << 6 | std::uint32_t(d);
    }
    out.push_back(std::uint8_t(v >> 16));
    if (pad < 2) out.push_back(std::uint8_t(v >> 8));
    if (pad < 1) out.push_back(std::uint8_t(v));
  }
  return out;
}

}  // namespace tether
