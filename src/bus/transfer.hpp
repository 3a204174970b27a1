// The simple one-to-one file transfer: file_offer, file_chunk, file_complete (agent-bus-and-swarm.md
// § Simple one-to-one transfer; payloads in agent-bus-notes.md). These messages are transient.
// The sender buffers the file, so it is capped at 256 MiB. A receiver holds at most 16 incomplete
// transfers and 512 MiB promised; the browser caps in-memory receives at 64 MiB. The receiver
// validates transfer ids, sender ownership, size, chunk count, chunk length and the final SHA-256
// before the app may move the file into place (exclusively: that move is the app's, with its files).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "bus/errors.hpp"
#include "bus/limits.hpp"
#include "common/bytes.hpp"
#include "common/json.hpp"
#include "common/result.hpp"
#include "common/sha256.hpp"

namespace tether::bus {

struct FileOffer {
  std::string transfer_id;
  std::string name;
  std::string mime_type;
  std::string kind;  // "file" | "image"
  std::uint64_t size = 0;
  std::string sha256;  // 64 lowercase hex
  std::uint32_t chunk_size = kFileDefaultChunkSize;
  std::uint32_t total_chunks = 0;
};
Json file_offer_json(const FileOffer& o);
Result<FileOffer, BusError> parse_file_offer(const Json& payload, std::uint64_t max_file_bytes);

// The sender side: validates the file against the cap and computes its SHA-256 once.
struct FileSendPlan {
  FileOffer offer;
};
Result<FileSendPlan, BusError> plan_file_send(ByteView bytes, std::string name,
                                              std::string mime_type, std::string kind,
                                              std::uint32_t chunk_size, std::string transfer_id,
                                              std::uint64_t id_seed = 1);
// (An empty transfer_id is drawn from a SeededRng(id_seed): pass real entropy as the seed.)

// The chunk size to plan for a peer whose transport takes messages of at most
// `max_message_bytes` (0: no known limit): the default, or the largest whole KiB whose file_chunk
// envelope still fits (a data channel whose far end states no limit takes 65,536 bytes), never
// below kFileMinChunkSize, the smallest the public implementation takes.
std::uint32_t file_chunk_size_for(std::uint64_t max_message_bytes);
// The file_chunk payload for chunk `index` of `bytes` (the same bytes the plan was made from).
Json file_chunk_payload(const FileOffer& o, ByteView bytes, std::uint32_t index);
Json file_complete_payload(const FileOffer& o);

// The file_ack payloads (agent-bus-notes.md § Simple one-to-one transfer). A refusal names the
// transfer of `payload` (the offer, chunk or completion refused) when it carries a usable
// transferId, else kUnnamedTransferId; the error text is cut to kMaxErrorTextBytes. A file_offer
// nobody asked for is either received within the receiver's limits or refused with this: never
// dropped without a word.
Json file_ack_refusal(const Json& payload, std::string_view error);
// {transferId, ok: true, name, mimeType, kind, size, sha256, savedPath?} for a verified file.
Json file_ack_received(const FileOffer& offer, std::string_view saved_path);

struct ReceiverLimits {
  std::uint64_t max_file_bytes = kFileMaxBytes;
  std::size_t max_incomplete = kFileReceiverMaxIncomplete;
  std::uint64_t max_promised_bytes = kFileReceiverMaxPromisedBytes;
};

struct ChunkAccepted {
  std::string transfer_id;
  std::uint32_t index = 0;
  std::uint64_t offset = 0;
  Bytes data;
};

class FileReceiver {
 public:
  explicit FileReceiver(ReceiverLimits limits = {});
  // An offer from stream `from`: reserves its size against the promise budget.
  Result<FileOffer, BusError> offer(const std::string& from, const Json& payload);
  // The next chunk, strictly in order (the control lane is ordered). An error from the owner
  // aborts the transfer: the app discards its part file.
  Result<ChunkAccepted, BusError> chunk(const std::string& from, const Json& payload);
  // Checks count, size and SHA-256 against the offer and the bytes received, then forgets the
  // transfer. Only after ok may the file be moved into place.
  Result<FileOffer, BusError> complete(const std::string& from, const Json& payload);
  bool abort(const std::string& transfer_id);
  std::size_t incomplete() const { return transfers_.size(); }
  std::uint64_t promised_bytes() const { return promised_; }

 private:
  struct Incoming {
    std::string from;
    FileOffer offer;
    std::uint32_t next = 0;
    std::uint64_t received = 0;
    Sha256 hash;
  };
  Result<Incoming*, BusError> owned(const std::string& from, const Json& payload);
  ReceiverLimits limits_;
  std::map<std::string, Incoming> transfers_;
  std::uint64_t promised_ = 0;
};

}  // namespace tether::bus
