#include "relay/cockpit_relay.hpp"

#include <algorithm>
#include <utility>

#include "wire/manifest.hpp"

namespace tether::relay {

using wire::Delivery;
using wire::ErrorCode;
using wire::MessageType;

std::string_view action_kind_name(ActionKind k) {
  switch (k) {
    case ActionKind::send_datagram: return "send_datagram";
    case ActionKind::write_control: return "write_control";
    case ActionKind::open_carrier: return "open_carrier";
    case ActionKind::write_carrier: return "write_carrier";
    case ActionKind::open_stream: return "open_stream";
    case ActionKind::write_stream: return "write_stream";
    case ActionKind::reset_stream: return "reset_stream";
    case ActionKind::finish_stream: return "finish_stream";
    case ActionKind::close_session: return "close_session";
  }
  return "close_session";
}

namespace {

using Frame = std::shared_ptr<const Bytes>;

// A manifest channel as the relay needs it.
struct ChannelInfo {
  Delivery delivery = Delivery::latest;
  bool tx = false;
  bool publish = false;
  bool track = false;
  std::optional<std::string> required_scope;
};

// One relay-to-viewer latest stream (workaround 12). It is never finished, only reset.
struct LatestStream {
  bool writing = true;       // the write started and has not completed
  std::int64_t started_ms;   // when the payload bound
};

// A viewer's subscription to one channel of the robot it watches.
struct Sub {
  Delivery delivery = Delivery::latest;
  // latest: the one stream still in creation and the newest payload, bound when creation ends
  // (superseded in place while the creation wedges), plus the streams whose write started.
  StreamId creating = 0;
  Frame creating_payload;
  Frame parked;  // a newer frame held while kMaxLatestWritesInFlight writes are outstanding
  std::map<StreamId, LatestStream> live;
  std::int64_t last_abort_ms = INT64_MIN / 2;
  // reliable: one persistent stream and its queue; the first `writing` frames of the queue have
  // been handed to the transport and are not yet done (they still count against the caps).
  StreamId stream = 0;
  bool open = false;
  std::size_t writing = 0;
  std::deque<Frame> queue;
  std::size_t queued_bytes = 0;
};

// Bounds the writes the relay hands to a transport that may buffer without limit (quinn does).
constexpr std::size_t kMaxLatestWritesInFlight = 4;

struct PublishStream;

struct Incoming {
  SessionId session;
  // Robot streams carry any data frames; viewer publish streams are bounded by kMaxPublishBytes
  // before their payload is buffered.
  wire::DataStreamDecoder robot;
  Bytes buf;  // viewer: the frame so far
};

struct PendingPublish {
  SessionId viewer;
  std::string ch;
  std::string viewer_id;
};

struct Session {
  SessionId id;
  Role role;
  Lane lane;
  bool welcomed = false;
  std::uint64_t out_seq = 0;  // @control frames the relay sends on a WebSocket or the carrier
  wire::ControlStreamDecoder control;
  std::optional<std::string> token;
  const TokenGrant* grant = nullptr;
  std::set<StreamId> incoming;
  // robot
  std::string robot_id;
  // viewer
  std::string watching;
  std::map<std::string, Sub> subs;
  std::map<std::string, std::string> pending;  // viewer request id -> relay request id
  double tokens = kPublishBurst;
  std::int64_t tokens_ms = 0;
};

struct RobotEntry {
  SessionId session;
  Json identity;  // {id, name, model}
  Json manifest;  // normal form
  std::map<std::string, ChannelInfo> channels;
  std::map<std::string, ChannelCounters> counters;
  std::map<std::string, std::int64_t> last_seq;
  std::uint64_t subs_n = 0;
  std::vector<std::string> snapshot;
  SessionId lease_holder = 0;
  std::uint64_t gen = 0;
  std::uint64_t carrier_seq = 0;
  std::uint64_t next_request = 0;
  std::map<std::string, PendingPublish> pending;                  // relay request id ->
  std::deque<std::pair<std::int64_t, std::string>> timeouts;       // deadline order
  std::uint64_t frames_on_track = 0;
};

std::shared_ptr<const Bytes> share(Bytes b) { return std::make_shared<const Bytes>(std::move(b)); }

Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

}  // namespace

struct CockpitRelay::Impl {
  RelayConfig config;
  std::vector<CockpitAction> actions;
  std::unordered_map<SessionId, std::unique_ptr<Session>> sessions;
  std::map<std::string, RobotEntry> robots;
  // Who watches and who subscribes, by robot id. Kept while the robot is away, so a robot that
  // reconnects is re-baselined with the channels its viewers still want.
  std::map<std::string, std::set<SessionId>> watchers;
  std::map<std::string, std::map<std::string, std::set<SessionId>>> interest;
  // Shared so that a stream being fed outlives a handler that closes its session mid-feed.
  std::unordered_map<StreamId, std::shared_ptr<Incoming>> incoming;
  std::unordered_map<StreamId, std::pair<SessionId, std::string>> outgoing;  // stream -> viewer, ch
  SessionId next_session = 0;
  StreamId next_stream = 0;
  std::int64_t send_order = 0;
  std::uint64_t gen_counter = 0;  // relay-wide, so a robot's generations only grow
  std::map<std::string, std::uint64_t> drops;  // invalid input by reason, for /api/stats
  std::uint64_t teleop_dropped = 0;

  explicit Impl(RelayConfig c) : config(std::move(c)) {}

  Session* find(SessionId s) {
    auto it = sessions.find(s);
    return it == sessions.end() ? nullptr : it->second.get();
  }
  RobotEntry* robot_of(const Session& s) {
    auto it = robots.find(s.role == Role::robot ? s.robot_id : s.watching);
    if (it == robots.end()) return nullptr;
    if (s.role == Role::robot && it->second.session != s.id) return nullptr;
    return &it->second;
  }

  void push(CockpitAction a) { actions.push_back(std::move(a)); }

  // --- replies ------------------------------------------------------------------------------------
  // A JSON message to a session on its reply lane (§ Transport per leg; v7 notes § Endpoints).
  void send(Session& s, const Json& msg) {
    const std::string text = to_json(msg);
    CockpitAction a;
    a.session = s.id;
    if (s.lane == Lane::websocket) {
      wire::FrameHeader h;
      h.ch = wire::kControlChannel;
      h.seq = std::int64_t(s.out_seq++);
      h.delivery = Delivery::reliable;
      Bytes out;
      if (wire::append_data_frame(out, h, ByteView(std::string_view(text)))) return;
      a.kind = s.role == Role::robot ? ActionKind::send_datagram : ActionKind::write_control;
      a.bytes = share(std::move(out));
    } else if (s.role == Role::robot) {
      a.kind = ActionKind::send_datagram;
      a.bytes = share(to_bytes(text));
    } else {
      Bytes out;
      if (wire::append_control_frame(out, text)) return;
      a.kind = ActionKind::write_control;
      a.bytes = share(std::move(out));
    }
    push(std::move(a));
  }

