// The relay's link figures for every robot, watched or not (src/cockpit/link.hpp,
// docs/cockpit-protocol.md § Fleet link quality): the verdict's bounds, the rates, who gets the
// figures, and the bound on how often they are pushed.
#include "cockpit/link.hpp"

#include <algorithm>

#include "client_harness.hpp"
#include "cockpit_harness.hpp"

using namespace cockpit_test;

namespace {

Json fleet_on() {
  return J(R"({"t":"fleet","link":true})");
}

// The robots messages a session got.
std::vector<Json> robots_to(const std::vector<CockpitAction>& actions, SessionId s) {
  return Harness::of_type(Harness::messages(actions, s), "robots");
}

const Json* entry(const Json& robots, const std::string& id) {
  for (const Json& r : robots["robots"])
    if (r["id"] == id) return &r;
  return nullptr;
}

// Moves time on to `until`, in `step` ms, calling handle_timeout whenever the relay asks, and
// `each` at every step (a robot's pings, frames).
template <class Each>
void run(Harness& h, std::int64_t until, std::int64_t step, Each&& each) {
  while (h.now < until) {
    h.now += step;
    each();
    if (auto t = h.relay.poll_timeout(); t && *t <= h.now) h.relay.handle_timeout(h.now);
    h.collect();
  }
}

}  // namespace

TEST_CASE("link: the verdict's bounds") {
  CHECK(link_state(0, std::nullopt, 0) == LinkState::good);
  CHECK(link_state(kLinkDegradedAfterMs - 1, std::nullopt, 0) == LinkState::good);
  CHECK(link_state(kLinkDegradedAfterMs, std::nullopt, 0) == LinkState::degraded);
  CHECK(link_state(kLinkStalledAfterMs - 1, std::nullopt, 0) == LinkState::degraded);
  CHECK(link_state(kLinkStalledAfterMs, std::nullopt, 0) == LinkState::stalled);
  // Silence outranks everything else.
  CHECK(link_state(kLinkStalledAfterMs, std::int64_t(1), 0) == LinkState::stalled);
  CHECK(link_state(0, kLinkDegradedRttMs, 0) == LinkState::good);
  CHECK(link_state(0, kLinkDegradedRttMs + 1, 0) == LinkState::degraded);
  CHECK(link_state(0, std::nullopt, kLinkDegradedBacklogBytes) == LinkState::good);
  CHECK(link_state(0, std::nullopt, kLinkDegradedBacklogBytes + 1) == LinkState::degraded);
  CHECK(link_state_name(LinkState::stalled) == "stalled");
}

TEST_CASE("link: rates are counted over whole windows") {
  RobotLink l(0);
  for (int i = 0; i < 20; ++i) l.frame(500, i * 100);  // 10 frames/s of 500 bytes for 2 s
  Json f = l.figures(0, kLinkWindowMs);
  CHECK(f["state"] == "good");
  CHECK(f["fps"].get<double>() == Approx(10.0));
  CHECK(f["bytesPerS"] == 5000);
  CHECK(f["silentMs"] == 100);
  CHECK_FALSE(f.contains("rttMs"));
  l.rtt(42);
  // Nothing more: the next whole window reads 0, and the silence grows to a stall.
  f = l.figures(0, kLinkWindowMs + kLinkStalledAfterMs);
  CHECK(f["fps"] == 0);
  CHECK(f["bytesPerS"] == 0);
  CHECK(f["rttMs"] == 42);
  CHECK(f["silentMs"] == kLinkStalledAfterMs + 100);
  CHECK(f["state"] == "stalled");
}

