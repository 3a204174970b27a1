// Embind surface of the swarm core. Marshalling only (DESIGN.md rule 4): JSON text and bytes in,
// plain objects and typed-memory views out; every decision is made by src/swarm. The JS wrapper
// with the public API is web/glue/swarm.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <optional>
#include <string>

#include "bus/limits.hpp"
#include "common/json.hpp"
#include "swarm/bitfield.hpp"
#include "swarm/messages.hpp"
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

// Chunk frames and hashing, with a reusable staging buffer. Views stay valid until the next call.
class SwarmCodec {
 public:
  val input(std::size_t n) {
    in_.resize(n);
    return view(in_.data(), n);
  }
  val encode_frame(const std::string& file_id_hex, std::uint32_t index, std::size_t n) {
    auto id = parse_sha256_hex(file_id_hex);
    if (!id || index >= kMaxChunks || n > kMaxChunkSize || n > in_.size()) return val::null();
    encode_chunk_frame_into(out_, *id, index, ByteView(in_.data(), n));
    return view(out_.data(), out_.size());
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
  Bytes in_, out_;
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
    auto hj = parse_object(hashes_json);
    if (!hj || !hj->is_array() || hj->size() > kMaxChunks)
      return refusal_value({MessageError::bad_field, "hashes",
                            "pass the chunk hashes as a JSON array of hex strings"});
    std::vector<ChunkHash> hashes;
    hashes.reserve(hj->size());
    for (const auto& h : *hj) {
      auto s = json_string(h);
      auto d = s ? parse_sha256_hex(*s) : std::nullopt;
      if (!d)
        return refusal_value(
            {MessageError::bad_hash, "hashes", "each hash is 64 lowercase hex characters"});
      hashes.push_back(*d);
    }
    auto s = Swarm::seed(std::get<Offer>(m.value()), std::move(hashes), config_from(config));
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

// An offer payload for a file we hold: inline or paged (make_offer).
val make_offer_js(const std::string& file_id_hex, const std::string& name, const std::string& mime,
                  double size, std::uint32_t chunk_size, const std::string& hashes_json) {
  auto id = parse_sha256_hex(file_id_hex);
  if (!id) return refusal_value({MessageError::bad_hash, "fileId", "64 lowercase hex characters"});
  auto hj = parse_object(hashes_json);
  if (!hj || !hj->is_array() || hj->size() > kMaxChunks)
    return refusal_value({MessageError::bad_field, "hashes",
                          "pass the chunk hashes as a JSON array of hex strings"});
  std::vector<ChunkHash> hashes;
  for (const auto& h : *hj) {
    auto s = json_string(h);
    auto d = s ? parse_sha256_hex(*s) : std::nullopt;
    if (!d)
      return refusal_value(
          {MessageError::bad_hash, "hashes", "each hash is 64 lowercase hex characters"});
    hashes.push_back(*d);
  }
  if (!(size >= 0 && size <= double(kMaxSafeInteger)))
    return refusal_value({MessageError::out_of_range, "size", "a non-negative safe integer"});
  FileShape shape{std::uint64_t(size), chunk_size,
                  chunk_size ? std::uint32_t(std::min<std::uint64_t>(
                                   (std::uint64_t(size) + chunk_size - 1) / chunk_size, UINT32_MAX))
                             : 0};
  auto o = make_offer(*id, name, mime, shape, hashes);
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
      .function("encodeFrame", &SwarmCodec::encode_frame)
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
  function("swarmParseMessage", &parse_message_text_js);
  function("swarmMakeOffer", &make_offer_js);
  function("swarmLimits", &limits);
  function("swarmAnnounceHeld", &announce_held_js);
  function("swarmAnnouncePayload", &announce_payload_js);
  function("swarmDecideLock", &decide_lock_js);
  function("swarmPartFileName", &part_file_name_js);
}

}  // namespace
}  // namespace tether::swarm::bindings
