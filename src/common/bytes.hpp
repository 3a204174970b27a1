// Byte views and little-endian integers shared by every core. Views never own memory: they stay
// valid only as long as the buffer they point into (DESIGN.md § Hot paths: views, not copies).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tether {

using Bytes = std::vector<std::uint8_t>;

struct ByteView {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;

  ByteView() = default;
  ByteView(const std::uint8_t* d, std::size_t n) : data(d), size(n) {}
  ByteView(const Bytes& b) : data(b.data()), size(b.size()) {}  // NOLINT: implicit by design
  explicit ByteView(std::string_view s)
      : data(reinterpret_cast<const std::uint8_t*>(s.data())), size(s.size()) {}

  bool empty() const { return size == 0; }
  ByteView sub(std::size_t offset, std::size_t n) const { return {data + offset, n}; }
  std::string_view as_chars() const { return {reinterpret_cast<const char*>(data), size}; }
  Bytes to_bytes() const { return Bytes(data, data + size); }
};

inline std::uint32_t read_u32_le(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 |
         std::uint32_t(p[3]) << 24;
}

inline void append_u32_le(Bytes& out, std::uint32_t v) {
  const std::uint8_t b[4] = {std::uint8_t(v), std::uint8_t(v >> 8), std::uint8_t(v >> 16),
                             std::uint8_t(v >> 24)};
  out.insert(out.end(), b, b + 4);
}

inline void append(Bytes& out, ByteView v) {
  out.insert(out.end(), v.data, v.data + v.size);
}
inline void append(Bytes& out, std::string_view s) {
  append(out, ByteView(s));
}

}  // namespace tether
