// A fleet split over objects (src/cockpit/fleet.hpp, docs/cockpit-fleet.md): a directory and
// robot parts, with the tickets carried between them the way the edge's switchboard carries them.
#include "cockpit/fleet.hpp"
#include "cockpit_harness.hpp"

using namespace cockpit_test;

namespace {

std::string text_of(const CockpitAction& a) {
  return std::string(ByteView(*a.bytes).as_chars());
}

// The one handoff action in `actions`, for session `s`.
CockpitAction handoff_of(const std::vector<CockpitAction>& actions, SessionId s) {
  auto h = Harness::kind(actions, ActionKind::handoff, s);
  REQUIRE(h.size() == 1);
  return h.front();
}

struct Part : Harness {
  Part(FleetPart part, const std::string& home) { relay.set_fleet_part(part, home); }
  // A session the switchboard opened here with a ticket.
  SessionId arrive(Role role, const std::string& ticket) {
    SessionId s = relay.handle_session_open(role, Lane::websocket, now);
    relay.handle_handoff(s, ByteView(std::string_view(ticket)), now);
    collect();
    return s;
  }
  void presence(std::uint64_t link, const std::string& report) {
    relay.handle_presence(link, ByteView(std::string_view(report)), now);
    collect();
  }
  void fleet(const std::string& robots) {
    relay.handle_fleet_robots(ByteView(std::string_view(robots)), now);
    collect();
  }
};

}  // namespace

TEST_CASE("fleet: a robot's hello at the directory is handed to its own object") {
  RelayConfig c;
  c.lease_gen_floor = 5000;  // the floor a one-object deployment left in the directory's storage
  Harness dir_h(std::move(c));
  dir_h.relay.set_fleet_part(FleetPart::directory, "");
  SessionId r = dir_h.robot("rover-a");
  auto out = dir_h.take();
  CHECK(Harness::messages(out, r).empty());  // no welcome here
  CockpitAction h = handoff_of(out, r);
  CHECK(h.ch == "rover-a");
  CHECK(dir_h.relay.session_count() == 0);  // released without a close
  CHECK_FALSE(Harness::closed(out, r));
  auto t = decode_ticket(ByteView(*h.bytes));
  REQUIRE(t.ok());
  CHECK(t->gen_floor == 5000);
  CHECK_FALSE(t->welcomed);

  Part a(FleetPart::robot, "rover-a");
  SessionId ra = a.arrive(Role::robot, text_of(h));
  auto got = a.take();
  CHECK(Harness::of_type(Harness::messages(got, ra), "welcome").size() == 1);
  auto presence = Harness::kind(got, ActionKind::presence);
  REQUIRE(presence.size() == 1);
  CHECK(J(text_of(presence[0]))["id"] == "rover-a");

  // The ticket's floor carries over: the robot object's first grant is above it.
  Part b(FleetPart::robot, "rover-a");
  b.arrive(Role::robot, text_of(h));
  Json vt = J(R"({"robotId":"rover-a","hello":{"t":"hello","v":7,"role":"viewer"},
                  "welcomed":true,"watch":true})");
  SessionId v = b.arrive(Role::viewer, to_json(vt));
  b.take();
  Bytes start = control_data_frame(J(R"({"t":"teleop_start"})"));
  b.relay.handle_ws_message(v, ByteView(start), b.now);
  auto gens = Harness::kind(b.take(), ActionKind::persist_lease_gen);
  REQUIRE(gens.size() == 1);
  CHECK(gens[0].gen > 5000);
}

TEST_CASE("fleet: the directory lists what robot objects report and routes a watch") {
  Part dir(FleetPart::directory, "");
  SessionId v = dir.viewer();
  auto out = dir.take();
  auto robots = Harness::of_type(Harness::messages(out, v), "robots");
  REQUIRE(robots.size() == 1);
  CHECK(robots[0]["robots"].empty());

  dir.presence(1, R"({"id":"rover-a","name":"A","model":"sim"})");
  dir.presence(2, R"({"id":"rover-b","name":"B","model":"sim"})");
  out = dir.take();
  robots = Harness::of_type(Harness::messages(out, v), "robots");
  REQUIRE(robots.size() == 2);
  CHECK(robots[1]["robots"].size() == 2);
  auto lists = Harness::kind(out, ActionKind::fleet_robots);
  REQUIRE(lists.size() == 2);
  CHECK(J(text_of(lists[1]))["robots"][1]["id"] == "rover-b");

  // An unknown robot is an error here; a listed one moves the viewer with its hello.
  dir.viewer_send(v, J(R"({"t":"watch","robotId":"rover-z"})"));
  CHECK(Harness::errors(dir.take(), v) == std::vector<std::string>{"unknown_robot"});
  dir.viewer_send(v, J(R"({"t":"watch","robotId":"rover-b"})"));
  out = dir.take();
  CockpitAction h = handoff_of(out, v);
  CHECK(h.ch == "rover-b");
  auto t = decode_ticket(ByteView(*h.bytes));
  REQUIRE(t.ok());
  CHECK(t->welcomed);
  CHECK(t->watch);
  CHECK(t->hello["role"] == "viewer");
  CHECK(dir.relay.session_count() == 0);

  // rover-b's link closes (its object was evicted): it leaves the list and is remembered as seen.
  dir.now = 7000;
  dir.presence(2, "null");
  out = dir.take();
  CHECK(J(text_of(Harness::kind(out, ActionKind::fleet_robots).at(0)))["robots"].size() == 1);
  Json stats = dir.relay.stats();
  CHECK(stats["robots"].size() == 1);
  CHECK(stats["fleet"]["lastSeenMs"]["rover-b"] == 7000);
  // A stale link's close does not take off a robot a newer link reported.
  dir.presence(3, R"({"id":"rover-a","name":"A","model":"sim"})");
  dir.presence(1, "null");
  CHECK(dir.relay.stats()["robots"].size() == 1);
}

