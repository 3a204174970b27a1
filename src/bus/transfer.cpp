// The simple one-to-one transfer's checks (see transfer.hpp).
#include "bus/transfer.hpp"

#include <algorithm>

#include "bus/envelope.hpp"
#include "common/base64.hpp"
#include "common/rng.hpp"
#include "common/utf8.hpp"

namespace tether::bus {

namespace {

std::optional<BusError> member_string(const Json& p, const char* key, std::size_t max,
                                      std::string& out) {
  const std::string field = std::string("payload.") + key;
  auto it = p.find(key);
  if (it == p.end()) return bus_error(BusErrorCode::missing_field, field, field + " is required");
  auto s = json_string(*it);
  if (!s) return bus_error(BusErrorCode::bad_field, field, field + " must be a string");
  if (auto e = check_string(*s, max, field)) return e;
  out.assign(s->data(), s->size());
  return std::nullopt;
}

std::optional<BusError> member_int(const Json& p, const char* key, std::int64_t min,
                                   std::int64_t max, std::int64_t& out) {
  const std::string field = std::string("payload.") + key;
  auto it = p.find(key);
  if (it == p.end()) return bus_error(BusErrorCode::missing_field, field, field + " is required");
  auto v = json_integer(*it, min, max);
  if (!v)
    return bus_error(BusErrorCode::bad_field, field,
                     field + " must be an integer in [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]");
  out = *v;
  return std::nullopt;
}

std::uint32_t chunks_for(std::uint64_t size, std::uint32_t chunk) {
  return std::uint32_t((size + chunk - 1) / chunk);
}

std::uint64_t chunk_length(const FileOffer& o, std::uint32_t index) {
  const std::uint64_t start = std::uint64_t(index) * o.chunk_size;
  return std::min<std::uint64_t>(o.chunk_size, o.size - start);
}

std::string random_id(std::uint64_t seed) {
  SeededRng rng(seed);
  std::uint8_t b[16];
  for (int half = 0; half < 2; ++half) {
    const std::uint64_t v = rng.next_u64();
    for (int i = 0; i < 8; ++i) b[half * 8 + i] = std::uint8_t(v >> (8 * i));
  }
  std::string s = base64_encode(ByteView(b, kIdRandomBytes));
  for (char& c : s) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!s.empty() && s.back() == '=') s.pop_back();
  return s;
}

}  // namespace

Json file_offer_json(const FileOffer& o) {
  return Json{{"transferId", o.transfer_id},
              {"name", o.name},
              {"mimeType", o.mime_type},
              {"kind", o.kind},
              {"size", o.size},
              {"sha256", o.sha256},
              {"chunkSize", o.chunk_size},
              {"totalChunks", o.total_chunks}};
}

