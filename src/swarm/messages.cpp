// See messages.hpp. Shapes from agent-bus-notes.md § Swarm messages.
#include "swarm/messages.hpp"

#include "common/base64.hpp"
#include "common/utf8.hpp"
#include "swarm/bitfield.hpp"

namespace tether::swarm {

std::string_view message_error_name(MessageError e) {
  switch (e) {
    case MessageError::not_json: return "not_json";
    case MessageError::not_object: return "not_object";
    case MessageError::unknown_type: return "unknown_type";
    case MessageError::missing_field: return "missing_field";
    case MessageError::bad_field: return "bad_field";
    case MessageError::out_of_range: return "out_of_range";
    case MessageError::inconsistent_shape: return "inconsistent_shape";
    case MessageError::too_many_chunks: return "too_many_chunks";
    case MessageError::bad_hash: return "bad_hash";
    case MessageError::too_many_hashes: return "too_many_hashes";
    case MessageError::bad_frame: return "bad_frame";
  }
  return "unknown";
}

std::uint32_t FileShape::chunk_length(std::uint32_t index) const {
  if (index >= total_chunks) return 0;
  if (index + 1 < total_chunks) return chunk_size;
  return std::uint32_t(size - std::uint64_t(chunk_size) * index);
}

namespace {

Err<Refusal> refuse(MessageError code, std::string field, std::string detail) {
  return err(Refusal{code, std::move(field), std::move(detail)});
}

std::optional<Refusal> refusal(MessageError code, std::string field, std::string detail) {
  return Refusal{code, std::move(field), std::move(detail)};
}

const Json* member(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// Reads one field into `out`; on failure fills `why` and returns false.
struct Reader {
  const Json& obj;
  std::optional<Refusal> why;

  bool u32(const char* key, std::uint32_t& out, std::uint32_t min, std::uint32_t max,
           bool required = true) {
    const Json* v = member(obj, key);
    if (!v) {
      if (required) fail(MessageError::missing_field, key, "is required");
      return !required;
    }
    auto n = json_integer(*v, min, max);
    if (!n) {
      if (json_integer(*v, INT64_MIN / 2, INT64_MAX / 2))
        fail(MessageError::out_of_range, key,
             "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
      else
        fail(MessageError::bad_field, key, "must be an integer");
      return false;
    }
    out = std::uint32_t(*n);
    return true;
  }

  bool u64(const char* key, std::uint64_t& out) {
    const Json* v = member(obj, key);
    if (!v) return fail(MessageError::missing_field, key, "is required");
    auto n = json_integer(*v, 0, kMaxSafeInteger);
    if (!n) return fail(MessageError::bad_field, key, "must be a non-negative safe integer");
    out = std::uint64_t(*n);
    return true;
  }

  bool digest(const char* key, Sha256Digest& out, bool required = true) {
    const Json* v = member(obj, key);
    if (!v) {
      if (required) fail(MessageError::missing_field, key, "is required");
      return !required;
    }
    auto s = json_string(*v);
    if (!s) return fail(MessageError::bad_field, key, "must be a string");
    auto d = parse_sha256_hex(*s);
    if (!d)
      return fail(MessageError::bad_hash, key, "must be 64 lowercase hex characters (SHA-256)");
    out = *d;
    return true;
  }

  // A string of at most max_chars UTF-16 code units (JavaScript's length), no NUL; `nonblank`
  // also refuses one that is empty or only whitespace, as JavaScript's trim() sees it.
  bool text(const char* key, std::string& out, std::size_t max_chars, bool nonblank) {
    const Json* v = member(obj, key);
    if (!v) return fail(MessageError::missing_field, key, "is required");
    auto s = json_string(*v);
    if (!s) return fail(MessageError::bad_field, key, "must be a string");
    // Cheap bound first: a UTF-16 unit takes at most 3 UTF-8 bytes.
    if (s->size() > 3 * max_chars || utf16_units(*s) > max_chars)
      return fail(MessageError::out_of_range, key,
                  "is longer than " + std::to_string(max_chars) + " characters; shorten it");
    if (s->find('\0') != std::string_view::npos)
      return fail(MessageError::bad_field, key, "must not contain NUL");
    if (nonblank && js_blank(*s))
      return fail(MessageError::bad_field, key, "must not be empty or blank");
    out.assign(s->data(), s->size());
    return true;
  }

  // An array of hashes, its length checked before anything is allocated for it.
  bool hashes(const char* key, std::vector<ChunkHash>& out, std::size_t max_count) {
    const Json* v = member(obj, key);
    if (!v) return fail(MessageError::missing_field, key, "is required");
    if (!v->is_array()) return fail(MessageError::bad_field, key, "must be an array of hashes");
    if (v->size() > max_count)
      return fail(MessageError::too_many_hashes, key,
                  "holds " + std::to_string(v->size()) + " hashes; at most " +
                      std::to_string(max_count) + " travel in one message (request pages)");
    out.reserve(v->size());
    for (std::size_t i = 0; i < v->size(); ++i) {
      auto s = json_string((*v)[i]);
      auto d = s ? parse_sha256_hex(*s) : std::nullopt;
      if (!d)
        return fail(MessageError::bad_hash, std::string(key) + "[" + std::to_string(i) + "]",
                    "must be 64 lowercase hex characters (SHA-256)");
      out.push_back(*d);
    }
    return true;
  }

  // An array of at most max_count entries (checked before anything is allocated for it), of
  // which those that are integers from 0 to max_value are kept. Any other entry is skipped, as the
  // public implementation skips it: one bad entry must not lose the rest.
  bool indexes(const char* key, std::vector<std::uint32_t>& out, std::size_t max_count,
               std::uint32_t max_value) {
    const Json* v = member(obj, key);
    if (!v) return fail(MessageError::missing_field, key, "is required");
    if (!v->is_array()) return fail(MessageError::bad_field, key, "must be an array of integers");
    if (v->size() > max_count)
      return fail(MessageError::out_of_range, key,
                  "holds more than " + std::to_string(max_count) + " entries; split it");
    out.reserve(v->size());
    for (std::size_t i = 0; i < v->size(); ++i)
      if (auto n = json_integer((*v)[i], 0, max_value)) out.push_back(std::uint32_t(*n));
    return true;
  }

  bool fail(MessageError code, std::string field, std::string detail) {
    why = Refusal{code, "payload." + field, std::move(detail)};
    return false;
  }
};

std::string ceil_div_text(std::uint64_t a, std::uint64_t b) {
  return std::to_string(b == 0 ? 0 : (a + b - 1) / b);
}

Result<Message, Refusal> parse_offer(const Json& p) {
  Reader r{p, {}};
  Offer o;
  if (!r.digest("fileId", o.file_id) || !r.text("name", o.name, kMaxFileNameChars, true) ||
      !r.text("mimeType", o.mime_type, kMaxMimeTypeChars, false) || !r.u64("size", o.shape.size) ||
      !r.u32("chunkSize", o.shape.chunk_size, kMinChunkSize, kMaxChunkSize) ||
      !r.u32("totalChunks", o.shape.total_chunks, 0, UINT32_MAX))
    return err(*r.why);
  if (auto bad = check_shape(o.shape)) return err(*bad);
  // Inline hashes win: the public implementation then ignores the page fields and a digest it
  // cannot read (it computes the digest from the list), so we do too.
  const bool has_inline = member(p, "chunkHashes") != nullptr;
  if (member(p, "chunkHashesHash")) {
    Sha256Digest d{};
    if (r.digest("chunkHashesHash", d))
      o.chunk_hashes_hash = d;
    else if (!has_inline)
      return err(*r.why);
  }
  if (has_inline) {
    // An inline list of any length up to the chunk bound (the public implementation's rule), one
    // hash per chunk: its length is checked against totalChunks before anything is allocated.
    const Json* list = member(p, "chunkHashes");
    if (list->is_array() && list->size() != o.shape.total_chunks)
      return refuse(MessageError::inconsistent_shape, "payload.chunkHashes",
                    "holds " + std::to_string(list->size()) + " hashes for " +
                        std::to_string(o.shape.total_chunks) + " chunks; send one per chunk");
    if (!r.hashes("chunkHashes", o.inline_hashes, o.shape.total_chunks)) return err(*r.why);
    const Sha256Digest d = chunk_hashes_digest(o.inline_hashes);
    if (o.chunk_hashes_hash && *o.chunk_hashes_hash != d)
      return refuse(MessageError::bad_hash, "payload.chunkHashesHash",
                    "does not match the inline chunkHashes; it must be SHA-256 over the raw "
                    "32-byte hashes in chunk order");
    o.chunk_hashes_hash = d;
    if (o.inline_hashes.size() > kMaxInlineHashes) {
      // Longer than we keep inline: kept as the paged offer it authenticates, so a remembered
      // offer stays small; the list is fetched in pages when somebody asks for the file.
      o.inline_hashes = {};
      o.page_size = kMaxPageHashes;
      o.pages = (o.shape.total_chunks + kMaxPageHashes - 1) / kMaxPageHashes;
    }
    return Message{std::move(o)};
  }
  if (!o.chunk_hashes_hash)
    return refuse(MessageError::missing_field, "payload.chunkHashesHash",
                  "an offer without inline chunkHashes must carry chunkHashesHash");
  if (!r.u32("manifestPageSize", o.page_size, 1, kMaxPageHashes) ||
      !r.u32("manifestPages", o.pages, 0, kMaxChunks))
    return err(*r.why);
  const std::uint64_t expected =
      (std::uint64_t(o.shape.total_chunks) + o.page_size - 1) / o.page_size;
  if (o.pages != expected)
    return refuse(MessageError::inconsistent_shape, "payload.manifestPages",
                  "is " + std::to_string(o.pages) + " but " + std::to_string(o.shape.total_chunks) +
                      " chunks in pages of " + std::to_string(o.page_size) + " make " +
                      std::to_string(expected));
  if (o.pages == 0) {
    // An empty file has no pages to fetch: its list is empty, and the digest must say so.
    if (*o.chunk_hashes_hash != chunk_hashes_digest({}))
      return refuse(MessageError::bad_hash, "payload.chunkHashesHash",
                    "an empty file's chunkHashesHash is SHA-256 of nothing");
  }
  return Message{std::move(o)};
}

Result<Message, Refusal> parse_manifest_request(const Json& p) {
  Reader r{p, {}};
  ManifestRequest m;
  if (!r.digest("fileId", m.file_id) || !r.u32("pageSize", m.page_size, 1, kMaxPageHashes) ||
      !r.indexes("pages", m.pages, kMaxPagesPerRequest, kMaxChunks))
    return err(*r.why);
  return Message{std::move(m)};
}

Result<Message, Refusal> parse_manifest_page(const Json& p) {
  Reader r{p, {}};
  ManifestPage m;
  if (!r.digest("fileId", m.file_id) || !r.u32("totalPages", m.total_pages, 1, kMaxChunks) ||
      !r.u32("page", m.page, 0, kMaxChunks - 1) ||
      !r.u32("pageSize", m.page_size, 1, kMaxPageHashes) ||
      !r.digest("chunkHashesHash", m.chunk_hashes_hash))
    return err(*r.why);
  if (m.page >= m.total_pages)
    return refuse(MessageError::out_of_range, "payload.page",
                  "is " + std::to_string(m.page) + " of " + std::to_string(m.total_pages) +
                      " pages; pages count from 0");
  if (!r.hashes("hashes", m.hashes, m.page_size)) return err(*r.why);
  if (m.hashes.empty() || (m.page + 1 < m.total_pages && m.hashes.size() != m.page_size))
    return refuse(MessageError::inconsistent_shape, "payload.hashes",
                  "every page but the last holds exactly pageSize hashes, and none is empty");
  return Message{std::move(m)};
}

Result<Message, Refusal> parse_announce(const Json& p) {
  Reader r{p, {}};
  Announce a;
  if (!r.digest("fileId", a.file_id) || !r.u32("totalChunks", a.total_chunks, 0, kMaxChunks))
    return err(*r.why);
  const Json* c = member(p, "chunks");
  if (!c) return refuse(MessageError::missing_field, "payload.chunks", "is required");
  auto s = json_string(*c);
  if (!s) return refuse(MessageError::bad_field, "payload.chunks", "must be a base64 string");
  const std::size_t want = Bitfield::wire_bytes(a.total_chunks);
  const std::string whole = "a bitfield of " + std::to_string(a.total_chunks) + " chunks is " +
                            std::to_string(want) +
                            " bytes; send the whole bitfield in one announce";
  // Checked on the encoded length, before decoding allocates anything.
  if (s->size() > (want + 2) / 3 * 4)
    return refuse(MessageError::out_of_range, "payload.chunks", "is too long: " + whole);
  auto bits = base64_decode(*s);
  if (!bits) return refuse(MessageError::bad_field, "payload.chunks", "is not valid base64");
  if (bits->size() != want)
    return refuse(MessageError::inconsistent_shape, "payload.chunks",
                  "holds " + std::to_string(bits->size()) + " bytes: " + whole);
  // The bits past totalChunks are zero when we write them; set ones are ignored, as the public
  // implementation ignores them, and cleared so that nothing past the file is kept.
  if (a.total_chunks % 8 != 0) bits->back() &= std::uint8_t((1u << (a.total_chunks % 8)) - 1);
  a.bits = std::move(*bits);
  return Message{std::move(a)};
}

Result<Message, Refusal> parse_have(const Json& p) {
  Reader r{p, {}};
  Have h;
  if (!r.digest("fileId", h.file_id)) return err(*r.why);
  // A list that is not an array is passed over for `index`, as the public implementation does.
  const Json* list = member(p, "indexes");
  if (list && list->is_array()) {
    if (!r.indexes("indexes", h.indexes, kMaxHaveIndexes, kMaxChunks - 1)) return err(*r.why);
  } else {
    std::uint32_t i = 0;
    if (!r.u32("index", i, 0, kMaxChunks - 1)) return err(*r.why);
    h.indexes.push_back(i);
  }
  return Message{std::move(h)};
}

Result<Message, Refusal> parse_request(const Json& p) {
  Reader r{p, {}};
  Request q;
  if (!r.digest("fileId", q.file_id) || !r.u32("index", q.index, 0, kMaxChunks - 1))
    return err(*r.why);
  // `bin: 1` asks for the binary lane; any other value is a plain request, never a refusal (the
  // public implementation reads exactly `bin === 1`).
  const Json* bin = member(p, "bin");
  q.bin = bin && json_integer(*bin, 1, 1).has_value();
  return Message{std::move(q)};
}

Result<Message, Refusal> parse_chunk(const Json& p) {
  Reader r{p, {}};
  ChunkMessage c;
  if (!r.digest("fileId", c.file_id) || !r.u32("index", c.index, 0, kMaxChunks - 1))
    return err(*r.why);
  const Json* d = member(p, "data");
  if (!d) return refuse(MessageError::missing_field, "payload.data", "is required");
  auto s = json_string(*d);
  if (!s) return refuse(MessageError::bad_field, "payload.data", "must be a base64 string");
  if (s->size() > (std::size_t(kMaxChunkSize) + 2) / 3 * 4)
    return refuse(MessageError::out_of_range, "payload.data",
                  "encodes more than " + std::to_string(kMaxChunkSize) + " bytes");
  auto bytes = base64_decode(*s);
  if (!bytes) return refuse(MessageError::bad_field, "payload.data", "is not valid base64");
  c.data = std::move(*bytes);
  return Message{std::move(c)};
}

}  // namespace

std::optional<Refusal> check_shape(const FileShape& s) {
  if (s.total_chunks > kMaxChunks)
    return refusal(MessageError::too_many_chunks, "payload.totalChunks",
                   std::to_string(s.total_chunks) + " chunks is over the limit of " +
                       std::to_string(kMaxChunks) + "; offer it with a larger chunkSize");
  if (s.chunk_size < kMinChunkSize || s.chunk_size > kMaxChunkSize)
    return refusal(
        MessageError::out_of_range, "payload.chunkSize",
        "must be from " + std::to_string(kMinChunkSize) + " to " + std::to_string(kMaxChunkSize));
  const std::uint64_t expected = (s.size + s.chunk_size - 1) / s.chunk_size;
  if (expected != s.total_chunks)
    return refusal(MessageError::inconsistent_shape, "payload.totalChunks",
                   "is " + std::to_string(s.total_chunks) + " but size " + std::to_string(s.size) +
                       " in chunks of " + std::to_string(s.chunk_size) + " makes " +
                       ceil_div_text(s.size, s.chunk_size));
  return std::nullopt;
}

Result<Message, Refusal> parse_message(std::string_view type, const Json& payload) {
  if (type.substr(0, 6) != "swarm_")
    return refuse(MessageError::unknown_type, "type", "not a swarm message");
  if (!payload.is_object())
    return refuse(MessageError::not_object, "payload", "must be a JSON object");
  if (type == "swarm_offer") return parse_offer(payload);
  if (type == "swarm_manifest_request") return parse_manifest_request(payload);
  if (type == "swarm_manifest_page") return parse_manifest_page(payload);
  if (type == "swarm_announce") return parse_announce(payload);
  if (type == "swarm_have") return parse_have(payload);
  if (type == "swarm_request") return parse_request(payload);
  if (type == "swarm_chunk") return parse_chunk(payload);
  return refuse(MessageError::unknown_type, "type",
                "unknown swarm type; this peer speaks swarm_offer, swarm_manifest_request, "
                "swarm_manifest_page, swarm_announce, swarm_have, swarm_request, swarm_chunk");
}

Result<Message, Refusal> parse_message_text(ByteView json_text) {
  JsonParse parsed = parse_json(json_text);
  if (!parsed.ok())
    return refuse(MessageError::not_json, "",
                  std::string("not a JSON message: ") + json_error_name(parsed.error));
  if (!parsed.value.is_object())
    return refuse(MessageError::not_object, "", "a message is a JSON object");
  const Json* t = member(parsed.value, "type");
  auto type = t ? json_string(*t) : std::nullopt;
  if (!type) return refuse(MessageError::missing_field, "type", "a message names its type");
  const Json* p = member(parsed.value, "payload");
  if (!p) return refuse(MessageError::missing_field, "payload", "a swarm message has a payload");
  return parse_message(*type, *p);
}

std::string_view message_type(const Message& m) {
  static constexpr std::string_view kNames[] = {
      "swarm_offer", "swarm_manifest_request", "swarm_manifest_page", "swarm_announce",
      "swarm_have",  "swarm_request",          "swarm_chunk"};
  return kNames[m.index()];
}

namespace {

Json hash_array(const std::vector<ChunkHash>& hashes) {
  Json a = Json::array();
  for (const auto& h : hashes) a.push_back(to_hex(h));
  return a;
}

Json payload_json(const Message& m) {
  Json j = Json::object();
  if (auto* o = std::get_if<Offer>(&m)) {
    j["fileId"] = to_hex(o->file_id);
    j["name"] = o->name;
    j["mimeType"] = o->mime_type;
    j["size"] = o->shape.size;
    j["chunkSize"] = o->shape.chunk_size;
    j["totalChunks"] = o->shape.total_chunks;
    if (o->chunk_hashes_hash) j["chunkHashesHash"] = to_hex(*o->chunk_hashes_hash);
    if (o->paged()) {
      j["manifestPageSize"] = o->page_size;
      j["manifestPages"] = o->pages;
    } else {
      j["chunkHashes"] = hash_array(o->inline_hashes);
    }
  } else if (auto* q = std::get_if<ManifestRequest>(&m)) {
    j["fileId"] = to_hex(q->file_id);
    j["pageSize"] = q->page_size;
    j["pages"] = q->pages;
  } else if (auto* g = std::get_if<ManifestPage>(&m)) {
    j["fileId"] = to_hex(g->file_id);
    j["page"] = g->page;
    j["totalPages"] = g->total_pages;
    j["pageSize"] = g->page_size;
    j["chunkHashesHash"] = to_hex(g->chunk_hashes_hash);
    j["hashes"] = hash_array(g->hashes);
  } else if (auto* a = std::get_if<Announce>(&m)) {
    j["fileId"] = to_hex(a->file_id);
    j["totalChunks"] = a->total_chunks;
    j["chunks"] = base64_encode(a->bits);
  } else if (auto* h = std::get_if<Have>(&m)) {
    j["fileId"] = to_hex(h->file_id);
    j["indexes"] = h->indexes;
  } else if (auto* r = std::get_if<Request>(&m)) {
    j["fileId"] = to_hex(r->file_id);
    j["index"] = r->index;
    if (r->bin) j["bin"] = 1;
  } else if (auto* c = std::get_if<ChunkMessage>(&m)) {
    j["fileId"] = to_hex(c->file_id);
    j["index"] = c->index;
    j["data"] = base64_encode(c->data);
  }
  return j;
}

}  // namespace

std::string encode_payload(const Message& m) {
  return to_json(payload_json(m));
}

std::string encode_message_text(const Message& m) {
  std::string out = "{\"type\":\"";
  out += message_type(m);
  out += "\",\"payload\":";
  append_json(out, payload_json(m));
  out += '}';
  return out;
}

std::size_t max_payload_bytes(std::size_t sctp_limit) {
  return sctp_limit > kEnvelopeOverheadMax ? sctp_limit - kEnvelopeOverheadMax : 0;
}

bool chunk_fits_binary(std::uint32_t chunk_length, std::size_t sctp_limit) {
  return kChunkFrameHeaderBytes + std::size_t(chunk_length) <= sctp_limit;
}

std::size_t base64_chunk_payload_bytes(std::uint32_t chunk_length, std::uint32_t index) {
  // {"fileId":"<64>","index":<digits>,"data":"<base64>"}
  const std::size_t digits = std::to_string(index).size();
  return 11 + 64 + 10 + digits + 9 + (std::size_t(chunk_length) + 2) / 3 * 4 + 2;
}

bool chunk_fits_base64(std::uint32_t chunk_length, std::size_t sctp_limit) {
  return base64_chunk_payload_bytes(chunk_length, kMaxChunks - 1) <= max_payload_bytes(sctp_limit);
}

std::uint32_t max_chunk_size_binary(std::size_t sctp_limit) {
  if (sctp_limit <= kChunkFrameHeaderBytes) return 0;
  return std::uint32_t(std::min<std::size_t>(sctp_limit - kChunkFrameHeaderBytes, kMaxChunkSize));
}

std::uint32_t max_chunk_size_base64(std::size_t sctp_limit) {
  const std::size_t fixed = base64_chunk_payload_bytes(0, kMaxChunks - 1);
  const std::size_t budget = max_payload_bytes(sctp_limit);
  if (budget <= fixed) return 0;
  return std::uint32_t(std::min<std::size_t>((budget - fixed) / 4 * 3, kMaxChunkSize));
}

std::size_t announce_payload_bytes(std::uint32_t total_chunks) {
  // {"fileId":"<64>","totalChunks":<digits>,"chunks":"<base64>"}
  const std::size_t digits = std::to_string(total_chunks).size();
  return 11 + 64 + 16 + digits + 11 + (Bitfield::wire_bytes(total_chunks) + 2) / 3 * 4 + 2;
}

bool announce_fits(std::uint32_t total_chunks, std::size_t sctp_limit) {
  return announce_payload_bytes(total_chunks) <= max_payload_bytes(sctp_limit);
}

ChunkFrameHead chunk_frame_head(const FileId& file_id, std::uint32_t index) {
  ChunkFrameHead h{0x4e, 0x4a, 1, 1};
  std::copy(file_id.begin(), file_id.end(), h.begin() + 4);
  h[36] = std::uint8_t(index >> 24);
  h[37] = std::uint8_t(index >> 16);
  h[38] = std::uint8_t(index >> 8);
  h[39] = std::uint8_t(index);
  return h;
}

void encode_chunk_frame_into(Bytes& out, const FileId& file_id, std::uint32_t index,
                             ByteView chunk) {
  out.clear();
  out.reserve(kChunkFrameHeaderBytes + chunk.size);
  const ChunkFrameHead head = chunk_frame_head(file_id, index);
  out.insert(out.end(), head.begin(), head.end());
  append(out, chunk);
}

Bytes encode_chunk_frame(const FileId& file_id, std::uint32_t index, ByteView chunk) {
  Bytes out;
  encode_chunk_frame_into(out, file_id, index, chunk);
  return out;
}

std::optional<ChunkFrame> parse_chunk_frame(ByteView f) {
  auto h = parse_chunk_frame_head(f, f.size);
  if (!h) return std::nullopt;
  h->data = f.sub(kChunkFrameHeaderBytes, f.size - kChunkFrameHeaderBytes);
  return h;
}

std::optional<ChunkFrame> parse_chunk_frame_head(ByteView head, std::size_t frame_length) {
  const std::uint8_t* f = head.data;
  if (head.size < kChunkFrameHeaderBytes || frame_length < kChunkFrameHeaderBytes || f[0] != 0x4e ||
      f[1] != 0x4a || f[2] != 1 || f[3] != 1)
    return std::nullopt;
  ChunkFrame c;
  std::copy(f + 4, f + 36, c.file_id.begin());
  c.index = std::uint32_t(f[36]) << 24 | std::uint32_t(f[37]) << 16 | std::uint32_t(f[38]) << 8 |
            std::uint32_t(f[39]);
  if (c.index >= kMaxChunks || frame_length - kChunkFrameHeaderBytes > kMaxChunkSize)
    return std::nullopt;
  return c;
}

Sha256Digest chunk_hashes_digest(const std::vector<ChunkHash>& hashes) {
  Sha256 h;
  for (const auto& c : hashes) h.update(ByteView(c.data(), c.size()));
  return h.finish();
}

}  // namespace tether::swarm
