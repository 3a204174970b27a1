// The robot session core (src/cockpit/robot_session.hpp) and the teleop safety chain
// (src/cockpit/teleop_safety.hpp): scripts of relay input, checked against what goes out and what
// the robot is told to do.
#include "client_harness.hpp"
#include "cockpit/teleop_safety.hpp"
#include "wire/limits.hpp"

using namespace client_test;

namespace {

RobotConfig config(std::optional<std::string> token = std::nullopt) {
  RobotConfig c;
  c.id = "r1";
  c.name = "Rover";
  c.model = "sim";
  c.manifest = demo_manifest();
  c.token = std::move(token);
  return c;
}

struct Rover {
  RobotSession s;
  TimeMs now = 5000;
  explicit Rover(RobotConfig c = config()) : s(RobotSession::create(std::move(c)).value()) {}

  std::vector<RobotAction> actions() { return drain_actions(s); }
  std::vector<RobotEvent> events() { return drain_events(s); }
  void datagram(const Json& m) {
    Bytes b = relay_datagram(m);
    s.handle_datagram(ByteView(b), now);
  }
  void carrier(const Bytes& b) { s.handle_carrier_data(ByteView(b), now); }
  void subs(std::vector<std::string> chs, std::uint64_t n) {
    Json m = J(R"({"t":"subs"})");
    m["chs"] = chs;
    m["n"] = n;
    carrier(relay_control_data_frame(m, std::int64_t(n)));
  }
  void up(Lane lane = Lane::webtransport) {
    s.handle_start(now);
    s.handle_connected(lane, now);
    if (lane == Lane::webtransport) {
      datagram(J(R"({"t":"welcome","v":7})"));
    } else {
      Bytes w = relay_control_data_frame(J(R"({"t":"welcome","v":7})"));
      s.handle_ws_message(ByteView(w), now);
    }
    actions();
    events();
  }
  std::vector<Json> of(RobotEventKind kind) {
    std::vector<Json> out;
    for (auto& e : events())
      if (e.kind == kind) out.push_back(e.body);
    return out;
  }
};

}  // namespace

TEST_CASE("robot: a config the relay would refuse is refused up front, naming the field") {
  RobotConfig c = config();
  c.manifest = J(R"({"version":1,"channels":[{"ch":"@x","encoding":"json.v1"}]})");
  auto r = RobotSession::create(c);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("channels[0].ch") != std::string::npos);
  CHECK(r.error().kind == RobotSetupError::invalid_manifest);
  c = config();
  c.id = "";
  r = RobotSession::create(c);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("missing_robot_id") != std::string::npos);
  c = config();
  c.name = std::string(300, 'n');
  CHECK_FALSE(RobotSession::create(c));
}

TEST_CASE("robot: the hello is resent on fresh one-shot streams until the welcome datagram lands") {
  Rover r(config(std::string("robot-token-0123456789")));
  r.s.handle_start(r.now);
  auto a = r.actions();
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == RobotActionKind::connect);
  r.s.handle_connected(Lane::webtransport, r.now);
  a = r.actions();
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == RobotActionKind::send_stream);
  auto f = wire::decode_data_frame(ByteView(a[0].bytes));
  REQUIRE(f.ok());
  CHECK(f->header.ch == "@control");
  Json hello = J(std::string(f->payload.as_chars()));
  CHECK(hello["v"] == wire::kProtocolVersion);
  CHECK(hello["token"] == "robot-token-0123456789");
  CHECK(to_json(hello["robot"]) == R"({"id":"r1","name":"Rover","model":"sim"})");
  CHECK(hello["manifest"]["channels"][2]["publish"] == true);  // the normal form
  const Bytes first = a[0].bytes;
  for (int i = 1; i <= 3; ++i) {
    REQUIRE(r.s.poll_timeout() == Timeout(r.now + kHelloResendMs));
    r.now += kHelloResendMs;
    r.s.handle_timeout(r.now);
    a = r.actions();
    REQUIRE(a.size() == 1);
    CHECK(a[0].bytes == first);  // the same hello, byte for byte
  }
  r.datagram(J(R"({"t":"welcome","v":7})"));
  CHECK(r.s.welcomed());
  CHECK(r.s.poll_timeout() == Timeout(r.now + kRobotPingIntervalMs));  // only the ping is left
  auto links = r.of(RobotEventKind::link);
  REQUIRE(!links.empty());
  CHECK(links.back()["state"] == "welcomed");
}