TEST_CASE("fleet: a viewer handed to a robot object is quiet, watches, and moves on again") {
  Part a(FleetPart::robot, "rover-a");
  SessionId ra = a.relay.handle_session_open(Role::robot, Lane::websocket, a.now);
  Bytes hello = control_data_frame(a.robot_hello("rover-a", demo_manifest()));
  a.relay.handle_ws_message(ra, ByteView(hello), a.now);
  a.fleet(R"({"t":"robots","robots":[{"id":"rover-a","name":"A","model":"sim"},
                                       {"id":"rover-b","name":"B","model":"sim"}]})");
  a.take();
  Json vt = J(R"({"robotId":"rover-a","hello":{"t":"hello","v":7,"role":"viewer"},
                  "welcomed":true,"watch":true})");
  SessionId v = a.arrive(Role::viewer, to_json(vt));
  auto out = a.take();
  auto ms = Harness::messages(out, v);
  CHECK(Harness::of_type(ms, "welcome").empty());
  REQUIRE(Harness::of_type(ms, "robots").size() == 1);
  CHECK(Harness::of_type(ms, "robots")[0]["robots"].size() == 2);
  REQUIRE(Harness::of_type(ms, "manifest").size() == 1);
  CHECK(Harness::of_type(ms, "manifest")[0]["robotId"] == "rover-a");

  // A second ticket on the same session is not taken.
  a.relay.handle_handoff(v, ByteView(std::string_view(to_json(vt))), a.now);
  CHECK(a.relay.stats()["dropped"]["handoff_late"] == 1);

  Bytes start = control_data_frame(J(R"({"t":"teleop_start"})"));
  a.relay.handle_ws_message(v, ByteView(start), a.now);
  a.take();
  Bytes watch_b = control_data_frame(J(R"({"t":"watch","robotId":"rover-b"})"));
  a.relay.handle_ws_message(v, ByteView(watch_b), a.now);
  out = a.take();
  // Leaving rover-a releases the lease robot-ward, then the viewer moves.
  auto to_robot = Harness::messages(out, ra);
  CHECK_FALSE(Harness::of_type(to_robot, "teleop_stop").empty());
  CHECK(handoff_of(out, v).ch == "rover-b");
  CHECK(a.relay.stats()["viewers"] == 0);

  // The robot leaving tells the directory.
  a.relay.handle_session_closed(ra, a.now);
  auto presence = Harness::kind(a.take(), ActionKind::presence);
  REQUIRE(presence.size() == 1);
  CHECK(text_of(presence[0]) == "null");
}

TEST_CASE("fleet: hostile tickets and reports close or drop, and lose nothing else") {
  Part a(FleetPart::robot, "rover-a");
  SECTION("not JSON") {
    SessionId s = a.arrive(Role::viewer, "{nope");
    CHECK(Harness::closed(a.take(), s));
  }
  SECTION("oversized, refused before parsing") {
    SessionId s = a.arrive(Role::viewer, std::string(kMaxTicketBytes + 1, ' '));
    CHECK(Harness::closed(a.take(), s));
  }
  SECTION("for another robot's object") {
    Json t = J(R"({"robotId":"rover-b","hello":{"t":"hello","v":7,"role":"viewer"}})");
    SessionId s = a.arrive(Role::viewer, to_json(t));
    CHECK(Harness::closed(a.take(), s));
  }
  SECTION("a hello that fails its checks (the ticket grants nothing)") {
    Json t = J(R"({"robotId":"rover-a","hello":{"t":"hello","v":6,"role":"viewer"}})");
    SessionId s = a.arrive(Role::viewer, to_json(t));
    auto out = a.take();
    CHECK(Harness::errors(out, s) == std::vector<std::string>{"version_mismatch"});
    CHECK(Harness::closed(out, s));
  }
  SECTION("a robot with another id") {
    Json t = J(R"({"robotId":"rover-a"})");
    t["hello"] = a.robot_hello("rover-b", demo_manifest());
    SessionId s = a.arrive(Role::robot, to_json(t));
    CHECK(Harness::errors(a.take(), s) == std::vector<std::string>{"robot_id_conflict"});
  }
  SECTION("a bad robots list") {
    a.fleet(R"({"t":"robots","robots":[{"name":"no id"}]})");
    a.fleet("[");
    CHECK(a.relay.stats()["dropped"]["fleet_robots_invalid"] == 2);
  }
  Part dir(FleetPart::directory, "");
  SECTION("a ticket at the directory") {
    Json t = J(R"({"robotId":"rover-a","hello":{"t":"hello","v":7,"role":"viewer"}})");
    SessionId s = dir.arrive(Role::viewer, to_json(t));
    CHECK(dir.relay.stats()["dropped"]["handoff_misrouted"] == 1);
    CHECK_FALSE(Harness::closed(dir.take(), s));
  }
  SECTION("bad presence reports") {
    dir.presence(1, R"({"id":"rover-a"})");
    dir.presence(1, "[");
    dir.presence(1, std::string(wire::kMaxControlBytes + 1, ' '));
    CHECK(dir.relay.stats()["dropped"]["presence_invalid"] == 3);
    CHECK(dir.relay.stats()["robots"].empty());
  }
}
