// Embind surface of the swarm core. Marshalling only (DESIGN.md rule 4): JSON text and bytes in,
// plain objects and typed-memory views out; every decision is made by src/swarm. The JS wrapper
// with the public API is web/glue/swarm.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bus/limits.hpp"
#include "common/json.hpp"
#include "staging.hpp"
#include "swarm/bitfield.hpp"
#include "swarm/messages.hpp"
#include "swarm/node.hpp"
#include "swarm/resume.hpp"
#include "swarm/session.hpp"

namespace tether::swarm::bindings {
namespace {

using emscripten::val;

val view(const std::uint8_t* p, std::size_t n) {
  return val(emscripten::typed_memory_view(n, p));
}

val refusal_value(const Refusal& r) {
  val o = val::object();
  o.set("ok", false);
  o.set("code", std::string(message_error_name(r.code)));
  o.set("field", r.field);
  o.set("detail", r.detail);
  return o;
}

std::optional<Json> parse_object(const std::string& text) {
  JsonParse p = parse_json(ByteView(std::string_view(text)));
  if (!p.ok()) return std::nullopt;
  return std::move(p.value);
}

// {type, payload} text -> {ok, type, payload (canonical JSON text)} or a refusal.
val parse_message_text_js(const std::string& text) {
  auto m = parse_message_text(ByteView(std::string_view(text)));
  if (!m) return refusal_value(m.error());
  val o = val::object();
  o.set("ok", true);
  o.set("type", std::string(message_type(m.value())));
  o.set("payload", encode_payload(m.value()));
  return o;
}

Result<Message, Refusal> parse_typed(const std::string& type, const std::string& payload) {
  auto j = parse_object(payload);
  if (!j) return err(Refusal{MessageError::not_json, "payload", "the payload is not JSON text"});
  return parse_message(type, *j);
}

// ["<hex>", ...] in chunk order.
Result<std::vector<ChunkHash>, Refusal> hashes_from(const std::string& hashes_json) {
  auto hj = parse_object(hashes_json);
  if (!hj || !hj->is_array() || hj->size() > kMaxChunks)
    return err(Refusal{MessageError::bad_field, "hashes",
                       "pass the chunk hashes as a JSON array of hex strings"});
  std::vector<ChunkHash> hashes;
  hashes.reserve(hj->size());
  for (const auto& h : *hj) {
    auto s = json_string(h);
    auto d = s ? parse_sha256_hex(*s) : std::nullopt;
    if (!d)
      return err(
          Refusal{MessageError::bad_hash, "hashes", "each hash is 64 lowercase hex characters"});
    hashes.push_back(*d);
  }
  return hashes;
}

SwarmConfig config_from(const std::string& json) {
  SwarmConfig c;
  auto j = parse_object(json);
  if (!j || !j->is_object()) return c;
  if (auto v = j->find("seed"); v != j->end())
    c.seed = std::uint64_t(json_integer(*v, 0, kMaxSafeInteger).value_or(1));
  if (auto v = j->find("windowPerPeer"); v != j->end())
    c.window_per_peer = std::uint32_t(json_integer(*v, 1, 1024).value_or(kDefaultWindowPerPeer));
  if (auto v = j->find("windowTotal"); v != j->end())
    c.window_total = std::uint32_t(json_integer(*v, 1, 4096).value_or(kDefaultWindowTotal));
  if (auto v = j->find("binaryLane"); v != j->end() && v->is_boolean())
    c.binary_lane = v->get<bool>();
  if (auto v = j->find("startupReply"); v != j->end() && v->is_boolean())
    c.startup_reply = v->get<bool>();
  if (auto v = j->find("indexTies"); v != j->end() && v->is_boolean() && v->get<bool>())
    c.ties = TieBreak::index;
  return c;
}

std::string outcome_name(ChunkOutcome o) {
  switch (o) {
    case ChunkOutcome::stored: return "stored";
    case ChunkOutcome::duplicate: return "duplicate";
    case ChunkOutcome::bad_hash: return "bad_hash";
    case ChunkOutcome::unexpected: return "unexpected";
  }
  return "unexpected";
}

constexpr ChunkOutcome kOutcomes[] = {ChunkOutcome::stored, ChunkOutcome::duplicate,
                                      ChunkOutcome::bad_hash, ChunkOutcome::unexpected};
int outcome_number(ChunkOutcome o) {
  for (int i = 0; i < 4; ++i)
    if (kOutcomes[i] == o) return i;
  return 3;
}

// What SwarmNode's per-chunk calls (handleFrame, pollAction) leave for JS, at a fixed address
// (record()), read through a Float64Array: an Embind object set property by property, with every
// key and the 64-character file id converted each time, was 5-6% of a downloader's main thread
// (bench/README.md § Swarm 1 -> 1). Peers and file ids are numbered (`names`): JS learns each
// string once. Texts are (address, length) of UTF-8 bytes in WASM memory, valid until the next
// call.
enum RecordField : int {
  kKind,  // the action's number in kActionNames (0: none)
  kPeer,  // names index
  kFile,  // names index
  kIndex,
  kOffset,
  kLength,
  kBinary,  // 0 or 1
  kToken,
  kTextAddr,  // send: the envelope; failed: the message
  kTextLen,
  kCodeAddr,  // failed: the code
  kCodeLen,
  kNameCount,   // names known so far in this generation
  kGeneration,  // bumped when the names were forgotten (kMaxNames reached)
  kRecordFields
};
constexpr const char* kActionNames[] = {"",           "send",       "serve",    "openPart",
                                        "resumeRead", "verifyFile", "saveFile", "refreshLock",
                                        "rebuild",    "failed"};
// Peers in a room and files offered in it: far fewer in practice. Reaching it forgets them all
// and starts a new generation, which tells JS to forget its copies too.
constexpr std::size_t kMaxNames = 4096;

// Numbers for the strings the record refers to.
class Names {
 public:
  // Before a record is filled: room for the `n` names it may add, so that none of its numbers is
  // forgotten while it is being written.
  void make_room(std::size_t n) {
    if (list_.size() + n <= kMaxNames) return;
    slots_.clear();
    list_.clear();
    ++generation_;
  }
  std::uint32_t of(const std::string& s) {
    if (auto it = slots_.find(s); it != slots_.end()) return it->second;
    slots_.emplace(s, std::uint32_t(list_.size()));
    list_.push_back(s);
    return std::uint32_t(list_.size() - 1);
  }
  const std::string& at(std::size_t i) const {
    static const std::string none;
    return i < list_.size() ? list_[i] : none;
  }
  std::size_t size() const { return list_.size(); }
  std::uint32_t generation() const { return generation_; }

