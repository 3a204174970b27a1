// The cockpit viewer session core (src/cockpit/viewer_session.hpp): scripts of relay input and
// operator actions, checked against what the session sends and reports.
#include "client_harness.hpp"
#include "wire/limits.hpp"

using namespace client_test;

namespace {

struct Viewer {
  ViewerSession s{std::nullopt};
  TimeMs now = 1000;

  explicit Viewer(std::optional<std::string> token = std::nullopt) : s(std::move(token)) {}

  std::vector<ViewerAction> actions() { return drain_actions(s); }
  std::vector<ViewerEvent> events() { return drain_events(s); }
  std::vector<Json> sent() { return messages(actions()); }
  void relay(const Json& m) {
    Bytes b = relay_control_frame(m);
    s.handle_control_data(ByteView(b), now);
  }
  // Connected and welcomed over WebTransport, with one robot listed.
  void up() {
    s.handle_start(now);
    s.handle_connected(Lane::webtransport, now);
    relay(J(R"({"t":"welcome","v":7})"));
    relay(J(R"({"t":"robots","robots":[{"id":"r1","name":"R","model":"m"}]})"));
    actions();
    events();
  }
  void manifest(const std::string& robot = "r1") {
    Json m = J(R"({"t":"manifest"})");
    m["robotId"] = robot;
    m["manifest"] = demo_manifest();
    relay(m);
  }
  void lease() {
    s.teleop_start(now);
    relay(J(R"({"t":"teleop_started"})"));
    actions();
  }
  Json state() {
    Json last;
    for (auto& e : events())
      if (e.kind == ViewerEventKind::state) last = J(e.json);
    return last;
  }
};

}  // namespace

TEST_CASE(
    "viewer: start asks for a transport, the hello carries the core's version and the token") {
  Viewer v(std::string("viewer-token-0123456789"));
  v.s.handle_start(v.now);
  auto a = v.actions();
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == ViewerActionKind::connect);
  CHECK(v.state()["link"]["state"] == "connecting");
  v.s.handle_connected(Lane::webtransport, v.now);
  a = v.actions();
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == ViewerActionKind::send_control);
  // A length-prefixed control frame on WebTransport.
  CHECK(read_u32_le(a[0].bytes.data()) == a[0].bytes.size() - 4);
  CHECK(to_json(sent_message(a[0].bytes)) ==
        R"({"t":"hello","v":)" + std::to_string(wire::kProtocolVersion) +
            R"(,"role":"viewer","token":"viewer-token-0123456789"})");
  CHECK(v.state()["link"]["state"] == "open");
}

TEST_CASE("viewer: welcome starts pings at once, the robots list is reported") {
  Viewer v;
  v.s.handle_start(v.now);
  v.s.handle_connected(Lane::webtransport, v.now);
  v.actions();
  v.relay(J(R"({"t":"welcome","v":7})"));
  auto ms = v.sent();
  REQUIRE(types(ms) == std::vector<std::string>{"ping"});
  CHECK(v.s.poll_timeout() == Timeout(v.now + kViewerPingIntervalMs));
  v.relay(J(R"({"t":"robots","robots":[{"id":"r1","name":"R","model":"m"}]})"));
  auto es = v.events();
  bool robots = false;
  for (auto& e : es)
    robots = robots || (e.kind == ViewerEventKind::robots &&
                        e.json == R"({"robots":[{"id":"r1","name":"R","model":"m"}]})");
  CHECK(robots);
  // The pong gives the round trip, by the session's own clock.
  v.now += 42;
  Json pong = J(R"({"t":"pong","ts":1})");
  pong["n"] = ms[0]["n"];
  v.relay(pong);
  CHECK(v.state()["rttMs"] == 42);
}

