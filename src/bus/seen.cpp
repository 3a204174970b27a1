#include "bus/seen.hpp"

#include <functional>

#include "bus/equal.hpp"

namespace tether::bus {

std::uint64_t SeenSet::default_hash(std::string_view key) {
  // The standard library's string hash (murmur2 on wasm32, four bytes a step): a collision costs
  // only a byte compare, so its width does not matter.
  return std::hash<std::string_view>()(key);
}

SeenSet::SeenSet(std::size_t capacity, Hash hash) : hash_(hash), capacity_(capacity) {
  std::size_t n = 16;
  while (n < 2 * capacity_) n *= 2;
  table_.assign(n, kEmpty);
  mask_ = n - 1;
  keys_.reserve(capacity_);
  hashes_.reserve(capacity_);
}

void SeenSet::key_into(std::string& out, std::string_view stream, std::string_view id) const {
  out.assign(stream.data(), stream.size());
  out += '\0';
  out.append(id.data(), id.size());
}

std::size_t SeenSet::find(std::string_view key, std::uint64_t h, bool& found) const {
  std::size_t i = std::size_t(h) & mask_;
  for (;; i = (i + 1) & mask_) {
    const std::uint32_t e = table_[i];
    if (e == kEmpty) break;
    const std::size_t slot = e - 1;
    if (hashes_[slot] == h && equal_bytes(keys_[slot], key)) {
      found = true;
      return i;
    }
  }
  found = false;
  return i;
}

bool SeenSet::contains(std::string_view stream, std::string_view id) const {
  key_into(scratch_, stream, id);
  bool found;
  find(scratch_, hash_(scratch_), found);
  return found;
}

bool SeenSet::insert(std::string_view stream, std::string_view id) {
  if (capacity_ == 0) return true;
  key_into(scratch_, stream, id);
  const std::uint64_t h = hash_(scratch_);
  bool found;
  find(scratch_, h, found);
  if (found) return false;
  std::size_t slot;
  if (count_ < capacity_) {
    slot = keys_.size();
    keys_.emplace_back();
    hashes_.push_back(0);
    ++count_;
  } else {
    slot = head_;  // the oldest
    erase_slot(slot);
    head_ = (head_ + 1) % capacity_;
  }
  keys_[slot].assign(scratch_);  // the slot's buffer is reused once it is big enough
  hashes_[slot] = h;
  // Probe again: erasing may have moved the empty index the first probe found.
  const std::size_t at = find(scratch_, h, found);
  table_[at] = std::uint32_t(slot + 1);
  return true;
}

// Removes the table entry for ring slot `slot`, shifting later entries of its probe run back so
// every remaining key stays reachable from its home index (no tombstones).
void SeenSet::erase_slot(std::size_t slot) {
  std::size_t i = std::size_t(hashes_[slot]) & mask_;
  while (table_[i] != slot + 1) i = (i + 1) & mask_;
  for (std::size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
    const std::uint32_t e = table_[j];
    if (e == kEmpty) break;
    const std::size_t home = std::size_t(hashes_[e - 1]) & mask_;
    // Move e into the hole at i unless its home lies cyclically in (i, j].
    const bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (!stays) {
      table_[i] = e;
      i = j;
    }
  }
  table_[i] = kEmpty;
}

}  // namespace tether::bus