 private:
  std::unordered_map<std::string, std::uint32_t> slots_;
  std::vector<std::string> list_;
  std::uint32_t generation_ = 0;
};

// Chunk frames and hashing, with a reusable staging buffer. Views stay valid until the next call.
class SwarmCodec {
 public:
  val input(std::size_t n) {
    in_.resize(n);
    return view(in_.data(), n);
  }
  // The 40-byte head of the frame for an n-byte chunk (the glue appends the chunk itself, so the
  // payload is copied once, not staged in and copied out; bench/README.md § Swarm 1 -> 1).
  val encode_frame_head(const std::string& file_id_hex, std::uint32_t index, std::size_t n) {
    auto id = parse_sha256_hex(file_id_hex);
    if (!id || index >= kMaxChunks || n > kMaxChunkSize) return val::null();
    head_ = chunk_frame_head(*id, index);
    return view(head_.data(), head_.size());
  }
  // {fileId, index, offset, length} into the staged frame, or null when it is not ours.
  val parse_frame(std::size_t n) {
    auto f = parse_chunk_frame(ByteView(in_.data(), std::min(n, in_.size())));
    if (!f) return val::null();
    val o = val::object();
    o.set("fileId", to_hex(f->file_id));
    o.set("index", f->index);
    o.set("offset", std::uint32_t(kChunkFrameHeaderBytes));
    o.set("length", std::uint32_t(f->data.size));
    return o;
  }
  std::string sha256_hex(std::size_t n) {
    return to_hex(sha256(ByteView(in_.data(), std::min(n, in_.size()))));
  }

 private:
  Bytes in_;
  ChunkFrameHead head_{};
};

class SwarmSession {
 public:
  val input(std::size_t n) {
    in_.resize(n);
    return view(in_.data(), n);
  }

  // hashes_json: ["<hex>", ...] in chunk order.
  val seed(const std::string& offer_payload, const std::string& hashes_json,
           const std::string& config) {
    auto m = parse_typed("swarm_offer", offer_payload);
    if (!m) return refusal_value(m.error());
    auto hashes = hashes_from(hashes_json);
    if (!hashes) return refusal_value(hashes.error());
    auto s =
        Swarm::seed(std::get<Offer>(m.value()), std::move(hashes.value()), config_from(config));
    if (!s) return refusal_value(s.error());
    resume_.reset();
    swarm_.emplace(std::move(s.value()));
    return ok();
  }

  val fetch(const std::string& offer_payload, std::uint32_t offered_by, const std::string& config,
            double now) {
    auto m = parse_typed("swarm_offer", offer_payload);
    if (!m) return refusal_value(m.error());
    auto s = Swarm::fetch(std::get<Offer>(m.value()), offered_by, config_from(config),
                          std::int64_t(now));
    if (!s) return refusal_value(s.error());
    resume_.reset();
    swarm_.emplace(std::move(s.value()));
    return ok();
  }

  // The resume pass (§ Resume): the host reads each chunk of the part file and hashes it; the
  // verifier credits the ones that match the manifest. Opened once the manifest is ready.
  bool resume_feed(std::uint32_t index, double length, const std::string& digest_hex) {
    auto digest = parse_sha256_hex(digest_hex);
    if (!swarm_ || !swarm_->manifest_ready() || !digest || !(length >= 0)) return false;
    if (!resume_) resume_.emplace(swarm_->shape(), swarm_->hashes());
    return resume_->feed_digest(index, std::size_t(length), *digest);
  }
  // The pass is over: the download starts from the chunks that verified. Returns their count.
  std::uint32_t handle_resume_done(double now) {
    if (!swarm_ || !swarm_->manifest_ready()) return 0;
    if (!resume_) resume_.emplace(swarm_->shape(), swarm_->hashes());
    const std::uint32_t n = resume_->verified().count();
    swarm_->handle_resume_done(resume_->verified(), std::int64_t(now));
    resume_.reset();
    return n;
  }
  // The indexes the pass verified, in order (before handle_resume_done).
  val resumed() const {
    val out = val::array();
    if (!resume_) return out;
    int n = 0;
    for (std::uint32_t i = 0; i < swarm_->shape().total_chunks; ++i)
      if (resume_->verified().test(i)) out.set(n++, i);
    return out;
  }

