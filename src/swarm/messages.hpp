// The swarm messages (agent-bus-and-swarm.md § Swarm transfer; payload shapes from
// agent-bus-notes.md § Swarm messages, so our peers and ninja-p2p's read each other) and the
// binary-lane chunk frame. Parsing is strict (§ Untrusted wire input): shape, bounds and
// consistency are checked before anything is allocated for the message's contents, and a refusal
// is a value naming the field and the fix. Nothing here throws.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/bytes.hpp"
#include "common/json.hpp"
#include "common/result.hpp"
#include "common/sha256.hpp"
#include "swarm/limits.hpp"

namespace tether::swarm {

using FileId = Sha256Digest;  // 64 lowercase hex characters on the wire
using ChunkHash = Sha256Digest;

enum class MessageError {
  not_json,            // not UTF-8 JSON, or nested too deeply
  not_object,          // the message or its payload is not a JSON object
  unknown_type,        // `type` is not a swarm type: somebody else's message, not an error
  missing_field,       // a required field is absent
  bad_field,           // a field has the wrong JSON type or format
  out_of_range,        // a number outside its bound
  inconsistent_shape,  // size, chunkSize and totalChunks disagree
  too_many_chunks,     // totalChunks over kMaxChunks
  bad_hash,            // a hash that is not 64 lowercase hex characters
  too_many_hashes,     // an inline list or page over its bound
  bad_frame,           // a binary frame whose header is ours but malformed
};
std::string_view message_error_name(MessageError e);

struct Refusal {
  MessageError code;
  std::string field;   // offending field, e.g. "payload.chunkSize"
  std::string detail;  // what was wrong and what to send instead
};

// The file's shape, shared by offers and downloads.
struct FileShape {
  std::uint64_t size = 0;
  std::uint32_t chunk_size = kDefaultChunkSize;
  std::uint32_t total_chunks = 0;

  // Length of chunk `index` (the last one may be short).
  std::uint32_t chunk_length(std::uint32_t index) const;
};
// Size, chunk size and count agree (count == ceil(size / chunkSize)), count <= kMaxChunks.
std::optional<Refusal> check_shape(const FileShape& shape);

struct Offer {
  FileId file_id{};
  std::string name;
  std::string mime_type;
  FileShape shape;
  // SHA-256 over the raw 32-byte chunk hashes in chunk order (agent-bus-notes.md).
  std::optional<Sha256Digest> chunk_hashes_hash;
  std::vector<ChunkHash> inline_hashes;  // empty unless the list travels inline
  std::uint32_t page_size = 0;           // paged offers: hashes per page (1..kMaxPageHashes)
  std::uint32_t pages = 0;               // paged offers: ceil(totalChunks / pageSize)

  bool paged() const { return pages > 0; }
};

struct ManifestRequest {
  FileId file_id{};
  std::uint32_t page_size = 0;
  std::vector<std::uint32_t> pages;  // at most kMaxPagesPerRequest
};

struct ManifestPage {
  FileId file_id{};
  std::uint32_t page = 0;
  std::uint32_t total_pages = 0;
  std::uint32_t page_size = 0;
  Sha256Digest chunk_hashes_hash{};
  std::vector<ChunkHash> hashes;  // at most kMaxPageHashes
};

// A peer's whole bitfield: Bitfield's wire order (bitfield.hpp: chunk i at bit i & 7 of byte
// i >> 3), exactly Bitfield::wire_bytes(total_chunks) bytes, the bits past totalChunks zero. The
// public implementation refuses any other length, so a bitfield always travels whole (a peer whose
// message limit cannot carry it learns our chunks from swarm_have instead; see Swarm).
struct Announce {
  FileId file_id{};
  std::uint32_t total_chunks = 0;
  Bytes bits;
};

struct Have {
  FileId file_id{};
  std::vector<std::uint32_t> indexes;  // at most kMaxHaveIndexes per message
};

struct Request {
  FileId file_id{};
  std::uint32_t index = 0;
  bool bin = false;  // the sender can receive raw bytes on the binary lane
};

struct ChunkMessage {  // the base64 path, for peers without the binary lane
  FileId file_id{};
  std::uint32_t index = 0;
  Bytes data;
};

using Message =
    std::variant<Offer, ManifestRequest, ManifestPage, Announce, Have, Request, ChunkMessage>;
std::string_view message_type(const Message& m);  // "swarm_offer", ...

// Parses one message from its envelope `type` and `payload`. A type that is not swarm_* comes
// back as unknown_type, which a caller treats as "not mine", never as a fault.
Result<Message, Refusal> parse_message(std::string_view type, const Json& payload);
// The same from JSON text holding at least {"type": ..., "payload": {...}} (an agent-bus
// envelope is such an object; its other fields are the bus's to check).
Result<Message, Refusal> parse_message_text(ByteView json_text);

// The payload object as compact JSON (keys in ninja-p2p's order).
std::string encode_payload(const Message& m);
// {"type":...,"payload":...}: what parse_message_text reads back.
std::string encode_message_text(const Message& m);

// --- size checks against the negotiated SCTP limit ----------------------------------------------
// Largest payload (bytes of JSON) a control message may carry to a peer with this limit.
std::size_t max_payload_bytes(std::size_t sctp_limit);
// Whether a chunk of `chunk_length` bytes can travel to a peer with this limit, per lane.
bool chunk_fits_binary(std::uint32_t chunk_length, std::size_t sctp_limit);
bool chunk_fits_base64(std::uint32_t chunk_length, std::size_t sctp_limit);
// Exact size of the base64 swarm_chunk payload for a chunk of this length and index.
std::size_t base64_chunk_payload_bytes(std::uint32_t chunk_length, std::uint32_t index);
// Largest chunk the lane can carry under the limit.
std::uint32_t max_chunk_size_binary(std::size_t sctp_limit);
std::uint32_t max_chunk_size_base64(std::size_t sctp_limit);
// Exact size of the swarm_announce payload for a file of this many chunks.
std::size_t announce_payload_bytes(std::uint32_t total_chunks);
// Whether a whole bitfield of this many chunks fits one control message under the limit.
bool announce_fits(std::uint32_t total_chunks, std::size_t sctp_limit);

// --- the binary lane (agent-bus-notes.md § Binary lane chunk frame) ------------------------------
Bytes encode_chunk_frame(const FileId& file_id, std::uint32_t index, ByteView chunk);
void encode_chunk_frame_into(Bytes& out, const FileId& file_id, std::uint32_t index,
                             ByteView chunk);
struct ChunkFrame {
  FileId file_id{};
  std::uint32_t index = 0;
  ByteView data;  // a view into the frame bytes
};
// std::nullopt: not our frame (another protocol's traffic on the lane), to be ignored.
std::optional<ChunkFrame> parse_chunk_frame(ByteView frame);
// The same from the frame's first kChunkFrameHeaderBytes and its whole length, for a host that
// keeps the chunk bytes where they arrived: `data` stays empty, the chunk is the frame's bytes
// from kChunkFrameHeaderBytes on.
std::optional<ChunkFrame> parse_chunk_frame_head(ByteView head, std::size_t frame_length);
// The header of chunk `index`'s frame; the chunk's bytes follow it.
using ChunkFrameHead = std::array<std::uint8_t, kChunkFrameHeaderBytes>;
ChunkFrameHead chunk_frame_head(const FileId& file_id, std::uint32_t index);

// Digest of the ordered chunk-hash list.
Sha256Digest chunk_hashes_digest(const std::vector<ChunkHash>& hashes);

}  // namespace tether::swarm