  void send_error(Session& s, ErrorCode code, const std::string& message) {
    Json m = Json::object();
    m["t"] = "error";
    m["code"] = std::string(wire::error_name(code));
    // A robot's replies are datagrams (workaround 3): keep them under the smallest datagram size.
    const std::size_t cap = s.role == Role::robot && s.lane == Lane::webtransport
                                ? kMaxDatagramErrorTextBytes
                                : wire::kMaxMessageTextChars;
    std::size_t n = std::min(message.size(), cap);
    while (n > 0 && n < message.size() && (std::uint8_t(message[n]) & 0xC0) == 0x80) --n;
    m["message"] = message.substr(0, n);
    send(s, m);
  }

  // Sends `error` and, for a terminal code, closes the session and releases what it held.
  void fail(Session& s, ErrorCode code, const std::string& message, std::int64_t now) {
    send_error(s, code, message);
    if (wire::is_terminal(code)) close(s.id, code, message, now);
  }

  // Ends a session from the relay's side: the close action, then everything the session held.
  void close(SessionId id, std::optional<ErrorCode> code, const std::string& reason,
             std::int64_t now) {
    CockpitAction a;
    a.kind = ActionKind::close_session;
    a.session = id;
    a.code = code;
    a.reason = reason;
    push(std::move(a));
    release(id, now);
  }

  void count_drop(const std::string& reason) { ++drops[reason]; }

  // --- carrier (workaround 3) -----------------------------------------------------------------------
  void carrier_control(Session& s, RobotEntry& r, const Json& msg, std::int64_t now) {
    wire::FrameHeader h;
    h.ch = wire::kControlChannel;
    h.seq = std::int64_t(r.carrier_seq++);
    h.ts = double(now) / 1000.0;
    h.delivery = Delivery::reliable;
    Bytes out;
    const std::string text = to_json(msg);
    if (wire::append_data_frame(out, h, ByteView(std::string_view(text)))) return;
    CockpitAction a;
    a.kind = ActionKind::write_carrier;
    a.session = s.id;
    a.bytes = share(std::move(out));
    push(std::move(a));
  }

  // The channels at least one viewer wants (v7 notes: subs {chs, n}, a full snapshot every time).
  void update_snapshot(const std::string& robot_id, std::int64_t now, bool force) {
    auto rit = robots.find(robot_id);
    if (rit == robots.end()) return;
    RobotEntry& r = rit->second;
    std::vector<std::string> chs;
    auto iit = interest.find(robot_id);
    if (iit != interest.end()) {
      for (const auto& [ch, viewers] : iit->second) {
        if (!viewers.empty() && r.channels.count(ch)) chs.push_back(ch);
      }
    }
    if (!force && chs == r.snapshot) return;
    r.snapshot = chs;
    Json m = Json::object();
    m["t"] = "subs";
    m["chs"] = chs;
    m["n"] = ++r.subs_n;
    if (Session* s = find(r.session)) carrier_control(*s, r, m, now);
  }

  Json robots_message() const {
    Json list = Json::array();
    for (const auto& [id, r] : robots) list.push_back(r.identity);
    Json m = Json::object();
    m["t"] = "robots";
    m["robots"] = std::move(list);
    return m;
  }

  void push_robots() {
    const Json m = robots_message();
    for (auto& [id, s] : sessions) {
      if (s->role == Role::viewer && s->welcomed) send(*s, m);
    }
  }

  Json manifest_message(const std::string& robot_id) const {
    Json m = Json::object();
    m["t"] = "manifest";
    m["robotId"] = robot_id;
    auto it = robots.find(robot_id);
    if (it != robots.end()) m["manifest"] = it->second.manifest;
    return m;
  }

  void push_manifest(const std::string& robot_id) {
    auto wit = watchers.find(robot_id);
    if (wit == watchers.end()) return;
    const Json m = manifest_message(robot_id);
    for (SessionId v : wit->second) {
      if (Session* s = find(v)) send(*s, m);
    }
  }

  // --- teleop lease (v7 notes § Teleop) -------------------------------------------------------------
  void robot_datagram(RobotEntry& r, Json msg) {
    if (Session* s = find(r.session)) send(*s, msg);
  }

  void release_lease(RobotEntry& r) {
    if (!r.lease_holder) return;
    r.lease_holder = 0;
    Json m = Json::object();
    m["t"] = "teleop_stop";
    m["gen"] = r.gen;
    robot_datagram(r, std::move(m));
  }

  // --- subscriptions ----------------------------------------------------------------------------------
  void end_stream(StreamId st, StreamEnd why, SessionId viewer) {
    outgoing.erase(st);
    CockpitAction a;
    a.kind = ActionKind::reset_stream;
    a.session = viewer;
    a.stream = st;
    a.end = why;
    push(std::move(a));
  }

  void drop_sub_streams(Session& v, Sub& sub) {
    if (sub.creating) end_stream(sub.creating, StreamEnd::closing, v.id);
    for (const auto& [st, ls] : sub.live) end_stream(st, StreamEnd::closing, v.id);
    if (sub.stream) end_stream(sub.stream, StreamEnd::closing, v.id);
    sub.creating = 0;
    sub.live.clear();
    sub.stream = 0;
  }

  // Removes one subscription; returns whether the robot's wanted set may have changed.
  void unsubscribe(Session& v, const std::string& ch) {
    auto it = v.subs.find(ch);
    if (it == v.subs.end()) return;
    drop_sub_streams(v, it->second);
    v.subs.erase(it);
    auto iit = interest.find(v.watching);
    if (iit != interest.end()) {
      auto cit = iit->second.find(ch);
      if (cit != iit->second.end()) {
        cit->second.erase(v.id);
        if (cit->second.empty()) iit->second.erase(cit);
      }
      if (iit->second.empty()) interest.erase(iit);
    }
  }

  // Leaves the watched robot: subscriptions, lease and watch (v7 notes § Viewer session).
  void unwatch(Session& v, std::int64_t now) {
    if (v.watching.empty()) return;
    const std::string robot_id = v.watching;
    std::vector<std::string> chs;
    for (const auto& [ch, sub] : v.subs) chs.push_back(ch);
    for (const auto& ch : chs) unsubscribe(v, ch);
    auto rit = robots.find(robot_id);
    if (rit != robots.end() && rit->second.lease_holder == v.id) release_lease(rit->second);
    auto wit = watchers.find(robot_id);
    if (wit != watchers.end()) {
      wit->second.erase(v.id);
      if (wit->second.empty()) watchers.erase(wit);
    }
    v.watching.clear();
    if (!chs.empty()) update_snapshot(robot_id, now, false);
  }

