// The seeded random source every core takes instead of a global one (DESIGN.md rule 1: the same
// inputs give the same outputs). std::mt19937_64's output sequence is fixed by the C++ standard,
// unlike std::uniform_int_distribution's, so bounded draws are done here (Lemire's method) to keep
// native and WASM builds drawing identical numbers.
#pragma once
#include <cstdint>
#include <random>

namespace tether {

class SeededRng {
 public:
  explicit SeededRng(std::uint64_t seed) : engine_(seed) {}

  std::uint64_t next_u64() { return engine_(); }

  // Uniform in [0, bound); bound 0 returns 0.
  std::uint32_t below(std::uint32_t bound) {
    if (bound == 0) return 0;
    std::uint64_t m = std::uint64_t(std::uint32_t(engine_())) * bound;
    std::uint32_t low = std::uint32_t(m);
    if (low < bound) {
      const std::uint32_t threshold = std::uint32_t(-bound) % bound;
      while (low < threshold) {
        m = std::uint64_t(std::uint32_t(engine_())) * bound;
        low = std::uint32_t(m);
      }
    }
    return std::uint32_t(m >> 32);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace tether