TEST_CASE("link: only a viewer that asks gets figures, the robot's rtt among them") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId plain = h.viewer();
  SessionId fleet = h.viewer();
  h.take();
  h.viewer_send(fleet, fleet_on());
  auto a = h.take();
  auto got = robots_to(a, fleet);
  REQUIRE(got.size() == 1);
  const Json* e = entry(got[0], "r1");
  REQUIRE(e);
  CHECK((*e)["link"]["state"] == "good");
  CHECK_FALSE((*e)["link"].contains("rttMs"));  // the robot has reported none yet
  CHECK(robots_to(a, plain).empty());
  // The message parses as a relay message (the fields are part of the protocol).
  CHECK(wire::validate_message(got[0], wire::Sender::relay).ok());

  // A robot's ping may carry its rtt; the pong echoes n and ts only.
  h.robot_datagram(r, J(R"({"t":"ping","n":1,"ts":2.5,"rttMs":35})"));
  auto pongs = Harness::of_type(Harness::messages(h.take(), r), "pong");
  REQUIRE(pongs.size() == 1);
  CHECK(pongs[0] == J(R"({"t":"pong","n":1,"ts":2.5})"));

  // A robot joining reaches both: the plain viewer without figures, the asking one with them.
  h.robot("r2");
  a = h.take();
  auto plain_list = robots_to(a, plain);
  auto fleet_list = robots_to(a, fleet);
  REQUIRE(plain_list.size() == 1);
  REQUIRE(fleet_list.size() == 1);
  CHECK_FALSE(entry(plain_list[0], "r1")->contains("link"));
  CHECK((*entry(fleet_list[0], "r1"))["link"]["rttMs"] == 35);
  CHECK((*entry(fleet_list[0], "r2"))["link"]["state"] == "good");

  // Giving the figures up: no more pushes with them.
  h.viewer_send(fleet, J(R"({"t":"fleet","link":false})"));
  h.take();
  run(h, h.now + 10 * kLinkPushIntervalMs, 100, [] {});
  CHECK(robots_to(h.take(), fleet).empty());
  CHECK_FALSE(h.relay.poll_timeout().has_value());  // no timer once nobody asks
}

