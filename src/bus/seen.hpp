// The (sender stream, message id) pairs the bus delivered, so a history replay never delivers a
// message twice (agent-bus-and-swarm.md § Delivery semantics; kSeenCapacity in bus/limits.hpp).
//
// Every kept live message is recorded, so this is on the receive path of each chat: a node-based
// std::unordered_set<std::string> cost a key string built, a node and a key allocated, and the
// oldest freed per message (bench/README.md § bus). Here the keys live in a ring of slots that keep
// their buffers, indexed by an open-addressing table of slot numbers found by a hash, so a
// steady stream allocates nothing. The hash only narrows the search: a hit is confirmed by
// comparing the key bytes, so two distinct pairs whose hashes collide are both kept and neither is
// taken for the other (tests/native/bus/test_bus_seen.cpp forces every hash equal).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tether::bus {

class SeenSet {
 public:
  using Hash = std::uint64_t (*)(std::string_view);
  static std::uint64_t default_hash(std::string_view key);

  // Remembers at most `capacity` pairs; inserting past it forgets the oldest.
  explicit SeenSet(std::size_t capacity, Hash hash = &default_hash);

  // True when the pair is new (now remembered); false when it was already there, which keeps its
  // place in the eviction order.
  bool insert(std::string_view stream, std::string_view id);
  bool contains(std::string_view stream, std::string_view id) const;
  std::size_t size() const { return count_; }

 private:
  static constexpr std::uint32_t kEmpty = 0;  // table entries are slot number + 1
  // The key as stored: `stream \0 id` (a stream id holds no NUL: the envelope rules refuse it).
  void key_into(std::string& out, std::string_view stream, std::string_view id) const;
  // The table index holding `key`, or the first empty index on its probe path.
  std::size_t find(std::string_view key, std::uint64_t h, bool& found) const;
  void erase_slot(std::size_t slot);

  Hash hash_;
  std::size_t capacity_;
  std::vector<std::string> keys_;      // the ring; keys_[head_] is the oldest once full
  std::vector<std::uint64_t> hashes_;  // hashes_[slot] is keys_[slot]'s hash
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  std::vector<std::uint32_t> table_;  // linear probing, at most half full
  std::size_t mask_ = 0;
  mutable std::string scratch_;
};

}  // namespace tether::bus
