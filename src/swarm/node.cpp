// See node.hpp. Section references are to agent-bus-and-swarm.md.
#include "swarm/node.hpp"

#include <algorithm>

#include "bus/limits.hpp"
#include "common/utf8.hpp"
#include "swarm/resume.hpp"

namespace tether::swarm {

std::string_view file_state_name(FileState s) {
  switch (s) {
    case FileState::seeding: return "seeding";
    case FileState::manifest: return "manifest";
    case FileState::resuming: return "resuming";
    case FileState::downloading: return "downloading";
    case FileState::verifying: return "verifying";
    case FileState::saving: return "saving";
    case FileState::complete: return "complete";
  }
  return "complete";
}

SwarmNode::SwarmNode(NodeConfig config)
    : self_(std::move(config.self)), rng_(config.seed), swarm_config_(config.swarm) {
  if (self_.instance_id.empty()) {
    // The stream id (its first 64 characters) plus 8 base-36 characters, as the bus's own
    // instance ids look; a 128-character stream id must not push it past the envelope's bound.
    static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    self_.instance_id = std::string(utf16_prefix(self_.stream_id, 64)) + '.';
    for (int i = 0; i < 8; ++i) self_.instance_id += kDigits[rng_.below(36)];
  }
  // Message ids are "<instance>.<counter>"; the instance part is cut so the id stays within
  // bus::kMaxIdChars (128) however long a given instance id is (a counter takes at most 20).
  id_prefix_ = std::string(utf16_prefix(self_.instance_id, bus::kMaxIdChars - 21)) + '.';
}

// --- peers and envelopes --------------------------------------------------------------------------

PeerId SwarmNode::peer_number(std::string_view name) {
  auto it = peer_numbers_.find(std::string(name));
  if (it != peer_numbers_.end()) return it->second;
  peer_names_.emplace_back(name);
  const PeerId id = PeerId(peer_names_.size());
  peer_numbers_.emplace(std::string(name), id);
  return id;
}

const std::string* SwarmNode::peer_name(PeerId id) const {
  if (id == 0 || id > peer_names_.size()) return nullptr;
  return &peer_names_[id - 1];
}

void SwarmNode::refuse(std::string_view peer, std::string code, std::string detail) {
  ++stats_.refused_count;
  if (stats_.refused.size() < kMaxRefusalsKept)
    stats_.refused.push_back({std::string(peer), std::move(code), std::move(detail)});
}

std::string SwarmNode::envelope(std::string_view type, const std::string* to,
                                std::string_view payload, TimeMs now_ms) {
  bus::Envelope e;
  e.id = id_prefix_ + std::to_string(++message_counter_);
  e.type = bus::message_type_from_name(type).value_or(bus::MessageType::swarm_offer);
  e.from = self_;
  if (to) e.to = *to;
  e.ts = double(now_ms);
  std::string out;
  out.reserve(payload.size() + 256);
  bus::append_envelope_json(out, e, payload);
  return out;
}

void SwarmNode::send_control(const std::string* to, std::string_view type, std::string_view payload,
                             TimeMs now_ms, std::uint64_t token) {
  if (to) {
    actions_.push(NodeSend{*to, envelope(type, to, payload, now_ms), token});
    return;
  }
  // A broadcast: one envelope addressed to the room (to: null), sent to every open peer.
  const std::string text = envelope(type, nullptr, payload, now_ms);
  for (const auto& p : open_peers_) actions_.push(NodeSend{p.first, text, 0});
}

void SwarmNode::handle_peer_open(std::string_view peer, const PeerCaps& caps, TimeMs now_ms) {
  const PeerId num = peer_number(peer);
  const std::string name(peer);
  auto known = std::find_if(open_peers_.begin(), open_peers_.end(),
                            [&](const auto& p) { return p.first == name; });
  if (known == open_peers_.end())
    open_peers_.emplace_back(name, caps);
  else
    known->second = caps;
  for (auto& [id, f] : files_) {
    f.session.handle_peer_open(num, caps, now_ms);
    // Whoever joins learns what we hold whole.
    if (f.role == FileRole::seed || f.state == FileState::complete)
      send_control(&name, "swarm_offer", f.offer_payload, now_ms);
    pump(id, now_ms);
  }
}

void SwarmNode::handle_peer_closed(std::string_view peer, TimeMs now_ms) {
  const std::string name(peer);
  serves_.erase(name);
  open_peers_.erase(std::remove_if(open_peers_.begin(), open_peers_.end(),
                                   [&](const auto& p) { return p.first == name; }),
                    open_peers_.end());
  auto it = peer_numbers_.find(name);
  if (it == peer_numbers_.end()) return;
  for (auto& [id, f] : files_) {
    f.session.handle_peer_closed(it->second, now_ms);
    // The peer we were asking for manifest pages left: ask another that offered the file and is
    // here, or the fetch would wait on a peer that may never return (the public implementation
    // moves on as well). The one that left stays an offerer: it may come back.
    if (f.role == FileRole::fetch && f.manifest_source == name && f.session.fetching_manifest())
      if (auto next = open_offerer(id, name)) {
        f.manifest_source = *next;
        f.session.retry_manifest_from(peer_number(*next), now_ms);
      }
    pump(id, now_ms);
  }
}

std::optional<std::string> SwarmNode::open_offerer(const FileId& id,
                                                   std::string_view except) const {
  auto o = offers_.find(id);
  if (o == offers_.end()) return std::nullopt;
  // Round the offerers from the one after `except`, so that each is asked in turn.
  const auto& who = o->second.offerers;
  const std::size_t n = who.size();
  const auto at = std::find(who.begin(), who.end(), except);
  const std::size_t start = at == who.end() ? 0 : std::size_t(at - who.begin()) + 1;
  for (std::size_t k = 0; k < n; ++k) {
    const std::string& next = who[(start + k) % n];
    if (next != except && std::any_of(open_peers_.begin(), open_peers_.end(),
                                      [&](const auto& p) { return p.first == next; }))
      return next;
  }
  return std::nullopt;
}

void SwarmNode::handle_reconnect(TimeMs now_ms) {
  // § Surviving a network drop: everything outstanding is abandoned and re-planned, charging
  // nobody, and rebuilds wait out the grace.
  for (auto& [id, f] : files_) {
    f.session.handle_transport_down(now_ms);
    f.session.handle_transport_up(now_ms);
    pump(id, now_ms);
  }
}

// --- receiving ------------------------------------------------------------------------------------

std::optional<ArrivedChunk> SwarmNode::handle_text(std::string_view peer, ByteView text,
                                                   TimeMs now_ms) {
  if (text.size > bus::kMaxEnvelopeBytes) {
    refuse(peer, "too_large",
           "a control message of " + std::to_string(text.size) + " bytes; at most " +
               std::to_string(bus::kMaxEnvelopeBytes) + " are read");
    return std::nullopt;
  }
  // Everything else on the control lane (the bus's chat, files, commands) is somebody else's: a
  // swarm envelope's type starts with "swarm_", so a text without it is passed over unparsed (a
  // type spelled with escapes is no swarm message of ours either).
  static constexpr std::string_view kSwarmPrefix = "\"swarm_";
  const std::string_view chars(reinterpret_cast<const char*>(text.data), text.size);
  if (chars.find(kSwarmPrefix) == std::string_view::npos) return std::nullopt;
  JsonParse parsed = parse_json(text);
  if (!parsed.ok()) {
    refuse(peer, "not_json", "the control message is not JSON");
    return std::nullopt;
  }
  const Json& env = parsed.value;
  if (!env.is_object()) return std::nullopt;
  auto type_it = env.find("type");
  if (type_it == env.end() || !type_it->is_string()) return std::nullopt;
  const std::string& type = type_it->get_ref<const std::string&>();
  if (type.rfind("swarm_", 0) != 0) return std::nullopt;  // somebody else's message
  // § Untrusted wire input: a connection is bound to the identity it was opened with.
  auto v = env.find("v");
  auto from = env.find("from");
  const Json* stream = nullptr;
  if (from != env.end() && from->is_object()) {
    auto s = from->find("streamId");
    if (s != from->end() && s->is_string()) stream = &*s;
  }
  const bool version_ok =
      v != env.end() && v->is_number() && v->get<double>() == double(bus::kEnvelopeVersion);
  if (!version_ok || !stream || stream->get_ref<const std::string&>() != peer) {
    ++stats_.forged_identity;
    refuse(peer, "identity",
           "an envelope from " + (stream ? '"' + stream->get<std::string>() + '"' : "nobody") +
               " on " + std::string(peer) + "'s connection (v " +
               (version_ok ? std::to_string(bus::kEnvelopeVersion) : "wrong") +
               "); a peer speaks only as itself");
    return std::nullopt;
  }
  bool directed = false;
  if (auto to = env.find("to"); to != env.end() && !to->is_null()) {
    if (!to->is_string() || to->get_ref<const std::string&>() != self_.stream_id)
      return std::nullopt;  // not ours
    directed = true;
  }
  static const Json kNoPayload;
  auto pit = env.find("payload");
  auto m = parse_message(type, pit == env.end() ? kNoPayload : *pit);
  if (!m) {
    refuse(peer, std::string(message_error_name(m.error().code)),
           m.error().field + ": " + m.error().detail);
    return std::nullopt;
  }
  Message& msg = m.value();
  if (auto* offer = std::get_if<Offer>(&msg)) {
    on_offer(peer, *offer, now_ms);
    return std::nullopt;
  }
  const FileId& id = std::visit([](const auto& x) -> const FileId& { return x.file_id; }, msg);
  auto fit = files_.find(id);
  if (fit == files_.end()) return std::nullopt;
  if (auto* c = std::get_if<ChunkMessage>(&msg))
    return ArrivedChunk{c->file_id, c->index, std::move(c->data)};
  ++stats_.control_received;
  File& f = fit->second;
  if (std::holds_alternative<ManifestPage>(msg) &&
      (f.role != FileRole::fetch || !f.session.takes_pages_from(peer_number(peer)))) {
    // Only the peers asked may fill the manifest: anyone else's page could only poison it.
    ++stats_.unsolicited_pages;
    refuse(peer, "unsolicited_page",
           "a manifest page for " + to_hex(id) + " that was not asked of this peer; dropped");
    return std::nullopt;
  }
  f.session.handle_message(peer_number(peer), msg, directed, now_ms);
  pump(fit->first, now_ms);
  return std::nullopt;
}

std::optional<ArrivedFrame> SwarmNode::handle_frame(ByteView head, std::size_t frame_length) {
  if (head.size > kChunkFrameHeaderBytes) head.size = kChunkFrameHeaderBytes;
  auto f = parse_chunk_frame_head(head, frame_length);
  if (!f || !files_.count(f->file_id)) {
    ++stats_.ignored_frames;
    return std::nullopt;
  }
  return ArrivedFrame{f->file_id, f->index, kChunkFrameHeaderBytes,
                      frame_length - kChunkFrameHeaderBytes};
}

namespace {

// Two offers describe the same bytes: the same shape, and the same digest over the chunk hashes
// (which pins every chunk). Without a digest on either side the inline lists must agree.
bool same_file(const Offer& a, const Offer& b) {
  if (a.shape.size != b.shape.size || a.shape.chunk_size != b.shape.chunk_size ||
      a.shape.total_chunks != b.shape.total_chunks)
    return false;
  if (a.chunk_hashes_hash || b.chunk_hashes_hash) return a.chunk_hashes_hash == b.chunk_hashes_hash;
  return a.inline_hashes == b.inline_hashes;
}

}  // namespace

void SwarmNode::on_offer(std::string_view peer, const Offer& offer, TimeMs now_ms) {
  (void)now_ms;
  std::string payload = encode_payload(Message{offer});
  auto it = offers_.find(offer.file_id);
  if (it == offers_.end()) {
    if (offers_.size() >= kMaxKnownOffers) {
      refuse(peer, "too_many_offers",
             "already " + std::to_string(offers_.size()) + " offers remembered; this one dropped");
      return;
    }
    it = offers_.emplace(offer.file_id, KnownOffer{offer, std::move(payload), {}}).first;
  } else if (!same_file(it->second.offer, offer)) {
    // A different shape under the same id: the first stands, which its offerers vouch for. A
    // name, a MIME type or the manifest's transport (inline or paged) may differ: the same bytes
    // seeded under another name, or by an implementation that guesses the type, is the same file,
    // and its seeder is one more source (the public implementation compares the same fields).
    refuse(peer, "conflicting_offer",
           "a second, different offer for " + to_hex(offer.file_id) + "; the first is kept");
    return;
  }
  auto& who = it->second.offerers;
  if (std::find(who.begin(), who.end(), peer) == who.end()) {
    if (who.size() >= kMaxPeersPerFile) return;
    who.emplace_back(peer);
  }
  if (wants_.erase(offer.file_id)) events_.push(OfferReady{offer.file_id});
}

bool SwarmNode::wants_chunk(const FileId& file, std::uint32_t index, std::size_t length) const {
  auto it = files_.find(file);
  return it != files_.end() && it->second.session.wants_chunk(index, length);
}

ChunkOutcome SwarmNode::handle_chunk(std::string_view peer, const FileId& file, std::uint32_t index,
                                     ByteView data, TimeMs now_ms) {
  auto it = files_.find(file);
  if (it == files_.end()) return ChunkOutcome::unexpected;
  const ChunkOutcome o = it->second.session.handle_chunk(peer_number(peer), index, data, now_ms);
  return after_chunk(peer, file, it->second, index, o, now_ms);
}

// What a chunk's verdict means for the peer that sent it and for the file (both chunk paths).
ChunkOutcome SwarmNode::after_chunk(std::string_view peer, const FileId& file, File& f,
                                    std::uint32_t index, ChunkOutcome o, TimeMs now_ms) {
  if (o == ChunkOutcome::bad_hash) {
    ++stats_.bad_chunks;
    refuse(peer, "bad_chunk",
           "chunk " + std::to_string(index) + " of " + to_hex(file) + " failed verification");
  }
  if (o == ChunkOutcome::stored) {
    ++f.unwritten;
    update_hold(file, f, now_ms);
  }
  pump(file, now_ms);
  return o;
}

ChunkOutcome SwarmNode::handle_chunk_digest(std::string_view peer, const FileId& file,
                                            std::uint32_t index, std::size_t length,
                                            const std::optional<Sha256Digest>& digest,
                                            TimeMs now_ms) {
  auto it = files_.find(file);
  if (it == files_.end()) return ChunkOutcome::unexpected;
  Swarm& s = it->second.session;
  // A chunk the core would not hash needs no digest: its verdict is the same with any.
  if (!digest && s.wants_chunk(index, length)) return ChunkOutcome::unexpected;
  const ChunkOutcome o = s.handle_chunk_digest(peer_number(peer), index, length,
                                               digest.value_or(Sha256Digest{}), now_ms);
  return after_chunk(peer, file, it->second, index, o, now_ms);
}

void SwarmNode::handle_chunk_written(const FileId& file, std::uint32_t index, TimeMs now_ms) {
  (void)index;
  auto it = files_.find(file);
  if (it == files_.end() || it->second.unwritten == 0) return;
  --it->second.unwritten;
  update_hold(file, it->second, now_ms);
  pump(file, now_ms);
}

void SwarmNode::update_hold(const FileId& id, File& f, TimeMs now_ms) {
  (void)id;
  // Disk backpressure: while kMaxUnwrittenChunks verified chunks wait for their write, no new
  // requests go out; a slow disk slows the download rather than filling memory.
  const bool held = f.unwritten >= kMaxUnwrittenChunks;
  if (held == f.held) return;
  f.held = held;
  f.session.hold_requests(held, now_ms);
}

void SwarmNode::handle_send_result(std::uint64_t token, bool accepted, TimeMs now_ms) {
  auto it = requests_.find(token);
  if (it == requests_.end()) return;
  const PendingRequest r = it->second;
  requests_.erase(it);
  if (!accepted) ++stats_.send_rejected;
  auto fit = files_.find(r.file);
  if (fit == files_.end()) return;
  fit->second.session.handle_send_result(r.token, accepted, now_ms);
  pump(r.file, now_ms);
}

void SwarmNode::enqueue_serve(const std::string& peer, const FileId& id, const Swarm& s,
                              const ServeChunk& c) {
  auto& q = serves_[peer];
  // A request repeated after its timeout while the first is still queued is served once.
  for (const auto& p : q)
    if (p.index == c.index && p.file == id) {
      ++stats_.serves_deduplicated;
      return;
    }
  // Past the bound the rest are dropped; their requesters time out and ask again.
  if (q.size() >= kMaxPendingServesPerPeer) {
    ++stats_.serves_dropped;
    return;
  }
  q.push_back({id, c.index});
  actions_.push(NodeServe{peer, id, c.index, c.binary, s.chunk_offset(c.index),
                          s.shape().chunk_length(c.index)});
}

void SwarmNode::handle_serve_done(std::string_view peer, const FileId& file, std::uint32_t index) {
  auto it = serves_.find(std::string(peer));
  if (it == serves_.end()) return;
  auto& q = it->second;
  auto p = std::find_if(q.begin(), q.end(),
                        [&](const PendingServe& s) { return s.index == index && s.file == file; });
  if (p != q.end()) q.erase(p);
}

std::string SwarmNode::chunk_envelope(std::string_view peer, const FileId& file,
                                      std::uint32_t index, ByteView data, TimeMs now_ms) {
  const std::string to(peer);
  return envelope(
      "swarm_chunk", &to,
      encode_payload(Message{ChunkMessage{file, index, Bytes(data.data, data.data + data.size)}}),
      now_ms);
}

// --- the sessions' actions -------------------------------------------------------------------------

void SwarmNode::pump(const FileId& id, TimeMs now_ms) {
  auto it = files_.find(id);
  if (it == files_.end()) return;
  File& f = it->second;
  Swarm& s = f.session;
  while (auto next = s.poll_action()) {
    Action& a = *next;
    if (auto* c = std::get_if<SendControl>(&a)) {
      const std::string* to = c->to ? peer_name(*c->to) : nullptr;
      if (c->to && !to) continue;
      send_control(to, c->type, c->payload, now_ms);
    } else if (auto* r = std::get_if<SendRequest>(&a)) {
      const std::string* to = peer_name(r->to);
      if (!to) continue;
      const std::uint64_t token = next_token_++;
      requests_.emplace(token, PendingRequest{id, r->token});
      send_control(to, "swarm_request", r->payload, now_ms, token);
    } else if (auto* sc = std::get_if<ServeChunk>(&a)) {
      if (const std::string* to = peer_name(sc->to)) enqueue_serve(*to, id, s, *sc);
    } else if (std::get_if<ManifestReady>(&a)) {
      if (f.role == FileRole::fetch && f.state == FileState::manifest) {
        f.state = FileState::resuming;
        actions_.push(NodeOpenPart{id});
      }
    } else if (auto* b = std::get_if<RebuildPeer>(&a)) {
      const std::string* to = peer_name(b->peer);
      s.handle_peer_closed(b->peer, now_ms);
      if (to) actions_.push(NodeRebuild{*to});
    } else if (std::get_if<Completed>(&a)) {
      if (f.role == FileRole::fetch && f.state == FileState::downloading) {
        f.state = FileState::verifying;
        actions_.push(NodeVerifyFile{id});
      }
    } else if (auto* fl = std::get_if<Failed>(&a)) {
      on_session_failed(id, f, *fl, now_ms);
      if (!files_.count(id)) return;  // failed for good: the session is gone
    }
  }
}

void SwarmNode::on_session_failed(const FileId& id, File& f, const Failed& failed, TimeMs now_ms) {
  if (failed.code != "manifest_digest_mismatch") return fail_file(id, failed.code, failed.detail);
  // The source's pages do not add up to the offer's digest; nothing touched the disk. Another
  // peer that offered the file is asked, and the liar never again.
  ++stats_.manifest_failures;
  const std::string* blamed = failed.blamed ? peer_name(*failed.blamed) : nullptr;
  const std::string liar = blamed ? *blamed : f.manifest_source;
  refuse(liar, failed.code, failed.detail);
  std::string next;
  if (auto o = offers_.find(id); o != offers_.end()) {
    auto& who = o->second.offerers;
    who.erase(std::remove(who.begin(), who.end(), liar), who.end());
    if (!who.empty()) next = who.front();
  }
  if (next.empty())
    return fail_file(id, failed.code,
                     f.session.offer().name + ": the manifest from " + liar +
                         " does not match the offer's digest and no other peer offers it; try "
                         "again when a trusted peer is in the room");
  f.manifest_source = next;
  f.session.retry_manifest_from(peer_number(next), now_ms);
}

void SwarmNode::fail_file(const FileId& id, std::string code, std::string message) {
  actions_.push(NodeFileFailed{id, std::move(code), std::move(message)});
  remove_file(id);
}

void SwarmNode::remove_file(const FileId& id) {
  if (!files_.erase(id)) return;
  for (auto it = requests_.begin(); it != requests_.end();)
    it = it->second.file == id ? requests_.erase(it) : std::next(it);
  for (auto& [peer, q] : serves_)
    q.erase(std::remove_if(q.begin(), q.end(), [&](const PendingServe& s) { return s.file == id; }),
            q.end());
}

// --- files ----------------------------------------------------------------------------------------

Result<std::monostate, Refusal> SwarmNode::share(const Offer& offer, std::vector<ChunkHash> hashes,
                                                 TimeMs now_ms) {
  if (auto held = files_.find(offer.file_id); held != files_.end()) {
    // Offered again (the host re-read the file): the room hears the offer again. A download still
    // under way is not a file we hold.
    const File& f = held->second;
    if (f.role != FileRole::seed && f.state != FileState::complete)
      return err(Refusal{MessageError::bad_field, "fileId",
                         "this peer is still downloading " + to_hex(offer.file_id) +
                             "; offer it once the download is complete"});
    send_control(nullptr, "swarm_offer", f.offer_payload, now_ms);
    return std::monostate{};
  }
  SwarmConfig c = swarm_config_;
  c.seed = rng_.next_u64() >> 11;
  auto s = Swarm::seed(offer, std::move(hashes), c);
  if (!s) return err(s.error());
  auto& f = files_
                .emplace(offer.file_id, File{FileRole::seed, FileState::seeding,
                                             std::move(s.value()), encode_payload(Message{offer})})
                .first->second;
  for (const auto& [p, caps] : open_peers_)
    f.session.handle_peer_open(peer_number(p), caps, now_ms);
  send_control(nullptr, "swarm_offer", f.offer_payload, now_ms);
  pump(offer.file_id, now_ms);
  return std::monostate{};
}

void SwarmNode::want_offer(const FileId& file, std::int64_t wait_ms, TimeMs now_ms) {
  if (offers_.count(file)) {
    events_.push(OfferReady{file});
    return;
  }
  if (!wants_.count(file) && wants_.size() >= kMaxKnownOffers) {
    events_.push(OfferMissing{file, "too many files are awaited at once (" +
                                        std::to_string(kMaxKnownOffers) +
                                        "); wait for some to arrive and try again"});
    return;
  }
  auto& at = wants_[file];
  at = std::max(at, now_ms + std::max<std::int64_t>(0, wait_ms));
}

const KnownOffer* SwarmNode::known_offer(const FileId& file) const {
  auto it = offers_.find(file);
  return it == offers_.end() ? nullptr : &it->second;
}

std::string SwarmNode::part_name(const FileId& file, std::string_view destination) const {
  const KnownOffer* o = known_offer(file);
  if (!o || !o->offer.chunk_hashes_hash) return {};
  return part_file_name(file, *o->offer.chunk_hashes_hash, destination);
}

Result<std::monostate, std::string> SwarmNode::fetch(const FileId& file,
                                                     const std::optional<std::string>& from,
                                                     TimeMs now_ms) {
  if (files_.count(file)) return err("already transferring " + to_hex(file) + " in this peer");
  const KnownOffer* o = known_offer(file);
  if (!o || o->offerers.empty())
    return err("no peer offers " + to_hex(file) + "; wait for an offer (want_offer) first");
  const auto& who = o->offerers;
  const std::string source =
      from && std::find(who.begin(), who.end(), *from) != who.end() ? *from : who.front();
  SwarmConfig c = swarm_config_;
  c.seed = rng_.next_u64() >> 11;
  auto s = Swarm::fetch(o->offer, peer_number(source), c, now_ms);
  if (!s)
    return err("cannot fetch " + to_hex(file) + ": " + s.error().field + ": " + s.error().detail);
  auto& f = files_
                .emplace(file, File{FileRole::fetch, FileState::manifest, std::move(s.value()),
                                    o->payload})
                .first->second;
  f.manifest_source = source;
  f.lock_refresh_at = now_ms + kLockRefreshMs;
  for (const auto& [p, caps] : open_peers_)
    f.session.handle_peer_open(peer_number(p), caps, now_ms);
  pump(file, now_ms);
  return std::monostate{};
}

void SwarmNode::handle_part_opened(const FileId& file, std::uint64_t size, TimeMs now_ms) {
  auto it = files_.find(file);
  if (it == files_.end() || it->second.state != FileState::resuming || it->second.resume) return;
  File& f = it->second;
  f.part_size = size;
  f.resume.emplace(f.session.shape(), f.session.hashes());
  f.resume_next = 0;
  next_resume_read(file, f, now_ms);
}

void SwarmNode::next_resume_read(const FileId& id, File& f, TimeMs now_ms) {
  // § Resume: chunks are read in order, one at a time (one chunk of memory), and only those that
  // lie wholly inside the part file; the first that does not ends the pass.
  const FileShape& shape = f.session.shape();
  const std::uint32_t i = f.resume_next;
  if (i < shape.total_chunks) {
    const std::uint64_t off = f.session.chunk_offset(i);
    const std::uint32_t len = shape.chunk_length(i);
    if (off + len <= f.part_size) {
      actions_.push(NodeResumeRead{id, i, off, len});
      return;
    }
  }
  const Bitfield& verified = f.resume->verified();
  f.resumed_indexes.clear();
  for (std::uint32_t k = 0; k < shape.total_chunks; ++k)
    if (verified.test(k)) f.resumed_indexes.push_back(k);
  f.resumed = std::uint32_t(f.resumed_indexes.size());
  f.state = FileState::downloading;
  f.session.handle_resume_done(verified, now_ms);
  f.resume.reset();
  events_.push(DownloadStarted{id, f.resumed});
  pump(id, now_ms);
}

void SwarmNode::handle_resume_chunk(const FileId& file, std::uint32_t index, std::size_t length,
                                    const std::optional<Sha256Digest>& digest, TimeMs now_ms) {
  auto it = files_.find(file);
  if (it == files_.end() || !it->second.resume || index != it->second.resume_next) return;
  File& f = it->second;
  // A read that failed or came back short simply does not verify.
  if (digest) f.resume->feed_digest(index, length, *digest);
  ++f.resume_next;
  next_resume_read(file, f, now_ms);
}

void SwarmNode::handle_file_digest(const FileId& file, const Sha256Digest& digest, TimeMs now_ms) {
  (void)now_ms;
  auto it = files_.find(file);
  if (it == files_.end() || it->second.state != FileState::verifying) return;
  if (digest != file)
    return fail_file(file, "file_digest_mismatch",
                     it->second.session.offer().name +
                         ": every chunk verified but the file's SHA-256 is " + to_hex(digest) +
                         ", not the offered " + to_hex(file) +
                         "; the offer was wrong, the part file is kept");
  it->second.state = FileState::saving;
  actions_.push(NodeSaveFile{file});
}

void SwarmNode::handle_file_saved(const FileId& file, TimeMs now_ms) {
  auto it = files_.find(file);
  if (it == files_.end() || it->second.state != FileState::saving) return;
  it->second.state = FileState::complete;
  events_.push(FileComplete{file});
  // Now a seeder of the whole file for late joiners.
  send_control(nullptr, "swarm_offer", it->second.offer_payload, now_ms);
}

// --- time -----------------------------------------------------------------------------------------

void SwarmNode::handle_timeout(TimeMs now_ms) {
  for (auto it = wants_.begin(); it != wants_.end();) {
    if (it->second > now_ms) {
      ++it;
      continue;
    }
    events_.push(OfferMissing{it->first, "no peer offered " + to_hex(it->first) +
                                             " in time: is the seeder in the room?"});
    it = wants_.erase(it);
  }
  std::vector<FileId> ids;
  ids.reserve(files_.size());
  for (auto& [id, f] : files_) ids.push_back(id);
  for (const auto& id : ids) {
    auto it = files_.find(id);
    if (it == files_.end()) continue;
    File& f = it->second;
    if (f.role == FileRole::fetch && f.state != FileState::complete &&
        f.lock_refresh_at <= now_ms) {
      f.lock_refresh_at = now_ms + kLockRefreshMs;
      actions_.push(NodeRefreshLock{id});
    }
    // A manifest source that stays connected but leaves pages unanswered: the next open offerer
    // is asked them (the pages already in are kept), or the same one again when nobody else is.
    if (f.role == FileRole::fetch && f.session.manifest_stalled(now_ms))
      if (auto next = open_offerer(id, f.manifest_source)) {
        f.manifest_source = *next;
        f.session.switch_manifest_source(peer_number(*next), now_ms);
      }
    if (auto t = f.session.poll_timeout(); t && *t <= now_ms) f.session.handle_timeout(now_ms);
    pump(id, now_ms);
  }
}

Timeout SwarmNode::poll_timeout() const {
  Timeout t;
  for (const auto& [id, at] : wants_) t = earliest(t, at);
  for (const auto& [id, f] : files_) {
    t = earliest(t, f.session.poll_timeout());
    if (f.role == FileRole::fetch && f.state != FileState::complete)
      t = earliest(t, f.lock_refresh_at);
  }
  return t;
}

std::optional<SwarmNode::FileView> SwarmNode::file(const FileId& id) const {
  auto it = files_.find(id);
  if (it == files_.end()) return std::nullopt;
  const File& f = it->second;
  return FileView{f.role, f.state, f.session, f.resumed, f.resumed_indexes};
}

}  // namespace tether::swarm