TEST_CASE(
    "viewer: watch waits for welcome, and the manifest subscribes exactly the wanted rx channels") {
  Viewer v;
  v.s.handle_start(v.now);
  v.s.handle_connected(Lane::webtransport, v.now);
  v.actions();
  v.s.watch("r1", v.now);
  v.s.want({"cam", "say", "ghost", "log", "cam"}, v.now);
  CHECK(v.sent().empty());  // not welcomed yet
  v.relay(J(R"({"t":"welcome","v":7})"));
  CHECK(types(v.sent()) == std::vector<std::string>{"ping", "watch"});
  v.manifest("other");  // another robot's manifest changes nothing
  CHECK(v.sent().empty());
  v.manifest();
  auto ms = v.sent();
  REQUIRE(ms.size() == 2);  // say is tx, ghost undeclared
  CHECK(to_json(ms[0]) == R"({"t":"sub","ch":"cam"})");
  CHECK(to_json(ms[1]) == R"({"t":"sub","ch":"log"})");
  v.s.want({"log"}, v.now);
  ms = v.sent();
  REQUIRE(ms.size() == 1);
  CHECK(to_json(ms[0]) == R"({"t":"unsub","ch":"cam"})");
  v.s.want({"log"}, v.now);
  CHECK(v.sent().empty());
}

TEST_CASE(
    "viewer: the lease, driving with resends inside the watchdog, and a zero twist at release") {
  Viewer v;
  v.up();
  v.s.watch("r1", v.now);
  v.manifest();
  v.actions();
  CHECK_FALSE(v.s.drive(1, 0, 0, v.now));  // no lease, nothing sent
  CHECK(v.sent().empty());
  v.s.teleop_start(v.now);
  CHECK(types(v.sent()) == std::vector<std::string>{"teleop_start"});
  CHECK(v.s.teleop() == TeleopLease::requesting);
  v.relay(J(R"({"t":"teleop_started"})"));
  CHECK(v.s.teleop() == TeleopLease::held);
  REQUIRE(v.s.drive(0.5, 0, 0.25, v.now));
  auto a = v.actions();
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == ViewerActionKind::send_datagram);
  CHECK(std::string(a[0].bytes.begin(), a[0].bytes.end()) ==
        R"({"t":"twist","vx":0.5,"vy":0,"wz":0.25,"seq":1,"ts":1})");  // raw JSON on WebTransport
  CHECK(v.s.poll_timeout() == Timeout(v.now + kTwistResendMs));
  // The same command again sends nothing now; the resend carries it.
  REQUIRE(v.s.drive(0.5, 0, 0.25, v.now + 10));
  CHECK(v.sent().empty());
  v.now += kTwistResendMs;
  v.s.handle_timeout(v.now);
  auto ms = v.sent();
  REQUIRE(ms.size() == 1);
  CHECK(ms[0]["seq"] == 2);
  CHECK(ms[0]["vx"] == 0.5);
  // Released: one zero twist, and no more resends.
  REQUIRE(v.s.drive(0, 0, 0, v.now));
  ms = v.sent();
  REQUIRE(ms.size() == 1);
  CHECK(to_json(ms[0]) == R"({"t":"twist","vx":0,"vy":0,"wz":0,"seq":3,"ts":1.05})");
  CHECK(v.s.poll_timeout() == Timeout(v.now + kViewerPingIntervalMs - kTwistResendMs));  // the ping
  CHECK_FALSE(v.s.drive(std::nan(""), 0, 0, v.now));
}

TEST_CASE("viewer: losing the lease stops the resends, teleop_held is refused, estop always goes") {
  Viewer v;
  v.up();
  v.s.watch("r1", v.now);
  v.lease();
  REQUIRE(v.s.drive(1, 0, 0, v.now));
  v.actions();
  v.relay(J(R"({"t":"teleop_stop","gen":4})"));
  CHECK(v.s.teleop() == TeleopLease::idle);
  v.now += kTwistResendMs;
  v.s.handle_timeout(v.now);
  CHECK(v.sent().empty());
  v.s.teleop_start(v.now);
  v.relay(J(R"({"t":"error","code":"teleop_held","message":"another viewer holds it"})"));
  CHECK(v.s.teleop() == TeleopLease::refused);
  CHECK(v.state()["lastError"]["code"] == "teleop_held");
  v.actions();
  v.s.estop(v.now);
  auto ms = v.sent();
  REQUIRE(types(ms) == std::vector<std::string>{"stop"});
}