  // --- release ----------------------------------------------------------------------------------------
  void release(SessionId id, std::int64_t now) {
    auto sit = sessions.find(id);
    if (sit == sessions.end()) return;
    Session& s = *sit->second;
    for (StreamId st : s.incoming) incoming.erase(st);
    s.incoming.clear();
    if (s.role == Role::viewer) {
      // Outgoing streams die with the transport session; only the bookkeeping goes.
      for (auto& [ch, sub] : s.subs) {
        if (sub.creating) outgoing.erase(sub.creating);
        for (const auto& [st, ls] : sub.live) outgoing.erase(st);
        if (sub.stream) outgoing.erase(sub.stream);
        sub.creating = 0;
        sub.live.clear();
        sub.stream = 0;
      }
      unwatch(s, now);
    } else {
      auto rit = robots.find(s.robot_id);
      if (rit != robots.end() && rit->second.session == id) {
        RobotEntry& r = rit->second;
        // Unanswered publishes can never be answered now.
        for (auto& [rid, p] : r.pending) {
          if (Session* v = find(p.viewer)) {
            v->pending.erase(p.viewer_id);
            send_pub_nack(*v, p.ch, p.viewer_id, ErrorCode::robot_disconnected,
                          "the robot left before answering; publish again when it returns");
          }
        }
        if (r.lease_holder) {
          // The holder learns the lease is gone; the robot is gone, so nothing goes robot-ward.
          if (Session* v = find(r.lease_holder)) {
            Json m = Json::object();
            m["t"] = "teleop_stop";
            m["gen"] = r.gen;
            send(*v, m);
          }
        }
        const std::string robot_id = s.robot_id;
        robots.erase(rit);
        sessions.erase(sit);
        push_robots();
        push_manifest(robot_id);
        return;
      }
    }
    sessions.erase(sit);
  }

  // --- hello ------------------------------------------------------------------------------------------
  bool check_token(Session& s, const wire::Message& hello, std::int64_t now) {
    if (!config.auth) return true;
    auto it = hello.body.find("token");
    const TokenGrant* g = nullptr;
    if (it != hello.body.end() && it->is_string())
      g = config.auth->check(it->get_ref<const std::string&>(), s.role == Role::robot);
    if (!g) {
      fail(s, ErrorCode::auth_failed,
           "the token is missing or not listed for this role in the relay's auth file", now);
      return false;
    }
    s.grant = g;
    return true;
  }

  std::optional<std::string> token_of(const wire::Message& hello) {
    auto it = hello.body.find("token");
    if (it == hello.body.end()) return std::nullopt;
    return it->get<std::string>();
  }

  void on_hello(Session& s, const wire::Message& hello, std::int64_t now) {
    const wire::Role role = s.role == Role::robot ? wire::Role::robot : wire::Role::viewer;
    if (auto code = wire::check_hello(hello, role)) {
      std::string why(wire::error_info(*code).fix);
      fail(s, *code, why, now);
      return;
    }
    if (!check_token(s, hello, now)) return;
    if (s.role == Role::viewer) {
      if (s.welcomed && token_of(hello) != s.token) {
        fail(s, ErrorCode::hello_mismatch, "a repeated hello changed the token; reconnect", now);
        return;
      }
      s.token = token_of(hello);
      s.welcomed = true;
      Json w = Json::object();
      w["t"] = "welcome";
      w["v"] = wire::kProtocolVersion;
      send(s, w);
      send(s, robots_message());
      return;
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
           now);
      return;
    }
    std::map<std::string, ChannelInfo> channels;
    for (const Json& c : manifest.value()["channels"]) {
      ChannelInfo info;
      info.delivery = c["delivery"] == "reliable" ? Delivery::reliable : Delivery::latest;
      info.tx = c["dir"] == "tx";
      info.publish = c["publish"].is_boolean() && c["publish"].get<bool>();
      info.track = c["encoding"] == kTrackEncoding;
      if (c.contains("requiredScope")) info.required_scope = c["requiredScope"].get<std::string>();
      if (info.track && !(config.sfu && config.sfu->available())) {
        fail(s, ErrorCode::rtc_unavailable,
             "channel " + c["ch"].get<std::string>() +
                 " is a video.webrtc.v1 track, and this relay has no SFU configured (--rtc-file)",
             now);
        return;
      }
      channels.emplace(c["ch"].get<std::string>(), std::move(info));
    }
    const std::string id = identity["id"].get<std::string>();
    if (s.welcomed) {
      // The bridge resends hello until welcome lands: the same one is answered again.
      RobotEntry* r = robot_of(s);
      if (!r || r->identity != identity || r->manifest != manifest.value() ||
          token_of(hello) != s.token) {
        fail(s, ErrorCode::hello_mismatch,
             "a repeated hello changed the robot's identity, manifest or token; reconnect to "
             "change them",
             now);
        return;
      }
      Json w = Json::object();
      w["t"] = "welcome";
      w["v"] = wire::kProtocolVersion;
      send(s, w);
      return;
    }
    auto existing = robots.find(id);
    if (existing != robots.end()) {
      fail(s, ErrorCode::robot_id_conflict,
           "robot id " + id + " is held by another connected robot; stop it or pick another id",
           now);
      return;
    }
    if (robots.size() >= wire::kMaxListEntries) {
      close(s.id, std::nullopt, "the relay serves its maximum number of robots", now);
      return;
    }
    s.welcomed = true;
    s.token = token_of(hello);
    s.robot_id = id;
    RobotEntry& r = robots[id];
    r.session = s.id;
    r.identity = std::move(identity);
    r.manifest = std::move(manifest.value());
    r.channels = std::move(channels);
    Json w = Json::object();
    w["t"] = "welcome";
    w["v"] = wire::kProtocolVersion;
    send(s, w);
    CockpitAction carrier;
    carrier.kind = ActionKind::open_carrier;
    carrier.session = s.id;
    push(std::move(carrier));
    // Viewers that kept watching while the robot was away keep the subscriptions the new
    // manifest still serves the same way; the rest are dropped.
    auto wit = watchers.find(id);
    if (wit != watchers.end()) {
      const std::vector<SessionId> viewers(wit->second.begin(), wit->second.end());
      for (SessionId vid : viewers) {
        Session* v = find(vid);
        if (!v) continue;
        std::vector<std::string> gone;
        for (const auto& [ch, sub] : v->subs) {
          auto cit = r.channels.find(ch);
          if (cit == r.channels.end() || cit->second.tx || cit->second.delivery != sub.delivery)
            gone.push_back(ch);
        }
        for (const auto& ch : gone) unsubscribe(*v, ch);
      }
    }
    // The fresh registration re-baselines the subscriptions (workaround 3).
    update_snapshot(id, now, true);
    push_robots();
    push_manifest(id);
  }