Result<FileOffer, BusError> parse_file_offer(const Json& p, std::uint64_t max_file_bytes) {
  if (!p.is_object())
    return err(
        bus_error(BusErrorCode::bad_payload, "payload", "a file_offer payload is an object"));
  FileOffer o;
  if (auto e = member_string(p, "transferId", kMaxTransferIdChars, o.transfer_id)) return err(*e);
  if (auto e = member_string(p, "name", kMaxFileNameChars, o.name)) return err(*e);
  // A bare file name: the receiver picks the folder, and a name must never pick it instead. A
  // backslash is an ordinary character in a POSIX file name, and the public implementation sends
  // such names as they are, so it is taken; whoever writes the file makes the name safe for its
  // disk (web/agent/files.js safeName).
  if (o.name == "." || o.name == ".." || o.name.find('/') != std::string::npos)
    return err(bus_error(BusErrorCode::bad_field, "payload.name",
                         "payload.name must be a bare file name (no /, not . or ..)"));
  if (auto e = member_string(p, "mimeType", kMaxMimeTypeChars, o.mime_type)) return err(*e);
  if (auto e = member_string(p, "kind", 8, o.kind)) return err(*e);
  if (o.kind != "file" && o.kind != "image")
    return err(bus_error(BusErrorCode::bad_field, "payload.kind",
                         "payload.kind is \"file\" or \"image\""));
  std::int64_t size = 0, chunk = 0, total = 0;
  if (auto e = member_int(p, "size", 0, kMaxSafeInteger, size)) return err(*e);
  if (std::uint64_t(size) > max_file_bytes)
    return err(
        bus_error(BusErrorCode::file_too_large, "payload.size",
                  "the file is " + std::to_string(size) + " bytes; this receiver takes at most " +
                      std::to_string(max_file_bytes) + " (use a swarm transfer for large files)"));
  if (auto e = member_string(p, "sha256", 64, o.sha256)) return err(*e);
  if (!parse_sha256_hex(o.sha256))
    return err(bus_error(BusErrorCode::bad_field, "payload.sha256",
                         "payload.sha256 must be 64 lowercase hex characters"));
  if (auto e = member_int(p, "chunkSize", kFileMinChunkSize, kFileMaxChunkSize, chunk))
    return err(*e);
  if (auto e = member_int(p, "totalChunks", 0, kMaxSafeInteger, total)) return err(*e);
  o.size = std::uint64_t(size);
  o.chunk_size = std::uint32_t(chunk);
  if (std::uint64_t(total) != chunks_for(o.size, o.chunk_size))
    return err(bus_error(BusErrorCode::bad_field, "payload.totalChunks",
                         "payload.totalChunks must be ceil(size / chunkSize) = " +
                             std::to_string(chunks_for(o.size, o.chunk_size))));
  o.total_chunks = std::uint32_t(total);
  return o;
}

Result<FileSendPlan, BusError> plan_file_send(ByteView bytes, std::string name,
                                              std::string mime_type, std::string kind,
                                              std::uint32_t chunk_size, std::string transfer_id,
                                              std::uint64_t id_seed) {
  if (bytes.size > kFileMaxBytes)
    return err(bus_error(BusErrorCode::file_too_large, "bytes",
                         "the file is " + std::to_string(bytes.size) +
                             " bytes; the one-to-one transfer buffers it and stops at " +
                             std::to_string(kFileMaxBytes) + " (use a swarm transfer)"));
  if (chunk_size < kFileMinChunkSize || chunk_size > kFileMaxChunkSize)
    return err(bus_error(BusErrorCode::bad_field, "chunkSize",
                         "chunkSize must be " + std::to_string(kFileMinChunkSize) + ".." +
                             std::to_string(kFileMaxChunkSize)));
  if (transfer_id.empty()) transfer_id = random_id(id_seed);
  FileOffer o;
  o.transfer_id = std::move(transfer_id);
  o.name = std::move(name);
  o.mime_type = mime_type.empty() ? "application/octet-stream" : std::move(mime_type);
  o.kind = kind.empty() ? "file" : std::move(kind);
  o.size = bytes.size;
  o.sha256 = to_hex(sha256(bytes));
  o.chunk_size = chunk_size;
  o.total_chunks = chunks_for(o.size, chunk_size);
  // Held to the receiver's rules: a plan we could not accept ourselves is refused here.
  auto check = parse_file_offer(file_offer_json(o), kFileMaxBytes);
  if (!check) {
    BusError e = check.error();
    if (e.field.rfind("payload.", 0) == 0) e.field = e.field.substr(8);
    return err(std::move(e));
  }
  return FileSendPlan{std::move(o)};
}

Json file_chunk_payload(const FileOffer& o, ByteView bytes, std::uint32_t index) {
  if (index >= o.total_chunks || bytes.size != o.size) return nullptr;
  const std::uint64_t start = std::uint64_t(index) * o.chunk_size;
  return Json{{"transferId", o.transfer_id},
              {"index", index},
              {"totalChunks", o.total_chunks},
              {"data", base64_encode(bytes.sub(start, chunk_length(o, index)))}};
}

