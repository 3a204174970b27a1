// Marshalling helpers the cockpit and wire bindings share (DESIGN.md rule 4: bindings only
// marshal). An Embind call costs far more than a small frame's work (bench/README.md), so bytes
// cross through a buffer in WASM memory that JS fills through HEAPU8, and addresses cross as
// doubles: exact for any wasm32 address, and one Float64Array then reads them beside the numbers
// of a record.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "common/bytes.hpp"

namespace tether::bindings {

inline double address_of(const void* p) {
  return double(reinterpret_cast<std::uintptr_t>(p));
}

// A growable buffer that JS fills before a call. It moves only in reserve(), which hands JS the
// new address.
class Staging {
 public:
  double reserve(std::size_t n) {
    if (n > bytes_.size()) bytes_.resize(n);
    return address_of(bytes_.data());
  }
  ByteView get(std::size_t n) const { return ByteView(bytes_.data(), std::min(n, bytes_.size())); }

 private:
  Bytes bytes_;
};

}  // namespace tether::bindings