  void handle_peer_open(std::uint32_t peer, bool binary_lane, double max_message_size, double now) {
    if (swarm_)
      swarm_->handle_peer_open(peer, PeerCaps{binary_lane, std::size_t(max_message_size)},
                               std::int64_t(now));
  }
  void handle_peer_closed(std::uint32_t peer, double now) {
    if (swarm_) swarm_->handle_peer_closed(peer, std::int64_t(now));
  }
  val handle_message(std::uint32_t peer, const std::string& type, const std::string& payload,
                     bool directed, double now) {
    auto m = parse_typed(type, payload);
    if (!m) return refusal_value(m.error());
    if (swarm_) swarm_->handle_message(peer, m.value(), directed, std::int64_t(now));
    return ok();
  }
  std::string handle_chunk(std::uint32_t peer, std::uint32_t index, std::size_t n, double now) {
    if (!swarm_) return "unexpected";
    return outcome_name(swarm_->handle_chunk(
        peer, index, ByteView(in_.data(), std::min(n, in_.size())), std::int64_t(now)));
  }
  std::string handle_chunk_digest(std::uint32_t peer, std::uint32_t index, double length,
                                  const std::string& digest_hex, double now) {
    if (!swarm_ || !(length >= 0)) return "unexpected";  // a host bug, never the peer's
    // A chunk the core would not hash needs no digest: its verdict is the same with any.
    std::optional<Sha256Digest> digest = Sha256Digest{};
    if (!digest_hex.empty() || swarm_->wants_chunk(index, std::size_t(length)))
      digest = parse_sha256_hex(digest_hex);
    if (!digest) return "unexpected";
    return outcome_name(
        swarm_->handle_chunk_digest(peer, index, std::size_t(length), *digest, std::int64_t(now)));
  }
  bool wants_chunk(std::uint32_t index, double length) const {
    return swarm_ && length >= 0 && swarm_->wants_chunk(index, std::size_t(length));
  }
  void handle_send_result(double token, bool accepted, double now) {
    if (swarm_) swarm_->handle_send_result(std::uint64_t(token), accepted, std::int64_t(now));
  }
  void handle_transport_down(double now) {
    if (swarm_) swarm_->handle_transport_down(std::int64_t(now));
  }
  void handle_transport_up(double now) {
    if (swarm_) swarm_->handle_transport_up(std::int64_t(now));
  }
  void hold_requests(bool held, double now) {
    if (swarm_) swarm_->hold_requests(held, std::int64_t(now));
  }
  void retry_manifest_from(std::uint32_t source, double now) {
    if (swarm_) swarm_->retry_manifest_from(source, std::int64_t(now));
  }
  // The peer the manifest pages are asked of (-1: none, after a digest mismatch).
  double manifest_source() const {
    if (!swarm_ || !swarm_->manifest_source()) return -1;
    return double(*swarm_->manifest_source());
  }
  void handle_timeout(double now) {
    if (swarm_) swarm_->handle_timeout(std::int64_t(now));
  }
  val poll_timeout() const {
    if (!swarm_) return val::null();
    const Timeout t = swarm_->poll_timeout();
    return t ? val(double(*t)) : val::null();
  }

  // The next action as a plain object, or null.
  val poll_action() {
    if (!swarm_) return val::null();
    auto next = swarm_->poll_action();
    if (!next) return val::null();
    const Action& a = *next;
    val o = val::object();
    if (auto* c = std::get_if<SendControl>(&a)) {
      o.set("kind", std::string("control"));
      o.set("to", c->to ? val(*c->to) : val::null());
      o.set("type", c->type);
      o.set("payload", c->payload);
    } else if (auto* r = std::get_if<SendRequest>(&a)) {
      o.set("kind", std::string("request"));
      o.set("to", r->to);
      o.set("index", r->index);
      o.set("token", double(r->token));
      o.set("type", std::string("swarm_request"));
      o.set("payload", r->payload);
    } else if (auto* s = std::get_if<ServeChunk>(&a)) {
      o.set("kind", std::string("serve"));
      o.set("to", s->to);
      o.set("index", s->index);
      o.set("binary", s->binary);
      o.set("offset", double(swarm_->chunk_offset(s->index)));
      o.set("length", swarm_->shape().chunk_length(s->index));
    } else if (std::get_if<ManifestReady>(&a)) {
      o.set("kind", std::string("manifestReady"));
    } else if (auto* b = std::get_if<RebuildPeer>(&a)) {
      o.set("kind", std::string("rebuild"));
      o.set("peer", b->peer);
    } else if (std::get_if<Completed>(&a)) {
      o.set("kind", std::string("completed"));
    } else if (auto* f = std::get_if<Failed>(&a)) {
      o.set("kind", std::string("failed"));
      o.set("code", f->code);
      o.set("detail", f->detail);
    }
    return o;
  }

  // A base64 swarm_chunk payload for a staged chunk (the answer to a request without `bin`).
  std::string chunk_payload(std::uint32_t index, std::size_t n) {
    if (!swarm_) return {};
    return encode_payload(ChunkMessage{swarm_->file_id(), index,
                                       Bytes(in_.begin(), in_.begin() + std::min(n, in_.size()))});
  }

  val status() const {
    val o = val::object();
    if (!swarm_) return o;
    const auto& st = swarm_->stats();
    o.set("fileId", to_hex(swarm_->file_id()));
    o.set("totalChunks", swarm_->shape().total_chunks);
    o.set("have", swarm_->have().count());
    o.set("complete", swarm_->complete());
    o.set("manifestReady", swarm_->manifest_ready());
    o.set("outstanding", swarm_->outstanding());
    o.set("requestsSent", double(st.requests_sent));
    o.set("timeouts", double(st.timeouts));
    o.set("rebuilds", double(st.rebuilds));
    o.set("chunksStored", double(st.chunks_stored));
    return o;
  }

