// Byte equality for the receive path's short compares (a connection id, a `from` object's text, a
// seen-set key). Under emscripten, memcmp (and so std::string's ==) is musl's byte loop unless both
// pointers are 4-byte aligned, which views into received text rarely are: a 75-byte `from`
// compared that way was ~5 % of a chat's receive (bench/README.md § bus, round 4). Eight bytes a
// step through unaligned loads (fine in WebAssembly and on x86), then the tail.
#pragma once
#include <cstdint>
#include <cstring>
#include <string_view>

namespace tether::bus {

inline bool equal_bytes(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  std::size_t n = a.size();
  for (; n >= 8; n -= 8, p += 8, q += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, p, 8);
    std::memcpy(&y, q, 8);
    if (x != y) return false;
  }
  if (n >= 4) {
    std::uint32_t x, y;
    std::memcpy(&x, p, 4);
    std::memcpy(&y, q, 4);
    if (x != y) return false;
    n -= 4, p += 4, q += 4;
  }
  for (; n != 0; --n, ++p, ++q)
    if (*p != *q) return false;
  return true;
}

}  // namespace tether::bus