  // --- robot input ------------------------------------------------------------------------------------
  void on_robot_message(Session& s, ByteView json, bool reply_invalid, std::int64_t now) {
    auto m = wire::parse_message(json, wire::Sender::robot);
    if (!m) {
      count_drop(std::string(wire::drop_reason_name(m.error().reason)));
      if (!s.welcomed && reply_invalid) {
        fail(s, ErrorCode::hello_required, "send a valid hello first: " + m.error().detail, now);
      } else if (reply_invalid) {
        send_error(s, ErrorCode::invalid_control, "dropped: " + m.error().detail);
      }
      return;
    }
    if (m->type == MessageType::hello) {
      on_hello(s, m.value(), now);
      return;
    }
    if (!s.welcomed) {
      // Datagrams may overtake the hello's stream; only a stream message proves the order.
      if (reply_invalid) fail(s, ErrorCode::hello_required, "send hello first", now);
      else count_drop("before_hello");
      return;
    }
    RobotEntry* r = robot_of(s);
    if (!r) return;
    switch (m->type) {
      case MessageType::ping: {
        Json p = m->body;
        p["t"] = "pong";
        send(s, p);
        return;
      }
      case MessageType::pub_ack:
      case MessageType::pub_nack: on_publish_answer(*r, m.value()); return;
      default: count_drop("unsupported_robot_message"); return;
    }
  }

  void on_robot_frame(Session& s, const wire::DataFrame& f, std::int64_t now) {
    if (f.header.ch == wire::kControlChannel) {
      on_robot_message(s, f.payload, true, now);
      return;
    }
    if (!s.welcomed) {
      fail(s, ErrorCode::hello_required, "send hello before channel data", now);
      return;
    }
    if (wire::is_reserved_channel(f.header.ch)) {  // never forwarded (§ Framing)
      count_drop("reserved_channel");
      return;
    }
    RobotEntry* r = robot_of(s);
    if (!r) return;
    auto cit = r->channels.find(f.header.ch);
    if (cit == r->channels.end() || cit->second.tx) {
      count_drop("undeclared_channel");
      return;
    }
    const ChannelInfo& info = cit->second;
    ChannelCounters& counters = r->counters[f.header.ch];
    if (info.track) {
      ++r->frames_on_track;
      return;
    }
    if (info.delivery == Delivery::latest) {
      // Consumers keep the newest by seq; an older frame that arrives late is not worth sending.
      auto [it, fresh] = r->last_seq.emplace(f.header.ch, f.header.seq);
      if (!fresh) {
        if (f.header.seq <= it->second) {
          ++counters.dropped;
          return;
        }
        it->second = f.header.seq;
      }
    }
    auto iit = interest.find(s.robot_id);
    if (iit == interest.end()) return;
    auto vit = iit->second.find(f.header.ch);
    if (vit == iit->second.end() || vit->second.empty()) return;
    Bytes bytes;
    bytes.reserve(wire::kDataPrefixBytes + f.header_json.size + f.payload.size);
    append_u32_le(bytes, std::uint32_t(f.header_json.size));
    append_u32_le(bytes, std::uint32_t(f.payload.size));
    append(bytes, f.header_json);
    append(bytes, f.payload);
    Frame frame = share(std::move(bytes));
    std::vector<SessionId> overflowed;
    for (SessionId v : vit->second) {
      Session* vs = find(v);
      if (!vs) continue;
      auto sit = vs->subs.find(f.header.ch);
      if (sit == vs->subs.end()) continue;
      if (info.delivery == Delivery::latest) {
        deliver_latest(*vs, f.header.ch, sit->second, frame, counters, now);
      } else if (!deliver_reliable(*vs, f.header.ch, sit->second, frame, counters)) {
        overflowed.push_back(v);
      }
    }
    for (SessionId v : overflowed) {
      close(v, std::nullopt,
            "reliable queue overflow on channel " + f.header.ch + " (" +
                std::to_string(kReliableMaxFrames) +
                " frames or 16 MiB): the viewer reads too slowly; reconnect",
            now);
    }
  }

  // --- delivery (§ Delivery modes, workarounds 7, 11, 12) --------------------------------------------
  void open_stream(Session& v, const std::string& ch, Delivery d, StreamId id) {
    outgoing[id] = {v.id, ch};
    CockpitAction a;
    a.kind = ActionKind::open_stream;
    a.session = v.id;
    a.stream = id;
    a.ch = ch;
    a.delivery = d;
    a.send_order = --send_order;
    push(std::move(a));
  }

  void write(Session& v, StreamId st, Frame f) {
    CockpitAction a;
    a.kind = ActionKind::write_stream;
    a.session = v.id;
    a.stream = st;
    a.bytes = std::move(f);
    push(std::move(a));
  }