  // The manifest's hashes (hex, chunk order), for the glue's resume pass.
  val hashes() const {
    val out = val::array();
    if (!swarm_) return out;
    int i = 0;
    for (const auto& h : swarm_->hashes()) out.set(i++, to_hex(h));
    return out;
  }

 private:
  static val ok() {
    val o = val::object();
    o.set("ok", true);
    return o;
  }
  std::optional<Swarm> swarm_;
  std::optional<ResumeVerifier> resume_;
  Bytes in_;
};

// The file-set core (swarm/node.hpp): a peer's every file, its envelopes and its offers. Peers are
// the transport's names, files their hex ids; actions and events come out as plain objects.
class SwarmNodeBinding {
 public:
  // {self: {streamId, role, name, instanceId?}, seed, ...SwarmConfig options}
  explicit SwarmNodeBinding(const std::string& config_json) : node_(node_config(config_json)) {}

  val input(std::size_t n) {
    in_.resize(n);
    return view(in_.data(), n);
  }
  val identity() const {
    const auto& id = node_.identity();
    val o = val::object();
    o.set("streamId", id.stream_id);
    o.set("role", id.role);
    o.set("name", id.name);
    o.set("instanceId", id.instance_id);
    return o;
  }

  void handle_peer_open(const std::string& peer, bool binary_lane, double max_message_size,
                        double now) {
    node_.handle_peer_open(peer, PeerCaps{binary_lane, std::size_t(max_message_size)},
                           std::int64_t(now));
  }
  void handle_peer_closed(const std::string& peer, double now) {
    node_.handle_peer_closed(peer, std::int64_t(now));
  }
  void handle_reconnect(double now) { node_.handle_reconnect(std::int64_t(now)); }
  // null, or {fileId, index, data} for a base64 chunk to hash (data valid until the next call).
  val handle_text(const std::string& peer, const std::string& text, double now) {
    auto c = node_.handle_text(peer, ByteView(std::string_view(text)), std::int64_t(now));
    if (!c) return val::null();
    chunk_ = std::move(c->data);
    val o = val::object();
    o.set("fileId", to_hex(c->file));
    o.set("index", c->index);
    o.set("data", view(chunk_.data(), chunk_.size()));
    return o;
  }
  // The staged frame head (n bytes) of a frame `length` long: its chunk index, with file, offset
  // and length in the record; -1 when the frame is not ours.
  double handle_frame(std::size_t n, double length) {
    if (!(length >= 0)) return -1;
    auto f = node_.handle_frame(ByteView(in_.data(), std::min(n, in_.size())), std::size_t(length));
    if (!f) return -1;
    names_.make_room(1);
    rec_[kFile] = names_.of(to_hex(f->file));
    rec_[kOffset] = double(f->offset);
    rec_[kLength] = double(f->length);
    note_names();
    return f->index;
  }
  // The per-chunk inputs name a peer and a file by their number in the names (slot >= 0) when JS
  // has learnt it, so that no string crosses; by the string itself otherwise (slot -1).
  bool wants_chunk(double file_slot, const std::string& file, std::uint32_t index,
                   double length) const {
    auto id = file_of(file_slot, file);
    return id && length >= 0 && node_.wants_chunk(*id, index, std::size_t(length));
  }
  // Outcomes as their number in swarmNodeRecordLayout().outcomes.
  int handle_chunk(const std::string& peer, const std::string& file, std::uint32_t index,
                   std::size_t n, double now) {
    auto id = parse_sha256_hex(file);
    if (!id) return outcome_number(ChunkOutcome::unexpected);
    return outcome_number(node_.handle_chunk(
        peer, *id, index, ByteView(in_.data(), std::min(n, in_.size())), std::int64_t(now)));
  }
  int handle_chunk_digest(double peer_slot, const std::string& peer, double file_slot,
                          const std::string& file, std::uint32_t index, double length,
                          const std::string& digest, double now) {
    auto id = file_of(file_slot, file);
    if (!id || !(length >= 0)) return outcome_number(ChunkOutcome::unexpected);
    return outcome_number(node_.handle_chunk_digest(peer_of(peer_slot, peer), *id, index,
                                                    std::size_t(length), parse_sha256_hex(digest),
                                                    std::int64_t(now)));
  }
  void handle_chunk_written(double file_slot, const std::string& file, std::uint32_t index,
                            double now) {
    if (auto id = file_of(file_slot, file))
      node_.handle_chunk_written(*id, index, std::int64_t(now));
  }
  void handle_send_result(double token, bool accepted, double now) {
    node_.handle_send_result(std::uint64_t(token), accepted, std::int64_t(now));
  }
  void handle_serve_done(double peer_slot, const std::string& peer, double file_slot,
                         const std::string& file, std::uint32_t index) {
    if (auto id = file_of(file_slot, file))
      node_.handle_serve_done(peer_of(peer_slot, peer), *id, index);
  }
  std::string chunk_envelope(const std::string& peer, const std::string& file, std::uint32_t index,
                             std::size_t n, double now) {
    auto id = parse_sha256_hex(file);
    if (!id) return {};
    return node_.chunk_envelope(peer, *id, index, ByteView(in_.data(), std::min(n, in_.size())),
                                std::int64_t(now));
  }