TEST_CASE("viewer: watching another robot gives up the lease and its resends") {
  Viewer v;
  v.up();
  v.s.watch("r1", v.now);
  v.lease();
  REQUIRE(v.s.drive(1, 0, 0, v.now));
  v.actions();
  v.s.watch("r2", v.now);
  CHECK(v.s.teleop() == TeleopLease::idle);
  CHECK(types(v.sent()) == std::vector<std::string>{"watch"});
  v.now += kTwistResendMs;
  v.s.handle_timeout(v.now);
  CHECK(v.sent().empty());
}

TEST_CASE("viewer: a lost link resets subscriptions and lease, then reconnects with backoff") {
  Viewer v;
  v.up();
  v.s.watch("r1", v.now);
  v.s.want({"cam"}, v.now);
  v.manifest();
  v.lease();
  REQUIRE(v.s.subscribed().size() == 1);
  v.s.handle_disconnected("closed by peer", v.now);
  CHECK(v.s.subscribed().empty());
  CHECK(v.s.teleop() == TeleopLease::idle);
  Json st = v.state();
  CHECK(st["link"]["state"] == "reconnecting");
  CHECK(st["link"]["detail"] == "closed by peer");
  std::vector<TimeMs> delays;
  for (int i = 0; i < 8; ++i) {
    auto t = v.s.poll_timeout();
    REQUIRE(t);
    delays.push_back(*t - v.now);
    v.now = *t;
    v.s.handle_timeout(v.now);
    auto a = v.actions();
    REQUIRE(a.size() == 1);
    CHECK(a[0].kind == ViewerActionKind::connect);
    v.s.handle_disconnected("refused", v.now);
  }
  CHECK(delays == std::vector<TimeMs>{250, 500, 1000, 2000, 4000, 8000, 8000, 8000});
  // Once connected the backoff starts over, and the welcome re-watches and re-subscribes.
  v.now = *v.s.poll_timeout();
  v.s.handle_timeout(v.now);
  v.s.handle_connected(Lane::webtransport, v.now);
  CHECK(types(v.sent()) == std::vector<std::string>{"hello"});
  v.relay(J(R"({"t":"welcome","v":7})"));
  CHECK(types(v.sent()) == std::vector<std::string>{"ping", "watch"});
  v.manifest();
  CHECK(types(v.sent()) == std::vector<std::string>{"sub"});
  v.s.handle_disconnected("again", v.now);
  CHECK(v.s.poll_timeout() == Timeout(v.now + kViewerBackoffMs[0]));
}

TEST_CASE(
    "viewer: over a WebSocket every message is an @control frame, channel frames are the app's") {
  Viewer v;
  v.s.handle_start(v.now);
  v.actions();
  v.s.handle_connected(Lane::websocket, v.now);
  auto a = v.actions();
  REQUIRE(a.size() == 1);
  auto f = wire::decode_data_frame(ByteView(a[0].bytes));
  REQUIRE(f.ok());
  CHECK(f->header.ch == "@control");
  CHECK(f->header.seq == 0);
  CHECK(f->header.delivery == wire::Delivery::reliable);
  Bytes welcome = relay_control_data_frame(J(R"({"t":"welcome","v":7})"));
  CHECK(v.s.handle_ws_message(ByteView(welcome), v.now));
  a = v.actions();
  REQUIRE(a.size() == 1);  // the ping, numbered next on this connection
  f = wire::decode_data_frame(ByteView(a[0].bytes));
  REQUIRE(f.ok());
  CHECK(f->header.seq == 1);
  Bytes frame = data_frame("cam", 3, "jpeg", wire::Delivery::latest);
  CHECK_FALSE(v.s.handle_ws_message(ByteView(frame), v.now));
  const Bytes junk = {1, 2, 3};
  CHECK(v.s.handle_ws_message(ByteView(junk), v.now));  // no frame: a drop, not the app's
  CHECK(v.state()["drops"] == 1);
  // Control-stream bytes belong to WebTransport: on this lane they are ignored.
  v.relay(J(R"({"t":"teleop_started"})"));
  CHECK(v.actions().empty());
  v.s.estop(v.now);
  a = v.actions();
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == ViewerActionKind::send_datagram);
  f = wire::decode_data_frame(ByteView(a[0].bytes));
  REQUIRE(f.ok());
  CHECK(f->header.ch == "@control");
}

