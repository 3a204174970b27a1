// The signaling negotiation between two peers (signaling.hpp).
#include "bus/signaling.hpp"

#include <algorithm>
#include <cmath>

#include "common/json.hpp"
#include "common/utf8.hpp"

namespace tether::bus {

namespace {
bool clean_id(std::string_view s, std::size_t max) {
  if (s.empty() || s.size() > max || !is_valid_utf8(ByteView(s))) return false;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

const std::string* string_field(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

}  // namespace

namespace {
Json candidate_value(const Candidate& c) {
  Json j = Json::object();
  j["candidate"] = c.candidate;
  j["sdpMid"] = c.sdp_mid ? Json(*c.sdp_mid) : Json(nullptr);
  j["sdpMLineIndex"] = c.sdp_mline_index ? Json(*c.sdp_mline_index) : Json(nullptr);
  return j;
}
}  // namespace

const char* signaling_action_name(SignalingAction::Kind k) {
  using K = SignalingAction::Kind;
  switch (k) {
    case K::create: return "create";
    case K::offer: return "offer";
    case K::answer: return "answer";
    case K::accept: return "accept";
    case K::candidate: return "candidate";
    case K::close: return "close";
    case K::signal: return "signal";
  }
  return "";
}

const char* signaling_event_name(SignalingEvent::Kind k) {
  using K = SignalingEvent::Kind;
  switch (k) {
    case K::open: return "open";
    case K::close: return "close";
    case K::roster: return "roster";
    case K::reconnect: return "reconnect";
    case K::signaling_down: return "signaling-down";
  }
  return "";
}

std::string candidate_json(const Candidate& c) {
  return to_json(candidate_value(c));
}

Signaling::Signaling(SignalingOptions options) : options_(std::move(options)), rng_(options_.seed) {
  static const char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  for (std::size_t i = 0; i < kInstanceChars; ++i) instance_ += kDigits[rng_.below(36)];
}

SignalingAction& Signaling::action(SignalingAction::Kind kind, const std::string& peer,
                                   const std::string& gen) {
  SignalingAction& a = actions_.emplace();
  a.kind = kind;
  a.peer = peer;
  a.gen = gen;
  return a;
}

bool Signaling::in_roster(std::string_view peer) const {
  return std::find(roster_.begin(), roster_.end(), peer) != roster_.end();
}

bool Signaling::healthy(std::string_view peer) const {
  auto it = peers_.find(std::string(peer));
  return it != peers_.end() && it->second.open && !it->second.failed_state;
}

bool Signaling::is_open(std::string_view peer) const {
  auto it = peers_.find(std::string(peer));
  return it != peers_.end() && it->second.open;
}

Signaling::Peer* Signaling::current(std::string_view peer, std::string_view gen) {
  auto it = peers_.find(std::string(peer));
  return it != peers_.end() && it->second.gen == gen ? &it->second : nullptr;
}

void Signaling::signal(const std::string& peer, std::string data_json) {
  if (!signaling_up_ || closed_) return;  // nothing carries it; a welcome looks at the peer again
  action(SignalingAction::Kind::signal, peer, std::string()).text = std::move(data_json);
}

void Signaling::teardown(const std::string& peer) {
  auto it = peers_.find(peer);
  if (it == peers_.end()) return;
  const bool was_open = it->second.open;
  const std::string gen = it->second.gen;
  peers_.erase(it);
  action(SignalingAction::Kind::close, peer, gen);
  if (was_open) {
    SignalingEvent& e = events_.emplace();
    e.kind = SignalingEvent::Kind::close;
    e.peer = peer;
  }
}

Signaling::Peer& Signaling::make_connection(const std::string& peer, std::string gen, bool offerer,
                                            TimeMs now_ms) {
  teardown(peer);
  Peer& p = peers_[peer];
  p.gen = std::move(gen);
  p.offerer = offerer;
  p.open_deadline = now_ms + options_.open_timeout_ms;
  action(SignalingAction::Kind::create, peer, p.gen).offerer = offerer;
  return p;
}

void Signaling::offer(const std::string& peer, TimeMs now_ms) {
  std::string gen = instance_ + "." + std::to_string(++gen_counter_);
  Peer& p = make_connection(peer, std::move(gen), true, now_ms);
  ++stats_.offers;
  action(SignalingAction::Kind::offer, peer, p.gen);
}

void Signaling::answer(const std::string& peer, std::string gen, std::string sdp, TimeMs now_ms) {
  Peer& p = make_connection(peer, std::move(gen), false, now_ms);
  ++stats_.answers;
  action(SignalingAction::Kind::answer, peer, p.gen).text = std::move(sdp);
}

void Signaling::connect(const std::string& peer, TimeMs now_ms) {
  if (closed_) return;
  if (!signaling_up_) {
    if (std::find(pending_rebuilds_.begin(), pending_rebuilds_.end(), peer) ==
        pending_rebuilds_.end()) {
      pending_rebuilds_.push_back(peer);
    }
    return;
  }
  if (we_offer(peer)) {
    offer(peer, now_ms);
    return;
  }
  teardown(peer);
  signal(peer, R"({"k":"renegotiate"})");
  // The offerer may not hear us (its signaling may be down this instant): ask again unless an
  // offer arrived meanwhile.
  ask_again_[peer] = now_ms + options_.open_timeout_ms;
}

void Signaling::request_rebuild(const std::string& peer, TimeMs now_ms) {
  ++stats_.rebuilds;
  connect(peer, now_ms);
}

void Signaling::rebuild(std::string_view peer, TimeMs now_ms) {
  if (!clean_id(peer, kMaxSignalingPeerIdBytes) || peer == options_.self_id) return;
  request_rebuild(std::string(peer), now_ms);
}

void Signaling::set_roster(const std::vector<std::string>& members) {
  roster_.clear();
  for (const auto& m : members) {
    if (m == options_.self_id || !clean_id(m, kMaxSignalingPeerIdBytes) || in_roster(m)) continue;
    roster_.push_back(m);
  }
  SignalingEvent& e = events_.emplace();
  e.kind = SignalingEvent::Kind::roster;
  e.roster = roster_;
}

void Signaling::handle_welcome(const std::vector<std::string>& members, TimeMs now_ms) {
  if (closed_) return;
  signaling_up_ = true;
  set_roster(members);
  // § Surviving a network drop: the "already viewed" set is cleared on every welcome. Each member
  // is looked at afresh: a healthy connection is kept, anything else is rebuilt.
  std::vector<std::string> again = std::move(pending_rebuilds_);
  pending_rebuilds_.clear();
  const std::vector<std::string> roster = roster_;
  for (const auto& p : roster) {
    if (!healthy(p) || std::find(again.begin(), again.end(), p) != again.end()) connect(p, now_ms);
  }
  if (ever_welcomed_) {
    ++stats_.signaling_reconnects;
    events_.emplace().kind = SignalingEvent::Kind::reconnect;
  }
  ever_welcomed_ = true;
}

void Signaling::handle_roster(const std::vector<std::string>& members, TimeMs) {
  if (closed_) return;
  // A member that left may keep a working data path (a signaling blip): its connection stays; a
  // dead one is noticed by its channel or by the swarm's misses. A member that joined initiates.
  set_roster(members);
}

void Signaling::handle_signaling_down(TimeMs) {
  if (!signaling_up_) return;
  signaling_up_ = false;
  events_.emplace().kind = SignalingEvent::Kind::signaling_down;
}

void Signaling::handle_signal(std::string_view from, std::string_view data_json, TimeMs now_ms) {
  if (closed_) return;
  if (!clean_id(from, kMaxSignalingPeerIdBytes) || from == options_.self_id ||
      data_json.size() > kMaxSignalDataBytes) {
    ++stats_.refused_signals;
    return;
  }
  JsonParse parsed = parse_json(ByteView(data_json));
  if (!parsed.ok() || !parsed.value.is_object()) {
    ++stats_.refused_signals;
    return;
  }
  const Json& d = parsed.value;
  const std::string peer(from);
  const std::string* k = string_field(d, "k");
  const std::string* g = string_field(d, "gen");
  const std::string* gen = g && !g->empty() && g->size() <= kMaxGenerationBytes ? g : nullptr;
  const std::string* sdp = string_field(d, "sdp");
  if (sdp && sdp->size() > kMaxSessionDescriptionBytes) sdp = nullptr;
  if (k && *k == "offer") {
    // Only the lower id offers; an offer from a higher id is a confused or hostile peer.
    if (!we_offer(peer) && gen && sdp) {
      ask_again_.erase(peer);
      answer(peer, *gen, *sdp, now_ms);
      return;
    }
  } else if (k && *k == "answer") {
    Peer* p = gen ? current(peer, *gen) : nullptr;
    if (p && p->offerer && sdp && !p->remote_set && !p->accepting) {
      p->accepting = true;
      action(SignalingAction::Kind::accept, peer, p->gen).text = *sdp;
      return;
    }
  } else if (k && *k == "ice") {
    Peer* p = gen ? current(peer, *gen) : nullptr;
    auto c = d.find("c");
    if (p && c != d.end() && c->is_object()) {
      const std::string* cand = string_field(*c, "candidate");
      if (cand && cand->size() <= kMaxCandidateBytes) {
        Candidate init;
        init.candidate = *cand;
        if (const std::string* mid = string_field(*c, "sdpMid");
            mid && mid->size() <= kMaxGenerationBytes) {
          init.sdp_mid = *mid;
        }
        auto idx = c->find("sdpMLineIndex");
        if (idx != c->end() && idx->is_number()) {
          const double v = idx->get<double>();
          if (std::isfinite(v) && v >= 0 && v == std::floor(v) && v < 65536)
            init.sdp_mline_index = v;
        }
        if (p->remote_set) {
          action(SignalingAction::Kind::candidate, peer, p->gen).candidate = std::move(init);
          return;
        }
        if (p->pending.size() < kMaxPendingCandidates) {
          p->pending.push_back(std::move(init));
          return;
        }
      }
    }
  } else if (k && *k == "renegotiate") {
    if (we_offer(peer)) {
      offer(peer, now_ms);
      return;
    }
  }
  ++stats_.refused_signals;
}

void Signaling::flush_pending(const std::string& peer, Peer& p) {
  p.remote_set = true;
  std::vector<Candidate> pending = std::move(p.pending);
  p.pending.clear();
  for (auto& c : pending)
    action(SignalingAction::Kind::candidate, peer, p.gen).candidate = std::move(c);
}

void Signaling::handle_description(std::string_view peer, std::string_view gen,
                                   std::string_view sdp, TimeMs) {
  Peer* p = current(peer, gen);
  if (!p || closed_) return;
  const std::string name(peer);
  // A description the other side would refuse (too large, not UTF-8) ends this connection as a
  // failed step does; the open timeout negotiates again.
  if (sdp.size() > kMaxSessionDescriptionBytes || !is_valid_utf8(ByteView(sdp))) {
    teardown(name);
    return;
  }
  Json data = Json::object();
  data["k"] = p->offerer ? "offer" : "answer";
  data["gen"] = p->gen;
  data["sdp"] = std::string(sdp);
  signal(name, to_json(data));
  // The answerer's remote description (the offer) is set by now.
  if (!p->offerer) flush_pending(name, *p);
}

void Signaling::handle_remote_set(std::string_view peer, std::string_view gen, TimeMs) {
  Peer* p = current(peer, gen);
  if (!p || closed_ || !p->offerer) return;
  p->accepting = false;
  flush_pending(std::string(peer), *p);
}

void Signaling::handle_failed(std::string_view peer, std::string_view gen, TimeMs) {
  Peer* p = current(peer, gen);
  if (!p) return;
  // A rejected answer leaves the connection standing (its open timeout negotiates again); a
  // failed offer or answer of our own ends it.
  if (p->accepting) {
    p->accepting = false;
    return;
  }
  teardown(std::string(peer));
}

void Signaling::handle_local_candidate(std::string_view peer, std::string_view gen,
                                       const Candidate& c, TimeMs) {
  Peer* p = current(peer, gen);
  if (!p || c.candidate.empty() || c.candidate.size() > kMaxCandidateBytes ||
      !is_valid_utf8(ByteView(c.candidate)) ||
      (c.sdp_mid &&
       (c.sdp_mid->size() > kMaxGenerationBytes || !is_valid_utf8(ByteView(*c.sdp_mid))))) {
    return;
  }
  Json data = Json::object();
  data["k"] = "ice";
  data["gen"] = p->gen;
  data["c"] = candidate_value(c);
  signal(std::string(peer), to_json(data));
}

void Signaling::handle_channels_open(std::string_view peer, std::string_view gen, TimeMs) {
  Peer* p = current(peer, gen);
  if (!p || p->open || closed_) return;
  p->open = true;
  p->open_deadline.reset();
  SignalingEvent& e = events_.emplace();
  e.kind = SignalingEvent::Kind::open;
  e.peer = std::string(peer);
}

void Signaling::handle_channel_closed(std::string_view peer, std::string_view gen, TimeMs) {
  Peer* p = current(peer, gen);
  if (!p || !p->open) return;
  p->open = false;
  SignalingEvent& e = events_.emplace();
  e.kind = SignalingEvent::Kind::close;
  e.peer = std::string(peer);
}

void Signaling::handle_connection_state(std::string_view peer, std::string_view gen,
                                        std::string_view state, TimeMs now_ms) {
  Peer* p = current(peer, gen);
  if (!p || closed_) return;
  if (state != "failed" && state != "closed") return;
  p->failed_state = true;
  const std::string name(peer);
  teardown(name);
  // A failed path is rebuilt by the offerer when signaling can carry it.
  if (in_roster(name)) request_rebuild(name, now_ms);
}

Timeout Signaling::poll_timeout() const {
  Timeout t;
  for (const auto& [peer, p] : peers_) {
    if (!p.open) t = earliest(t, p.open_deadline);
  }
  for (const auto& [peer, at] : ask_again_) t = earliest(t, at);
  return t;
}

void Signaling::handle_timeout(TimeMs now_ms) {
  if (closed_) return;
  std::vector<std::string> renegotiate;
  for (auto& [peer, p] : peers_) {
    if (p.open || !p.open_deadline || *p.open_deadline > now_ms) continue;
    p.open_deadline.reset();
    // A connection that never opens (a signal lost while the other side's signaling was down) is
    // asked for again.
    if (in_roster(peer)) renegotiate.push_back(peer);
  }
  for (auto it = ask_again_.begin(); it != ask_again_.end();) {
    if (it->second > now_ms) {
      ++it;
      continue;
    }
    const std::string peer = it->first;
    it = ask_again_.erase(it);
    if (peers_.find(peer) == peers_.end() && in_roster(peer) &&
        std::find(renegotiate.begin(), renegotiate.end(), peer) == renegotiate.end()) {
      renegotiate.push_back(peer);
    }
  }
  for (const auto& peer : renegotiate) connect(peer, now_ms);
}

void Signaling::handle_close() {
  if (closed_) return;
  std::vector<std::string> all;
  for (const auto& [peer, p] : peers_) all.push_back(peer);
  for (const auto& peer : all) teardown(peer);
  closed_ = true;
  signaling_up_ = false;
  ask_again_.clear();
  pending_rebuilds_.clear();
}

}  // namespace tether::bus
