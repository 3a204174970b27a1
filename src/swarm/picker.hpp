// Rarest-first chunk picking with random ties (agent-bus-and-swarm.md § Why ties are broken at
// random). Chunks we still need sit in buckets by availability (how many connected peers hold
// them); a pick for a peer takes the rarest bucket holding something that peer has, starting at a
// random position from the injected RNG so downloaders diverge from their first request. Every
// update is O(1); a pick probes a bounded number of bucket entries, then falls back to sampling
// the peer's bitfield words from a random place (a peer holding none of the rarest chunks).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "common/rng.hpp"
#include "swarm/bitfield.hpp"
#include "swarm/limits.hpp"

namespace tether::swarm {

enum class TieBreak {
  random,  // the rule
  index,   // lowest index first: the measured-bad baseline, kept for the regression test
};

class Picker {
 public:
  Picker(std::uint32_t chunks, TieBreak ties);

  // A chunk we now hold (or no longer need) leaves the picker; `unneed` puts it back.
  void remove(std::uint32_t chunk);
  void add(std::uint32_t chunk);
  bool needed(std::uint32_t chunk) const { return pos_[chunk] != kAbsent; }

  // One more / one fewer peer holds `chunk`.
  void increment(std::uint32_t chunk);
  void decrement(std::uint32_t chunk);
  std::uint16_t availability(std::uint32_t chunk) const { return avail_[chunk]; }

  // The rarest needed chunk `peer_has` holds and `busy` does not, or nothing.
  std::optional<std::uint32_t> pick(const Bitfield& peer_has, const Bitfield& busy, SeededRng& rng);

  std::uint32_t needed_count() const { return needed_; }
  std::size_t memory_bytes() const;

 private:
  static constexpr std::uint32_t kAbsent = UINT32_MAX;
  // Entries probed in the buckets before the bitfield pass.
  static constexpr std::uint32_t kProbeBudget = 256;
  // Candidates the bitfield pass samples before taking the rarest of them.
  static constexpr std::uint32_t kScanSample = 64;

  void bucket_push(std::uint16_t a, std::uint32_t chunk);
  void bucket_erase(std::uint32_t chunk);
  std::optional<std::uint32_t> pick_by_scan(const Bitfield& peer_has, const Bitfield& busy,
                                            SeededRng& rng, bool by_index);

  TieBreak ties_;
  std::uint32_t needed_ = 0;
  std::vector<std::uint16_t> avail_;                 // per chunk
  std::vector<std::uint32_t> pos_;                   // per chunk: index inside its bucket
  std::vector<std::vector<std::uint32_t>> buckets_;  // by availability, 0..kMaxPeersPerFile
};

}  // namespace tether::swarm