TEST_CASE("robot: no welcome within 10 s closes the session, and the robot reconnects") {
  Rover r;
  r.s.handle_start(r.now);
  r.s.handle_connected(Lane::webtransport, r.now);
  const TimeMs opened = r.now;
  std::vector<RobotAction> closes;
  while (r.now < opened + kHelloTimeoutMs) {
    r.now = *r.s.poll_timeout();
    r.s.handle_timeout(r.now);
    for (auto& a : r.actions())
      if (a.kind == RobotActionKind::close) closes.push_back(a);
  }
  REQUIRE(closes.size() == 1);
  CHECK(closes[0].reason == "no welcome from the relay within 10 s");
  r.s.handle_disconnected("closed", r.now);
  CHECK(r.s.poll_timeout() == Timeout(r.now + kRobotReconnectMs));
  r.now += kRobotReconnectMs;
  r.s.handle_timeout(r.now);
  auto a = r.actions();
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == RobotActionKind::connect);
}

TEST_CASE("robot: over a WebSocket the hello goes once and everything rides @control frames") {
  Rover r;
  r.s.handle_start(r.now);
  r.actions();
  r.s.handle_connected(Lane::websocket, r.now);
  CHECK(r.actions().size() == 1);
  r.now += kHelloResendMs;
  r.s.handle_timeout(r.now);
  CHECK(r.actions().empty());  // a WebSocket is reliable: no resend
  Bytes w = relay_control_data_frame(J(R"({"t":"welcome","v":7})"));
  r.s.handle_ws_message(ByteView(w), r.now);
  Bytes subs = relay_control_data_frame(J(R"({"t":"subs","chs":["cam"],"n":1})"), 1);
  r.s.handle_ws_message(ByteView(subs), r.now);
  CHECK(r.s.wants("cam"));
  r.now += kRobotPingIntervalMs;
  r.s.handle_timeout(r.now);
  auto a = r.actions();
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == RobotActionKind::send_datagram);
  auto f = wire::decode_data_frame(ByteView(a[0].bytes));
  REQUIRE(f.ok());
  CHECK(f->header.ch == "@control");
  CHECK(f->header.seq == 1);  // the hello was 0
  CHECK(J(std::string(f->payload.as_chars()))["t"] == "ping");
}

TEST_CASE("robot: subs snapshots by n decide what is sent, a stale or reordered one is ignored") {
  Rover r;
  r.up();
  CHECK(r.s.send("cam", ByteView(std::string_view("x")), std::nullopt, 1.0, r.now) ==
        SendResult::not_wanted);
  r.subs({"cam", "log"}, 2);
  r.subs({}, 1);  // older: ignored
  CHECK(r.s.wants("cam"));
  CHECK(r.of(RobotEventKind::subs).size() == 1);
  REQUIRE(r.s.send("cam", ByteView(std::string_view("jpeg")), std::nullopt, 1.5, r.now) ==
          SendResult::sent);
  REQUIRE(r.s.send("cam", ByteView(std::string_view("jpeg2")), J(R"({"w":2})"), 1.75, r.now) ==
          SendResult::sent);
  REQUIRE(r.s.send("log", ByteView(std::string_view("{}")), std::nullopt, 2.0, r.now) ==
          SendResult::sent);
  auto a = r.actions();
  REQUIRE(a.size() == 3);
  auto f = wire::decode_data_frame(ByteView(a[1].bytes));
  REQUIRE(f.ok());
  CHECK(f->header.ch == "cam");
  CHECK(f->header.seq == 2);
  CHECK(f->header.delivery == wire::Delivery::latest);  // the manifest's
  CHECK(to_json(*f->header.meta) == R"({"w":2})");
  f = wire::decode_data_frame(ByteView(a[2].bytes));
  REQUIRE(f.ok());
  CHECK(f->header.delivery == wire::Delivery::reliable);
  CHECK(r.s.send("say", ByteView(std::string_view("x")), std::nullopt, 1, r.now) ==
        SendResult::undeclared);  // a tx channel is the viewers'
  r.subs({"log"}, 3);
  CHECK(r.s.send("cam", ByteView(std::string_view("x")), std::nullopt, 1, r.now) ==
        SendResult::not_wanted);
}

