// A fixed-size set of chunk indexes, and its wire form: bytes with chunk 0 in the most significant
// bit of byte 0 (the swarm_announce `chunks` field, agent-bus-notes.md § Swarm messages).
#pragma once
#include <cstdint>
#include <vector>

#include "common/bytes.hpp"

namespace tether::swarm {

class Bitfield {
 public:
  Bitfield() = default;
  explicit Bitfield(std::uint32_t bits) : bits_(bits), words_((std::size_t(bits) + 63) / 64) {}

  std::uint32_t size() const { return bits_; }
  std::uint32_t count() const { return count_; }
  bool all() const { return count_ == bits_; }
  bool test(std::uint32_t i) const { return i < bits_ && (words_[i >> 6] >> (i & 63)) & 1; }
  // Both return whether the bit changed.
  bool set(std::uint32_t i) {
    if (i >= bits_ || test(i)) return false;
    words_[i >> 6] |= std::uint64_t(1) << (i & 63);
    ++count_;
    return true;
  }
  bool reset(std::uint32_t i) {
    if (!test(i)) return false;
    words_[i >> 6] &= ~(std::uint64_t(1) << (i & 63));
    --count_;
    return true;
  }
  std::size_t word_count() const { return words_.size(); }
  std::uint64_t word(std::size_t w) const { return words_[w]; }

  // Wire bytes for chunks [first, first + n): ceil(n / 8) bytes, MSB first.
  Bytes to_wire(std::uint32_t first, std::uint32_t n) const {
    Bytes out((std::size_t(n) + 7) / 8, 0);
    for (std::uint32_t i = 0; i < n; ++i)
      if (test(first + i)) out[i >> 3] |= std::uint8_t(0x80 >> (i & 7));
    return out;
  }
  // True when this set holds an index `other` lacks.
  bool has_any_missing_from(const Bitfield& other) const {
    for (std::size_t w = 0; w < words_.size(); ++w) {
      const std::uint64_t theirs = w < other.words_.size() ? other.words_[w] : 0;
      if (words_[w] & ~theirs) return true;
    }
    return false;
  }
  std::size_t memory_bytes() const { return words_.capacity() * sizeof(std::uint64_t); }

 private:
  std::uint32_t bits_ = 0;
  std::uint32_t count_ = 0;
  std::vector<std::uint64_t> words_;
};

}  // namespace tether::swarm