std::uint32_t file_chunk_size_for(std::uint64_t max_message_bytes) {
  if (max_message_bytes == 0) return kFileDefaultChunkSize;
  if (max_message_bytes <= kFileChunkSendOverhead) return kFileMinChunkSize;
  // base64 turns 3 bytes into 4 characters: the data may take the room the header leaves.
  const std::uint64_t fits = (max_message_bytes - kFileChunkSendOverhead) / 4 * 3 / 1024 * 1024;
  return std::uint32_t(std::clamp<std::uint64_t>(fits, kFileMinChunkSize, kFileDefaultChunkSize));
}

Json file_complete_payload(const FileOffer& o) {
  return Json{{"transferId", o.transfer_id},
              {"totalChunks", o.total_chunks},
              {"size", o.size},
              {"sha256", o.sha256}};
}

Json file_ack_refusal(const Json& payload, std::string_view error) {
  std::string id = kUnnamedTransferId;
  if (payload.is_object())
    if (auto it = payload.find("transferId"); it != payload.end())
      // Cut to the bound rather than renamed, as the public implementation names its refusals,
      // so a sender with an over-long id still finds which transfer was refused.
      if (auto s = json_string(*it); s && !s->empty()) {
        const auto kept = utf16_prefix(*s, kMaxTransferIdChars);
        id.assign(kept.data(), kept.size());
      }
  std::string text(utf8_prefix(error, kMaxErrorTextBytes));
  if (text.empty()) text = "refused";
  return Json{{"transferId", id}, {"ok", false}, {"error", text}};
}

Json file_ack_received(const FileOffer& o, std::string_view saved_path) {
  Json j{{"transferId", o.transfer_id}, {"ok", true},     {"name", o.name},
         {"mimeType", o.mime_type},     {"kind", o.kind}, {"size", o.size},
         {"sha256", o.sha256}};
  if (!saved_path.empty()) j["savedPath"] = std::string(saved_path);
  return j;
}

FileReceiver::FileReceiver(ReceiverLimits limits) : limits_(limits) {}

Result<FileOffer, BusError> FileReceiver::offer(const std::string& from, const Json& payload) {
  auto o = parse_file_offer(payload, limits_.max_file_bytes);
  if (!o) return o;
  if (transfers_.count(o->transfer_id))
    return err(bus_error(BusErrorCode::duplicate_transfer, "payload.transferId",
                         "a transfer with this id is already in progress"));
  if (transfers_.size() >= limits_.max_incomplete)
    return err(bus_error(BusErrorCode::too_many_transfers, "",
                         "already " + std::to_string(transfers_.size()) +
                             " incomplete transfers; finish or abort one first"));
  if (promised_ + o->size > limits_.max_promised_bytes)
    return err(bus_error(BusErrorCode::over_promised, "payload.size",
                         "accepting it would promise " + std::to_string(promised_ + o->size) +
                             " bytes; the limit is " + std::to_string(limits_.max_promised_bytes)));
  Incoming in;
  in.from = from;
  in.offer = o.value();
  promised_ += o->size;
  transfers_.emplace(o->transfer_id, std::move(in));
  return o;
}

Result<FileReceiver::Incoming*, BusError> FileReceiver::owned(const std::string& from,
                                                              const Json& p) {
  if (!p.is_object())
    return err(bus_error(BusErrorCode::bad_payload, "payload",
                         "the payload is an object with a transferId"));
  std::string id;
  if (auto e = member_string(p, "transferId", kMaxTransferIdChars, id)) return err(*e);
  auto it = transfers_.find(id);
  if (it == transfers_.end())
    return err(bus_error(BusErrorCode::unknown_transfer, "payload.transferId",
                         "no transfer with this id was offered (or it was aborted)"));
  if (it->second.from != from)
    return err(bus_error(BusErrorCode::not_owner, "payload.transferId",
                         "this transfer belongs to another peer; refused"));
  return &it->second;
}

