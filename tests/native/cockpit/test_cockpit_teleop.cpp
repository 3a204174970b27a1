// Cockpit relay core: the teleop lease (cockpit-wire-v7-notes.md § Teleop).
#include "cockpit/teleop_safety.hpp"
#include "cockpit_harness.hpp"

using namespace cockpit_test;
using H = Harness;

TEST_CASE("cockpit teleop: the first viewer gets the lease, the second teleop_held") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId a = h.watcher("r1");
  SessionId b = h.watcher("r1");
  h.take();
  h.viewer_send(a, J(R"({"t":"teleop_start"})"));
  h.viewer_send(b, J(R"({"t":"teleop_start"})"));
  auto acts = h.take();
  CHECK(to_json(H::messages(acts, a)[0]) == R"({"t":"teleop_started"})");
  CHECK(H::errors(acts, b) == std::vector<std::string>{"teleop_held"});
  CHECK_FALSE(H::closed(acts, b));  // teleop_held is not terminal
  auto robot = H::messages(acts, r);
  REQUIRE(robot.size() == 1);
  CHECK(to_json(robot[0]) == R"({"t":"teleop_start","gen":1})");
}

TEST_CASE("cockpit teleop: only the holder's twist and stop pass, stamped with the relay's gen") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId a = h.watcher("r1");
  SessionId b = h.watcher("r1");
  h.viewer_send(a, J(R"({"t":"teleop_start"})"));
  h.take();
  // A viewer-authored gen is never trusted.
  h.viewer_datagram(a, J(R"({"t":"twist","vx":0.5,"vy":0,"wz":0.1,"seq":1,"ts":2,"gen":99})"));
  h.viewer_datagram(b, J(R"({"t":"twist","vx":9,"vy":0,"wz":0,"seq":1,"ts":2})"));
  h.viewer_datagram(a, J(R"({"t":"stop","seq":2,"ts":3})"));
  auto ms = H::messages(h.take(), r);
  REQUIRE(ms.size() == 2);
  CHECK(to_json(ms[0]) == R"({"t":"twist","vx":0.5,"vy":0,"wz":0.1,"seq":1,"ts":2,"gen":1})");
  CHECK(to_json(ms[1]) == R"({"t":"stop","seq":2,"ts":3,"gen":1})");
}

TEST_CASE("cockpit teleop: gen is bumped on every grant") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId a = h.watcher("r1");
  SessionId b = h.watcher("r1");
  h.take();
  h.viewer_send(a, J(R"({"t":"teleop_start"})"));
  h.viewer_send(a, J(R"({"t":"teleop_stop"})"));
  h.viewer_send(b, J(R"({"t":"teleop_start"})"));
  h.viewer_datagram(b, J(R"({"t":"stop","seq":1,"ts":0})"));
  auto ms = H::messages(h.take(), r);
  REQUIRE(ms.size() == 4);
  CHECK(to_json(ms[0]) == R"({"t":"teleop_start","gen":1})");
  CHECK(to_json(ms[1]) == R"({"t":"teleop_stop","gen":1})");
  CHECK(to_json(ms[2]) == R"({"t":"teleop_start","gen":2})");
  CHECK(to_json(ms[3]) == R"({"t":"stop","seq":1,"ts":0,"gen":2})");
}

TEST_CASE("cockpit teleop: the holder's disconnect releases the lease and stops the robot") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId a = h.watcher("r1");
  SessionId b = h.watcher("r1");
  h.viewer_send(a, J(R"({"t":"teleop_start"})"));
  h.take();
  h.relay.handle_session_closed(a, h.now);
  auto ms = H::messages(h.take(), r);
  REQUIRE(ms.size() == 1);
  CHECK(to_json(ms[0]) == R"({"t":"teleop_stop","gen":1})");
  h.viewer_send(b, J(R"({"t":"teleop_start"})"));
  auto acts = h.take();
  CHECK(to_json(H::messages(acts, b)[0]) == R"({"t":"teleop_started"})");
  CHECK(to_json(H::messages(acts, r)[0]) == R"({"t":"teleop_start","gen":2})");
}

TEST_CASE("cockpit teleop: watching another robot gives up the lease") {
  Harness h;
  SessionId r1 = h.robot("r1");
  h.robot("r2");
  SessionId a = h.watcher("r1");
  h.viewer_send(a, J(R"({"t":"teleop_start"})"));
  h.take();
  h.viewer_send(a, J(R"({"t":"watch","robotId":"r2"})"));
  auto ms = H::of_type(H::messages(h.take(), r1), "teleop_stop");
  REQUIRE(ms.size() == 1);
  CHECK(ms[0]["gen"] == 1);
  // The old robot no longer hears this viewer.
  h.viewer_datagram(a, J(R"({"t":"stop","seq":1,"ts":0})"));
  CHECK(H::messages(h.take(), r1).empty());
}

TEST_CASE("cockpit teleop: teleop_start needs a watch and a connected robot") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.viewer();
  h.take();
  h.viewer_send(v, J(R"({"t":"teleop_start"})"));
  CHECK(H::errors(h.take(), v) == std::vector<std::string>{"no_watch"});
  h.viewer_send(v, J(R"({"t":"watch","robotId":"r1"})"));
  h.relay.handle_session_closed(r, h.now);
  h.take();
  h.viewer_send(v, J(R"({"t":"teleop_start"})"));
  CHECK(H::errors(h.take(), v) == std::vector<std::string>{"unknown_robot"});
}