TEST_CASE("link: pushes come at most once per interval, and only when something changed") {
  Harness h;
  SessionId busy = h.robot("busy");
  SessionId quiet = h.robot("quiet");
  SessionId plain = h.viewer();
  SessionId fleet = h.viewer();
  h.viewer_send(fleet, fleet_on());
  h.take();

  // The busy robot publishes at a rate that changes every window and reports a new rtt five
  // times a second; the quiet one only pings.
  std::vector<std::int64_t> pushes;
  std::int64_t seq = 0;
  const std::int64_t start = h.now;
  std::int64_t ping_n = 0;
  auto traffic = [&] {
    const std::int64_t t = h.now - start;
    if (t % ((t / 4000) % 2 ? 100 : 200) == 0) h.robot_frame(busy, "cam", ++seq, "jpeg");
    if (t % 200 == 0) {
      Json p = J(R"({"t":"ping","ts":1})");
      p["n"] = ++ping_n;
      p["rttMs"] = 10 + (ping_n % 5) * 10;
      h.robot_datagram(busy, p);
    }
    if (t % 1000 == 0) {
      Json p = J(R"({"t":"ping","ts":1})");
      p["n"] = ++ping_n;
      h.robot_datagram(quiet, p);
    }
  };
  const std::int64_t span = 30'000;
  while (h.now < start + span) {
    run(h, h.now + 100, 100, traffic);
    if (!robots_to(h.log, fleet).empty()) pushes.push_back(h.now);
    CHECK(robots_to(h.log, plain).empty());  // a viewer that did not ask gets nothing extra
    h.log.clear();
  }
  REQUIRE(pushes.size() >= 2);  // the busy robot's figures changed
  CHECK(pushes.size() <= std::size_t(span / kLinkPushIntervalMs) + 1);
  for (std::size_t i = 1; i < pushes.size(); ++i)
    CHECK(pushes[i] - pushes[i - 1] >= kLinkPushIntervalMs);

  // Nothing changes (both robots only ping): nothing is pushed.
  std::size_t idle_pushes = 0;
  const std::int64_t idle_start = h.now;
  auto pings = [&] {
    if ((h.now - idle_start) % 1000 == 0) {
      Json p = J(R"({"t":"ping","ts":1})");
      p["n"] = ++ping_n;
      h.robot_datagram(busy, p);
      h.robot_datagram(quiet, p);
    }
  };
  run(h, h.now + 3 * kLinkWindowMs, 100, pings);  // the busy robot's rate settles at 0
  h.take();
  run(h, h.now + 20'000, 100, pings);
  idle_pushes = robots_to(h.take(), fleet).size();
  CHECK(idle_pushes == 0);
}

TEST_CASE(
    "link: a robot that goes silent turns degraded, then stalled, while the other stays good") {
  Harness h;
  SessionId a = h.robot("a");
  SessionId b = h.robot("b");
  SessionId fleet = h.viewer();
  h.viewer_send(fleet, fleet_on());
  h.take();
  std::int64_t n = 0;
  std::vector<std::string> b_states;
  std::string a_worst = "good";
  const std::int64_t start = h.now;
  auto traffic = [&] {
    if ((h.now - start) % 1000 == 0) {
      Json p = J(R"({"t":"ping","ts":1})");
      p["n"] = ++n;
      h.robot_datagram(a, p);
      if (h.now - start < 4000) h.robot_datagram(b, p);  // then b stops
    }
  };
  run(h, start + 12'000, 100, traffic);
  for (const Json& m : robots_to(h.take(), fleet)) {
    const std::string sb = (*entry(m, "b"))["link"]["state"].get<std::string>();
    if (b_states.empty() || b_states.back() != sb) b_states.push_back(sb);
    const std::string sa = (*entry(m, "a"))["link"]["state"].get<std::string>();
    if (sa != "good") a_worst = sa;
  }
  // Pushes come every kLinkPushIntervalMs, so a silence may pass degraded between two of them;
  // it ends stalled, and never goes back while the robot stays silent.
  REQUIRE_FALSE(b_states.empty());
  CHECK(b_states.back() == "stalled");
  CHECK(std::count(b_states.begin(), b_states.end(), "stalled") == 1);
  CHECK(a_worst == "good");
}

TEST_CASE("link: hostile fleet and ping fields are dropped with a clear reason") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.viewer();
  h.take();
  h.viewer_send(v, J(R"({"t":"fleet","link":"yes"})"));
  CHECK(Harness::errors(h.take(), v) == std::vector<std::string>{"invalid_control"});
  h.viewer_send(v, J(R"({"t":"fleet"})"));
  CHECK(Harness::errors(h.take(), v) == std::vector<std::string>{"invalid_control"});
  // A viewer may not claim a robot's rtt.
  h.viewer_send(v, J(R"({"t":"ping","n":1,"ts":1,"rttMs":5})"));
  CHECK(Harness::errors(h.take(), v) == std::vector<std::string>{"invalid_control"});
  // A negative or fractional rtt from a robot is a dropped ping, and the robot lives on.
  h.robot_datagram(r, J(R"({"t":"ping","n":1,"ts":1,"rttMs":-1})"));
  h.robot_datagram(r, J(R"({"t":"ping","n":2,"ts":1,"rttMs":1.5})"));
  auto a = h.take();
  CHECK(Harness::of_type(Harness::messages(a, r), "pong").empty());
  CHECK_FALSE(Harness::closed(a, r));
  CHECK(h.relay.stats()["dropped"]["wrong_type"] == 3);  // the viewer's "yes" and both pings
}

// --- the clients' part: the robot reports its rtt, the viewer asks for the figures ---

namespace {

RobotConfig rover_config() {
  RobotConfig c;
  c.id = "r1";
  c.name = "Rover";
  c.model = "sim";
  c.manifest = demo_manifest();
  return c;
}

// The ping a robot sends at its next ping time (WebSocket lane: the ping is an @control frame).
Json next_ping(RobotSession& s, TimeMs& now) {
  for (int i = 0; i < 50; ++i) {
    now += 100;
    s.handle_timeout(now);
    for (const auto& a : client_test::drain_actions(s)) {
      if (a.bytes.empty()) continue;
      Json m = client_test::sent_message(a.bytes);
      if (m["t"] == "ping") return m;
    }
  }
  FAIL("no ping within 5 s");
  return Json();
}

void ws_in(RobotSession& s, const Json& m, TimeMs now) {
  Bytes b = client_test::relay_control_data_frame(m);
  s.handle_ws_message(ByteView(b), now);
}

}  // namespace

TEST_CASE(
    "link: a robot reports the round trip of its newest ping, and drops it for an old relay") {
  auto made = RobotSession::create(rover_config());
  REQUIRE(made);
  RobotSession s = std::move(made.value());
  TimeMs now = 5000;
  s.handle_start(now);
  s.handle_connected(Lane::websocket, now);
  ws_in(s, J(R"({"t":"welcome","v":7})"), now);
  client_test::drain_actions(s);
  Json p1 = next_ping(s, now);
  CHECK_FALSE(p1.contains("rttMs"));  // nothing measured yet
  now += 37;
  Json pong = J(R"({"t":"pong","ts":1})");
  pong["n"] = p1["n"];
  ws_in(s, pong, now);
  Json p2 = next_ping(s, now);
  CHECK(p2["rttMs"] == 37);
  // A relay from before the field refuses the ping: the robot pings again at once, without it,
  // so its WebSocket liveness goes on.
  ws_in(
      s,
      J(R"({"t":"error","code":"invalid_control","message":"dropped: ping.rttMs is not part of protocol v7"})"),
      now);
  s.handle_timeout(now);
  Json p3;
  for (const auto& a : client_test::drain_actions(s))
    if (!a.bytes.empty()) p3 = client_test::sent_message(a.bytes);
  REQUIRE(p3.is_object());
  CHECK(p3["t"] == "ping");
  CHECK_FALSE(p3.contains("rttMs"));
  pong["n"] = p3["n"];
  ws_in(s, pong, now + 5);
  CHECK_FALSE(next_ping(s, now).contains("rttMs"));
}

TEST_CASE("link: the viewer asks for the figures after every welcome, and reports them") {
  ViewerSession v{std::nullopt};
  TimeMs now = 1000;
  auto welcome = [&] {
    Bytes b = client_test::relay_control_frame(J(R"({"t":"welcome","v":7})"));
    v.handle_control_data(ByteView(b), now);
  };
  v.handle_start(now);
  v.handle_connected(Lane::webtransport, now);
  client_test::drain_actions(v);
  v.fleet_link(true, now);  // before the welcome: remembered, nothing sent
  CHECK(client_test::messages(client_test::drain_actions(v)).empty());
  welcome();
  auto sent = client_test::messages(client_test::drain_actions(v));
  CHECK(std::count(sent.begin(), sent.end(), J(R"({"t":"fleet","link":true})")) == 1);
  const Json robots = J(
      R"({"t":"robots","robots":[{"id":"r1","name":"R","model":"m","link":{"state":"stalled","silentMs":4000,"fps":0,"bytesPerS":0,"rttMs":12}}]})");
  Bytes b = client_test::relay_control_frame(robots);
  v.handle_control_data(ByteView(b), now);
  bool reported = false;
  for (const auto& e : client_test::drain_events(v))
    reported = reported || (e.kind == ViewerEventKind::robots &&
                            J(e.json)["robots"][0]["link"] == robots["robots"][0]["link"]);
  CHECK(reported);
  // A reconnect asks again.
  v.handle_disconnected("gone", now);
  now += 10'000;
  v.handle_timeout(now);
  v.handle_connected(Lane::webtransport, now);
  client_test::drain_actions(v);
  welcome();
  sent = client_test::messages(client_test::drain_actions(v));
  CHECK(std::count(sent.begin(), sent.end(), J(R"({"t":"fleet","link":true})")) == 1);
  v.fleet_link(false, now);
  CHECK(client_test::messages(client_test::drain_actions(v)) ==
        std::vector<Json>{J(R"({"t":"fleet","link":false})")});
}