TEST_CASE("robot: a corrupt carrier closes the session, seq keeps growing across sessions") {
  Rover r;
  r.up();
  r.subs({"cam"}, 1);
  REQUIRE(r.s.send("cam", ByteView(std::string_view("a")), std::nullopt, 1, r.now) ==
          SendResult::sent);
  r.actions();
  Bytes bad;
  append_u32_le(bad, std::uint32_t(wire::kMaxHeaderBytes + 1));
  append_u32_le(bad, 0);
  r.carrier(bad);
  auto a = r.actions();
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == RobotActionKind::close);
  CHECK(a[0].reason == "carrier: header_too_large");
  r.s.handle_disconnected("closed", r.now);
  CHECK_FALSE(r.s.wants("cam"));  // the fresh registration re-baselines
  r.now += kRobotReconnectMs;
  r.s.handle_timeout(r.now);
  r.actions();
  r.s.handle_connected(Lane::webtransport, r.now);
  r.datagram(J(R"({"t":"welcome","v":7})"));
  r.subs({"cam"}, 1);  // n starts over with the registration
  REQUIRE(r.s.send("cam", ByteView(std::string_view("b")), std::nullopt, 2, r.now) ==
          SendResult::sent);
  auto sent = r.actions();
  auto f = wire::decode_data_frame(ByteView(sent.back().bytes));
  REQUIRE(f.ok());
  CHECK(f->header.seq == 2);
}

TEST_CASE("robot: published values arrive as events and are answered with pub_ack or pub_nack") {
  Rover r;
  r.up();
  r.carrier(
      data_frame("say", 4, R"({"text":"hi"})", wire::Delivery::reliable, J(R"({"id":"r7"})")));
  auto ps = drain_events(r.s);
  REQUIRE(ps.size() == 1);
  CHECK(ps[0].kind == RobotEventKind::publish);
  CHECK(ps[0].body["ch"] == "say");
  CHECK(ps[0].body["id"] == "r7");
  CHECK(std::string(ps[0].payload.begin(), ps[0].payload.end()) == R"({"text":"hi"})");
  REQUIRE(r.s.ack("say", "r7", r.now));
  REQUIRE(r.s.nack("say", "r8", "bad_value", "expected text", r.now));
  auto ms = messages(r.actions());
  REQUIRE(ms.size() == 2);
  CHECK(to_json(ms[0]) == R"({"t":"pub_ack","ch":"say","id":"r7"})");
  CHECK(to_json(ms[1]) ==
        R"({"t":"pub_nack","ch":"say","id":"r8","code":"bad_value","message":"expected text"})");
  CHECK_FALSE(r.s.ack("say", "", r.now));  // an id is 1..128 characters
}

TEST_CASE("robot: an error whose fix is not a retry stops reconnecting, others reconnect") {
  Rover r;
  r.s.handle_start(r.now);
  r.s.handle_connected(Lane::webtransport, r.now);
  r.actions();
  r.datagram(J(R"({"t":"error","code":"auth_failed","message":"no such token"})"));
  CHECK(r.of(RobotEventKind::error).size() == 1);
  r.now += kHelloResendMs;
  r.s.handle_timeout(r.now);
  CHECK(r.actions().empty());  // no more hellos after a refusal
  r.s.handle_disconnected("closed by relay", r.now);
  auto links = r.of(RobotEventKind::link);
  REQUIRE(!links.empty());
  CHECK(links.back()["state"] == "stopped");
  CHECK(links.back()["code"] == "auth_failed");
  CHECK_FALSE(r.s.poll_timeout());
  Rover q;
  q.s.handle_start(q.now);
  q.s.handle_connected(Lane::webtransport, q.now);
  q.datagram(J(R"({"t":"error","code":"robot_id_conflict","message":"taken"})"));
  q.s.handle_disconnected("closed by relay", q.now);
  CHECK(q.s.poll_timeout() == Timeout(q.now + kRobotReconnectMs));
}