Result<ChunkAccepted, BusError> FileReceiver::chunk(const std::string& from, const Json& p) {
  auto in = owned(from, p);
  if (!in) return err(in.error());
  Incoming& t = *in.value();
  const std::string id = t.offer.transfer_id;
  auto fail = [&](BusErrorCode c, std::string field,
                  std::string detail) -> Result<ChunkAccepted, BusError> {
    abort(id);
    return err(bus_error(c, std::move(field), std::move(detail) + "; the transfer was aborted"));
  };
  std::int64_t index = 0, total = 0;
  if (auto e = member_int(p, "index", 0, kMaxSafeInteger, index))
    return fail(e->code, e->field, e->detail);
  if (auto e = member_int(p, "totalChunks", 0, kMaxSafeInteger, total))
    return fail(e->code, e->field, e->detail);
  if (std::uint64_t(total) != t.offer.total_chunks)
    return fail(BusErrorCode::bad_chunk, "payload.totalChunks",
                "totalChunks differs from the offer's");
  if (std::uint64_t(index) != t.next)
    return fail(BusErrorCode::bad_chunk, "payload.index",
                "expected chunk " + std::to_string(t.next) + ", got " + std::to_string(index));
  auto d = p.find("data");
  auto text = d == p.end() ? std::nullopt : json_string(*d);
  if (!text)
    return fail(BusErrorCode::bad_chunk, "payload.data", "payload.data must be base64 text");
  const std::uint64_t want = chunk_length(t.offer, t.next);
  // Bounded before decoding: base64 of `want` bytes is exactly 4*ceil(want/3) characters.
  if (text->size() != 4 * ((want + 2) / 3))
    return fail(BusErrorCode::bad_chunk, "payload.data",
                "chunk " + std::to_string(index) + " must hold " + std::to_string(want) + " bytes");
  auto bytes = base64_decode(*text);
  if (!bytes || bytes->size() != want)
    return fail(
        BusErrorCode::bad_chunk, "payload.data",
        "chunk " + std::to_string(index) + " is not " + std::to_string(want) + " bytes of base64");
  t.hash.update(ByteView(*bytes));
  ChunkAccepted a;
  a.transfer_id = id;
  a.index = t.next;
  a.offset = std::uint64_t(t.next) * t.offer.chunk_size;
  a.data = std::move(*bytes);
  t.received += want;
  ++t.next;
  return a;
}

Result<FileOffer, BusError> FileReceiver::complete(const std::string& from, const Json& p) {
  auto in = owned(from, p);
  if (!in) return err(in.error());
  Incoming& t = *in.value();
  const std::string id = t.offer.transfer_id;
  auto fail = [&](BusErrorCode c, std::string field,
                  std::string detail) -> Result<FileOffer, BusError> {
    abort(id);
    return err(bus_error(c, std::move(field),
                         std::move(detail) + "; the transfer was aborted (discard the part file)"));
  };
  std::int64_t total = 0, size = 0;
  std::string sha;
  if (auto e = member_int(p, "totalChunks", 0, kMaxSafeInteger, total))
    return fail(e->code, e->field, e->detail);
  if (auto e = member_int(p, "size", 0, kMaxSafeInteger, size))
    return fail(e->code, e->field, e->detail);
  if (auto e = member_string(p, "sha256", 64, sha)) return fail(e->code, e->field, e->detail);
  if (std::uint64_t(total) != t.offer.total_chunks || t.next != t.offer.total_chunks)
    return fail(BusErrorCode::bad_chunk, "payload.totalChunks",
                "received " + std::to_string(t.next) + " of " +
                    std::to_string(t.offer.total_chunks) + " chunks");
  if (std::uint64_t(size) != t.offer.size || t.received != t.offer.size)
    return fail(BusErrorCode::size_mismatch, "payload.size",
                "the size differs from the offer or from the bytes received");
  const std::string got = to_hex(t.hash.finish());
  if (sha != t.offer.sha256 || got != t.offer.sha256)
    return fail(BusErrorCode::sha256_mismatch, "payload.sha256",
                "the received bytes hash to " + got + ", not the offered " + t.offer.sha256);
  FileOffer o = t.offer;
  abort(id);
  return o;
}

bool FileReceiver::abort(const std::string& transfer_id) {
  auto it = transfers_.find(transfer_id);
  if (it == transfers_.end()) return false;
  promised_ -= it->second.offer.size;
  transfers_.erase(it);
  return true;
}

}  // namespace tether::bus
