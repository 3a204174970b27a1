#include "cockpit/rtc.hpp"

#include <algorithm>
#include <utility>

#include "wire/limits.hpp"

namespace tether::cockpit {

using wire::ErrorCode;

namespace {

// Retried: no answer at all, or an answer that says "later" (timeout, too early, rate limit,
// server trouble). Anything else says the request itself cannot succeed as made.
bool transient_status(int status) {
  return status == 0 || status == 408 || status == 425 || status == 429 || status >= 500;
}

const Json* field(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// A non-empty string field of at most `max` bytes, or nothing.
std::optional<std::string> text_field(const Json& obj, const char* key, std::size_t max) {
  const Json* v = field(obj, key);
  if (!v || !v->is_string()) return std::nullopt;
  const auto& s = v->get_ref<const std::string&>();
  if (s.empty() || s.size() > max) return std::nullopt;
  return s;
}

// The SDP of the answer's sessionDescription when it is of `type`.
std::optional<std::string> description_sdp(const Json& body, const char* type) {
  const Json* d = field(body, "sessionDescription");
  if (!d) return std::nullopt;
  auto t = text_field(*d, "type", 16);
  if (!t || *t != type) return std::nullopt;
  return text_field(*d, "sdp", wire::kMaxSdpBytes);
}

Json session_description(const char* type, const std::string& sdp) {
  Json d = Json::object();
  d["type"] = type;
  d["sdp"] = sdp;
  return d;
}

// A prefix of at most `max` bytes, cut on a code point.
std::string quote(const std::string& s, std::size_t max) {
  std::size_t n = std::min(s.size(), max);
  while (n > 0 && n < s.size() && (std::uint8_t(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

// A message the relay sends, checked by the wire core and against the control bound (an SFU's
// SDP may escape to more than its own size), or nothing.
std::optional<Json> relay_message(Json m) {
  auto v = wire::validate_message(std::move(m), wire::Sender::relay);
  if (!v || to_json(v->body).size() > wire::kMaxControlBytes) return std::nullopt;
  return std::move(v->body);
}

// The entry of an answer's `tracks` for `ch` (the relay names every track by its channel).
const Json* track_entry(const Json& body, const std::string& ch) {
  const Json* tracks = field(body, "tracks");
  if (!tracks || !tracks->is_array()) return nullptr;
  for (const Json& t : *tracks) {
    const Json* name = field(t, "trackName");
    if (name && name->is_string() && name->get_ref<const std::string&>() == ch) return &t;
  }
  return nullptr;
}

// Adds one track's error to a list of them.
void note(std::string& failed, const std::string& ch, const std::string& err) {
  failed += (failed.empty() ? "" : "; ") + ch + ": " + err;
}

// An SFU's per-track error ("" for none): its code and description, quoted.
std::string track_error(const Json& entry) {
  auto code = text_field(entry, "errorCode", wire::kMaxShortTextChars);
  if (!code) return "";
  auto desc = text_field(entry, "errorDescription", kMaxSfuErrorQuoteBytes * 4);
  return *code + (desc ? ": " + quote(*desc, kMaxSfuErrorQuoteBytes) : "");
}

}  // namespace

Rtc::Rtc(std::optional<RtcConfig> config) : enabled_(config.has_value()) {
  if (config) config_ = *config;
  // Without a TURN key the ICE set is fixed: no servers, since the SFU's candidates are reachable
  // directly (docs/webrtc-video.md § TURN).
  if (enabled_ && !config_.turn) ice_version_ = 1;
}

// --- lookups ------------------------------------------------------------------------------------

Rtc::Peer* Rtc::peer(SessionId id) {
  auto it = peers_.find(id);
  return it == peers_.end() ? nullptr : &it->second;
}

const Rtc::Peer* Rtc::peer(SessionId id) const {
  auto it = peers_.find(id);
  return it == peers_.end() ? nullptr : &it->second;
}

Rtc::Peer* Rtc::publisher(const std::string& robot_id) {
  auto it = publishers_.find(robot_id);
  return it == publishers_.end() ? nullptr : peer(it->second);
}

const Rtc::Peer* Rtc::publisher(const std::string& robot_id) const {
  auto it = publishers_.find(robot_id);
  return it == publishers_.end() ? nullptr : peer(it->second);
}

const Rtc::Track* Rtc::available(const std::string& robot_id, const std::string& ch) const {
  const Peer* pub = publisher(robot_id);
  if (!pub || !pub->ready) return nullptr;
  for (const Track& t : pub->tracks)
    if (t.ch == ch) return t.active && !t.redeclare ? &t : nullptr;
  return nullptr;
}

std::vector<SessionId> Rtc::viewers_of(const std::string& robot_id) const {
  auto it = watchers_.find(robot_id);
  if (it == watchers_.end()) return {};
  return std::vector<SessionId>(it->second.begin(), it->second.end());
}

// --- sending ------------------------------------------------------------------------------------

void Rtc::send(const Peer& p, const Json& message, Sessions& sessions, Outbox& out, TimeMs now) {
  Session* s = sessions.find(p.id);
  if (!s || s->closing) return;
  if (p.role == Role::viewer) {
    out.send(s->ep, message);
    return;
  }
  // Everything the broker says to a robot rides its carrier (§ Transport per leg: rtc_ice and
  // rtc_answer do), errors included, so that none is lost as a datagram could be.
  if (Robot* r = sessions.robot_of(*s)) sessions.carrier_message(*r, message, out, now);
}

void Rtc::send_error(const Peer& p, ErrorCode code, const std::string& text, Sessions& sessions,
                     Outbox& out, TimeMs now) {
  send(p, error_message(code, text, wire::kMaxMessageTextChars), sessions, out, now);
}

void Rtc::send_ice(Peer& p, Sessions& sessions, Outbox& out, TimeMs now) {
  if (ice_version_ == 0 || p.ice_version == ice_version_) return;
  Json m = Json::object();
  m["t"] = "rtc_ice";
  m["iceServers"] = ice_;
  p.ice_version = ice_version_;
  send(p, m, sessions, out, now);
}

void Rtc::refuse(Session& s, const std::string& why, Outbox& out) {
  ++drops_["rtc_refused"];
  out.send_error(s.ep, ErrorCode::invalid_control, why);
}

// --- calls --------------------------------------------------------------------------------------

void Rtc::issue(Peer* p, Call call, SfuOp op, const std::string& sfu_session, const Json& body,
                Outbox& out, TimeMs now) {
  const std::uint64_t token = ++next_call_;
  call.peer = p ? p->id : 0;
  call.epoch = p ? p->epoch : 0;
  call.deadline = now + kSfuCallTimeoutMs;
  const std::string text = to_json(body);
  CockpitAction& a = out.push(ActionKind::sfu_call, call.peer);
  a.call = token;
  a.op = op;
  a.sfu_session = sfu_session;
  a.bytes = share(Bytes(text.begin(), text.end()));
  call_deadlines_.emplace(call.deadline, token);
  calls_.emplace(token, std::move(call));
  if (p)
    p->call = token;
  else
    turn_call_ = token;
  ++counters_.calls;
}

void Rtc::cancel(Peer& p, Outbox& out) {
  if (!p.call) return;
  auto it = calls_.find(p.call);
  if (it != calls_.end()) {
    call_deadlines_.erase({it->second.deadline, p.call});
    calls_.erase(it);
  }
  out.push(ActionKind::sfu_cancel, p.id).call = p.call;
  p.call = 0;
}

void Rtc::start_over(Peer& p, Outbox& out) {
  cancel(p, out);
  if (p.retry_at) retries_.erase({*p.retry_at, p.id});
  p.retry_at.reset();
  ++p.epoch;
  p.offer.clear();
  p.sfu.clear();
  p.ready = false;
  p.failures = 0;
  p.tracks.clear();
  p.pulls.clear();
  p.awaiting_answer = false;
  p.answer.clear();
  p.missing.clear();
  p.pulls_made = 0;
}

void Rtc::gone(Peer& p, const std::string& why, Sessions& sessions, Outbox& out, TimeMs now) {
  ++counters_.sessions_gone;
  const bool robot = p.role == Role::robot;
  start_over(p, out);
  send_error(p, ErrorCode::rtc_session_gone,
             why + "; close the peer connection and send a new rtc_offer", sessions, out, now);
  if (robot) advance_watchers(p.robot_id, sessions, out, now);
}

void Rtc::schedule_retry(Peer& p, TimeMs now) {
  ++p.failures;
  const TimeMs delay = kRtcRetryMs[std::min(p.failures, kRtcRetryMs.size()) - 1];
  if (p.retry_at) retries_.erase({*p.retry_at, p.id});
  p.retry_at = now + delay;
  retries_.emplace(*p.retry_at, p.id);
}

// --- sessions -----------------------------------------------------------------------------------

void Rtc::welcomed(const Session& s, Sessions& sessions, Outbox& out, TimeMs now) {
  if (!enabled_ || peers_.count(s.ep.id)) return;
  Peer& p = peers_[s.ep.id];
  p.id = s.ep.id;
  p.role = s.ep.role;
  if (p.role == Role::robot) {
    p.robot_id = s.robot_id;
    publishers_[p.robot_id] = p.id;
  }
  if (ice_version_)
    send_ice(p, sessions, out, now);
  else if (!turn_call_ && !turn_retry_at_)
    mint(out, now);
}

void Rtc::left(SessionId id, Sessions& sessions, Outbox& out, TimeMs now) {
  Peer* p = peer(id);
  if (!p) return;
  cancel(*p, out);
  if (p->retry_at) retries_.erase({*p->retry_at, id});
  const std::string robot_id = p->robot_id;
  const bool robot = p->role == Role::robot;
  if (robot) {
    auto it = publishers_.find(robot_id);
    if (it != publishers_.end() && it->second == id) publishers_.erase(it);
  } else if (!robot_id.empty()) {
    auto wit = watchers_.find(robot_id);
    if (wit != watchers_.end()) {
      wit->second.erase(id);
      if (wit->second.empty()) watchers_.erase(wit);
    }
  }
  peers_.erase(id);
  // The robot's tracks went with its session: its viewers close their pulls of them.
  if (robot) advance_watchers(robot_id, sessions, out, now);
}

void Rtc::viewer_wants(SessionId viewer, const std::string& robot_id, std::set<std::string> tracks,
                       Sessions& sessions, Outbox& out, TimeMs now) {
  Peer* p = peer(viewer);
  if (!p || p->role != Role::viewer) return;
  const bool moved = p->robot_id != robot_id;
  if (moved) {
    auto wit = watchers_.find(p->robot_id);
    if (wit != watchers_.end()) {
      wit->second.erase(viewer);
      if (wit->second.empty()) watchers_.erase(wit);
    }
    if (!robot_id.empty()) watchers_[robot_id].insert(viewer);
    p->robot_id = robot_id;
  }
  if (!moved && tracks == p->wanted) return;
  p->wanted = std::move(tracks);
  advance(*p, sessions, out, now);
}

// --- messages -----------------------------------------------------------------------------------

void Rtc::on_robot_offer(Session& s, const Robot& r, const wire::Message& m, Sessions& sessions,
                         Outbox& out, TimeMs now) {
  Peer* p = peer(s.ep.id);
  if (!p) return;
  const Json* list = field(m.body, "tracks");
  if (!list || list->empty()) {
    refuse(s,
           "a robot's rtc_offer lists its tracks, [{mid, ch}]: which sendonly transceiver carries "
           "which video.webrtc.v1 channel",
           out);
    return;
  }
  std::vector<Track> tracks;
  std::set<std::string> mids;
  for (const Json& t : *list) {
    Track track;
    track.mid = t["mid"].get<std::string>();
    track.ch = t["ch"].get<std::string>();
    auto cit = r.channels.find(track.ch);
    if (cit == r.channels.end() || !cit->second.track || cit->second.tx) {
      refuse(s,
             "rtc_offer names channel " + track.ch +
                 ", which this robot's manifest does not declare as a video.webrtc.v1 rx channel",
             out);
      return;
    }
    if (!mids.insert(track.mid).second ||
        std::any_of(tracks.begin(), tracks.end(),
                    [&](const Track& x) { return x.ch == track.ch; })) {
      refuse(s,
             "rtc_offer names mid " + track.mid + " or channel " + track.ch +
                 " twice: one sendonly transceiver per track channel",
             out);
      return;
    }
    tracks.push_back(std::move(track));
  }
  // A new offer replaces whatever the robot had: its viewers' pulls of the old tracks close.
  const bool had = p->ready || !p->sfu.empty() || p->call;
  start_over(*p, out);
  p->tracks = std::move(tracks);
  p->offer = m.body["sdp"].get<std::string>();
  advance(*p, sessions, out, now);
  if (had) advance_watchers(p->robot_id, sessions, out, now);
}

void Rtc::on_robot_stalled(Session& s, const wire::Message& m, Sessions& sessions, Outbox& out,
                           TimeMs now) {
  Peer* p = peer(s.ep.id);
  if (!p) return;
  const std::string ch = m.body["ch"].get<std::string>();
  auto it =
      std::find_if(p->tracks.begin(), p->tracks.end(), [&](const Track& t) { return t.ch == ch; });
  if (!p->ready || it == p->tracks.end()) {
    refuse(s,
           "rtc_stalled names " + ch +
               ", which is no published track of this robot: offer it first (rtc_offer)",
           out);
    return;
  }
  ++counters_.stalls;
  if (it->redeclare) return;  // already on its way back
  // The SFU collected the track and every pull of it: pulls of this generation are closed, the
  // track is declared again, and its viewers pull the new generation.
  ++it->generation;
  it->active = false;
  it->redeclare = true;
  advance(*p, sessions, out, now);
  advance_watchers(p->robot_id, sessions, out, now);
}

void Rtc::on_viewer_offer(Session& s, const wire::Message& m, Sessions& sessions, Outbox& out,
                          TimeMs now) {
  Peer* p = peer(s.ep.id);
  if (!p) return;
  if (field(m.body, "tracks")) {
    refuse(s,
           "a viewer's rtc_offer carries no tracks: offer one recvonly transceiver, and the relay "
           "pulls the track channels you subscribe to",
           out);
    return;
  }
  // A new offer starts a new SFU session: the old one's pulls are forgotten with it.
  start_over(*p, out);
  p->offer = m.body["sdp"].get<std::string>();
  advance(*p, sessions, out, now);
}

void Rtc::on_viewer_answer(Session& s, const wire::Message& m, Sessions& sessions, Outbox& out,
                           TimeMs now) {
  Peer* p = peer(s.ep.id);
  if (!p) return;
  if (!p->awaiting_answer) {
    refuse(s, "no rtc_offer from the relay waits for an answer", out);
    return;
  }
  p->awaiting_answer = false;
  p->answer = m.body["sdp"].get<std::string>();
  advance(*p, sessions, out, now);
}

// --- what to do next ----------------------------------------------------------------------------

void Rtc::advance(Peer& p, Sessions& sessions, Outbox& out, TimeMs now) {
  if (p.call || p.retry_at) return;
  if (p.role == Role::robot)
    advance_robot(p, out, now);
  else
    advance_viewer(p, sessions, out, now);
}

void Rtc::advance_watchers(const std::string& robot_id, Sessions& sessions, Outbox& out,
                           TimeMs now) {
  for (SessionId v : viewers_of(robot_id))
    if (Peer* p = peer(v)) advance(*p, sessions, out, now);
}

void Rtc::advance_robot(Peer& p, Outbox& out, TimeMs now) {
  if (!p.offer.empty()) {
    if (p.sfu.empty()) {
      issue(&p, Call{Job::robot_session}, SfuOp::new_session, "", Json::object(), out, now);
      return;
    }
    Json tracks = Json::array();
    for (const Track& t : p.tracks) {
      Json e = Json::object();
      e["location"] = "local";
      e["mid"] = t.mid;
      e["trackName"] = t.ch;
      tracks.push_back(std::move(e));
    }
    Json body = Json::object();
    body["sessionDescription"] = session_description("offer", p.offer);
    body["tracks"] = std::move(tracks);
    issue(&p, Call{Job::robot_publish}, SfuOp::new_tracks, p.sfu, body, out, now);
    return;
  }
  if (!p.ready) return;
  // Stalled tracks are declared again on the mids already negotiated (no SDP exchange).
  Call c{Job::robot_declare};
  Json tracks = Json::array();
  for (const Track& t : p.tracks) {
    if (!t.redeclare || c.chs.size() >= wire::kMaxRtcTracks) continue;
    Json e = Json::object();
    e["location"] = "local";
    e["mid"] = t.mid;
    e["trackName"] = t.ch;
    tracks.push_back(std::move(e));
    c.chs.push_back(t.ch);
  }
  if (c.chs.empty()) return;
  Json body = Json::object();
  body["tracks"] = std::move(tracks);
  issue(&p, std::move(c), SfuOp::new_tracks, p.sfu, body, out, now);
}

bool Rtc::wanted_pull(const Peer& v, const Pull& pull) const {
  if (pull.robot_id != v.robot_id || !v.wanted.count(pull.ch)) return false;
  const Track* t = available(pull.robot_id, pull.ch);
  const Peer* pub = publisher(pull.robot_id);
  return t && pub && pub->sfu == pull.publisher && t->generation == pull.generation;
}

void Rtc::advance_viewer(Peer& p, Sessions& sessions, Outbox& out, TimeMs now) {
  if (!p.offer.empty()) {
    Json body = Json::object();
    body["sessionDescription"] = session_description("offer", p.offer);
    issue(&p, Call{Job::viewer_session}, SfuOp::new_session, "", body, out, now);
    return;
  }
  if (!p.ready) return;
  if (!p.answer.empty()) {
    Json body = Json::object();
    body["sessionDescription"] = session_description("answer", p.answer);
    issue(&p, Call{Job::renegotiate}, SfuOp::renegotiate, p.sfu, body, out, now);
    return;
  }
  if (p.awaiting_answer) return;  // the SFU takes no other change while its offer waits

  // First close what the viewer should no longer have: unsubscribed, another robot's, a track that
  // stalled or was published anew.
  Call close{Job::close};
  Json mids = Json::array();
  for (const Pull& pull : p.pulls) {
    if (wanted_pull(p, pull) || close.mids.size() >= wire::kMaxRtcTracks) continue;
    Json e = Json::object();
    e["mid"] = pull.mid;
    mids.push_back(std::move(e));
    close.mids.push_back(pull.mid);
  }
  if (!close.mids.empty()) {
    Json body = Json::object();
    body["tracks"] = std::move(mids);
    body["force"] = true;
    issue(&p, std::move(close), SfuOp::close_tracks, p.sfu, body, out, now);
    return;
  }

  // Then pull what it should have.
  const Peer* pub = publisher(p.robot_id);
  if (!pub) return;
  Call pull{Job::pull};
  pull.robot_id = p.robot_id;
  pull.publisher = pub->sfu;
  Json tracks = Json::array();
  for (const std::string& ch : p.wanted) {
    if (pull.chs.size() >= wire::kMaxRtcTracks) break;
    const Track* t = available(p.robot_id, ch);
    if (!t) continue;
    if (std::any_of(p.pulls.begin(), p.pulls.end(),
                    [&](const Pull& x) { return x.robot_id == p.robot_id && x.ch == ch; }))
      continue;
    auto mit = p.missing.find(ch);
    if (mit != p.missing.end() && mit->second.publisher == pub->sfu &&
        mit->second.generation == t->generation)
      continue;
    Json e = Json::object();
    e["location"] = "remote";
    e["sessionId"] = pub->sfu;
    e["trackName"] = ch;
    tracks.push_back(std::move(e));
    pull.chs.push_back(ch);
    pull.generations.push_back(t->generation);
  }
  if (pull.chs.empty()) return;
  if (p.pulls_made + pull.chs.size() > kMaxPullsPerRtcSession) {
    gone(p,
         "this viewer's SFU session has taken " + std::to_string(p.pulls_made) +
             " pulls, the relay's most for one session (every pull adds a transceiver)",
         sessions, out, now);
    return;
  }
  Json body = Json::object();
  body["tracks"] = std::move(tracks);
  issue(&p, std::move(pull), SfuOp::new_tracks, p.sfu, body, out, now);
}

// --- results ------------------------------------------------------------------------------------

void Rtc::handle_sfu_result(std::uint64_t token, ByteView text, Sessions& sessions, Outbox& out,
                            TimeMs now) {
  auto it = calls_.find(token);
  if (it == calls_.end()) {
    ++drops_["sfu_result_unknown"];  // cancelled, timed out, or never made
    return;
  }
  Call c = std::move(it->second);
  calls_.erase(it);
  call_deadlines_.erase({c.deadline, token});

  // The Realtime client's value: {ok, status, body?, errorCode?, errorDescription?}.
  Result r;
  JsonParse parsed;
  if (text.size > kMaxSfuResultBytes) {
    r.unusable = true;
    r.code = "result_too_large";
    r.description = "the call's result passed " + std::to_string(kMaxSfuResultBytes) + " bytes";
  } else if (!(parsed = parse_json(text)).ok() || !parsed.value.is_object() ||
             !field(parsed.value, "ok") || !field(parsed.value, "ok")->is_boolean()) {
    r.unusable = true;
    r.code = "invalid_result";
    r.description = "the host's result is not the Realtime client's {ok, status, ...}";
  } else {
    const Json& v = parsed.value;
    r.ok = field(v, "ok")->get<bool>();
    if (const Json* st = field(v, "status")) r.status = int(json_integer(*st, 0, 999).value_or(0));
    if (const Json* b = field(v, "body")) r.body = *b;
    r.code = text_field(v, "errorCode", wire::kMaxShortTextChars).value_or(r.ok ? "" : "unknown");
    r.description =
        quote(text_field(v, "errorDescription", kMaxSfuErrorQuoteBytes * 4).value_or(""),
              kMaxSfuErrorQuoteBytes);
  }

  if (c.job == Job::turn) {
    turn_call_ = 0;
    on_turn(r, sessions, out, now);
    return;
  }
  Peer* p = peer(c.peer);
  if (!p || p->epoch != c.epoch || p->call != token) return;  // its peer moved on
  p->call = 0;
  on_result(*p, c, std::move(r), sessions, out, now);
}

namespace {
const char* job_text(int job) {
  static constexpr const char* kTexts[] = {
      "minting TURN credentials",           "creating the robot's SFU session",
      "publishing the robot's tracks",      "declaring stalled tracks again",
      "creating the viewer's SFU session",  "pulling tracks",
      "renegotiating the viewer's session", "closing pulled tracks",
  };
  return kTexts[job];
}

std::string failure_text(int job, int status, const std::string& code, const std::string& desc) {
  std::string t = std::string("the SFU call ") + job_text(job) + " failed (" +
                  (status ? std::to_string(status) + " " : std::string()) + code;
  if (!desc.empty()) t += ": " + desc;
  return t + ")";
}
}  // namespace

void Rtc::on_result(Peer& p, const Call& c, Result r, Sessions& sessions, Outbox& out, TimeMs now) {
  if (!r.ok) {
    on_failure(p, c, r, sessions, out, now);
    return;
  }
  Outcome o = Outcome::clean;
  switch (c.job) {
    case Job::robot_session:
      if (auto id = text_field(r.body, "sessionId", kMaxSfuIdBytes))
        p.sfu = *id;
      else
        o = Outcome::unusable;
      break;
    case Job::robot_publish: o = on_robot_publish(p, r, sessions, out, now); break;
    case Job::robot_declare: o = on_robot_declare(p, c, r, sessions, out, now); break;
    case Job::viewer_session: o = on_viewer_session(p, r, sessions, out, now); break;
    case Job::pull: o = on_pull(p, c, r, sessions, out, now); break;
    case Job::renegotiate: p.answer.clear(); break;
    case Job::close:
      p.pulls.erase(std::remove_if(p.pulls.begin(), p.pulls.end(),
                                   [&](const Pull& x) {
                                     return std::find(c.mids.begin(), c.mids.end(), x.mid) !=
                                            c.mids.end();
                                   }),
                    p.pulls.end());
      break;
    case Job::turn: break;
  }
  if (o == Outcome::unusable) {
    Result bad = r;
    bad.ok = false;
    bad.unusable = true;
    bad.code = "unusable_answer";
    bad.description = "the answer lacks what the call returns (or an SDP over MAX_SDP_LEN)";
    on_failure(p, c, bad, sessions, out, now);
    return;
  }
  if (o == Outcome::clean) p.failures = 0;
  advance(p, sessions, out, now);
}

void Rtc::on_failure(Peer& p, const Call& c, const Result& r, Sessions& sessions, Outbox& out,
                     TimeMs now) {
  ++counters_.failed;
  const bool gone_status = r.status == 410 || r.code == "session_error";
  const bool transient = !gone_status && !r.unusable && transient_status(r.status);
  const std::string what = failure_text(int(c.job), r.status, r.code, r.description);
  const bool creating =
      c.job == Job::robot_session || c.job == Job::robot_publish || c.job == Job::viewer_session;
  if (transient || (c.job == Job::robot_publish && gone_status)) {
    // Nothing changed at the SFU (or the robot's fresh, empty session vanished before its
    // tracks were published: a new one is made): the same step is tried again.
    if (gone_status) p.sfu.clear();
    schedule_retry(p, now);
    send_error(p, ErrorCode::rtc_failed,
               what + "; the relay retries in " + std::to_string(*p.retry_at - now) + " ms",
               sessions, out, now);
    return;
  }
  if (creating) {
    // The SFU refused the offer itself: retrying the same SDP cannot succeed.
    const bool robot = p.role == Role::robot;
    start_over(p, out);
    send_error(p, ErrorCode::rtc_failed,
               what + "; the offer is dropped: fix it and send a new rtc_offer", sessions, out,
               now);
    if (robot) advance_watchers(p.robot_id, sessions, out, now);
    return;
  }
  // The session is gone, or in a state this relay no longer knows: start it afresh.
  gone(p, gone_status ? what + ": the SFU session no longer exists" : what, sessions, out, now);
}

Rtc::Outcome Rtc::on_robot_publish(Peer& p, const Result& r, Sessions& sessions, Outbox& out,
                                   TimeMs now) {
  auto sdp = description_sdp(r.body, "answer");
  if (!sdp) return Outcome::unusable;
  Json answer = Json::object();
  answer["t"] = "rtc_answer";
  answer["sdp"] = *sdp;
  auto m = relay_message(std::move(answer));
  if (!m) return Outcome::unusable;
  std::string failed;
  for (Track& t : p.tracks) {
    const Json* e = track_entry(r.body, t.ch);
    const std::string err = e ? track_error(*e) : "not in the SFU's answer";
    ++t.generation;
    t.active = err.empty();
    t.redeclare = !err.empty();  // declared again after the backoff
    if (!err.empty()) note(failed, t.ch, err);
  }
  p.offer.clear();
  p.ready = true;
  send(p, *m, sessions, out, now);
  advance_watchers(p.robot_id, sessions, out, now);
  return tracks_refused(p, Job::robot_publish, failed, sessions, out, now);
}

Rtc::Outcome Rtc::on_robot_declare(Peer& p, const Call& c, const Result& r, Sessions& sessions,
                                   Outbox& out, TimeMs now) {
  const Json* list = field(r.body, "tracks");
  if (!list || !list->is_array()) return Outcome::unusable;
  std::string failed;
  for (Track& t : p.tracks) {
    if (std::find(c.chs.begin(), c.chs.end(), t.ch) == c.chs.end()) continue;
    const Json* e = track_entry(r.body, t.ch);
    const std::string err = e ? track_error(*e) : "not in the SFU's answer";
    if (err.empty()) {
      t.active = true;
      t.redeclare = false;
    } else {
      note(failed, t.ch, err);
    }
  }
  advance_watchers(p.robot_id, sessions, out, now);
  return tracks_refused(p, Job::robot_declare, failed, sessions, out, now);
}

Rtc::Outcome Rtc::on_viewer_session(Peer& p, const Result& r, Sessions& sessions, Outbox& out,
                                    TimeMs now) {
  auto id = text_field(r.body, "sessionId", kMaxSfuIdBytes);
  auto sdp = description_sdp(r.body, "answer");
  if (!id || !sdp) return Outcome::unusable;
  Json answer = Json::object();
  answer["t"] = "rtc_answer";
  answer["sdp"] = *sdp;
  auto m = relay_message(std::move(answer));
  if (!m) return Outcome::unusable;
  p.sfu = *id;
  p.offer.clear();
  p.ready = true;
  send(p, *m, sessions, out, now);
  return Outcome::clean;
}

Rtc::Outcome Rtc::on_pull(Peer& p, const Call& c, const Result& r, Sessions& sessions, Outbox& out,
                          TimeMs now) {
  const Json* list = field(r.body, "tracks");
  if (!list || !list->is_array()) return Outcome::unusable;
  std::vector<Pull> made;
  Json offered = Json::array();
  std::string failed;
  for (std::size_t i = 0; i < c.chs.size(); ++i) {
    const std::string& ch = c.chs[i];
    const Json* e = track_entry(r.body, ch);
    const std::string err = e ? track_error(*e) : "not in the SFU's answer";
    if (e && text_field(*e, "errorCode", wire::kMaxShortTextChars).value_or("") ==
                 "not_found_track_error") {
      // The SFU has no such track now (collected without media, say): not pulled again until
      // the robot declares it anew (rtc_stalled) or publishes again.
      p.missing[ch] = Missing{c.publisher, c.generations[i]};
      continue;
    }
    if (!err.empty()) {
      note(failed, ch, err);
      continue;
    }
    auto mid = text_field(*e, "mid", wire::kMaxShortTextChars);
    if (!mid) return Outcome::unusable;
    made.push_back(Pull{*mid, c.robot_id, c.publisher, ch, c.generations[i]});
    Json t = Json::object();
    t["mid"] = *mid;
    t["ch"] = ch;
    offered.push_back(std::move(t));
    p.missing.erase(ch);
  }
  if (!made.empty()) {
    auto sdp = description_sdp(r.body, "offer");
    if (!sdp) return Outcome::unusable;
    Json offer = Json::object();
    offer["t"] = "rtc_offer";
    offer["sdp"] = *sdp;
    offer["tracks"] = std::move(offered);
    offer["robotId"] = c.robot_id;
    auto m = relay_message(std::move(offer));
    if (!m) return Outcome::unusable;
    p.pulls_made += made.size();
    for (Pull& x : made) p.pulls.push_back(std::move(x));
    p.awaiting_answer = true;
    send(p, *m, sessions, out, now);
  }
  return tracks_refused(p, Job::pull, failed, sessions, out, now);
}

Rtc::Outcome Rtc::tracks_refused(Peer& p, Job job, const std::string& failed, Sessions& sessions,
                                 Outbox& out, TimeMs now) {
  if (failed.empty()) return Outcome::clean;
  schedule_retry(p, now);
  send_error(p, ErrorCode::rtc_failed,
             std::string("the SFU refused tracks while ") + job_text(int(job)) + " (" + failed +
                 "); the relay retries in " + std::to_string(*p.retry_at - now) + " ms",
             sessions, out, now);
  return Outcome::partial;
}

// --- TURN ---------------------------------------------------------------------------------------

void Rtc::mint(Outbox& out, TimeMs now) {
  if (turn_call_) return;
  Json body = Json::object();
  body["ttl"] = kTurnTtlSeconds;
  issue(nullptr, Call{Job::turn}, SfuOp::generate_ice_servers, "", body, out, now);
}

void Rtc::on_turn(const Result& r, Sessions& sessions, Outbox& out, TimeMs now) {
  std::optional<Json> m;
  if (r.ok) {
    if (const Json* servers = field(r.body, "iceServers")) {
      Json ice = Json::object();
      ice["t"] = "rtc_ice";
      ice["iceServers"] = *servers;
      m = relay_message(std::move(ice));
    }
  }
  if (m) {
    ice_ = (*m)["iceServers"];
    ++ice_version_;
    ++counters_.ice_sets;
    turn_failures_ = 0;
    turn_refresh_at_ = now + kTurnRefreshMs;
    for (auto& [id, p] : peers_) send_ice(p, sessions, out, now);
    return;
  }
  ++counters_.failed;
  ++turn_failures_;
  const bool transient = r.ok ? false : !r.unusable && transient_status(r.status);
  std::string what = failure_text(int(Job::turn), r.status, r.ok ? "unusable_answer" : r.code,
                                  r.ok ? "no valid iceServers list" : r.description);
  if (transient) {
    const TimeMs delay = kRtcRetryMs[std::min(turn_failures_, kRtcRetryMs.size()) - 1];
    turn_retry_at_ = now + delay;
    what += "; the relay retries in " + std::to_string(delay) + " ms";
  } else {
    // Retrying cannot help until the TURN key is fixed: peers connect without TURN meanwhile,
    // and the relay tries again at the next refresh.
    turn_refresh_at_ = now + kTurnRefreshMs;
    what +=
        "; check turnKeyId and turnKeyApiToken in the rtc file. Peers get no TURN servers "
        "until then";
  }
  for (auto& [id, p] : peers_)
    if (p.ice_version == 0) send_error(p, ErrorCode::rtc_failed, what, sessions, out, now);
  if (!transient && ice_version_ == 0) {
    ice_ = Json::array();
    ++ice_version_;
    ++counters_.ice_sets;
    for (auto& [id, p] : peers_) send_ice(p, sessions, out, now);
  }
}

// --- time ---------------------------------------------------------------------------------------

Timeout Rtc::poll_timeout() const {
  Timeout t = earliest(turn_refresh_at_, turn_retry_at_);
  if (!call_deadlines_.empty()) t = earliest(t, call_deadlines_.begin()->first);
  if (!retries_.empty()) t = earliest(t, retries_.begin()->first);
  return t;
}

void Rtc::handle_timeout(TimeMs now, Sessions& sessions, Outbox& out) {
  while (!call_deadlines_.empty() && call_deadlines_.begin()->first <= now) {
    const std::uint64_t token = call_deadlines_.begin()->second;
    call_deadlines_.erase(call_deadlines_.begin());
    auto it = calls_.find(token);
    if (it == calls_.end()) continue;
    Call c = std::move(it->second);
    calls_.erase(it);
    ++counters_.timed_out;
    out.push(ActionKind::sfu_cancel, c.peer).call = token;
    Result r;
    r.code = "timeout";
    r.description = "no answer within " + std::to_string(kSfuCallTimeoutMs) + " ms";
    if (c.job == Job::turn) {
      turn_call_ = 0;
      on_turn(r, sessions, out, now);
      continue;
    }
    Peer* p = peer(c.peer);
    if (!p || p->call != token) continue;
    p->call = 0;
    on_result(*p, c, std::move(r), sessions, out, now);
  }
  while (!retries_.empty() && retries_.begin()->first <= now) {
    const SessionId id = retries_.begin()->second;
    retries_.erase(retries_.begin());
    Peer* p = peer(id);
    if (!p || !p->retry_at || *p->retry_at > now) continue;
    p->retry_at.reset();
    advance(*p, sessions, out, now);
  }
  if (turn_retry_at_ && *turn_retry_at_ <= now) {
    turn_retry_at_.reset();
    mint(out, now);
  }
  if (turn_refresh_at_ && *turn_refresh_at_ <= now) {
    turn_refresh_at_.reset();
    if (peers_.empty())
      ice_version_ = 0;  // nobody to refresh for: the next peer mints afresh
    else
      mint(out, now);
  }
}

// --- stats --------------------------------------------------------------------------------------

Json Rtc::robot_stats(const std::string& robot_id) const {
  Json tracks = Json::object();
  const Peer* pub = publisher(robot_id);
  if (!pub) return tracks;
  for (const Track& t : pub->tracks) {
    std::uint64_t pulls = 0;
    for (SessionId v : viewers_of(robot_id)) {
      const Peer* vp = peer(v);
      if (!vp) continue;
      for (const Pull& x : vp->pulls)
        pulls += x.robot_id == robot_id && x.ch == t.ch && x.publisher == pub->sfu &&
                 x.generation == t.generation;
    }
    Json o = Json::object();
    o["active"] = t.active && pub->ready;
    o["generation"] = t.generation;
    o["pulls"] = pulls;
    tracks[t.ch] = std::move(o);
  }
  return tracks;
}

Json Rtc::stats() const {
  Json o = Json::object();
  o["calls"] = counters_.calls;
  o["failed"] = counters_.failed;
  o["timedOut"] = counters_.timed_out;
  o["sessionsGone"] = counters_.sessions_gone;
  o["stalls"] = counters_.stalls;
  o["iceSets"] = counters_.ice_sets;
  return o;
}

}  // namespace tether::cockpit