  val share(const std::string& offer_payload, const std::string& hashes_json, double now) {
    auto m = parse_typed("swarm_offer", offer_payload);
    if (!m) return refusal_value(m.error());
    auto hashes = hashes_from(hashes_json);
    if (!hashes) return refusal_value(hashes.error());
    auto r = node_.share(std::get<Offer>(m.value()), std::move(hashes.value()), std::int64_t(now));
    if (!r) return refusal_value(r.error());
    return ok_value();
  }
  void want_offer(const std::string& file, double wait_ms, double now) {
    if (auto id = parse_sha256_hex(file))
      node_.want_offer(*id, std::int64_t(wait_ms), std::int64_t(now));
  }
  // {fileId: {payload (text), offeredBy: [peers]}} as JSON text.
  std::string offers() const {
    std::string out = "{";
    for (const auto& [id, o] : node_.offers()) {
      if (out.size() > 1) out += ',';
      append_json_string(out, to_hex(id));
      out += ":{\"payload\":" + o.payload + ",\"offeredBy\":[";
      for (std::size_t i = 0; i < o.offerers.size(); ++i) {
        if (i) out += ',';
        append_json_string(out, o.offerers[i]);
      }
      out += "]}";
    }
    return out + "}";
  }
  std::string part_name(const std::string& file, const std::string& destination) const {
    auto id = parse_sha256_hex(file);
    return id ? node_.part_name(*id, destination) : std::string();
  }
  val fetch(const std::string& file, const std::string& from, double now) {
    auto id = parse_sha256_hex(file);
    val o = val::object();
    if (!id) {
      o.set("ok", false);
      o.set("message", std::string("a file id is 64 lowercase hex characters"));
      return o;
    }
    auto r = node_.fetch(*id, from.empty() ? std::nullopt : std::optional<std::string>(from),
                         std::int64_t(now));
    o.set("ok", bool(r));
    if (!r) o.set("message", r.error());
    return o;
  }
  void handle_part_opened(const std::string& file, double size, double now) {
    if (auto id = parse_sha256_hex(file); id && size >= 0)
      node_.handle_part_opened(*id, std::uint64_t(size), std::int64_t(now));
  }
  void handle_resume_chunk(const std::string& file, std::uint32_t index, double length,
                           const std::string& digest, double now) {
    if (auto id = parse_sha256_hex(file); id && length >= 0)
      node_.handle_resume_chunk(*id, index, std::size_t(length), parse_sha256_hex(digest),
                                std::int64_t(now));
  }
  void handle_file_digest(const std::string& file, const std::string& digest, double now) {
    auto id = parse_sha256_hex(file);
    if (!id) return;
    // A digest that is not hex cannot be the file's: the core refuses it as a mismatch.
    Sha256Digest d{};
    if (auto parsed = parse_sha256_hex(digest)) d = *parsed;
    node_.handle_file_digest(*id, d, std::int64_t(now));
  }
  void handle_file_saved(const std::string& file, double now) {
    if (auto id = parse_sha256_hex(file)) node_.handle_file_saved(*id, std::int64_t(now));
  }
  void remove_file(const std::string& file) {
    if (auto id = parse_sha256_hex(file)) node_.remove_file(*id);
  }
  void handle_timeout(double now) { node_.handle_timeout(std::int64_t(now)); }
  // The next deadline (absolute ms), or NaN for none.
  double poll_timeout() const {
    const Timeout t = node_.poll_timeout();
    return t ? double(*t) : std::nan("");
  }

  // The next action's number in kActionNames (0: none), its fields in the record.
  int poll_action() {
    auto next = node_.poll_action();
    if (!next) return 0;
    current_ = std::move(*next);
    names_.make_room(2);
    rec_[kIndex] = rec_[kOffset] = rec_[kLength] = rec_[kBinary] = rec_[kToken] = 0;
    rec_[kTextLen] = rec_[kCodeLen] = 0;
    const int kind = std::visit(
        [&](const auto& a) -> int {
          using T = std::decay_t<decltype(a)>;
          if constexpr (std::is_same_v<T, NodeSend>) {
            rec_[kPeer] = names_.of(a.peer);
            text_span(kTextAddr, a.text);
            rec_[kToken] = double(a.token);
            return 1;
          } else if constexpr (std::is_same_v<T, NodeServe>) {
            rec_[kPeer] = names_.of(a.peer);
            rec_[kFile] = names_.of(to_hex(a.file));
            rec_[kIndex] = a.index;
            rec_[kBinary] = a.binary;
            rec_[kOffset] = double(a.offset);
            rec_[kLength] = a.length;
            return 2;
          } else if constexpr (std::is_same_v<T, NodeRebuild>) {
            rec_[kPeer] = names_.of(a.peer);
            return 8;
          } else {
            rec_[kFile] = names_.of(to_hex(a.file));
            if constexpr (std::is_same_v<T, NodeResumeRead>) {
              rec_[kIndex] = a.index;
              rec_[kOffset] = double(a.offset);
              rec_[kLength] = a.length;
              return 4;
            }
            if constexpr (std::is_same_v<T, NodeFileFailed>) {
              text_span(kTextAddr, a.message);
              text_span(kCodeAddr, a.code);
              return 9;
            }
            if constexpr (std::is_same_v<T, NodeOpenPart>) return 3;
            if constexpr (std::is_same_v<T, NodeVerifyFile>) return 5;
            if constexpr (std::is_same_v<T, NodeSaveFile>) return 6;
            if constexpr (std::is_same_v<T, NodeRefreshLock>) return 7;
          }
          return 0;
        },
        *current_);
    rec_[kKind] = kind;
    note_names();
    return kind;
  }
  // Where the record is, and the names it numbers.
  double record() const { return tether::bindings::address_of(rec_.data()); }
  std::string name(std::size_t i) const { return names_.at(i); }
  val poll_event() {
    auto next = node_.poll_event();
    if (!next) return val::null();
    val o = val::object();
    std::visit(
        [&](const auto& e) {
          using T = std::decay_t<decltype(e)>;
          o.set("fileId", to_hex(e.file));
          if constexpr (std::is_same_v<T, OfferReady>) o.set("kind", std::string("offerReady"));
          if constexpr (std::is_same_v<T, OfferMissing>) {
            o.set("kind", std::string("offerMissing"));
            o.set("message", e.message);
          }
          if constexpr (std::is_same_v<T, DownloadStarted>) {
            o.set("kind", std::string("downloadStarted"));
            o.set("resumed", e.resumed);
          }
          if constexpr (std::is_same_v<T, FileComplete>) o.set("kind", std::string("complete"));
        },
        *next);
    return o;
  }

