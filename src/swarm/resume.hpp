// Resuming a download and sharing a machine with other downloads (agent-bus-and-swarm.md
// § Resume, § Concurrent downloads of the same file). The decisions live here; reading the part
// file, and creating, reading and deleting the lock, are the glue's I/O.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "swarm/bitfield.hpp"
#include "swarm/messages.hpp"

namespace tether::swarm {

// Verifies a part file chunk by chunk. Feed each chunk's bytes as read from the part file at
// index * chunkSize (a short read at the end of a short file is fine: it simply does not verify).
// Only chunks whose bytes hash to the manifest's entry are credited: a gap reads back as zeros and
// an interrupted write leaves a partial chunk, and neither can be told apart by length.
class ResumeVerifier {
 public:
  ResumeVerifier(const FileShape& shape, const std::vector<ChunkHash>& hashes)
      : shape_(shape), hashes_(hashes), verified_(shape.total_chunks) {}

  // How many bytes to read for chunk `index`.
  std::uint32_t chunk_length(std::uint32_t index) const { return shape_.chunk_length(index); }
  std::uint64_t chunk_offset(std::uint32_t index) const {
    return std::uint64_t(index) * shape_.chunk_size;
  }
  // Returns whether the chunk verified.
  bool feed(std::uint32_t index, ByteView bytes);
  // The same for a host that hashed the bytes it read itself (SubtleCrypto): their length and
  // SHA-256.
  bool feed_digest(std::uint32_t index, std::size_t length, const Sha256Digest& digest);
  const Bitfield& verified() const { return verified_; }
  bool complete() const { return verified_.all(); }

 private:
  FileShape shape_;
  const std::vector<ChunkHash>& hashes_;
  Bitfield verified_;
};

// The part file's name: keyed by content (file id and chunk-hash digest) and destination, so two
// downloads of the same file into different folders never share one.
std::string part_file_name(const FileId& file_id, const Sha256Digest& chunk_hashes_hash,
                           std::string_view destination_path);

// A lock file's contents as the glue read them.
struct LockRecord {
  std::string owner;            // who holds it: the process instance id
  std::int64_t updated_ms = 0;  // when the holder last refreshed it
};
enum class LockVerdict {
  acquire,    // no lock: create it (exclusively) and proceed
  ours,       // we hold it already: refresh it
  take_over,  // stale (no refresh for kStaleLockMs): replace it and proceed
  busy,       // another live download of this file into this folder: refuse
};
struct LockDecision {
  LockVerdict verdict;
  std::string message;  // for `busy`: what is happening and what to do
};
LockDecision decide_lock(const std::optional<LockRecord>& existing, std::string_view our_owner,
                         std::int64_t now_ms);

}  // namespace tether::swarm
