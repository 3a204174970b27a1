// The client cores' WebRTC video (src/cockpit/robot_rtc.cpp, viewer_rtc.cpp, client_rtc.hpp;
// cockpit-wire-protocol.md § WebRTC video): when each asks its host for a peer connection, what
// it offers and answers, rtc_stalled after a gap of about the SFU's window, the viewer's answer
// to a switched robot's offer, a fresh connection after rtc_session_gone or a failure, and the
// per-track states the viewer reports.
#include "client_harness.hpp"
#include "wire/limits.hpp"

using namespace client_test;

namespace {

Json track_manifest() {
  return J(R"({"version":1,"channels":[
    {"ch":"front","encoding":"video.webrtc.v1"},
    {"ch":"rear","encoding":"video.webrtc.v1"},
    {"ch":"cam","encoding":"jpeg.v1"}],
    "panels":[{"id":"v","kind":"video","channels":["front"]}]})");
}

Json args(const std::string& json) {
  return J(json);
}

template <class Action, class Kind>
std::vector<Action> of_kind(const std::vector<Action>& acts, Kind k) {
  std::vector<Action> out;
  for (const auto& a : acts)
    if (a.kind == k) out.push_back(a);
  return out;
}

// --- robot ---

struct Cam {
  RobotSession s;
  TimeMs now = 5000;
  static RobotConfig config(Json manifest, TimeMs window) {
    RobotConfig c;
    c.id = "r1";
    c.manifest = std::move(manifest);
    c.track_timeout_ms = window;
    return c;
  }
  explicit Cam(Json manifest = track_manifest(), TimeMs window = kSfuTrackTimeoutMs)
      : s(RobotSession::create(config(std::move(manifest), window)).value()) {}
  std::vector<RobotAction> actions() { return drain_actions(s); }
  void carrier(const Json& m) {
    Bytes b = relay_control_data_frame(m, seq++);
    s.handle_carrier_data(ByteView(b), now);
  }
  void up() {
    s.handle_start(now);
    s.handle_connected(Lane::webtransport, now);
    Bytes w = relay_datagram(J(R"({"t":"welcome","v":7})"));
    s.handle_datagram(ByteView(w), now);
    actions();
    drain_events(s);
  }
  // Up, rtc_ice, offered and answered.
  void streaming() {
    up();
    carrier(J(R"({"t":"rtc_ice","iceServers":[]})"));
    actions();
    REQUIRE(s.handle_rtc_offer("v=0 robot",
                               J(R"([{"mid":"0","ch":"front"},{"mid":"1","ch":"rear"}])"), now));
    carrier(J(R"({"t":"rtc_answer","sdp":"v=0 answer"})"));
    actions();
    drain_events(s);
  }
  std::int64_t seq = 0;
};

}  // namespace

TEST_CASE(
    "rtc robot: rtc_ice on the carrier asks the host for a peer connection for its track "
    "channels") {
  Cam c;
  c.up();
  c.carrier(J(
      R"({"t":"rtc_ice","iceServers":[{"urls":"turn:t.example","username":"u","credential":"p"}]})"));
  auto acts = c.actions();
  REQUIRE(acts.size() == 1);
  CHECK(acts[0].kind == RobotActionKind::rtc_open);
  CHECK(
      acts[0].json ==
      R"({"iceServers":[{"urls":"turn:t.example","username":"u","credential":"p"}],"chs":["front","rear"]})");
  auto evs = drain_events(c.s);
  REQUIRE(evs.size() == 1);
  CHECK(evs[0].kind == RobotEventKind::rtc);
  CHECK(to_json(evs[0].body) == R"({"pc":"opening"})");

  // Its offer goes out as an @control frame on a one-shot stream; the relay's answer comes back.
  CHECK(c.s.handle_rtc_offer("v=0 robot", J(R"([{"mid":"0","ch":"front"}])"), c.now));
  acts = c.actions();
  REQUIRE(acts.size() == 1);
  CHECK(acts[0].kind == RobotActionKind::send_stream);
  CHECK(to_json(sent_message(acts[0].bytes)) ==
        R"({"t":"rtc_offer","sdp":"v=0 robot","tracks":[{"mid":"0","ch":"front"}]})");
  c.carrier(J(R"({"t":"rtc_answer","sdp":"v=0 answer"})"));
  acts = c.actions();
  REQUIRE(acts.size() == 1);
  CHECK(acts[0].kind == RobotActionKind::rtc_accept);
  CHECK(acts[0].json == R"({"sdp":"v=0 answer"})");
  CHECK(c.s.rtc().pc() == ClientRtc::Pc::ready);
  // A second answer has no offer to go with.
  c.carrier(J(R"({"t":"rtc_answer","sdp":"v=0 answer"})"));
  CHECK(c.actions().empty());
}

