// A fixed-size set of chunk indexes, and its wire form (the swarm_announce `chunks` field,
// agent-bus-notes.md § Swarm messages): ceil(n / 8) bytes, chunk i at bit (i & 7) of byte (i >> 3),
// least significant bit first, so a byte 0x07 holds chunks 0, 1 and 2; the bits past n are zero.
// ninja-p2p writes and reads exactly this; the one place the order is written down is here.
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

  // The wire bytes of the whole set: wire_bytes(size()) bytes, LSB first, trailing bits zero.
  Bytes to_wire() const {
    Bytes out(wire_bytes(bits_), 0);
    for (std::size_t w = 0; w < words_.size(); ++w) {
      std::uint64_t v =
          words_[w];  // bit k of word w is chunk 64w + k: the same order, 8 bytes at once
      for (std::size_t b = 0; b < 8 && w * 8 + b < out.size(); ++b)
        out[w * 8 + b] = std::uint8_t(v >> (8 * b));
    }
    return out;
  }
  // Whether chunk i is set in wire bytes of this order (false past the end of `wire`).
  static bool wire_test(ByteView wire, std::uint32_t i) {
    return (std::size_t(i) >> 3) < wire.size && (wire.data[i >> 3] >> (i & 7)) & 1;
  }
  // Bytes a bitfield of n chunks takes on the wire.
  static std::size_t wire_bytes(std::uint32_t n) { return (std::size_t(n) + 7) / 8; }
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
