// The seen set that keeps a history replay from delivering a message twice (bus/seen.hpp): keys
// found by hash and confirmed by their bytes, so a hash collision never makes two distinct
// (stream, id) pairs one.
#include <catch2/catch.hpp>

#include <string>

#include "bus/equal.hpp"
#include "bus/seen.hpp"

using tether::bus::SeenSet;

namespace {
std::uint64_t one_hash(std::string_view) {
  return 7;  // every key collides
}
std::uint64_t two_hashes(std::string_view k) {
  return k.size() % 2;  // two long probe runs that wrap the table
}
}  // namespace

TEST_CASE("bus seen: colliding hashes keep distinct pairs apart") {
  SeenSet s(64, &one_hash);
  CHECK(s.insert("agent-1", "m1"));
  // Same hash, different bytes: new, and both stay remembered.
  CHECK(s.insert("agent-1", "m2"));
  CHECK(s.insert("agent-2", "m1"));
  CHECK(s.contains("agent-1", "m1"));
  CHECK(s.contains("agent-1", "m2"));
  CHECK(s.contains("agent-2", "m1"));
  CHECK_FALSE(s.contains("agent-2", "m2"));
  // The separator keeps ("a", "b\0c")-style splits apart from ("a\0b", "c").
  CHECK_FALSE(s.contains("agent-1m", "1"));
  CHECK_FALSE(s.insert("agent-1", "m2"));  // already there
  CHECK(s.size() == 3);
}

TEST_CASE("bus seen: the oldest pair is forgotten past capacity, in insertion order") {
  for (auto hash : {&SeenSet::default_hash, &one_hash, &two_hashes}) {
    const std::size_t cap = 40;
    SeenSet s(cap, hash);
    for (std::size_t i = 0; i < 3 * cap; ++i) {
      REQUIRE(s.insert("peer", "id-" + std::to_string(i)));
      // A repeat neither counts twice nor moves the pair to the back.
      REQUIRE_FALSE(s.insert("peer", "id-" + std::to_string(i)));
      const std::size_t oldest = i + 1 > cap ? i + 1 - cap : 0;
      REQUIRE(s.size() == i + 1 - oldest);
      for (std::size_t k = 0; k <= i; ++k)
        REQUIRE(s.contains("peer", "id-" + std::to_string(k)) == (k >= oldest));
    }
  }
}

TEST_CASE(
    "bus equal_bytes: agrees with std::string == at every length, offset and differing byte") {
  // The receive path's word-at-a-time compare (bus/equal.hpp): views at every alignment, every
  // length across the 8- and 4-byte steps and the tail, a difference at each position.
  std::string a(80, 'x'), b(80, 'x');
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = b[i] = char('a' + i % 26);
  for (std::size_t off_a = 0; off_a < 8; ++off_a)
    for (std::size_t off_b = 0; off_b < 8; ++off_b)
      for (std::size_t n = 0; n + 8 <= a.size(); ++n) {
        std::string x = a.substr(0, n + 8), y = b.substr(0, n + 8);
        const std::string_view vx(x.data() + off_a, n), vy(y.data() + off_b, n);
        CHECK(tether::bus::equal_bytes(vx, std::string_view(x.data() + off_a, n)));
        CHECK(tether::bus::equal_bytes(vx, vy) == (std::string(vx) == std::string(vy)));
        CHECK_FALSE(tether::bus::equal_bytes(vx, std::string_view(y.data() + off_b, n + 1)));
        for (std::size_t at = 0; at < n && off_a == off_b; ++at) {
          y[off_b + at] ^= 0x20;
          CHECK_FALSE(tether::bus::equal_bytes(vx, vy));
          y[off_b + at] ^= 0x20;
        }
      }
}
