// See resume.hpp.
#include "swarm/resume.hpp"

namespace tether::swarm {

bool ResumeVerifier::feed(std::uint32_t index, ByteView bytes) {
  // Hashed only when the digest can decide anything.
  if (index >= shape_.total_chunks || bytes.size != shape_.chunk_length(index)) return false;
  return feed_digest(index, bytes.size, sha256(bytes));
}

bool ResumeVerifier::feed_digest(std::uint32_t index, std::size_t length,
                                 const Sha256Digest& digest) {
  if (index >= shape_.total_chunks || index >= hashes_.size()) return false;
  if (length != shape_.chunk_length(index) || digest != hashes_[index]) return false;
  verified_.set(index);
  return true;
}

std::string part_file_name(const FileId& file_id, const Sha256Digest& chunk_hashes_hash,
                           std::string_view destination_path) {
  Sha256 h;
  h.update(ByteView(file_id.data(), file_id.size()));
  h.update(ByteView(chunk_hashes_hash.data(), chunk_hashes_hash.size()));
  h.update(ByteView(destination_path));
  const Sha256Digest d = h.finish();
  return to_hex(ByteView(d.data(), 16)) + ".part";
}

LockDecision decide_lock(const std::optional<LockRecord>& existing, std::string_view our_owner,
                         std::int64_t now_ms) {
  if (!existing) return {LockVerdict::acquire, {}};
  if (existing->owner == our_owner) return {LockVerdict::ours, {}};
  const std::int64_t age = now_ms - existing->updated_ms;
  if (age >= kStaleLockMs) return {LockVerdict::take_over, {}};
  return {LockVerdict::busy,
          "another download of this file into the same folder is running (lock held by " +
              existing->owner + ", refreshed " + std::to_string(age / 1000) +
              " s ago); wait for it to finish, or download into another folder. A lock left by "
              "a killed process goes stale after 5 minutes."};
}

}  // namespace tether::swarm