TEST_CASE("robot: teleop from the relay reaches the safety chain, session loss stops the robot") {
  Rover r;
  r.up();
  r.datagram(J(R"({"t":"teleop_start","gen":3})"));
  r.datagram(J(R"({"t":"twist","vx":0.5,"vy":0,"wz":0.1,"seq":1,"ts":1,"gen":3})"));
  auto cmds = r.of(RobotEventKind::command);
  REQUIRE(cmds.size() == 2);
  CHECK(to_json(cmds[1]) == R"({"vx":0.5,"vy":0,"wz":0.1,"cause":"twist","active":3,"floor":3})");
  CHECK(r.s.poll_timeout() == Timeout(r.now + kDefaultWatchdogMs + 1));  // the watchdog first
  r.s.handle_disconnected("lost", r.now + 10);
  cmds = r.of(RobotEventKind::command);
  REQUIRE(cmds.size() == 1);
  CHECK(cmds[0]["cause"] == "session_lost");
  CHECK_FALSE(r.s.safety().command().moving());
}

// --- the safety chain alone ---------------------------------------------------------------------

namespace {
wire::Message relay_msg(const std::string& text) {
  auto m = wire::parse_message(ByteView(std::string_view(text)), wire::Sender::relay);
  REQUIRE(m);
  return m.value();
}
wire::Message twist(std::uint64_t gen, double vx = 1) {
  Json t = J(R"({"t":"twist","vy":0,"wz":0.5,"seq":1,"ts":0})");
  t["vx"] = vx;
  t["gen"] = gen;
  return relay_msg(to_json(t));
}
}  // namespace

TEST_CASE("safety: a twist of the current lease moves, the watchdog zeroes it after 300 ms") {
  TeleopSafety s;
  REQUIRE(s.handle_message(relay_msg(R"({"t":"teleop_start","gen":3})"), 0));
  REQUIRE(s.handle_message(twist(3), 100));
  CHECK(s.command().vx == 1);
  CHECK(s.poll_timeout() == Timeout(401));  // stale once more than 300 ms passed
  s.handle_timeout(400);
  CHECK(s.command().vx == 1);
  s.handle_timeout(401);
  CHECK_FALSE(s.command().moving());
  CHECK_FALSE(s.poll_timeout());
  std::vector<SafetyCause> causes;
  while (auto e = s.poll_event()) causes.push_back(e->cause);
  CHECK(causes == std::vector<SafetyCause>{SafetyCause::teleop_start, SafetyCause::twist,
                                           SafetyCause::watchdog});
}

TEST_CASE("safety: without a lease no twist drives, not even one naming generation 0") {
  TeleopSafety s;
  CHECK_FALSE(s.handle_message(twist(0), 0));
  CHECK_FALSE(s.command().moving());
  s.handle_message(relay_msg(R"({"t":"teleop_start","gen":0})"), 1);
  CHECK_FALSE(s.handle_message(twist(0), 2));
  CHECK_FALSE(s.command().moving());
}

TEST_CASE("safety: stop and teleop_stop zero the command") {
  TeleopSafety s;
  s.handle_message(relay_msg(R"({"t":"teleop_start","gen":1})"), 0);
  s.handle_message(twist(1), 0);
  REQUIRE(s.handle_message(relay_msg(R"({"t":"stop","seq":2,"ts":0,"gen":1})"), 10));
  CHECK_FALSE(s.command().moving());
  s.handle_message(twist(1), 20);
  REQUIRE(s.handle_message(relay_msg(R"({"t":"teleop_stop","gen":1})"), 30));
  CHECK_FALSE(s.command().moving());
  CHECK(s.active() == 0);
}

TEST_CASE("safety: the generation floor ignores a released holder forever") {
  TeleopSafety s;
  s.handle_message(relay_msg(R"({"t":"teleop_start","gen":1})"), 0);
  s.handle_message(relay_msg(R"({"t":"teleop_stop","gen":1})"), 5);
  CHECK_FALSE(s.handle_message(twist(1), 10));
  CHECK_FALSE(s.command().moving());
  // A late copy of the released lease's own grant cannot bring it back.
  CHECK_FALSE(s.handle_message(relay_msg(R"({"t":"teleop_start","gen":1})"), 11));
  CHECK_FALSE(s.handle_message(twist(1), 12));
  CHECK(s.active() == 0);
  s.handle_message(relay_msg(R"({"t":"teleop_start","gen":2})"), 20);
  CHECK_FALSE(s.handle_message(twist(1), 21));
  CHECK_FALSE(s.handle_message(relay_msg(R"({"t":"teleop_start","gen":1})"), 22));
  CHECK(s.handle_message(twist(2), 23));
  CHECK(s.command().vx == 1);
  CHECK(s.floor() == 2);
  CHECK_FALSE(s.handle_message(relay_msg(R"({"t":"welcome","v":7})"), 24));
}