TEST_CASE("viewer: corrupt control framing is a drop and closes the link, bad messages are drops") {
  Viewer v;
  v.up();
  Bytes junk_message = relay_control_frame(J(R"({"t":"welcome"})"));  // missing v
  v.s.handle_control_data(ByteView(junk_message), v.now);
  CHECK(v.actions().empty());
  CHECK(v.state()["drops"] == 1);
  Bytes huge;
  append_u32_le(huge, std::uint32_t(wire::kMaxControlBytes + 1));
  v.s.handle_control_data(ByteView(huge), v.now);
  auto a = v.actions();
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == ViewerActionKind::close);
  CHECK(a[0].reason == "corrupt control stream: control_too_large");
}

TEST_CASE("viewer: a publish is a data frame with meta.id and the manifest's delivery") {
  Viewer v;
  CHECK(v.s.publish("say", ByteView(std::string_view("{}")), "m1", v.now) ==
        PublishResult::not_connected);
  v.up();
  CHECK(v.s.publish("say", ByteView(std::string_view("{}")), "m1", v.now) ==
        PublishResult::no_watch);
  v.s.watch("r1", v.now);
  v.manifest();
  v.actions();
  CHECK(v.s.publish("say", ByteView(std::string_view(R"({"text":"hi"})")), "m1", v.now) ==
        PublishResult::sent);
  CHECK(v.s.publish("say", ByteView(std::string_view(R"({"text":"again"})")), "m2", v.now) ==
        PublishResult::sent);
  auto a = v.actions();
  REQUIRE(a.size() == 2);
  CHECK(a[0].kind == ViewerActionKind::send_stream);
  auto f = wire::decode_data_frame(ByteView(a[1].bytes));
  REQUIRE(f.ok());
  CHECK(f->header.ch == "say");
  CHECK(f->header.seq == 2);
  CHECK(f->header.delivery == wire::Delivery::reliable);
  CHECK(to_json(*f->header.meta) == R"({"id":"m2"})");
  CHECK(f->payload.as_chars() == R"({"text":"again"})");
  CHECK(v.s.publish("@control", ByteView(std::string_view("{}")), "m3", v.now) ==
        PublishResult::invalid);
  CHECK(v.s.publish("say", ByteView(std::string_view("{}")), "", v.now) == PublishResult::invalid);
}

TEST_CASE("viewer: stop closes the link for good") {
  Viewer v;
  v.up();
  v.s.handle_stop(v.now);
  auto a = v.actions();
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == ViewerActionKind::close);
  v.s.handle_disconnected("closed", v.now);
  CHECK_FALSE(v.s.poll_timeout());
  CHECK(v.state()["link"]["state"] == "closed");
}

TEST_CASE("viewer: a robot id no relay could list is refused, a host's odd text is made UTF-8") {
  Viewer v;
  v.up();
  CHECK_FALSE(v.s.watch("", v.now));
  CHECK_FALSE(v.s.watch(std::string("r\xff", 2), v.now));
  CHECK_FALSE(v.s.watch(std::string(129, 'r'), v.now));
  CHECK(v.sent().empty());
  CHECK(v.s.robot_id().empty());
  REQUIRE(v.s.watch("r1", v.now));
  CHECK(v.s.publish("say", ByteView(std::string_view("{}")), std::string("m\xff", 2), v.now) ==
        PublishResult::invalid);
  v.s.handle_disconnected(std::string("reset \xff\xfe by peer", 16), v.now);
  auto st = v.state();
  REQUIRE(st.is_object());  // the event is JSON, whatever the host passed
  CHECK(st["link"]["detail"] == "reset ?? by peer");
}

