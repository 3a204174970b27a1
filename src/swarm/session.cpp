// See session.hpp. Section references are to agent-bus-and-swarm.md.
#include "swarm/session.hpp"

#include <algorithm>
#include <cmath>

namespace tether::swarm {

namespace {
// A request the transport refused: leave that peer alone this long before asking it again, so a
// closed channel is not hammered in a loop.
constexpr std::int64_t kRejectBackoffMs = 250;
}  // namespace

Result<Offer, Refusal> make_offer(const FileId& file_id, std::string name, std::string mime_type,
                                  const FileShape& shape, const std::vector<ChunkHash>& hashes) {
  if (auto bad = check_shape(shape)) return err(*bad);
  if (hashes.size() != shape.total_chunks)
    return err(Refusal{MessageError::inconsistent_shape, "hashes",
                       "one hash per chunk is needed to offer a file"});
  Offer o;
  o.file_id = file_id;
  o.name = std::move(name);
  o.mime_type = std::move(mime_type);
  o.shape = shape;
  o.chunk_hashes_hash = chunk_hashes_digest(hashes);
  if (shape.total_chunks <= kMaxInlineHashes) {
    o.inline_hashes = hashes;
  } else {
    o.page_size = kMaxPageHashes;
    o.pages = (shape.total_chunks + kMaxPageHashes - 1) / kMaxPageHashes;
  }
  // Held to the receiver's rules (name, MIME type): an offer we would refuse is never sent.
  const std::string text = encode_message_text(Message{o});
  auto back = parse_message_text(ByteView(std::string_view(text)));
  if (!back) return err(back.error());
  return o;
}

Swarm::Swarm(const Offer& offer, const SwarmConfig& config)
    : offer_(offer),
      config_(config),
      rng_(config.seed),
      have_(offer.shape.total_chunks),
      busy_(offer.shape.total_chunks),
      picker_(0, config.ties) {
  offer_.inline_hashes.clear();
  offer_.inline_hashes.shrink_to_fit();
  config_.window_per_peer = std::max<std::uint32_t>(1, config_.window_per_peer);
  config_.window_total = std::max<std::uint32_t>(1, config_.window_total);
}

Result<Swarm, Refusal> Swarm::seed(const Offer& offer, std::vector<ChunkHash> hashes,
                                   const SwarmConfig& config) {
  if (auto bad = check_shape(offer.shape)) return err(*bad);
  if (hashes.size() != offer.shape.total_chunks ||
      (offer.chunk_hashes_hash && chunk_hashes_digest(hashes) != *offer.chunk_hashes_hash))
    return err(Refusal{MessageError::bad_hash, "hashes",
                       "the chunk hashes do not match the offer; rebuild the offer from the file"});
  Swarm s(offer, config);
  s.hashes_ = std::move(hashes);
  if (!s.offer_.chunk_hashes_hash) s.offer_.chunk_hashes_hash = chunk_hashes_digest(s.hashes_);
  s.manifest_ready_ = true;
  s.began_ = true;
  s.completed_emitted_ = true;
  s.phase_ = Phase::downloading;
  for (std::uint32_t i = 0; i < offer.shape.total_chunks; ++i) s.have_.set(i);
  return s;
}

Result<Swarm, Refusal> Swarm::fetch(const Offer& offer, PeerId offered_by,
                                    const SwarmConfig& config, std::int64_t now_ms) {
  if (auto bad = check_shape(offer.shape)) return err(*bad);
  if (!offer.chunk_hashes_hash)
    return err(Refusal{MessageError::missing_field, "payload.chunkHashesHash",
                       "the offer has no digest of its chunk hashes; ask for a fresh offer"});
  Swarm s(offer, config);
  s.picker_ = Picker(offer.shape.total_chunks, config.ties);
  s.manifest_source_ = offered_by;
  if (!offer.paged()) {
    if (chunk_hashes_digest(offer.inline_hashes) != *offer.chunk_hashes_hash)
      return err(Refusal{MessageError::bad_hash, "payload.chunkHashesHash",
                         "the inline hashes do not match the digest"});
    s.hashes_ = offer.inline_hashes;
    s.finish_manifest();
    return s;
  }
  // Asked for: the one place a whole manifest is allocated (§ Why the manifest is paged).
  s.hashes_.resize(offer.shape.total_chunks);
  s.page_received_.assign(offer.pages, 0);
  s.page_requested_ms_.assign(offer.pages, INT64_MIN);
  s.page_source_.assign(offer.pages, 0);
  s.request_manifest_pages(now_ms);
  return s;
}

void Swarm::finish_manifest() {
  manifest_ready_ = true;
  phase_ = Phase::ready;
  page_received_ = {};
  page_requested_ms_ = {};
  page_source_ = {};
  emit(ManifestReady{});
}

void Swarm::request_manifest_pages(std::int64_t now_ms) {
  if (phase_ != Phase::manifest || !manifest_source_) return;
  std::uint32_t outstanding = 0;
  for (std::uint32_t p = 0; p < offer_.pages; ++p)
    if (!page_received_[p] && page_requested_ms_[p] != INT64_MIN &&
        now_ms - page_requested_ms_[p] < kManifestPageTimeoutMs)
      ++outstanding;
  ManifestRequest req;
  req.file_id = offer_.file_id;
  req.page_size = offer_.page_size;
  for (std::uint32_t p = 0; p < offer_.pages && outstanding < kManifestPagesInFlight; ++p) {
    if (page_received_[p]) continue;
    if (page_requested_ms_[p] != INT64_MIN &&
        now_ms - page_requested_ms_[p] < kManifestPageTimeoutMs)
      continue;
    page_requested_ms_[p] = now_ms;
    req.pages.push_back(p);
    ++outstanding;
    if (req.pages.size() == kMaxPagesPerRequest) break;
  }
  if (req.pages.empty()) return;
  if (!takes_pages_from(*manifest_source_) && asked_sources_.size() < kMaxPeersPerFile)
    asked_sources_.push_back(*manifest_source_);
  Message m = std::move(req);
  emit(SendControl{manifest_source_, std::string(message_type(m)), encode_payload(m)});
}

bool Swarm::takes_pages_from(PeerId peer) const {
  return std::find(asked_sources_.begin(), asked_sources_.end(), peer) != asked_sources_.end();
}

bool Swarm::manifest_stalled(TimeMs now_ms) const {
  if (phase_ != Phase::manifest || !manifest_source_ || single_source_) return false;
  for (std::uint32_t p = 0; p < offer_.pages; ++p)
    if (!page_received_[p] && page_requested_ms_[p] != INT64_MIN &&
        now_ms - page_requested_ms_[p] >= kManifestPageTimeoutMs)
      return true;
  return false;
}

void Swarm::switch_manifest_source(PeerId source, TimeMs now_ms) {
  if (phase_ != Phase::manifest || single_source_) return;
  manifest_source_ = source;
  request_manifest_pages(now_ms);
}

void Swarm::on_manifest_page(PeerId peer, const ManifestPage& page, std::int64_t now_ms) {
  // Every check happens before the page's hashes are copied anywhere (§ Untrusted wire input).
  // Pages are taken only from the peers asked: anyone else's could only poison the list.
  if (phase_ != Phase::manifest || !takes_pages_from(peer)) return;
  if (page.chunk_hashes_hash != *offer_.chunk_hashes_hash || page.page_size != offer_.page_size ||
      page.total_pages != offer_.pages || page.page >= offer_.pages)
    return;  // a page of some other manifest: not ours to store
  const std::uint32_t first = page.page * offer_.page_size;
  const std::uint32_t expected = std::min(offer_.page_size, offer_.shape.total_chunks - first);
  if (page.hashes.size() != expected || page_received_[page.page]) return;
  std::copy(page.hashes.begin(), page.hashes.end(), hashes_.begin() + first);
  page_received_[page.page] = 1;
  page_source_[page.page] = peer;
  if (++pages_received_ < offer_.pages) {
    request_manifest_pages(now_ms);
    return;
  }
  if (chunk_hashes_digest(hashes_) != *offer_.chunk_hashes_hash) {
    // Some page lied. Nothing was opened on disk; start the assembly over.
    const PeerId first_source = page_source_[0];
    const bool one_source = std::all_of(page_source_.begin(), page_source_.end(),
                                        [&](PeerId s) { return s == first_source; });
    restart_manifest();
    if (!one_source) {
      // Pages from several peers cannot say which one lied: again from the current source
      // alone, and from then on one source at a time, so that a second miss names its liar.
      ++stats_.manifest_restarts;
      single_source_ = true;
      request_manifest_pages(now_ms);
      return;
    }
    manifest_source_.reset();  // never asked again: the host names another (retry_manifest_from)
    emit(Failed{"manifest_digest_mismatch",
                "the assembled chunk-hash list does not match the offer's chunkHashesHash; the "
                "pages were discarded before any part file was opened. Fetch the manifest again "
                "from a peer you trust.",
                first_source});
    return;
  }
  finish_manifest();
}

void Swarm::handle_resume_done(const Bitfield& verified, std::int64_t now_ms) {
  if (!manifest_ready_ || began_) return;
  began_ = true;
  phase_ = Phase::downloading;
  for (std::uint32_t i = 0; i < offer_.shape.total_chunks; ++i)
    if (verified.test(i)) {
      have_.set(i);
      picker_.remove(i);
    }
  if (have_.all()) {
    // § Resume: a complete part file finishes at once, since nothing else would drive it.
    completed_emitted_ = true;
    emit(Completed{});
  }
  // § Startup: tell everyone what we hold (and lack), so holders answer at once.
  broadcast_bitfield(false);
  next_announce_ms_ = now_ms + config_.announce_interval_ms;
  plan(now_ms);
}

void Swarm::handle_peer_open(PeerId peer, const PeerCaps& caps, std::int64_t now_ms) {
  if (peers_.count(peer) || peers_.size() >= kMaxPeersPerFile) return;
  Peer p;
  p.caps = caps;
  p.has = Bitfield(offer_.shape.total_chunks);
  const std::uint32_t longest = offer_.shape.total_chunks ? offer_.shape.chunk_length(0) : 0;
  p.binary =
      config_.binary_lane && caps.binary_lane && chunk_fits_binary(longest, caps.max_message_size);
  p.usable = p.binary || chunk_fits_base64(longest, caps.max_message_size);
  peers_.emplace(peer, std::move(p));
  peer_order_.push_back(peer);
  // A new connection learns what we hold straight away (unicast, so it is not answered).
  if (began_ && have_.count() > 0) send_bitfield_to(peer);
  plan(now_ms);
}

void Swarm::handle_peer_closed(PeerId peer, std::int64_t) {
  auto it = peers_.find(peer);
  if (it == peers_.end()) return;
  abandon_peer(peer);
  for (std::uint32_t w = 0; w < it->second.has.word_count(); ++w) {
    std::uint64_t bits = it->second.has.word(w);
    while (bits) {
      picker_.decrement(std::uint32_t(w * 64 + __builtin_ctzll(bits)));
      bits &= bits - 1;
    }
  }
  peers_.erase(it);
  peer_order_.erase(std::find(peer_order_.begin(), peer_order_.end(), peer));
}

void Swarm::abandon_peer(PeerId peer) {
  std::vector<std::uint32_t> gone;
  for (const auto& [index, f] : inflight_)
    if (f.peer == peer) gone.push_back(index);
  for (std::uint32_t i : gone) release(i);
}

void Swarm::release(std::uint32_t index) {
  auto it = inflight_.find(index);
  if (it == inflight_.end()) return;
  auto p = peers_.find(it->second.peer);
  if (p != peers_.end() && p->second.in_flight) --p->second.in_flight;
  by_token_.erase(it->second.token);
  busy_.reset(index);
  inflight_.erase(it);
}

void Swarm::apply_bitfield(Peer& p, ByteView bits) {
  for (std::uint32_t c = 0; c < offer_.shape.total_chunks; ++c) {
    const bool on = Bitfield::wire_test(bits, c);
    if (on && p.has.set(c))
      picker_.increment(c);
    else if (!on && p.has.reset(c))
      picker_.decrement(c);
  }
}

Message Swarm::announce_message() const {
  return Announce{offer_.file_id, offer_.shape.total_chunks, have_.to_wire()};
}

void Swarm::send_bitfield_to(PeerId peer) {
  const Peer& p = peers_.at(peer);
  if (announce_fits(offer_.shape.total_chunks, p.caps.max_message_size)) {
    Message m = announce_message();
    emit(SendControl{peer, std::string(message_type(m)), encode_payload(m)});
    return;
  }
  // The whole bitfield does not fit this peer's messages, and the public implementation refuses
  // a partial one: what we hold goes as swarm_have lists instead, each within the limit (an index
  // takes at most 7 digits and a comma; 4,096 of them fit the 65,536 every peer accepts).
  const std::size_t room = max_payload_bytes(p.caps.max_message_size);
  const std::size_t per =
      std::clamp<std::size_t>(room > 128 ? (room - 128) / 8 : 1, 1, kMaxHaveIndexes);
  Have h;
  h.file_id = offer_.file_id;
  for (std::uint32_t c = 0; c < offer_.shape.total_chunks; ++c) {
    if (!have_.test(c)) continue;
    h.indexes.push_back(c);
    if (h.indexes.size() == per) {
      Message m = h;
      emit(SendControl{peer, std::string(message_type(m)), encode_payload(m)});
      h.indexes.clear();
    }
  }
  if (!h.indexes.empty()) {
    Message m = std::move(h);
    emit(SendControl{peer, std::string(message_type(m)), encode_payload(m)});
  }
}

void Swarm::broadcast_bitfield(bool periodic) {
  // One whole bitfield to the room. A peer whose message limit cannot carry it refuses it at its
  // transport (harmless); on our own occasions (startup, not the periodic refresh, which would
  // repeat the lists every interval) such a peer gets our chunks as swarm_have lists instead.
  bool all_fit = true;
  for (const auto& [id, p] : peers_)
    if (!announce_fits(offer_.shape.total_chunks, p.caps.max_message_size)) all_fit = false;
  if (all_fit) {
    // A bitfield to everyone says all that the pending haves would.
    unannounced_.clear();
    haves_due_ms_ = INT64_MAX;
  }
  Message m = announce_message();
  emit(SendControl{std::nullopt, std::string(message_type(m)), encode_payload(m)});
  if (all_fit || periodic) return;
  for (PeerId id : peer_order_)
    if (!announce_fits(offer_.shape.total_chunks, peers_.at(id).caps.max_message_size) &&
        have_.count() > 0)
      send_bitfield_to(id);
}

void Swarm::handle_message(PeerId peer, const Message& m, bool directed, std::int64_t now_ms) {
  auto it = peers_.find(peer);
  if (auto* page = std::get_if<ManifestPage>(&m)) {
    if (page->file_id == offer_.file_id) on_manifest_page(peer, *page, now_ms);
    return;
  }
  if (it == peers_.end()) return;
  Peer& p = it->second;
  if (auto* a = std::get_if<Announce>(&m)) {
    if (a->file_id != offer_.file_id || a->total_chunks != offer_.shape.total_chunks) return;
    apply_bitfield(p, ByteView(a->bits));
    // § Startup: answer a broadcast bitfield with ours, unicast, only when we hold something the
    // peer lacks. Replies are never answered, so the exchange ends after one round.
    if (config_.startup_reply && !directed && began_ && have_.has_any_missing_from(p.has)) {
      ++stats_.startup_replies;
      send_bitfield_to(peer);
    }
    plan(now_ms);
  } else if (auto* h = std::get_if<Have>(&m)) {
    if (h->file_id != offer_.file_id) return;
    for (std::uint32_t i : h->indexes)
      if (p.has.set(i)) picker_.increment(i);
    plan(now_ms);
  } else if (auto* r = std::get_if<Request>(&m)) {
    if (r->file_id == offer_.file_id) serve_request(peer, *r);
  } else if (auto* q = std::get_if<ManifestRequest>(&m)) {
    if (q->file_id == offer_.file_id) serve_manifest(peer, *q);
  }
}

void Swarm::serve_request(PeerId peer, const Request& req) {
  if (!have_.test(req.index)) return;  // we never had it, or lost it: the requester times out
  const Peer& p = peers_.at(peer);
  const std::uint32_t len = offer_.shape.chunk_length(req.index);
  // § Two lanes: the answer format is chosen per request.
  if (req.bin && config_.binary_lane && p.caps.binary_lane &&
      chunk_fits_binary(len, p.caps.max_message_size)) {
    emit(ServeChunk{peer, req.index, true});
  } else if (chunk_fits_base64(len, p.caps.max_message_size)) {
    emit(ServeChunk{peer, req.index, false});
  } else {
    ++stats_.requests_refused_too_large;
  }
}

void Swarm::serve_manifest(PeerId peer, const ManifestRequest& req) {
  // Any page size the parser let through (1..kMaxPageHashes), whatever size our own offer named,
  // and for an inline offer too: the public implementation answers in the size asked, and asks in
  // the size of the first offer it saw for the file, which need not be ours. Each page once.
  if (!manifest_ready_ || !offer_.chunk_hashes_hash || req.page_size == 0) return;
  const std::uint32_t size = req.page_size;
  const std::uint32_t total_pages = (offer_.shape.total_chunks + size - 1) / size;
  std::vector<std::uint32_t> served;
  for (std::uint32_t page : req.pages) {
    if (page >= total_pages || std::find(served.begin(), served.end(), page) != served.end())
      continue;
    served.push_back(page);
    ManifestPage out;
    out.file_id = offer_.file_id;
    out.page = page;
    out.total_pages = total_pages;
    out.page_size = size;
    out.chunk_hashes_hash = *offer_.chunk_hashes_hash;
    const std::uint32_t first = page * size;
    const std::uint32_t n = std::min(size, offer_.shape.total_chunks - first);
    out.hashes.assign(hashes_.begin() + first, hashes_.begin() + first + n);
    Message m = std::move(out);
    emit(SendControl{peer, std::string(message_type(m)), encode_payload(m)});
  }
}

ChunkOutcome Swarm::handle_chunk(PeerId peer, std::uint32_t index, ByteView data,
                                 std::int64_t now_ms) {
  // Hashed only when the digest can decide anything: not for a duplicate or a wrong length.
  return handle_chunk_digest(peer, index, data.size,
                             wants_chunk(index, data.size) ? sha256(data) : Sha256Digest{}, now_ms);
}

ChunkOutcome Swarm::handle_chunk_digest(PeerId peer, std::uint32_t index, std::size_t length,
                                        const Sha256Digest& digest, std::int64_t now_ms) {
  if (!began_ || index >= offer_.shape.total_chunks) return ChunkOutcome::unexpected;
  auto pit = peers_.find(peer);
  auto fit = inflight_.find(index);
  const bool ours = fit != inflight_.end() && fit->second.peer == peer;
  if (have_.test(index)) {
    ++stats_.duplicates;
    if (pit != peers_.end()) {
      pit->second.last_delivery_ms = now_ms;
      pit->second.misses = 0;
    }
    return ChunkOutcome::duplicate;
  }
  if (length != offer_.shape.chunk_length(index) || digest != hashes_[index]) {
    ++stats_.chunks_bad;
    if (ours) release(index);
    plan(now_ms);
    return ChunkOutcome::bad_hash;
  }
  if (pit != peers_.end()) {
    Peer& p = pit->second;
    // Anything delivered proves the path works: a slow peer is not a dead one.
    p.last_delivery_ms = now_ms;
    p.misses = 0;
    if (ours && fit->second.accepted) {
      const double sample = double(now_ms - fit->second.since_ms);
      if (!p.timed) {
        p.srtt = sample;
        p.rttvar = sample / 2;
        p.timed = true;
      } else {
        p.rttvar = 0.75 * p.rttvar + 0.25 * std::fabs(p.srtt - sample);
        p.srtt = 0.875 * p.srtt + 0.125 * sample;
      }
    }
  }
  if (fit != inflight_.end()) release(index);
  have_.set(index);
  picker_.remove(index);
  ++stats_.chunks_stored;
  unannounced_.push_back(index);
  if (unannounced_.size() == 1) haves_due_ms_ = now_ms + kHaveBatchMs;
  if (unannounced_.size() >= kHaveBatchMax || have_.all()) flush_haves();
  if (have_.all() && !completed_emitted_) {
    completed_emitted_ = true;
    emit(Completed{});
  }
  plan(now_ms);
  return ChunkOutcome::stored;
}

void Swarm::handle_send_result(std::uint64_t token, bool accepted, std::int64_t now_ms) {
  auto t = by_token_.find(token);
  if (t == by_token_.end()) return;
  auto f = inflight_.find(t->second);
  if (f == inflight_.end() || f->second.accepted) return;
  if (accepted) {
    // Outstanding from now on: the clock starts when the request actually left.
    f->second.accepted = true;
    f->second.since_ms = now_ms;
    ++stats_.requests_sent;
    return;
  }
  ++stats_.requests_rejected;
  auto p = peers_.find(f->second.peer);
  if (p != peers_.end()) p->second.blocked_until_ms = now_ms + kRejectBackoffMs;
  release(t->second);
}

void Swarm::handle_transport_down(std::int64_t) {
  // § Surviving a network drop: the outage is ours. Abandon everything outstanding without
  // charging anyone, and plan again once we are back.
  transport_down_ = true;
  stats_.abandoned_on_reconnect += inflight_.size();
  std::vector<std::uint32_t> all;
  all.reserve(inflight_.size());
  for (const auto& [index, f] : inflight_) all.push_back(index);
  for (std::uint32_t i : all) release(i);
  for (auto& [id, p] : peers_) p.misses = 0;
}

void Swarm::handle_transport_up(std::int64_t now_ms) {
  transport_down_ = false;
  rebuild_hold_until_ms_ = now_ms + kRebuildGraceMs;
  plan(now_ms);
}

std::int64_t Swarm::timeout_for(PeerId peer) const {
  auto it = peers_.find(peer);
  if (it == peers_.end() || !it->second.timed) return kTimeoutCeilingMs;
  const Peer& p = it->second;
  const double t = p.srtt + 4 * p.rttvar;
  return std::clamp<std::int64_t>(std::int64_t(std::ceil(t)), kTimeoutFloorMs, kTimeoutCeilingMs);
}

void Swarm::flush_haves() {
  if (unannounced_.empty()) return;
  Have h;
  h.file_id = offer_.file_id;
  h.indexes = std::move(unannounced_);
  unannounced_.clear();
  haves_due_ms_ = INT64_MAX;
  Message m = std::move(h);
  emit(SendControl{std::nullopt, std::string(message_type(m)), encode_payload(m)});
}

void Swarm::handle_timeout(TimeMs now_ms) {
  if (now_ms >= haves_due_ms_) flush_haves();
  if (phase_ == Phase::manifest) {
    request_manifest_pages(now_ms);
    return;
  }
  // Expire requests. Collect first: release() edits the map.
  std::vector<std::uint32_t> expired;
  for (const auto& [index, f] : inflight_)
    if (f.accepted && now_ms - f.since_ms >= timeout_for(f.peer)) expired.push_back(index);
  std::sort(expired.begin(), expired.end());  // deterministic order
  for (std::uint32_t index : expired) {
    const InFlight f = inflight_.at(index);
    release(index);
    ++stats_.timeouts;
    auto p = peers_.find(f.peer);
    if (p == peers_.end()) continue;
    // § Losing a chunk: a peer that delivered something after this request could first have been
    // answered (half a smoothed RTT after it left) is alive: slow, or it lost one chunk, and is
    // not charged. A peer silent since then missed it.
    const std::int64_t answerable_ms =
        f.since_ms + (p->second.timed ? std::int64_t(p->second.srtt / 2) : 0);
    if (p->second.last_delivery_ms < answerable_ms) {
      ++p->second.misses;
      ++stats_.misses_charged;
    }
  }
  // § Surviving a network drop: several misses in a row, nothing delivered between: rebuild.
  if (rebuild_allowed(now_ms)) {
    for (PeerId id : std::vector<PeerId>(peer_order_)) {
      Peer& p = peers_.at(id);
      if (p.down || p.misses < kMissesBeforeRebuild) continue;
      abandon_peer(id);
      p.down = true;
      p.misses = 0;
      ++stats_.rebuilds;
      emit(RebuildPeer{id});
    }
  }
  if (began_ && now_ms >= next_announce_ms_ && !transport_down_) {
    broadcast_bitfield(true);
    next_announce_ms_ = now_ms + config_.announce_interval_ms;
  }
  plan(now_ms);
}

Timeout Swarm::poll_timeout() const {
  std::int64_t wake = began_ ? next_announce_ms_ : INT64_MAX;
  wake = std::min(wake, haves_due_ms_);
  if (phase_ == Phase::manifest) {
    for (std::uint32_t p = 0; p < offer_.pages; ++p)
      if (!page_received_[p] && page_requested_ms_[p] != INT64_MIN)
        wake = std::min(wake, page_requested_ms_[p] + kManifestPageTimeoutMs);
  }
  for (const auto& [index, f] : inflight_)
    if (f.accepted) wake = std::min(wake, f.since_ms + timeout_for(f.peer));
  for (const auto& [id, p] : peers_) {
    if (p.misses >= kMissesBeforeRebuild && !p.down)
      wake = std::min(wake, std::max(rebuild_hold_until_ms_, std::int64_t(0)));
    if (p.blocked_until_ms != INT64_MIN) wake = std::min(wake, p.blocked_until_ms);
  }
  if (wake == INT64_MAX) return std::nullopt;
  return wake;
}

void Swarm::hold_requests(bool held, TimeMs now_ms) {
  if (requests_held_ == held) return;
  requests_held_ = held;
  if (!held) plan(now_ms);
}

void Swarm::retry_manifest_from(PeerId source, TimeMs now_ms) {
  if (phase_ != Phase::manifest) return;
  manifest_source_ = source;
  // The list starts over from the new source alone: pages mixed from two peers could not say
  // which one lied if the digest then failed (a few pages again is the price).
  restart_manifest();
  request_manifest_pages(now_ms);
}

void Swarm::restart_manifest() {
  std::fill(page_received_.begin(), page_received_.end(), 0);
  std::fill(page_requested_ms_.begin(), page_requested_ms_.end(), INT64_MIN);
  pages_received_ = 0;
  asked_sources_.clear();
}

void Swarm::plan(std::int64_t now_ms) {
  if (!began_ || transport_down_ || requests_held_ || picker_.needed_count() == 0 ||
      peer_order_.empty())
    return;
  const std::size_t n = peer_order_.size();
  // Round-robin over peers, one request at a time, so no peer is favoured by connection order.
  for (std::uint32_t round = 0; round < config_.window_per_peer; ++round) {
    bool any = false;
    for (std::size_t k = 0; k < n && inflight_.size() < config_.window_total; ++k) {
      const PeerId id = peer_order_[(plan_cursor_ + k) % n];
      Peer& p = peers_.at(id);
      if (p.down || !p.usable || p.in_flight >= config_.window_per_peer ||
          p.misses >= kMissesBeforeRebuild || now_ms < p.blocked_until_ms)
        continue;
      auto pick = picker_.pick(p.has, busy_, rng_);
      if (!pick) continue;
      any = true;
      const std::uint32_t index = *pick;
      const std::uint64_t token = next_token_++;
      busy_.set(index);
      ++p.in_flight;
      inflight_[index] = InFlight{id, token, false, now_ms};
      by_token_[token] = index;
      Request r;
      r.file_id = offer_.file_id;
      r.index = index;
      r.bin = p.binary;
      Message m = r;
      emit(SendRequest{id, index, token, encode_payload(m)});
    }
    if (!any || inflight_.size() >= config_.window_total) break;
  }
  plan_cursor_ = (plan_cursor_ + 1) % n;
}

std::size_t Swarm::memory_bytes() const {
  return sizeof(*this) + hashes_.capacity() * sizeof(ChunkHash) + have_.memory_bytes() +
         busy_.memory_bytes() + picker_.memory_bytes() + page_received_.capacity() +
         page_requested_ms_.capacity() * sizeof(std::int64_t) +
         (page_source_.capacity() + asked_sources_.capacity()) * sizeof(PeerId);
}

std::size_t Swarm::peer_memory_bytes() const {
  return sizeof(Peer) + (std::size_t(offer_.shape.total_chunks) + 63) / 64 * 8 + sizeof(PeerId) +
         4 * sizeof(void*);  // map node overhead
}

}  // namespace tether::swarm