  // The file's session status plus what the node knows of it, or null.
  val file(const std::string& file) const {
    auto id = parse_sha256_hex(file);
    auto f = id ? node_.file(*id) : std::nullopt;
    if (!f) return val::null();
    const Swarm& s = f->session;
    const auto& st = s.stats();
    val o = val::object();
    o.set("fileId", file);
    o.set("role", std::string(f->role == FileRole::seed ? "seed" : "fetch"));
    o.set("state", std::string(file_state_name(f->state)));
    o.set("name", s.offer().name);
    o.set("size", double(s.shape().size));
    o.set("chunkSize", s.shape().chunk_size);
    o.set("resumed", f->resumed);
    o.set("totalChunks", s.shape().total_chunks);
    o.set("have", s.have().count());
    o.set("complete", s.complete());
    o.set("manifestReady", s.manifest_ready());
    o.set("outstanding", s.outstanding());
    o.set("requestsSent", double(st.requests_sent));
    o.set("timeouts", double(st.timeouts));
    o.set("rebuilds", double(st.rebuilds));
    o.set("chunksStored", double(st.chunks_stored));
    return o;
  }
  val resumed_indexes(const std::string& file) const {
    val out = val::array();
    auto id = parse_sha256_hex(file);
    auto f = id ? node_.file(*id) : std::nullopt;
    if (!f) return out;
    int n = 0;
    for (std::uint32_t i : f->resumed_indexes) out.set(n++, i);
    return out;
  }
  val stats() const {
    const NodeStats& st = node_.stats();
    val o = val::object();
    val refused = val::array();
    int n = 0;
    for (const auto& r : st.refused) {
      val x = val::object();
      x.set("peer", r.peer);
      x.set("code", r.code);
      x.set("detail", r.detail);
      refused.set(n++, x);
    }
    o.set("refused", refused);
    o.set("refusedCount", double(st.refused_count));
    o.set("forgedIdentity", double(st.forged_identity));
    o.set("ignoredFrames", double(st.ignored_frames));
    o.set("badChunks", double(st.bad_chunks));
    o.set("manifestFailures", double(st.manifest_failures));
    o.set("controlReceived", double(st.control_received));
    o.set("sendRejected", double(st.send_rejected));
    o.set("servesDropped", double(st.serves_dropped));
    o.set("servesDeduplicated", double(st.serves_deduplicated));
    o.set("unsolicitedPages", double(st.unsolicited_pages));
    return o;
  }