TEST_CASE(
    "viewer: auth_failed and version_mismatch are final: no reconnect, and the fix is shown") {
  for (const char* code : {"auth_failed", "version_mismatch"}) {
    INFO(code);
    Viewer v;
    v.up();
    Json e = J(R"({"t":"error","message":"refused"})");
    e["code"] = code;
    v.relay(e);
    v.s.handle_disconnected("closed by the relay", v.now);
    CHECK(v.s.stopped());
    CHECK_FALSE(v.s.poll_timeout());  // no reconnect scheduled
    Json st = v.state();
    CHECK(st["link"]["state"] == "closed");
    CHECK(st["link"]["code"] == code);
    CHECK(st["link"]["detail"].get<std::string>() ==
          std::string(wire::error_info(*wire::error_code_from_name(code)).fix));
    v.now += 60'000;
    v.s.handle_timeout(v.now);
    CHECK(v.actions().empty());
  }
  // Any other end reconnects with backoff, as before.
  Viewer v;
  v.up();
  v.relay(J(R"({"t":"error","code":"hello_mismatch","message":"changed"})"));
  v.s.handle_disconnected("closed by the relay", v.now);
  CHECK_FALSE(v.s.stopped());
  CHECK(v.s.poll_timeout() == Timeout(v.now + kViewerBackoffMs[0]));
}

TEST_CASE(
    "viewer: a latest channel keeps the newest frame by seq, whatever order frames finish in") {
  Viewer v;
  v.up();
  v.s.watch("r1", v.now);
  v.s.want({"cam", "log"}, v.now);
  v.manifest();
  v.actions();
  v.events();
  CHECK(v.s.handle_frame("cam", 5, v.now));
  CHECK_FALSE(v.s.handle_frame("cam", 3, v.now));  // an older frame finishing late
  CHECK_FALSE(v.s.handle_frame("cam", 5, v.now));
  CHECK(v.s.handle_frame("cam", 6, v.now));
  CHECK(v.state()["stale"] == 2);
  // Reliable frames arrive in order (the relay orders them) and all pass.
  CHECK(v.s.handle_frame("log", 2, v.now));
  CHECK(v.s.handle_frame("log", 1, v.now));
  // Channels not subscribed (an in-flight frame after an unsub, a stranger) never reach the app.
  CHECK_FALSE(v.s.handle_frame("ghost", 1, v.now));
  v.s.want({"log"}, v.now);
  CHECK_FALSE(v.s.handle_frame("cam", 9, v.now));
  // A new registration (a manifest again) may count from anywhere.
  v.s.want({"cam"}, v.now);
  v.manifest();
  CHECK(v.s.handle_frame("cam", 1, v.now));
}

TEST_CASE("viewer: on a WebSocket a ping waits for the previous pong") {
  Viewer v;
  v.s.handle_start(v.now);
  v.s.handle_connected(Lane::websocket, v.now);
  v.actions();
  Bytes w = relay_control_data_frame(J(R"({"t":"welcome","v":7})"));
  v.s.handle_ws_message(ByteView(w), v.now);
  REQUIRE(types(v.sent()) == std::vector<std::string>{"ping"});
  CHECK_FALSE(v.s.poll_timeout());  // nothing until the pong
  v.now += 5000;
  Bytes p = relay_control_data_frame(J(R"({"t":"pong","n":1,"ts":1})"), 1);
  v.s.handle_ws_message(ByteView(p), v.now);
  CHECK(v.s.poll_timeout() == Timeout(v.now));  // overdue: at once
  v.s.handle_timeout(v.now);
  CHECK(types(v.sent()) == std::vector<std::string>{"ping"});
  Bytes p2 = relay_control_data_frame(J(R"({"t":"pong","n":2,"ts":1})"), 2);
  v.s.handle_ws_message(ByteView(p2), v.now + 10);
  CHECK(v.s.poll_timeout() == Timeout(v.now + kViewerWsPingIntervalMs));
}