TEST_CASE("cockpit teleop: when the robot leaves, the holder is told and a new robot starts free") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId a = h.watcher("r1");
  h.viewer_send(a, J(R"({"t":"teleop_start"})"));
  h.take();
  h.relay.handle_session_closed(r, h.now);
  auto stops = H::of_type(H::messages(h.take(), a), "teleop_stop");
  REQUIRE(stops.size() == 1);
  CHECK(stops[0]["gen"] == 1);
  SessionId r2 = h.robot("r1");
  h.take();
  h.viewer_datagram(a, J(R"({"t":"twist","vx":1,"vy":0,"wz":0,"seq":5,"ts":0})"));
  CHECK(H::messages(h.take(), r2).empty());
  h.viewer_send(a, J(R"({"t":"teleop_start"})"));
  CHECK(to_json(H::messages(h.take(), r2)[0]) == R"({"t":"teleop_start","gen":2})");
}

namespace {
// The generation of the robot-bound teleop_start in `acts`, or 0.
std::uint64_t granted_gen(const std::vector<CockpitAction>& acts, SessionId robot) {
  for (const auto& m : H::messages(acts, robot))
    if (m["t"] == "teleop_start") return m["gen"].get<std::uint64_t>();
  return 0;
}
wire::Message relay_message(const Json& m) {
  auto r = wire::validate_message(m, wire::Sender::relay);
  REQUIRE(r);
  return r.value();
}
}  // namespace

TEST_CASE("cockpit teleop: after a relay restart mid-lease the next lease still drives the robot") {
  // The robot's safety chain outlives relays: it keeps its floor (teleop_safety.hpp).
  TeleopSafety robot_side;
  const std::int64_t wall = 1'752'576'000'000;  // the first relay's clock when it started
  RelayConfig first;
  first.wall_clock_ms = wall;
  Harness a(first);
  SessionId r = a.robot("r1");
  SessionId v = a.watcher("r1");
  a.take();
  // Two leases on the first relay: the first one's teleop_stop raised the robot's floor.
  a.viewer_send(v, J(R"({"t":"teleop_start"})"));
  a.viewer_send(v, J(R"({"t":"teleop_stop"})"));
  a.viewer_send(v, J(R"({"t":"teleop_start"})"));
  for (const auto& m : H::messages(a.take(), r)) robot_side.handle_message(relay_message(m), a.now);
  REQUIRE(robot_side.active() != 0);
  REQUIRE(robot_side.floor() > 1);
  a.now += 60'000;  // a minute of driving, then the relay dies without a teleop_stop

  // A fresh process: its own monotonic clock starts over, its wall clock has moved on.
  RelayConfig second;
  second.wall_clock_ms = wall + 60'000 + 2'000;
  Harness b(second);
  b.now = 0;
  robot_side.handle_session_lost(b.now);  // the robot saw its session end
  SessionId r2 = b.robot("r1");
  SessionId v2 = b.watcher("r1");
  b.take();
  b.viewer_send(v2, J(R"({"t":"teleop_start"})"));
  auto acts = b.take();
  CHECK(to_json(H::messages(acts, v2)[0]) == R"({"t":"teleop_started"})");
  const std::uint64_t gen = granted_gen(acts, r2);
  CHECK(gen >= robot_side.floor());
  for (const auto& m : H::messages(acts, r2)) robot_side.handle_message(relay_message(m), b.now);
  b.viewer_datagram(v2, J(R"({"t":"twist","vx":0.5,"vy":0,"wz":0,"seq":1,"ts":0})"));
  bool moved = false;
  for (const auto& m : H::messages(b.take(), r2))
    moved = robot_side.handle_message(relay_message(m), b.now) || moved;
  CHECK(moved);
  CHECK(robot_side.command().vx == 0.5);
}

TEST_CASE(
    "cockpit teleop: a persisted floor wins over the clock, and is persisted before the grant") {
  RelayConfig c;
  c.wall_clock_ms = 1'000;  // a clock far behind what the deployment already issued
  c.lease_gen_floor = 9'000'000'000'000;
  Harness h(c);
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1");
  h.take();
  h.viewer_send(v, J(R"({"t":"teleop_start"})"));
  auto acts = h.take();
  REQUIRE(acts.size() >= 3);
  CHECK(acts[0].kind == ActionKind::persist_lease_gen);
  CHECK(acts[0].gen == 9'000'000'000'001);
  CHECK(granted_gen(acts, r) == 9'000'000'000'001);
  // Generations keep growing from there, and stay JSON-safe however far the clock runs.
  h.viewer_send(v, J(R"({"t":"teleop_stop"})"));
  h.viewer_send(v, J(R"({"t":"teleop_start"})"));
  CHECK(granted_gen(h.take(), r) == 9'000'000'000'002);
  RelayConfig far;
  far.wall_clock_ms = kMaxSafeInteger;
  Harness f(far);
  SessionId fr = f.robot("r1");
  SessionId fv = f.watcher("r1");
  f.take();
  f.viewer_send(fv, J(R"({"t":"teleop_start"})"));
  CHECK(granted_gen(f.take(), fr) == 1);
}