 private:
  static val ok_value() {
    val o = val::object();
    o.set("ok", true);
    return o;
  }
  static NodeConfig node_config(const std::string& json) {
    NodeConfig c;
    c.swarm = config_from(json);
    c.seed = c.swarm.seed;
    auto j = parse_object(json);
    if (!j || !j->is_object()) return c;
    if (auto self = j->find("self"); self != j->end() && self->is_object()) {
      auto str = [&](const char* k) {
        auto v = self->find(k);
        auto s = v == self->end() ? std::nullopt : json_string(*v);
        return s ? std::string(*s) : std::string();
      };
      c.self = bus::Identity{str("streamId"), str("role"), str("name"), str("instanceId")};
    }
    return c;
  }
  std::optional<FileId> file_of(double slot, const std::string& file) const {
    return parse_sha256_hex(slot >= 0 ? names_.at(std::size_t(slot)) : file);
  }
  const std::string& peer_of(double slot, const std::string& peer) const {
    return slot >= 0 ? names_.at(std::size_t(slot)) : peer;
  }
  void note_names() {
    rec_[kNameCount] = double(names_.size());
    rec_[kGeneration] = names_.generation();
  }
  // A string of the current action, which stays alive until the next poll_action.
  void text_span(int at, const std::string& text) {
    rec_[at] = tether::bindings::address_of(text.data());
    rec_[at + 1] = double(text.size());
  }
  SwarmNode node_;
  Bytes in_, chunk_;
  std::array<double, kRecordFields> rec_{};
  Names names_;
  std::optional<NodeAction> current_;
};

// Where each field sits in SwarmNode's record, the action kinds and the chunk outcomes by the
// numbers the record and the calls carry (JS never hard-codes them).
val node_record_layout() {
  static const char* kFields[] = {"kind",     "peer",    "file",      "index",     "offset",
                                  "length",   "binary",  "token",     "textAddr",  "textLen",
                                  "codeAddr", "codeLen", "nameCount", "generation"};
  static_assert(std::size(kFields) == kRecordFields);
  val o = val::object();
  o.set("size", double(kRecordFields));
  for (int i = 0; i < kRecordFields; ++i) o.set(kFields[i], double(i));
  val actions = val::array();
  for (std::size_t i = 0; i < std::size(kActionNames); ++i)
    actions.set(i, std::string(kActionNames[i]));
  o.set("actions", actions);
  val outcomes = val::array();
  for (int i = 0; i < 4; ++i) outcomes.set(i, outcome_name(kOutcomes[i]));
  o.set("outcomes", outcomes);
  return o;
}

// An offer payload for a file we hold: inline or paged (make_offer).
val make_offer_js(const std::string& file_id_hex, const std::string& name, const std::string& mime,
                  double size, std::uint32_t chunk_size, const std::string& hashes_json) {
  auto id = parse_sha256_hex(file_id_hex);
  if (!id) return refusal_value({MessageError::bad_hash, "fileId", "64 lowercase hex characters"});
  auto hashes = hashes_from(hashes_json);
  if (!hashes) return refusal_value(hashes.error());
  if (!(size >= 0 && size <= double(kMaxSafeInteger)))
    return refusal_value({MessageError::out_of_range, "size", "a non-negative safe integer"});
  FileShape shape{std::uint64_t(size), chunk_size,
                  chunk_size ? std::uint32_t(std::min<std::uint64_t>(
                                   (std::uint64_t(size) + chunk_size - 1) / chunk_size, UINT32_MAX))
                             : 0};
  auto o = make_offer(*id, name, mime, shape, hashes.value());
  if (!o) return refusal_value(o.error());
  val out = val::object();
  out.set("ok", true);
  out.set("payload", encode_payload(o.value()));
  return out;
}

// {ok, totalChunks, held: [indexes]} for a swarm_announce as {type, payload} text: the chunks the
// core reads its bitfield to hold, or its refusal.
val announce_held_js(const std::string& text) {
  auto m = parse_message_text(ByteView(std::string_view(text)));
  if (!m) return refusal_value(m.error());
  const auto* a = std::get_if<Announce>(&m.value());
  if (!a) return refusal_value({MessageError::unknown_type, "type", "not a swarm_announce"});
  val held = val::array();
  int n = 0;
  for (std::uint32_t i = 0; i < a->total_chunks; ++i)
    if (Bitfield::wire_test(ByteView(a->bits), i)) held.set(n++, i);
  val o = val::object();
  o.set("ok", true);
  o.set("totalChunks", a->total_chunks);
  o.set("held", held);
  return o;
}

// The swarm_announce payload the core writes for a peer holding `held_json` ([indexes]).
val announce_payload_js(const std::string& file_id_hex, double total,
                        const std::string& held_json) {
  auto id = parse_sha256_hex(file_id_hex);
  if (!id) return refusal_value({MessageError::bad_hash, "fileId", "64 lowercase hex characters"});
  if (!(total >= 0 && total <= kMaxChunks))
    return refusal_value(
        {MessageError::too_many_chunks, "totalChunks", "0 to " + std::to_string(kMaxChunks)});
  Bitfield b{std::uint32_t(total)};
  auto j = parse_object(held_json);
  if (!j || !j->is_array())
    return refusal_value({MessageError::bad_field, "held", "a JSON array of chunk indexes"});
  for (const auto& v : *j) {
    auto i = json_integer(v, 0, std::int64_t(total) - 1);
    if (!i)
      return refusal_value(
          {MessageError::out_of_range, "held", "indexes from 0 to totalChunks - 1"});
    b.set(std::uint32_t(*i));
  }
  val o = val::object();
  o.set("ok", true);
  o.set("payload", encode_payload(Announce{*id, std::uint32_t(total), b.to_wire()}));
  return o;
}

val limits() {
  val o = val::object();
  o.set("maxChunks", kMaxChunks);
  o.set("maxPageHashes", kMaxPageHashes);
  o.set("maxInlineHashes", kMaxInlineHashes);
  o.set("minChunkSize", kMinChunkSize);
  o.set("maxChunkSize", kMaxChunkSize);
  o.set("maxHaveIndexes", double(kMaxHaveIndexes));
  o.set("maxFileNameChars", double(kMaxFileNameChars));
  o.set("maxMimeTypeChars", double(kMaxMimeTypeChars));
  o.set("defaultChunkSize", kDefaultChunkSize);
  o.set("minSctpMessageSize", double(kMinSctpMessageSize));
  o.set("chunkFrameHeaderBytes", double(kChunkFrameHeaderBytes));
  o.set("timeoutFloorMs", double(kTimeoutFloorMs));
  o.set("timeoutCeilingMs", double(kTimeoutCeilingMs));
  o.set("rebuildGraceMs", double(kRebuildGraceMs));
  o.set("staleLockMs", double(kStaleLockMs));
  o.set("lockRefreshMs", double(kLockRefreshMs));
  o.set("lockAttempts", double(kLockAttempts));
  o.set("maxKnownOffers", double(kMaxKnownOffers));
  o.set("defaultOfferWaitMs", double(kDefaultOfferWaitMs));
  o.set("maxUnwrittenChunks", double(kMaxUnwrittenChunks));
  o.set("maxPendingServesPerPeer", double(kMaxPendingServesPerPeer));
  o.set("maxRefusalsKept", double(kMaxRefusalsKept));
  o.set("serveHighWaterBytes", double(kServeHighWaterBytes));
  o.set("recentServeBytes", double(kRecentServeBytes));
  // Swarm control messages travel in agent-bus envelopes of this version.
  o.set("envelopeVersion", tether::bus::kEnvelopeVersion);
  return o;
}

val decide_lock_js(const std::string& owner, double updated_ms, bool exists, const std::string& us,
                   double now) {
  std::optional<LockRecord> rec;
  if (exists) rec = LockRecord{owner, std::int64_t(updated_ms)};
  const LockDecision d = decide_lock(rec, us, std::int64_t(now));
  static const char* kNames[] = {"acquire", "ours", "take_over", "busy"};
  val o = val::object();
  o.set("verdict", std::string(kNames[int(d.verdict)]));
  o.set("message", d.message);
  return o;
}

std::string part_file_name_js(const std::string& file_id_hex, const std::string& digest_hex,
                              const std::string& dest) {
  auto id = parse_sha256_hex(file_id_hex);
  auto d = parse_sha256_hex(digest_hex);
  if (!id || !d) return {};
  return part_file_name(*id, *d, dest);
}

EMSCRIPTEN_BINDINGS(tether_swarm) {
  using namespace emscripten;
  class_<SwarmCodec>("SwarmCodec")
      .constructor<>()
      .function("input", &SwarmCodec::input)
      .function("encodeFrameHead", &SwarmCodec::encode_frame_head)
      .function("parseFrame", &SwarmCodec::parse_frame)
      .function("sha256Hex", &SwarmCodec::sha256_hex);
  class_<SwarmSession>("SwarmSession")
      .constructor<>()
      .function("input", &SwarmSession::input)
      .function("seed", &SwarmSession::seed)
      .function("fetch", &SwarmSession::fetch)
      .function("resumeFeed", &SwarmSession::resume_feed)
      .function("resumed", &SwarmSession::resumed)
      .function("handleResumeDone", &SwarmSession::handle_resume_done)
      .function("handlePeerOpen", &SwarmSession::handle_peer_open)
      .function("handlePeerClosed", &SwarmSession::handle_peer_closed)
      .function("handleMessage", &SwarmSession::handle_message)
      .function("handleChunk", &SwarmSession::handle_chunk)
      .function("handleChunkDigest", &SwarmSession::handle_chunk_digest)
      .function("wantsChunk", &SwarmSession::wants_chunk)
      .function("handleSendResult", &SwarmSession::handle_send_result)
      .function("handleTransportDown", &SwarmSession::handle_transport_down)
      .function("handleTransportUp", &SwarmSession::handle_transport_up)
      .function("holdRequests", &SwarmSession::hold_requests)
      .function("retryManifestFrom", &SwarmSession::retry_manifest_from)
      .function("manifestSource", &SwarmSession::manifest_source)
      .function("handleTimeout", &SwarmSession::handle_timeout)
      .function("pollTimeout", &SwarmSession::poll_timeout)
      .function("pollAction", &SwarmSession::poll_action)
      .function("chunkPayload", &SwarmSession::chunk_payload)
      .function("status", &SwarmSession::status)
      .function("hashes", &SwarmSession::hashes);
  class_<SwarmNodeBinding>("SwarmNode")
      .constructor<std::string>()
      .function("input", &SwarmNodeBinding::input)
      .function("identity", &SwarmNodeBinding::identity)
      .function("handlePeerOpen", &SwarmNodeBinding::handle_peer_open)
      .function("handlePeerClosed", &SwarmNodeBinding::handle_peer_closed)
      .function("handleReconnect", &SwarmNodeBinding::handle_reconnect)
      .function("handleText", &SwarmNodeBinding::handle_text)
      .function("handleFrame", &SwarmNodeBinding::handle_frame)
      .function("wantsChunk", &SwarmNodeBinding::wants_chunk)
      .function("handleChunk", &SwarmNodeBinding::handle_chunk)
      .function("handleChunkDigest", &SwarmNodeBinding::handle_chunk_digest)
      .function("handleChunkWritten", &SwarmNodeBinding::handle_chunk_written)
      .function("handleSendResult", &SwarmNodeBinding::handle_send_result)
      .function("handleServeDone", &SwarmNodeBinding::handle_serve_done)
      .function("chunkEnvelope", &SwarmNodeBinding::chunk_envelope)
      .function("share", &SwarmNodeBinding::share)
      .function("wantOffer", &SwarmNodeBinding::want_offer)
      .function("offers", &SwarmNodeBinding::offers)
      .function("partName", &SwarmNodeBinding::part_name)
      .function("fetch", &SwarmNodeBinding::fetch)
      .function("handlePartOpened", &SwarmNodeBinding::handle_part_opened)
      .function("handleResumeChunk", &SwarmNodeBinding::handle_resume_chunk)
      .function("handleFileDigest", &SwarmNodeBinding::handle_file_digest)
      .function("handleFileSaved", &SwarmNodeBinding::handle_file_saved)
      .function("removeFile", &SwarmNodeBinding::remove_file)
      .function("handleTimeout", &SwarmNodeBinding::handle_timeout)
      .function("pollTimeout", &SwarmNodeBinding::poll_timeout)
      .function("pollAction", &SwarmNodeBinding::poll_action)
      .function("record", &SwarmNodeBinding::record)
      .function("name", &SwarmNodeBinding::name)
      .function("pollEvent", &SwarmNodeBinding::poll_event)
      .function("file", &SwarmNodeBinding::file)
      .function("resumedIndexes", &SwarmNodeBinding::resumed_indexes)
      .function("stats", &SwarmNodeBinding::stats);
  function("swarmParseMessage", &parse_message_text_js);
  function("swarmMakeOffer", &make_offer_js);
  function("swarmLimits", &limits);
  function("swarmNodeRecordLayout", &node_record_layout);
  function("swarmAnnounceHeld", &announce_held_js);
  function("swarmAnnouncePayload", &announce_payload_js);
  function("swarmDecideLock", &decide_lock_js);
  function("swarmPartFileName", &part_file_name_js);
}

}  // namespace
}  // namespace tether::swarm::bindings
