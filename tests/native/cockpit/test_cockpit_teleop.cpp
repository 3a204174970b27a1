// Cockpit relay core: the teleop lease (cockpit-wire-v7-notes.md § Teleop).
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