TEST_CASE("rtc robot: a robot without track channels never opens a peer connection") {
  Cam c(demo_manifest());
  c.up();
  c.carrier(J(R"({"t":"rtc_ice","iceServers":[]})"));
  CHECK(c.actions().empty());
  CHECK_FALSE(c.s.handle_rtc_offer("v=0", J(R"([{"mid":"0","ch":"cam"}])"), c.now));
}

TEST_CASE("rtc robot: an offer the relay would refuse is not sent") {
  Cam c;
  c.up();
  CHECK_FALSE(c.s.handle_rtc_offer("v=0", J(R"([{"mid":"0","ch":"front"}])"), c.now));  // not asked
  c.carrier(J(R"({"t":"rtc_ice","iceServers":[]})"));
  c.actions();
  Json nine = Json::array();
  for (int i = 0; i < 9; ++i) nine.push_back(J(R"({"mid":"x","ch":"front"})"));
  for (int i = 0; i < 9; ++i) nine[i]["mid"] = std::to_string(i);
  for (const Json& tracks :
       {J("[]"), J(R"([{"mid":"0","ch":"cam"}])"), J(R"([{"mid":"0","ch":"ghost"}])"),
        J(R"([{"mid":"0","ch":"front"},{"mid":"0","ch":"rear"}])"),
        J(R"([{"mid":"0","ch":"front"},{"mid":"1","ch":"front"}])"),
        J(R"([{"mid":0,"ch":"front"}])"), nine}) {
    INFO(to_json(tracks));
    CHECK_FALSE(c.s.handle_rtc_offer("v=0", tracks, c.now));
  }
  CHECK_FALSE(c.s.handle_rtc_offer(std::string(wire::kMaxSdpBytes + 1, 'v'),
                                   J(R"([{"mid":"0","ch":"front"}])"), c.now));
  CHECK(c.actions().empty());
  CHECK(c.s.handle_rtc_offer(std::string(wire::kMaxSdpBytes, 'v'),
                             J(R"([{"mid":"0","ch":"front"}])"), c.now));
}