TEST_CASE("safety: session loss stops the robot and drops the lease, the watchdog is bounded") {
  TeleopSafety s;
  s.handle_message(relay_msg(R"({"t":"teleop_start","gen":4})"), 0);
  s.handle_message(twist(4), 0);
  s.handle_session_lost(1);
  CHECK_FALSE(s.command().moving());
  CHECK_FALSE(s.handle_message(twist(4), 2));
  CHECK(TeleopSafety(0).watchdog_ms() == kMinWatchdogMs);
  CHECK(TeleopSafety(1'000'000).watchdog_ms() == kMaxWatchdogMs);
}

TEST_CASE("robot: an unsupported manifest version is reported as manifestUnsupported") {
  RobotConfig c = config();
  c.manifest = J(R"({"version":2,"channels":[],"widgets":[]})");
  auto r = RobotSession::create(c);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == RobotSetupError::manifest_unsupported);
  CHECK(robot_setup_error_name(r.error().kind) == "manifestUnsupported");
  CHECK(r.error().message.rfind("manifestUnsupported", 0) == 0);
}

TEST_CASE(
    "robot: a carrier that ends early or is reset closes the session, and the robot reconnects") {
  Rover r;
  r.up();
  r.subs({"cam"}, 1);
  r.actions();
  r.events();
  r.s.handle_carrier_end(r.now);
  auto a = r.actions();
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == RobotActionKind::close);
  r.s.handle_carrier_end(r.now);  // once is enough
  CHECK(r.actions().empty());
  r.s.handle_disconnected("closed", r.now);
  auto links = r.of(RobotEventKind::link);
  CHECK(links.back()["state"] == "reconnecting");
  CHECK(r.s.poll_timeout() == Timeout(r.now + kRobotReconnectMs));
  // A fresh connection takes a fresh carrier.
  r.now += kRobotReconnectMs;
  r.s.handle_timeout(r.now);
  REQUIRE(r.actions().at(0).kind == RobotActionKind::connect);
  r.up(Lane::webtransport);
  r.subs({"cam"}, 1);
  CHECK(r.s.wants("cam"));
}

TEST_CASE("robot: a WebSocket ping reports the bytes read up to the last pong") {
  Rover r;
  r.up(Lane::websocket);
  r.now += kRobotPingIntervalMs;
  r.s.handle_timeout(r.now);
  auto first = messages(r.actions());
  REQUIRE(types(first) == std::vector<std::string>{"ping"});
  CHECK(first[0]["read"] == 0);
  Bytes p = relay_control_data_frame(J(R"({"t":"pong","n":0,"ts":1})"), 1);
  r.s.handle_ws_message(ByteView(p), r.now);
  r.now += kRobotPingIntervalMs;
  r.s.handle_timeout(r.now);
  auto second = messages(r.actions());
  REQUIRE(types(second) == std::vector<std::string>{"ping"});
  const std::size_t welcome =
      relay_control_data_frame(J(R"({"t":"welcome","v":7})")).size();  // what up() handed it
  CHECK(second[0]["read"] == welcome + p.size());
}

TEST_CASE("robot: on a WebSocket a ping waits for the previous pong") {
  Rover r;
  r.up(Lane::websocket);
  r.now += kRobotPingIntervalMs;
  r.s.handle_timeout(r.now);
  REQUIRE(types(messages(r.actions())) == std::vector<std::string>{"ping"});
  CHECK(r.s.poll_timeout() == std::nullopt);
  Bytes p = relay_control_data_frame(J(R"({"t":"pong","n":0,"ts":1})"), 1);
  r.s.handle_ws_message(ByteView(p), r.now + 5);
  CHECK(r.s.poll_timeout() == Timeout(r.now + kRobotPingIntervalMs));
}