TEST_CASE("viewer: a WebSocket ping reports the bytes read up to the last pong") {
  Viewer v;
  v.s.handle_start(v.now);
  v.s.handle_connected(Lane::websocket, v.now);
  v.actions();
  Bytes w = relay_control_data_frame(J(R"({"t":"welcome","v":7})"));
  v.s.handle_ws_message(ByteView(w), v.now);
  auto first = v.sent();
  REQUIRE(types(first) == std::vector<std::string>{"ping"});
  CHECK(first[0]["read"] == 0);  // no pong read yet
  Bytes p = relay_control_data_frame(J(R"({"t":"pong","n":1,"ts":1})"), 1);
  v.s.handle_ws_message(ByteView(p), v.now);
  // Read after the pong: not counted until the next pong.
  Bytes later = relay_control_data_frame(J(R"({"t":"robots","robots":[]})"), 2);
  v.s.handle_ws_message(ByteView(later), v.now);
  v.now += kViewerWsPingIntervalMs;
  v.s.handle_timeout(v.now);
  auto second = v.sent();
  REQUIRE(types(second) == std::vector<std::string>{"ping"});
  CHECK(second[0]["read"] == w.size() + p.size());
  // A new connection counts from zero.
  v.s.handle_disconnected("gone", v.now);
  v.now += 10'000;
  v.s.handle_timeout(v.now);
  v.s.handle_connected(Lane::websocket, v.now);
  v.actions();
  v.s.handle_ws_message(ByteView(w), v.now);
  auto third = v.sent();
  REQUIRE(types(third) == std::vector<std::string>{"ping"});
  CHECK(third[0]["read"] == 0);
}

TEST_CASE("viewer: a manifest of an unsupported version is reported as manifestUnsupported") {
  Viewer v;
  v.up();
  v.s.watch("r1", v.now);
  v.events();
  v.relay(
      J(R"({"t":"manifest","robotId":"r1","manifest":{"version":2,"channels":[],"views":[]}})"));
  Json got;
  for (auto& e : v.events())
    if (e.kind == ViewerEventKind::manifest) got = J(e.json);
  CHECK(got["manifest"].is_null());
  CHECK(got["error"] == "manifestUnsupported");
}

TEST_CASE(
    "viewer: back before its robot (unknown_robot), it watches again once the robot is listed") {
  Viewer v;
  v.s.watch("r1", v.now);
  v.s.handle_start(v.now);
  v.s.handle_connected(Lane::webtransport, v.now);
  v.actions();
  v.relay(J(R"({"t":"welcome","v":7})"));
  CHECK(types(v.sent()) == std::vector<std::string>{"ping", "watch"});
  v.relay(J(R"({"t":"robots","robots":[]})"));
  v.relay(J(R"({"t":"error","code":"unknown_robot","message":"no robot r1 is connected"})"));
  CHECK(v.sent().empty());
  v.relay(J(R"({"t":"robots","robots":[{"id":"r2","name":"","model":""}]})"));
  CHECK(v.sent().empty());
  v.relay(J(
      R"({"t":"robots","robots":[{"id":"r2","name":"","model":""},{"id":"r1","name":"","model":""}]})"));
  auto ms = v.sent();
  REQUIRE(types(ms) == std::vector<std::string>{"watch"});
  CHECK(ms[0]["robotId"] == "r1");
  v.manifest();
  v.relay(J(R"({"t":"robots","robots":[{"id":"r1","name":"","model":""}]})"));
  CHECK(v.sent().empty());  // watching: nothing more
}