TEST_CASE("rtc robot: media that resumes after about the SFU's window sends rtc_stalled") {
  CHECK(stall_threshold_ms(30'000) == 27'000);
  CHECK(stall_threshold_ms(1'500) == 1'350);
  Cam c;
  c.streaming();
  CHECK_FALSE(c.s.handle_media_resumed("front", 26'999, c.now));
  CHECK(c.actions().empty());
  CHECK(c.s.handle_media_resumed("front", 27'000, c.now));
  auto acts = c.actions();
  REQUIRE(acts.size() == 1);
  CHECK(to_json(sent_message(acts[0].bytes)) == R"({"t":"rtc_stalled","ch":"front"})");
  CHECK_FALSE(c.s.handle_media_resumed("cam", 60'000, c.now));  // not a track channel
  // A local SFU with a shorter window: the robot's config says so.
  Cam quick(track_manifest(), 1500);
  quick.streaming();
  CHECK_FALSE(quick.s.handle_media_resumed("rear", 1349, quick.now));
  CHECK(quick.s.handle_media_resumed("rear", 1350, quick.now));
}

TEST_CASE("rtc robot: no rtc_stalled before the relay answered the offer") {
  Cam c;
  c.up();
  CHECK_FALSE(c.s.handle_media_resumed("front", 60'000, c.now));
  c.carrier(J(R"({"t":"rtc_ice","iceServers":[]})"));
  c.actions();
  CHECK(c.s.handle_rtc_offer("v=0", J(R"([{"mid":"0","ch":"front"}])"), c.now));
  c.actions();
  CHECK_FALSE(c.s.handle_media_resumed("front", 60'000, c.now));
}

TEST_CASE(
    "rtc robot: rtc_session_gone or a failed connection opens a fresh one, at most every 2 s") {
  Cam c;
  c.streaming();
  c.now += 10'000;
  c.carrier(J(R"({"t":"error","code":"rtc_session_gone","message":"gone"})"));
  auto acts = of_kind(c.actions(), RobotActionKind::rtc_open);
  REQUIRE(acts.size() == 1);
  CHECK(c.s.handle_rtc_offer("v=0 again", J(R"([{"mid":"0","ch":"front"}])"), c.now));
  c.actions();
  c.now += 500;
  c.s.handle_rtc_state("failed", c.now);
  CHECK(c.actions().empty());  // 500 ms after the last open: it waits
  REQUIRE(c.s.poll_timeout());
  CHECK(*c.s.poll_timeout() <= c.now + 1500);
  c.now += 1500;
  c.s.handle_timeout(c.now);
  CHECK(of_kind(c.actions(), RobotActionKind::rtc_open).size() == 1);
  // Other states change nothing.
  c.s.handle_rtc_state("connected", c.now);
  CHECK(c.actions().empty());
}

TEST_CASE("rtc robot: a new relay session starts with its own rtc_ice and a fresh connection") {
  Cam c;
  c.streaming();
  c.s.handle_disconnected("lost", c.now);
  CHECK(c.s.rtc().pc() == ClientRtc::Pc::none);
  CHECK_FALSE(c.s.rtc().has_ice());
  c.now += 1000;
  c.s.handle_timeout(c.now);
  c.seq = 0;
  c.s.handle_connected(Lane::webtransport, c.now);
  c.actions();
  c.carrier(J(R"({"t":"rtc_ice","iceServers":[]})"));
  CHECK(of_kind(c.actions(), RobotActionKind::rtc_open).size() == 1);
}

TEST_CASE("rtc robot: the config takes trackTimeoutMs, bounded") {
  Json base = J(R"({"id":"r1","manifest":{"version":1,"channels":[]}})");
  Json c = base;
  c["trackTimeoutMs"] = 1500;
  auto rc = robot_config_from_json(c);
  REQUIRE(rc);
  CHECK(rc.value().track_timeout_ms == 1500);
  CHECK(robot_config_from_json(base).value().track_timeout_ms == kSfuTrackTimeoutMs);
  c["trackTimeoutMs"] = 99;
  CHECK_FALSE(robot_config_from_json(c));
  c["trackTimeoutMs"] = "30s";
  auto bad = robot_config_from_json(c);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().find("trackTimeoutMs") != std::string::npos);
}

// --- viewer ---

namespace {

struct Eye {
  ViewerSession s{std::nullopt};
  TimeMs now = 1000;
  std::vector<ViewerAction> actions() { return drain_actions(s); }
  void relay(const Json& m) {
    Bytes b = relay_control_frame(m);
    s.handle_control_data(ByteView(b), now);
  }
  Json state() {
    Json last;
    for (auto& e : drain_events(s))
      if (e.kind == ViewerEventKind::state) last = J(e.json);
    return last;
  }
  void up(const std::string& robot = "r1") {
    s.handle_start(now);
    s.handle_connected(Lane::webtransport, now);
    relay(J(R"({"t":"welcome","v":7})"));
    s.watch(robot, now);
    Json m = J(R"({"t":"manifest"})");
    m["robotId"] = robot;
    m["manifest"] = track_manifest();
    relay(m);
    actions();
    drain_events(s);
  }
  // Up, wanting front, its connection open and answered.
  void ready() {
    up();
    s.want({"front", "cam"}, now);
    relay(J(R"({"t":"rtc_ice","iceServers":[]})"));
    actions();
    REQUIRE(s.handle_rtc_offer("v=0 viewer", now));
    relay(J(R"({"t":"rtc_answer","sdp":"v=0 relay answer"})"));
    actions();
    drain_events(s);
  }
  void pull(const std::string& robot, const std::string& tracks) {
    Json m = J(R"({"t":"rtc_offer","sdp":"v=0 pull"})");
    m["tracks"] = J(tracks);
    m["robotId"] = robot;
    relay(m);
  }
};

}  // namespace

TEST_CASE(
    "rtc viewer: a peer connection is opened once rtc_ice came and a wanted channel is a track") {
  Eye e;
  e.up();
  e.relay(J(R"({"t":"rtc_ice","iceServers":[{"urls":["stun:s.example"]}]})"));
  CHECK(e.actions().empty());  // nothing wanted yet
  CHECK(to_json(e.state()["rtc"]) == R"({"pc":"none","tracks":{}})");
  e.s.want({"cam"}, e.now);
  CHECK(of_kind(e.actions(), ViewerActionKind::rtc_open).empty());  // JPEG needs none
  e.s.want({"cam", "front"}, e.now);
  auto opens = of_kind(e.actions(), ViewerActionKind::rtc_open);
  REQUIRE(opens.size() == 1);
  CHECK(opens[0].json == R"({"iceServers":[{"urls":["stun:s.example"]}]})");
  CHECK(to_json(e.state()["rtc"]) == R"({"pc":"opening","tracks":{"front":{"state":"waiting"}}})");

  CHECK(e.s.handle_rtc_offer("v=0 viewer", e.now));
  auto sent = messages(e.actions());
  REQUIRE(sent.size() == 1);
  CHECK(to_json(sent[0]) == R"({"t":"rtc_offer","sdp":"v=0 viewer"})");
  CHECK_FALSE(e.s.handle_rtc_offer("v=0 again", e.now));  // one offer per connection
  e.relay(J(R"({"t":"rtc_answer","sdp":"v=0 relay answer"})"));
  auto acts = e.actions();
  REQUIRE(acts.size() == 1);
  CHECK(acts[0].kind == ViewerActionKind::rtc_accept);
  CHECK(acts[0].json == R"({"sdp":"v=0 relay answer"})");
  CHECK(e.state()["rtc"]["pc"] == "ready");
}

TEST_CASE(
    "rtc viewer: a relay offer is answered, and its tracks say which mid carries which channel") {
  Eye e;
  e.ready();
  e.pull("r1", R"([{"mid":"1","ch":"front"}])");
  auto acts = e.actions();
  REQUIRE(acts.size() == 1);
  CHECK(acts[0].kind == ViewerActionKind::rtc_answer);
  CHECK(acts[0].json ==
        R"({"sdp":"v=0 pull","tracks":[{"mid":"1","ch":"front"}],"robotId":"r1","current":true})");
  CHECK(to_json(e.state()["rtc"]["tracks"]) == R"({"front":{"state":"connecting","mid":"1"}})");
  CHECK(e.s.handle_rtc_answer("v=0 viewer answer", e.now));
  auto sent = messages(e.actions());
  REQUIRE(sent.size() == 1);
  CHECK(to_json(sent[0]) == R"({"t":"rtc_answer","sdp":"v=0 viewer answer","robotId":"r1"})");
  CHECK_FALSE(e.s.handle_rtc_answer("v=0 twice", e.now));
  CHECK(e.actions().empty());
}

TEST_CASE(
    "rtc viewer: a viewer that switched robots answers the old robot's offer but ignores its "
    "tracks") {
  Eye e;
  e.ready();
  e.s.watch("r2", e.now);
  e.actions();
  e.pull("r1", R"([{"mid":"1","ch":"front"}])");
  auto acts = e.actions();
  REQUIRE(acts.size() == 1);
  CHECK(acts[0].json == R"({"sdp":"v=0 pull","tracks":[],"robotId":"r1","current":false})");
  CHECK(e.s.handle_rtc_answer("v=0 a", e.now));
  auto sent = messages(e.actions());
  REQUIRE(sent.size() == 1);
  CHECK(sent[0]["robotId"] == "r1");
  CHECK(e.state()["rtc"]["tracks"].empty());  // r2's manifest has not come yet
}

TEST_CASE("rtc viewer: media reports make a track live, and silence makes it stalled") {
  Eye e;
  e.ready();
  e.pull("r1", R"([{"mid":"1","ch":"front"}])");
  e.actions();
  e.s.handle_rtc_media("front", 0, e.now);
  CHECK(e.state()["rtc"]["tracks"]["front"]["state"] == "connecting");
  e.s.handle_rtc_media("front", 12, e.now);
  CHECK(e.state()["rtc"]["tracks"]["front"]["state"] == "live");
  REQUIRE(e.s.poll_timeout());
  CHECK(*e.s.poll_timeout() <= e.now + kRtcStallMs);
  e.now += kRtcStallMs - 1;
  e.s.handle_timeout(e.now);
  CHECK(e.state().is_null());  // nothing changed
  e.now += 1;
  e.s.handle_timeout(e.now);
  CHECK(e.state()["rtc"]["tracks"]["front"]["state"] == "stalled");
  e.s.handle_rtc_media("front", 3, e.now);
  CHECK(e.state()["rtc"]["tracks"]["front"]["state"] == "live");
  // A re-pull (after rtc_stalled at the robot) starts it connecting again on its new mid.
  e.pull("r1", R"([{"mid":"2","ch":"front"}])");
  CHECK(to_json(e.state()["rtc"]["tracks"]) == R"({"front":{"state":"connecting","mid":"2"}})");
  // Reports for channels without a pull change nothing.
  e.s.handle_rtc_media("rear", 5, e.now);
  e.s.handle_rtc_media("cam", 5, e.now);
  CHECK(e.state().is_null());
}

TEST_CASE("rtc viewer: rtc_failed shows on tracks without video, and video clears it") {
  Eye e;
  e.ready();
  e.relay(J(R"({"t":"error","code":"rtc_failed","message":"pulling failed; retrying"})"));
  Json st = e.state();
  CHECK(to_json(st["rtc"]["tracks"]) == R"({"front":{"state":"failed"}})");
  CHECK(st["lastError"]["code"] == "rtc_failed");
  e.pull("r1", R"([{"mid":"1","ch":"front"}])");
  CHECK(e.state()["rtc"]["tracks"]["front"]["state"] == "connecting");
  e.s.handle_rtc_media("front", 1, e.now);
  e.relay(J(R"({"t":"error","code":"rtc_failed","message":"a close failed"})"));
  CHECK(e.state()["rtc"]["tracks"]["front"]["state"] == "live");  // video is what counts
}

TEST_CASE(
    "rtc viewer: rtc_session_gone opens a fresh connection, and an offer for the old one is "
    "dropped") {
  Eye e;
  e.ready();
  e.now += 5000;
  e.relay(J(R"({"t":"error","code":"rtc_session_gone","message":"gone"})"));
  auto opens = of_kind(e.actions(), ViewerActionKind::rtc_open);
  REQUIRE(opens.size() == 1);
  e.pull("r1", R"([{"mid":"1","ch":"front"}])");  // late, for the old session
  CHECK(of_kind(e.actions(), ViewerActionKind::rtc_answer).empty());
  CHECK(e.s.handle_rtc_offer("v=0 fresh", e.now));
  CHECK(types(messages(e.actions())) == std::vector<std::string>{"rtc_offer"});
  // A failure reported by the host reopens as well, once 2 s passed since the last open.
  e.relay(J(R"({"t":"rtc_answer","sdp":"v=0 b"})"));
  e.actions();
  e.s.handle_rtc_state("failed", e.now);
  CHECK(e.actions().empty());
  e.now += kRtcReopenMs;
  e.s.handle_timeout(e.now);
  CHECK(of_kind(e.actions(), ViewerActionKind::rtc_open).size() == 1);
}

TEST_CASE("rtc viewer: a relay without an SFU sends no rtc_ice, and the state carries no rtc") {
  Eye e;
  e.up();
  e.s.want({"front"}, e.now);
  CHECK(e.actions().size() == 1);  // the sub only
  CHECK_FALSE(e.state().contains("rtc"));
  CHECK_FALSE(e.s.handle_rtc_offer("v=0", e.now));
}

TEST_CASE("rtc viewer: a reconnect forgets the connection, and the next rtc_ice opens one") {
  Eye e;
  e.ready();
  e.s.handle_disconnected("lost", e.now);
  e.now += 250;
  e.s.handle_timeout(e.now);
  e.s.handle_connected(Lane::webtransport, e.now);
  e.relay(J(R"({"t":"welcome","v":7})"));
  Json m = J(R"({"t":"manifest","robotId":"r1"})");
  m["manifest"] = track_manifest();
  e.relay(m);
  e.actions();
  e.relay(J(R"({"t":"rtc_ice","iceServers":[]})"));
  CHECK(of_kind(e.actions(), ViewerActionKind::rtc_open).size() == 1);
}
