// A JS number as a C++ integer without undefined behaviour. Casting a double outside int64's range
// is UB in C++ and traps in WASM (an abort of the whole module), so any number a caller chooses
// (an expiry, a count) crosses the boundary through this: out-of-range values saturate and the
// core's own bound then refuses them by name.
#pragma once
#include <cmath>
#include <cstdint>

namespace tether::bindings {

inline std::int64_t saturating_int64(double v) {
  if (std::isnan(v)) return 0;
  // 2^63 is exactly representable; every double below it converts without overflow.
  if (v >= 9223372036854775808.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return static_cast<std::int64_t>(v);
}

}  // namespace tether::bindings
