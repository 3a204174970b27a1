#include "cockpit/session.hpp"

#include <utility>

#include "wire/limits.hpp"
#include "wire/manifest.hpp"

namespace tether::cockpit {

using wire::ErrorCode;

namespace {

std::optional<std::string> token_of(const wire::Message& hello) {
  auto it = hello.body.find("token");
  if (it == hello.body.end()) return std::nullopt;
  return it->get<std::string>();
}

Json welcome_message() {
  Json w = Json::object();
  w["t"] = "welcome";
  w["v"] = wire::kProtocolVersion;
  return w;
}

}  // namespace

Session* Sessions::open(Role role, Lane lane) {
  if (sessions_.size() >= kMaxSessions) return nullptr;
  auto s = std::make_unique<Session>();
  s->ep.id = ++next_session_;
  s->ep.role = role;
  s->ep.lane = lane;
  Session* raw = s.get();
  sessions_.emplace(raw->ep.id, std::move(s));
  return raw;
}

Session* Sessions::find(SessionId id) {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second.get();
}

const Session* Sessions::find(SessionId id) const {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second.get();
}

std::size_t Sessions::viewers() const {
  std::size_t n = 0;
  for (const auto& [id, s] : sessions_) n += s->ep.role == Role::viewer ? 1 : 0;
  return n;
}

void Sessions::erase(SessionId id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  Session& s = *it->second;
  if (s.ep.role == Role::robot) {
    auto rit = robots_.find(s.robot_id);
    if (rit != robots_.end() && rit->second.session == id) {
      carriers_.erase(rit->second.carrier.stream);
      robots_.erase(rit);
    }
  }
  sessions_.erase(it);
}

Robot* Sessions::robot(const std::string& id) {
  auto it = robots_.find(id);
  return it == robots_.end() ? nullptr : &it->second;
}

Robot* Sessions::robot_of(const Session& s) {
  const bool is_robot = s.ep.role == Role::robot;
  auto it = robots_.find(is_robot ? s.robot_id : s.watching);
  if (it == robots_.end()) return nullptr;
  if (is_robot && it->second.session != s.ep.id) return nullptr;
  return &it->second;
}

void Sessions::fail(Session& s, std::optional<ErrorCode> code, const std::string& message,
                    Outbox& out) {
  if (code && !wire::is_terminal(*code)) {
    if (!s.closing) out.send_error(s.ep, *code, message);
    return;
  }
  end(s, code, message, out);
}

void Sessions::end(Session& s, std::optional<ErrorCode> code, const std::string& message,
                   Outbox& out) {
  if (s.closing) return;
  if (code) out.send_error(s.ep, *code, message);
  s.closing = true;
  failed_.push_back(Failure{s.ep.id, code, message});
}

std::vector<Failure> Sessions::take_failed() {
  std::vector<Failure> out;
  out.swap(failed_);
  return out;
}

// --- hello
// ----------------------------------------------------------------------------------------

bool Sessions::admit(Session& s, const wire::Message& hello, Outbox& out) {
  const bool is_robot = s.ep.role == Role::robot;
  if (auto code = wire::check_hello(hello, is_robot ? wire::Role::robot : wire::Role::viewer)) {
    fail(s, *code, std::string(wire::error_info(*code).fix), out);
    return false;
  }
  if (auth_) {
    auto it = hello.body.find("token");
    const TokenGrant* g = nullptr;
    if (it != hello.body.end() && it->is_string())
      g = auth_->check(it->get_ref<const std::string&>(), is_robot);
    if (!g) {
      fail(s, ErrorCode::auth_failed,
           "the token is missing or not listed for this role in the relay's auth file", out);
      return false;
    }
    s.grant = g;
  }
  return true;
}

Robot* Sessions::hello(Session& s, const wire::Message& hello, Outbox& out, TimeMs now) {
  const bool is_robot = s.ep.role == Role::robot;
  if (!admit(s, hello, out)) return nullptr;
  if (!is_robot) {
    if (s.welcomed && token_of(hello) != s.token) {
      fail(s, ErrorCode::hello_mismatch, "a repeated hello changed the token; reconnect", out);
      return nullptr;
    }
    s.token = token_of(hello);
    s.welcomed = true;
    // A viewer handed here from another object already has its welcome (fleet.hpp).
    if (!s.quiet) out.send(s.ep, welcome_message());
    out.send(s.ep, robots_message(s.fleet_link, now));
    return nullptr;
  }
  // Robot: identity, manifest, SFU, then idempotency and the id's owner.
  const Json& rb = hello.body["robot"];
  Json identity = Json::object();
  identity["id"] = rb["id"];
  identity["name"] = rb.contains("name") ? rb["name"] : Json("");
  identity["model"] = rb.contains("model") ? rb["model"] : Json("");
  auto manifest = wire::validate_manifest(hello.body["manifest"]);
  if (!manifest) {
    const auto& e = manifest.error().front();
    fail(s, ErrorCode::invalid_manifest,
         "manifest " + e.path + ": " + e.message + " (" +
             std::string(wire::manifest_error_name(e.code)) + ")",
         out);
    return nullptr;
  }
  std::map<std::string, ChannelInfo> channels;
  for (const Json& c : manifest.value()["channels"]) {
    ChannelInfo info;
    info.delivery = c["delivery"] == "reliable" ? wire::Delivery::reliable : wire::Delivery::latest;
    info.tx = c["dir"] == "tx";
    info.publish = c["publish"].is_boolean() && c["publish"].get<bool>();
    info.track = c["encoding"] == kTrackEncoding;
    if (c.contains("requiredScope")) info.required_scope = c["requiredScope"].get<std::string>();
    if (info.track && !sfu_) {
      fail(s, ErrorCode::rtc_unavailable,
           "channel " + c["ch"].get<std::string>() +
               " is a video.webrtc.v1 track, and this relay has no SFU configured (--rtc-file)",
           out);
      return nullptr;
    }
    channels.emplace(c["ch"].get<std::string>(), std::move(info));
  }
  if (s.welcomed) {
    // The bridge resends hello until welcome lands: the same one is answered again.
    Robot* r = robot_of(s);
    if (!r || r->identity != identity || r->manifest != manifest.value() ||
        token_of(hello) != s.token) {
      fail(s, ErrorCode::hello_mismatch,
           "a repeated hello changed the robot's identity, manifest or token; reconnect to "
           "change them",
           out);
      return nullptr;
    }
    out.send(s.ep, welcome_message());
    return nullptr;
  }
  const std::string id = identity["id"].get<std::string>();
  if (robots_.count(id)) {
    fail(s, ErrorCode::robot_id_conflict,
         "robot id " + id + " is held by another connected robot; stop it or pick another id", out);
    return nullptr;
  }
  if (robots_.size() >= wire::kMaxListEntries) {
    fail(s, std::nullopt, "the relay serves its maximum number of robots", out);
    return nullptr;
  }
  s.token = token_of(hello);
  register_robot(s, std::move(identity), std::move(manifest.value()), std::move(channels), out,
                 now);
  return robot(id);
}

void Sessions::register_robot(Session& s, Json identity, Json manifest,
                              std::map<std::string, ChannelInfo> channels, Outbox& out,
                              TimeMs now) {
  s.welcomed = true;
  s.robot_id = identity["id"].get<std::string>();
  Robot& r = robots_[s.robot_id];
  r.link = RobotLink(now);
  r.session = s.ep.id;
  r.identity = std::move(identity);
  r.manifest = std::move(manifest);
  r.channels = std::move(channels);
  out.send(s.ep, welcome_message());
  r.carrier.stream = out.new_stream();
  carriers_[r.carrier.stream] = s.ep.id;
  out.push(ActionKind::open_carrier, s.ep.id, r.carrier.stream);
}

// --- viewers
// --------------------------------------------------------------------------------------

Json Sessions::robots_message(bool with_link, TimeMs now) {
  Json list = Json::array();
  if (fleet_robots_) {
    list = *fleet_robots_;
  } else {
    for (auto& [id, r] : robots_) {
      Json e = r.identity;
      if (with_link) e["link"] = r.link.figures(r.carrier.backlog, now);
      list.push_back(std::move(e));
    }
  }
  Json m = Json::object();
  m["t"] = "robots";
  m["robots"] = std::move(list);
  return m;
}

Json Sessions::manifest_message(const std::string& robot_id) const {
  Json m = Json::object();
  m["t"] = "manifest";
  m["robotId"] = robot_id;
  auto it = robots_.find(robot_id);
  if (it != robots_.end()) m["manifest"] = it->second.manifest;
  return m;
}

void Sessions::push_robots(Outbox& out, TimeMs now) {
  const Json m = robots_message(false, now);
  std::optional<Json> linked;  // built once, and only when some viewer asked for it
  for (auto& [id, s] : sessions_) {
    if (s->ep.role != Role::viewer || !s->welcomed || s->closing) continue;
    if (s->fleet_link && !linked) linked = robots_message(true, now);
    out.send(s->ep, s->fleet_link ? *linked : m);
  }
}

void Sessions::push_manifest(const std::string& robot_id, Outbox& out) {
  auto wit = watchers_.find(robot_id);
  if (wit == watchers_.end()) return;
  const Json m = manifest_message(robot_id);
  for (SessionId v : wit->second) {
    if (Session* s = find(v)) out.send(s->ep, m);
  }
}

void Sessions::watch(Session& viewer, const std::string& robot_id) {
  viewer.watching = robot_id;
  watchers_[robot_id].insert(viewer.ep.id);
}

void Sessions::unwatch(Session& viewer) {
  auto wit = watchers_.find(viewer.watching);
  if (wit != watchers_.end()) {
    wit->second.erase(viewer.ep.id);
    if (wit->second.empty()) watchers_.erase(wit);
  }
  viewer.watching.clear();
}

std::size_t Sessions::watcher_count(const std::string& robot_id) const {
  auto it = watchers_.find(robot_id);
  return it == watchers_.end() ? 0 : it->second.size();
}

// --- robots
// ---------------------------------------------------------------------------------------

void Sessions::send_snapshot(Robot& r, std::vector<std::string> chs, bool force, Outbox& out,
                             TimeMs now) {
  if (!force && chs == r.snapshot) return;
  r.snapshot = std::move(chs);
  Json m = Json::object();
  m["t"] = "subs";
  m["chs"] = r.snapshot;
  m["n"] = ++r.subs_n;
  carrier_message(r, m, out, now);
}

void Sessions::carrier_message(Robot& r, const Json& message, Outbox& out, TimeMs now) {
  wire::FrameHeader h;
  h.ch = wire::kControlChannel;
  h.seq = std::int64_t(r.carrier.seq++);
  h.ts = double(now) / 1000.0;
  h.delivery = wire::Delivery::reliable;
  Bytes frame;
  const std::string text = to_json(message);
  if (wire::append_data_frame(frame, h, ByteView(std::string_view(text)))) return;
  carrier_write(r, share(std::move(frame)), out);
}

void Sessions::carrier_write(Robot& r, SharedBytes frame, Outbox& out) {
  Session* s = find(r.session);
  if (!s || s->closing) return;
  const std::size_t n = frame->size();
  if (r.carrier.backlog + n > kMaxCarrierBacklogBytes) {
    fail(*s, ErrorCode::carrier_failed,
         "the carrier's unfinished writes passed 32 MiB: the robot reads its carrier too slowly; "
         "reconnect to re-register",
         out);
    return;
  }
  r.carrier.backlog += n;
  r.carrier.in_flight.push_back(n);
  out.push(ActionKind::write_carrier, r.session, r.carrier.stream).bytes = std::move(frame);
}

bool Sessions::carrier_done(StreamId st) {
  const SessionId sid = carrier_session(st);
  if (!sid) return false;
  Session* s = find(sid);
  Robot* r = s ? robot_of(*s) : nullptr;
  if (r && !r->carrier.in_flight.empty()) {
    r->carrier.backlog -= r->carrier.in_flight.front();
    r->carrier.in_flight.pop_front();
  }
  return true;
}

std::size_t Sessions::carrier_writes_outstanding(StreamId st) const {
  const Session* s = find(carrier_session(st));
  if (!s) return 0;
  // The robot this carrier's session registered (robot_of, read-only).
  auto it = robots_.find(s->robot_id);
  return it == robots_.end() || it->second.session != s->ep.id
             ? 0
             : it->second.carrier.in_flight.size();
}

SessionId Sessions::carrier_session(StreamId st) const {
  auto it = carriers_.find(st);
  return it == carriers_.end() ? 0 : it->second;
}

}  // namespace tether::cockpit
