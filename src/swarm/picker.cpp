// See picker.hpp.
#include "swarm/picker.hpp"

namespace tether::swarm {

Picker::Picker(std::uint32_t chunks, TieBreak ties)
    : ties_(ties), avail_(chunks, 0), pos_(chunks, kAbsent), buckets_(kMaxPeersPerFile + 1) {
  buckets_[0].reserve(chunks);
  for (std::uint32_t c = 0; c < chunks; ++c) bucket_push(0, c);
}

void Picker::bucket_push(std::uint16_t a, std::uint32_t chunk) {
  pos_[chunk] = std::uint32_t(buckets_[a].size());
  buckets_[a].push_back(chunk);
  ++needed_;
}

void Picker::bucket_erase(std::uint32_t chunk) {
  auto& b = buckets_[avail_[chunk]];
  const std::uint32_t p = pos_[chunk];
  const std::uint32_t last = b.back();
  b[p] = last;
  pos_[last] = p;
  b.pop_back();
  pos_[chunk] = kAbsent;
  --needed_;
}

void Picker::remove(std::uint32_t chunk) {
  if (chunk < pos_.size() && pos_[chunk] != kAbsent) bucket_erase(chunk);
}

void Picker::add(std::uint32_t chunk) {
  if (chunk < pos_.size() && pos_[chunk] == kAbsent) bucket_push(avail_[chunk], chunk);
}

void Picker::increment(std::uint32_t chunk) {
  if (chunk >= avail_.size() || avail_[chunk] >= kMaxPeersPerFile) return;
  const bool in = pos_[chunk] != kAbsent;
  if (in) bucket_erase(chunk);
  ++avail_[chunk];
  if (in) bucket_push(avail_[chunk], chunk);
}

void Picker::decrement(std::uint32_t chunk) {
  if (chunk >= avail_.size() || avail_[chunk] == 0) return;
  const bool in = pos_[chunk] != kAbsent;
  if (in) bucket_erase(chunk);
  --avail_[chunk];
  if (in) bucket_push(avail_[chunk], chunk);
}

std::optional<std::uint32_t> Picker::pick(const Bitfield& peer_has, const Bitfield& busy,
                                          SeededRng& rng) {
  if (needed_ == 0 || peer_has.count() == 0) return std::nullopt;
  if (ties_ == TieBreak::index) return pick_by_scan(peer_has, busy, rng, /*by_index=*/true);
  std::uint32_t budget = kProbeBudget;
  for (std::size_t a = 1; a < buckets_.size() && budget > 0; ++a) {
    const auto& b = buckets_[a];
    if (b.empty()) continue;
    const std::uint32_t n = std::uint32_t(b.size());
    const std::uint32_t start = rng.below(n);
    const std::uint32_t probes = n < budget ? n : budget;
    for (std::uint32_t k = 0; k < probes; ++k) {
      const std::uint32_t c = b[(start + k) % n];
      if (peer_has.test(c) && !busy.test(c)) return c;
    }
    budget -= probes;
    // Every entry of this bucket was probed: none fits, the next bucket is the rarest left.
    if (probes < n) break;
  }
  return pick_by_scan(peer_has, busy, rng, /*by_index=*/false);
}

std::optional<std::uint32_t> Picker::pick_by_scan(const Bitfield& peer_has, const Bitfield& busy,
                                                  SeededRng& rng, bool by_index) {
  std::optional<std::uint32_t> best;
  std::uint16_t best_avail = UINT16_MAX;
  std::uint32_t ties = 0;
  std::uint32_t seen = 0;
  const std::size_t words = peer_has.word_count();
  // Random ties: start at a random word and stop after kScanSample candidates, taking the rarest
  // of that sample. Exact rarest-first over a peer whose chunks all sit in common buckets would
  // cost a pass over every word per pick; the sample keeps a pick near O(1) for any peer that
  // holds a fair share, and the bucket probe above already made the common case exact.
  // Index ties (the baseline) scan everything from chunk 0.
  const std::size_t start = by_index || words == 0 ? 0 : rng.below(std::uint32_t(words));
  for (std::size_t k = 0; k < words; ++k) {
    if (!by_index && seen >= kScanSample) break;
    const std::size_t w = (start + k) % words;
    std::uint64_t bits = peer_has.word(w) & ~busy.word(w);
    while (bits) {
      const std::uint32_t c = std::uint32_t(w * 64 + __builtin_ctzll(bits));
      bits &= bits - 1;
      if (pos_[c] == kAbsent) continue;
      ++seen;
      const std::uint16_t a = avail_[c];
      if (a < best_avail) {
        best_avail = a;
        best = c;
        ties = 1;
      } else if (a == best_avail && !by_index) {
        // Reservoir sampling: each tied chunk ends up chosen with equal probability.
        if (rng.below(++ties) == 0) best = c;
      }
    }
  }
  return best;
}

std::size_t Picker::memory_bytes() const {
  std::size_t n =
      avail_.capacity() * sizeof(std::uint16_t) + pos_.capacity() * sizeof(std::uint32_t);
  for (const auto& b : buckets_) n += b.capacity() * sizeof(std::uint32_t);
  return n + buckets_.capacity() * sizeof(std::vector<std::uint32_t>);
}

}  // namespace tether::swarm