  void reap(Session& v, Sub& sub, ChannelCounters* counters, std::int64_t now) {
    for (auto it = sub.live.begin(); it != sub.live.end();) {
      if (!it->second.writing && now - it->second.started_ms >= kLatestStaleMs) {
        end_stream(it->first, StreamEnd::expired, v.id);
        if (counters) ++counters->expired;
        it = sub.live.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::size_t writes_in_flight(const Sub& sub) const {
    std::size_t n = 0;
    for (const auto& [st, ls] : sub.live) n += ls.writing ? 1 : 0;
    return n;
  }

  void deliver_latest(Session& v, const std::string& ch, Sub& sub, Frame frame,
                      ChannelCounters& counters, std::int64_t now) {
    reap(v, sub, &counters, now);
    if (sub.creating) {
      // The wedged send: its payload binds only when creation ends, so supersede it in place.
      if (sub.creating_payload) ++counters.dropped;
      sub.creating_payload = std::move(frame);
      return;
    }
    // A write-wedged stream at least one stale window old is reset, once per window, and the
    // newest goes out on a fresh stream.
    if (now - sub.last_abort_ms >= kLatestStaleMs) {
      for (auto it = sub.live.begin(); it != sub.live.end(); ++it) {
        if (it->second.writing && now - it->second.started_ms >= kLatestStaleMs) {
          end_stream(it->first, StreamEnd::aborted, v.id);
          ++counters.aborted;
          sub.live.erase(it);
          sub.last_abort_ms = now;
          break;
        }
      }
    }
    if (writes_in_flight(sub) >= kMaxLatestWritesInFlight) {
      if (sub.parked) ++counters.dropped;
      sub.parked = std::move(frame);
      return;
    }
    sub.creating = ++next_stream;
    sub.creating_payload = std::move(frame);
    open_stream(v, ch, Delivery::latest, sub.creating);
  }

  bool deliver_reliable(Session& v, const std::string& ch, Sub& sub, Frame frame,
                        ChannelCounters& counters) {
    const std::size_t n = frame->size();
    if (sub.queue.size() + 1 > kReliableMaxFrames ||
        (!sub.queue.empty() && sub.queued_bytes + n > kReliableMaxBytes)) {
      counters.dropped += sub.queue.size() + 1;
      return false;
    }
    sub.queue.push_back(std::move(frame));
    sub.queued_bytes += n;
    if (!sub.stream) {
      sub.stream = ++next_stream;
      sub.open = false;
      open_stream(v, ch, Delivery::reliable, sub.stream);
    }
    pump_reliable(v, sub, &counters);
    return true;
  }

  void pump_reliable(Session& v, Sub& sub, ChannelCounters* counters) {
    // A few writes in flight keep the stream busy without waiting a round trip per frame; the
    // transport completes them in order.
    while (sub.open && sub.writing < kReliableWritesInFlight && sub.writing < sub.queue.size()) {
      if (counters) ++counters->sent;
      write(v, sub.stream, sub.queue[sub.writing]);
      ++sub.writing;
    }
  }

  ChannelCounters* counters_for(const Session& v, const std::string& ch) {
    auto rit = robots.find(v.watching);
    if (rit == robots.end()) return nullptr;
    return &rit->second.counters[ch];
  }

  // Resolves an outgoing stream id to its viewer and subscription.
  std::pair<Session*, Sub*> locate(StreamId st, std::string* ch_out) {
    auto it = outgoing.find(st);
    if (it == outgoing.end()) return {nullptr, nullptr};
    Session* v = find(it->second.first);
    if (!v) return {nullptr, nullptr};
    auto sit = v->subs.find(it->second.second);
    if (sit == v->subs.end()) return {nullptr, nullptr};
    if (ch_out) *ch_out = it->second.second;
    return {v, &sit->second};
  }

  void on_stream_opened(StreamId st, std::int64_t now) {
    std::string ch;
    auto [v, sub] = locate(st, &ch);
    if (!v) return;
    ChannelCounters* counters = counters_for(*v, ch);
    if (sub->delivery == Delivery::reliable) {
      if (sub->stream != st) return;
      sub->open = true;
      pump_reliable(*v, *sub, counters);
      return;
    }
    if (sub->creating != st) return;
    sub->creating = 0;
    Frame payload = std::move(sub->creating_payload);
    sub->creating_payload.reset();
    if (!payload) {
      end_stream(st, StreamEnd::closing, v->id);
      return;
    }
    sub->live[st] = LatestStream{true, now};
    if (counters) ++counters->sent;
    write(*v, st, std::move(payload));
  }

  void on_write_done(StreamId st, std::int64_t now) {
    std::string ch;
    auto [v, sub] = locate(st, &ch);
    if (!v) return;
    ChannelCounters* counters = counters_for(*v, ch);
    if (sub->delivery == Delivery::reliable) {
      if (sub->stream != st || sub->writing == 0 || sub->queue.empty()) return;
      sub->queued_bytes -= sub->queue.front()->size();
      sub->queue.pop_front();
      --sub->writing;
      pump_reliable(*v, *sub, counters);
      return;
    }
    auto it = sub->live.find(st);
    if (it == sub->live.end()) return;
    it->second.writing = false;  // stays open until reaped: latest streams end in RESET
    if (sub->parked && !sub->creating) {
      sub->creating = ++next_stream;
      sub->creating_payload = std::move(sub->parked);
      sub->parked.reset();
      open_stream(*v, ch, Delivery::latest, sub->creating);
    }
    (void)now;
  }

  void on_stream_failed(StreamId st, std::int64_t now) {
    std::string ch;
    auto [v, sub] = locate(st, &ch);
    outgoing.erase(st);
    if (!v) return;
    if (sub->delivery == Delivery::reliable) {
      // The ordered stream is gone, and with it the order: the viewer must resubscribe.
      if (sub->stream == st) {
        close(v->id, std::nullopt,
              "the reliable stream for channel " + ch + " failed; reconnect to resume it", now);
      }
      return;
    }
    if (sub->creating == st) {
      sub->creating = 0;
      if (sub->creating_payload) {
        if (ChannelCounters* c = counters_for(*v, ch)) ++c->dropped;
      }
      sub->creating_payload.reset();
    }
    sub->live.erase(st);
  }

  // --- viewer input -------------------------------------------------------------------------------------
  void on_viewer_message(Session& s, ByteView json, bool on_control, std::int64_t now) {
    auto m = wire::parse_message(json, wire::Sender::viewer);
    if (!m) {
      count_drop(std::string(wire::drop_reason_name(m.error().reason)));
      if (!on_control) return;
      if (!s.welcomed) fail(s, ErrorCode::hello_required, "send a valid hello first: " + m.error().detail, now);
      else send_error(s, ErrorCode::invalid_control, "dropped: " + m.error().detail);
      return;
    }
    if (m->type == MessageType::hello) {
      if (on_control) on_hello(s, m.value(), now);
      return;
    }
    if (!s.welcomed) {
      if (on_control) fail(s, ErrorCode::hello_required, "send hello first", now);
      return;
    }
    const Json& b = m->body;
    switch (m->type) {
      case MessageType::ping: {
        Json p = b;
        p["t"] = "pong";
        send(s, p);
        return;
      }
      case MessageType::watch: on_watch(s, b["robotId"].get<std::string>(), now); return;
      case MessageType::sub: on_sub(s, b["ch"].get<std::string>(), now); return;
      case MessageType::unsub: on_unsub(s, b["ch"].get<std::string>(), now); return;
      case MessageType::teleop_start: on_teleop_start(s); return;
      case MessageType::teleop_stop: {
        RobotEntry* r = robot_of(s);
        if (r && r->lease_holder == s.id) release_lease(*r);
        return;
      }
      case MessageType::twist:
      case MessageType::stop: {
        RobotEntry* r = robot_of(s);
        if (!r || r->lease_holder != s.id) {
          ++teleop_dropped;  // only the holder drives
          return;
        }
        Json out = b;  // a viewer's own gen was stripped by the parser
        out["gen"] = r->gen;
        robot_datagram(*r, std::move(out));
        return;
      }
      default: count_drop("unsupported_viewer_message"); return;
    }
  }

  void on_watch(Session& s, const std::string& robot_id, std::int64_t now) {
    if (!robots.count(robot_id)) {
      send_error(s, ErrorCode::unknown_robot,
                 "no robot " + robot_id + " is connected; watch one from the robots list");
      return;
    }
    if (s.watching != robot_id) {
      unwatch(s, now);
      s.watching = robot_id;
      watchers[robot_id].insert(s.id);
    }
    send(s, manifest_message(robot_id));
  }

  // Common checks for sub/unsub/teleop_start; returns the watched, connected robot.
  RobotEntry* watched(Session& s) {
    if (s.watching.empty()) {
      send_error(s, ErrorCode::no_watch, "watch a robot before subscribing or driving");
      return nullptr;
    }
    RobotEntry* r = robot_of(s);
    if (!r)
      send_error(s, ErrorCode::unknown_robot,
                 "robot " + s.watching + " is not connected; wait for it in the robots list");
    return r;
  }

  void on_sub(Session& s, const std::string& ch, std::int64_t now) {
    RobotEntry* r = watched(s);
    if (!r) return;
    auto cit = r->channels.find(ch);
    if (cit == r->channels.end() || cit->second.tx) {
      send_error(s, ErrorCode::unknown_channel,
                 "robot " + s.watching + " declares no rx channel " + ch);
      return;
    }
    if (s.subs.count(ch)) return;
    if (s.subs.size() >= kMaxSubsPerViewer) {
      send_error(s, ErrorCode::invalid_control, "too many subscriptions");
      return;
    }
    Sub& sub = s.subs[ch];
    sub.delivery = cit->second.delivery;
    interest[s.watching][ch].insert(s.id);
    update_snapshot(s.watching, now, false);
  }

  void on_unsub(Session& s, const std::string& ch, std::int64_t now) {
    if (s.watching.empty()) {
      send_error(s, ErrorCode::no_watch, "watch a robot before unsubscribing");
      return;
    }
    if (!s.subs.count(ch)) {
      RobotEntry* r = robot_of(s);
      if (r && !r->channels.count(ch))
        send_error(s, ErrorCode::unknown_channel,
                   "robot " + s.watching + " declares no channel " + ch);
      return;
    }
    unsubscribe(s, ch);
    update_snapshot(s.watching, now, false);
  }

  void on_teleop_start(Session& s) {
    RobotEntry* r = watched(s);
    if (!r) return;
    if (r->lease_holder && r->lease_holder != s.id) {
      send_error(s, ErrorCode::teleop_held,
                 "another viewer holds the teleop lease of " + s.watching +
                     "; wait for it to be released");
      return;
    }
    r->lease_holder = s.id;
    r->gen = ++gen_counter;
    Json started = Json::object();
    started["t"] = "teleop_started";
    send(s, started);
    Json m = Json::object();
    m["t"] = "teleop_start";
    m["gen"] = r->gen;
    robot_datagram(*r, std::move(m));
  }

  // --- publish (v7 notes § Publishing) ----------------------------------------------------------------
  void send_pub_nack(Session& v, const std::string& ch, const std::string& id, ErrorCode code,
                     const std::string& message) {
    Json m = Json::object();
    m["t"] = "pub_nack";
    m["ch"] = ch;
    m["id"] = id;
    m["code"] = std::string(wire::error_name(code));
    m["message"] = message;
    send(v, m);
  }

  // The request id a publish carries in meta.id.
  static std::optional<std::string> request_id(const wire::FrameHeader& h) {
    if (!h.meta) return std::nullopt;
    auto it = h.meta->find("id");
    if (it == h.meta->end() || !it->is_string()) return std::nullopt;
    const auto& s = it->get_ref<const std::string&>();
    if (s.empty() || s.size() > wire::kMaxIdChars) return std::nullopt;
    return s;
  }

  void publish_too_large(Session& v, const wire::FrameHeader& h) {
    auto id = request_id(h);
    if (!id || wire::is_reserved_channel(h.ch)) return;
    send_pub_nack(v, h.ch, *id, ErrorCode::publish_too_large,
                  "a published value is at most 32 KiB");
  }

  void on_publish(Session& v, const wire::DataFrame& f, std::int64_t now) {
    if (!v.welcomed) {
      fail(v, ErrorCode::hello_required, "send hello before publishing", now);
      return;
    }
    const std::string& ch = f.header.ch;
    if (wire::is_reserved_channel(ch)) {
      // `@...` ids are never channel data (§ Framing): no nack either, since a relay message may
      // not name a reserved channel. Found by fuzz_cockpit_relay.
      count_drop("reserved_channel");
      return;
    }
    auto id = request_id(f.header);
    if (!id) {
      send_error(v, ErrorCode::invalid_control,
                 "dropped a publish on " + ch + " without meta.id (a request id of 1..128 "
                 "characters, answered by pub_ack or pub_nack)");
      return;
    }
    if (f.payload.size > wire::kMaxPublishBytes) {
      publish_too_large(v, f.header);
      return;
    }
    if (v.watching.empty()) {
      send_pub_nack(v, ch, *id, ErrorCode::no_watch, "watch a robot before publishing");
      return;
    }
    RobotEntry* r = robot_of(v);
    if (!r) {
      send_pub_nack(v, ch, *id, ErrorCode::robot_disconnected,
                    "robot " + v.watching + " is not connected");
      return;
    }
    auto cit = r->channels.find(ch);
    if (cit == r->channels.end() || !cit->second.tx || !cit->second.publish) {
      send_pub_nack(v, ch, *id, ErrorCode::not_publishable,
                    "channel " + ch + " is not declared with dir tx and publish: true");
      return;
    }
    if (cit->second.required_scope &&
        (!v.grant || !v.grant->scopes.count(*cit->second.required_scope))) {
      send_pub_nack(v, ch, *id, ErrorCode::not_publishable,
                    "channel " + ch + " needs a token with scope " + *cit->second.required_scope);
      return;
    }
    if (v.pending.count(*id)) {
      send_pub_nack(v, ch, *id, ErrorCode::duplicate_request,
                    "request id " + *id + " is still pending; use a fresh id");
      return;
    }
    if (v.pending.size() >= kMaxPendingPublishes) {
      send_pub_nack(v, ch, *id, ErrorCode::pending_limit,
                    "wait for pub_ack or pub_nack: at most " +
                        std::to_string(kMaxPendingPublishes) + " publishes may be pending");
      return;
    }
    // Token bucket per viewer.
    const double elapsed = double(std::max<std::int64_t>(0, now - v.tokens_ms)) / 1000.0;
    v.tokens = std::min(kPublishBurst, v.tokens + elapsed * kPublishRatePerSecond);
    v.tokens_ms = now;
    if (v.tokens < 1) {
      send_pub_nack(v, ch, *id, ErrorCode::rate_limited, "publish at most 20 values a second");
      return;
    }
    v.tokens -= 1;
    // The robot sees a relay-assigned id, so two viewers' ids can never collide.
    const std::string relay_id = "r" + std::to_string(++r->next_request);
    wire::FrameHeader h = f.header;
    h.meta = f.header.meta;
    (*h.meta)["id"] = relay_id;
    h.delivery = cit->second.delivery;
    Bytes out;
    if (wire::append_data_frame(out, h, f.payload)) {
      send_pub_nack(v, ch, *id, ErrorCode::publish_too_large, "the frame header grew too large");
      return;
    }
    r->pending[relay_id] = PendingPublish{v.id, ch, *id};
    r->timeouts.emplace_back(now + kPublishTimeoutMs, relay_id);
    v.pending[*id] = relay_id;
    CockpitAction a;
    a.kind = ActionKind::write_carrier;
    a.session = r->session;
    a.bytes = share(std::move(out));
    push(std::move(a));
  }

  void on_publish_answer(RobotEntry& r, const wire::Message& m) {
    const std::string& rid = m.body["id"].get_ref<const std::string&>();
    auto it = r.pending.find(rid);
    if (it == r.pending.end()) {
      count_drop("unknown_publish_answer");  // late, after publish_timeout, or made up
      return;
    }
    PendingPublish p = std::move(it->second);
    r.pending.erase(it);
    Session* v = find(p.viewer);
    if (!v) return;
    v->pending.erase(p.viewer_id);
    Json out = m.body;
    out["ch"] = p.ch;
    out["id"] = p.viewer_id;
    send(*v, out);
  }

  // --- incoming streams -----------------------------------------------------------------------------
  void incoming_failed(StreamId st, Incoming& in, wire::FrameError e) {
    // Corrupt framing kills only its stream (§ Sessions and messages).
    count_drop(std::string("stream_") + std::string(wire::frame_error_name(e)));
    stop_incoming(st, in);
  }

  // Incoming streams are one-shot, one frame each (§ Sessions and messages). Once the frame is in,
  // the relay stops reading (STOP_SENDING): the peer's FIN comes lazily or never on Deno
  // (workaround 2), and a stream left open would hold the peer's stream credit.
  void stop_incoming(StreamId st, Incoming& in) {
    CockpitAction a;
    a.kind = ActionKind::reset_stream;
    a.session = in.session;
    a.stream = st;
    a.end = StreamEnd::closing;
    push(std::move(a));
    if (Session* s = find(in.session)) s->incoming.erase(st);
    incoming.erase(st);
  }

  // A viewer's publish stream: frames bounded by kMaxPublishBytes before the payload is buffered.
  void viewer_stream_data(StreamId st, Incoming& in, Session& v, ByteView chunk,
                          std::int64_t now) {
    std::size_t pos = 0;
    while (pos < chunk.size) {
      // Take bytes up to the next boundary we need.
      std::size_t need = wire::kDataPrefixBytes;
      std::uint32_t hl = 0, pl = 0;
      if (in.buf.size() >= wire::kDataPrefixBytes) {
        hl = read_u32_le(in.buf.data());
        pl = read_u32_le(in.buf.data() + 4);
        need = wire::kDataPrefixBytes + hl;
        if (in.buf.size() >= need) need += pl;
      }
      const std::size_t n = std::min(need - in.buf.size(), chunk.size - pos);
      in.buf.insert(in.buf.end(), chunk.data + pos, chunk.data + pos + n);
      pos += n;
      if (in.buf.size() < need) continue;
      if (need == wire::kDataPrefixBytes) {
        hl = read_u32_le(in.buf.data());
        pl = read_u32_le(in.buf.data() + 4);
        if (hl == 0 || hl > wire::kMaxHeaderBytes) {
          incoming_failed(st, in, wire::FrameError::header_too_large);
          return;
        }
        continue;
      }
      if (in.buf.size() == wire::kDataPrefixBytes + hl) {
        auto h = wire::parse_header(ByteView(in.buf.data() + wire::kDataPrefixBytes, hl));
        if (!h) {
          incoming_failed(st, in, h.error());
          return;
        }
        if (pl > wire::kMaxPublishBytes && h->ch != wire::kControlChannel) {
          // Refused before the payload is buffered; the rest of the stream is never read.
          publish_too_large(v, h.value());
          stop_incoming(st, in);
          return;
        }
        if (pl > wire::kMaxControlBytes) {
          incoming_failed(st, in, wire::FrameError::control_too_large);
          return;
        }
        if (pl > 0) continue;
      }
      // Moving the vector keeps its heap block, so the decoded views stay valid.
      Bytes frame_bytes = std::move(in.buf);
      in.buf.clear();
      auto f = wire::decode_data_frame(ByteView(frame_bytes));
      if (!f) {
        incoming_failed(st, in, f.error());
        return;
      }
      const SessionId vid = v.id;  // the handler may close the session and free `v`
      handle_viewer_frame(v, f.value(), now);
      // One frame per one-shot stream: stop reading it (see stop_incoming).
      if (find(vid) && incoming.count(st)) stop_incoming(st, in);
      return;
    }
  }

  void handle_viewer_frame(Session& v, const wire::DataFrame& f, std::int64_t now) {
    if (f.header.ch == wire::kControlChannel) {
      on_viewer_message(v, f.payload, true, now);
    } else {
      on_publish(v, f, now);
    }
  }
};

// --- public surface ---------------------------------------------------------------------------------

CockpitRelay::CockpitRelay(RelayConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
CockpitRelay::~CockpitRelay() = default;

std::size_t CockpitRelay::session_count() const { return impl_->sessions.size(); }
bool CockpitRelay::has_actions() const { return !impl_->actions.empty(); }

std::vector<CockpitAction> CockpitRelay::take_actions() {
  std::vector<CockpitAction> out;
  out.swap(impl_->actions);
  return out;
}

SessionId CockpitRelay::open_session(Role role, Lane lane, std::int64_t now_ms) {
  if (impl_->sessions.size() >= kMaxSessions) return 0;
  auto s = std::make_unique<Session>();
  s->id = ++impl_->next_session;
  s->role = role;
  s->lane = lane;
  s->tokens_ms = now_ms;
  const SessionId id = s->id;
  impl_->sessions.emplace(id, std::move(s));
  return id;
}

void CockpitRelay::session_closed(SessionId s, std::int64_t now_ms) { impl_->release(s, now_ms); }

void CockpitRelay::control_data(SessionId id, ByteView chunk, std::int64_t now_ms) {
  Session* s = impl_->find(id);
  if (!s) return;
  if (s->role != Role::viewer || s->lane != Lane::webtransport) {
    impl_->count_drop("control_on_wrong_session");
    return;
  }
  // Messages are handled after the feed: a message may close the session and free its decoder.
  std::vector<Bytes> messages;
  auto e = s->control.feed(chunk, [&](ByteView m) { messages.push_back(m.to_bytes()); });
  for (const Bytes& m : messages) {
    Session* live = impl_->find(id);
    if (!live) return;
    impl_->on_viewer_message(*live, ByteView(m), true, now_ms);
  }
  if (e) {
    Session* live = impl_->find(id);
    if (!live) return;
    // The control stream is the session: corrupt framing there ends it.
    impl_->send_error(*live, wire::frame_error_code(*e), std::string(wire::frame_error_text(*e)));
    impl_->close(id, wire::frame_error_code(*e), std::string(wire::frame_error_text(*e)), now_ms);
  }
}

void CockpitRelay::datagram(SessionId id, ByteView bytes, std::int64_t now_ms) {
  Session* s = impl_->find(id);
  if (!s) return;
  if (s->role == Role::robot) impl_->on_robot_message(*s, bytes, false, now_ms);
  else impl_->on_viewer_message(*s, bytes, false, now_ms);
}

StreamId CockpitRelay::incoming_open(SessionId id, std::int64_t) {
  Session* s = impl_->find(id);
  if (!s || s->incoming.size() >= kMaxIncomingStreamsPerSession) return 0;
  const StreamId st = ++impl_->next_stream;
  auto in = std::make_shared<Incoming>();
  in->session = id;
  impl_->incoming.emplace(st, std::move(in));
  s->incoming.insert(st);
  return st;
}

void CockpitRelay::incoming_data(StreamId st, ByteView chunk, std::int64_t now_ms) {
  auto it = impl_->incoming.find(st);
  if (it == impl_->incoming.end()) return;
  const std::shared_ptr<Incoming> keep = it->second;  // a handler may close the session
  Incoming& in = *keep;
  Session* s = impl_->find(in.session);
  if (!s) return;
  if (s->role == Role::viewer) {
    impl_->viewer_stream_data(st, in, *s, chunk, now_ms);
    return;
  }
  const SessionId sid = s->id;
  bool closed = false;
  bool got_frame = false;
  auto e = in.robot.feed(chunk, [&](const wire::DataFrame& f) {
    if (closed) return;
    if (got_frame) {
      impl_->count_drop("extra_frame_on_one_shot_stream");
      return;
    }
    got_frame = true;
    // Handled in place: the views live until the next feed.
    Session* live = impl_->find(sid);
    if (!live) {
      closed = true;
      return;
    }
    impl_->on_robot_frame(*live, f, now_ms);
    if (!impl_->find(sid) || !impl_->incoming.count(st)) closed = true;
  });
  if (closed) return;
  if (got_frame) {
    if (impl_->incoming.count(st)) impl_->stop_incoming(st, in);
    return;
  }
  if (e) impl_->incoming_failed(st, in, *e);
}

void CockpitRelay::incoming_end(StreamId st, std::int64_t) {
  auto it = impl_->incoming.find(st);
  if (it == impl_->incoming.end()) return;
  // A frame cut off mid-way is dropped; nothing else is lost.
  if (it->second->robot.buffered() > 0 || !it->second->buf.empty()) impl_->count_drop("truncated");
  if (Session* s = impl_->find(it->second->session)) s->incoming.erase(st);
  impl_->incoming.erase(it);
}

void CockpitRelay::ws_message(SessionId id, ByteView frame, std::int64_t now_ms) {
  Session* s = impl_->find(id);
  if (!s) return;
  auto f = wire::decode_data_frame(frame);
  if (!f) {
    // One WebSocket message is one frame: a corrupt one is dropped alone.
    impl_->count_drop(std::string("ws_") + std::string(wire::frame_error_name(f.error())));
    if (s->welcomed)
      impl_->send_error(*s, ErrorCode::invalid_control,
                        "dropped a WebSocket message: " +
                            std::string(wire::frame_error_text(f.error())));
    else
      impl_->fail(*s, ErrorCode::hello_required, "send hello as an @control data frame first",
                  now_ms);
    return;
  }
  if (s->role == Role::robot) {
    impl_->on_robot_frame(*s, f.value(), now_ms);
    return;
  }
  if (f->header.ch == wire::kControlChannel) {
    impl_->on_viewer_message(*s, f->payload, true, now_ms);
  } else {
    impl_->on_publish(*s, f.value(), now_ms);
  }
}

void CockpitRelay::stream_opened(StreamId st, std::int64_t now_ms) {
  impl_->on_stream_opened(st, now_ms);
}
void CockpitRelay::write_done(StreamId st, std::int64_t now_ms) { impl_->on_write_done(st, now_ms); }
void CockpitRelay::stream_failed(StreamId st, std::int64_t now_ms) {
  impl_->on_stream_failed(st, now_ms);
}

void CockpitRelay::carrier_failed(SessionId id, std::int64_t now_ms) {
  Session* s = impl_->find(id);
  if (!s || s->role != Role::robot) return;
  impl_->fail(*s, ErrorCode::carrier_failed,
              "the carrier stream failed or overflowed; reconnect to re-register", now_ms);
}

void CockpitRelay::tick(std::int64_t now_ms) {
  Impl& m = *impl_;
  // Publish deadlines, in deadline order (the timeout is one constant).
  for (auto& [id, r] : m.robots) {
    while (!r.timeouts.empty() && r.timeouts.front().first <= now_ms) {
      const std::string rid = std::move(r.timeouts.front().second);
      r.timeouts.pop_front();
      auto it = r.pending.find(rid);
      if (it == r.pending.end()) continue;
      PendingPublish p = std::move(it->second);
      r.pending.erase(it);
      if (Session* v = m.find(p.viewer)) {
        v->pending.erase(p.viewer_id);
        m.send_pub_nack(*v, p.ch, p.viewer_id, ErrorCode::publish_timeout,
                        "the robot did not answer within 5 s; retry with a new request id");
      }
    }
  }
  // The periodic reap (workaround 12): an idle input stops offering.
  for (auto& [sid, s] : m.sessions) {
    if (s->role != Role::viewer) continue;
    for (auto& [ch, sub] : s->subs) {
      if (sub.delivery == Delivery::latest && !sub.live.empty())
        m.reap(*s, sub, m.counters_for(*s, ch), now_ms);
    }
  }
}

std::optional<ChannelCounters> CockpitRelay::counters(const std::string& robot_id,
                                                      const std::string& ch) const {
  auto it = impl_->robots.find(robot_id);
  if (it == impl_->robots.end()) return std::nullopt;
  auto c = it->second.counters.find(ch);
  if (c == it->second.counters.end()) return ChannelCounters{};
  return c->second;
}

Json CockpitRelay::stats() const {
  const Impl& m = *impl_;
  Json robots = Json::array();
  for (const auto& [id, r] : m.robots) {
    Json o = r.identity;
    auto w = m.watchers.find(id);
    o["viewers"] = w == m.watchers.end() ? 0 : w->second.size();
    o["leaseHolder"] = r.lease_holder != 0;
    o["subs"] = r.snapshot;
    Json chs = Json::object();
    for (const auto& [ch, c] : r.counters) {
      Json cj = Json::object();
      cj["sent"] = c.sent;
      cj["dropped"] = c.dropped;
      cj["expired"] = c.expired;
      cj["aborted"] = c.aborted;
      chs[ch] = std::move(cj);
    }
    o["channels"] = std::move(chs);
    Json rtc = Json::object();
    rtc["framesOnTrack"] = r.frames_on_track;
    o["rtc"] = std::move(rtc);
    robots.push_back(std::move(o));
  }
  std::size_t viewers = 0;
  for (const auto& [sid, s] : m.sessions) viewers += s->role == Role::viewer ? 1 : 0;
  Json out = Json::object();
  out["version"] = wire::kProtocolVersion;
  out["robots"] = std::move(robots);
  out["viewers"] = viewers;
  out["sessions"] = m.sessions.size();
  Json drops = Json::object();
  for (const auto& [k, n] : m.drops) drops[k] = n;
  out["dropped"] = std::move(drops);
  out["teleopDropped"] = m.teleop_dropped;
  return out;
}

}  // namespace tether::relay
