// The cockpit relay core's WebSocket lane (cockpit-wire-v7-notes.md § Delivery reminders, §
// Endpoints): the liveness rule that releases a dead socket's lease, and the edge's slow-reader
// rule, the acknowledged window that stands in for bufferedAmount where the host has none
// (workerd).
#include <map>
#include <set>

#include "cockpit_harness.hpp"

using namespace cockpit_test;
using H = Harness;

namespace {

// A session over a WebSocket: every message one data frame, @control for control messages.
struct WsPeer {
  Harness& h;
  SessionId id;
  std::int64_t seq = 0;
  void send(const Json& m) {
    Bytes b = data_frame("@control", seq++, to_json(m), wire::Delivery::reliable);
    h.relay.handle_ws_message(id, ByteView(b), h.now);
    h.collect();
  }
  void frame(const std::string& ch, std::int64_t s, const std::string& payload,
             wire::Delivery d = wire::Delivery::latest) {
    Bytes b = data_frame(ch, s, payload, d);
    h.relay.handle_ws_message(id, ByteView(b), h.now);
    h.collect();
  }
};

WsPeer ws_robot(Harness& h, const std::string& id) {
  WsPeer p{h, h.relay.handle_session_open(Role::robot, Lane::websocket, h.now)};
  p.send(h.robot_hello(id, demo_manifest()));
  return p;
}

WsPeer ws_viewer(Harness& h, const std::string& robot, std::vector<std::string> subs = {}) {
  WsPeer p{h, h.relay.handle_session_open(Role::viewer, Lane::websocket, h.now)};
  p.send(J(R"({"t":"hello","v":7,"role":"viewer"})"));
  Json w = J(R"({"t":"watch"})");
  w["robotId"] = robot;
  p.send(w);
  for (const auto& ch : subs) {
    Json m = J(R"({"t":"sub"})");
    m["ch"] = ch;
    p.send(m);
  }
  return p;
}

// What a host without bufferedAmount (the edge) does for a WebSocket: every stream opens and every
// write completes at once. Adds the bytes and the payloads written to each session.
struct Written {
  std::map<SessionId, std::size_t> bytes;
  std::map<SessionId, std::vector<std::string>> frames;
  std::set<SessionId> closed;
};
void carry(Harness& h, Written& w) {
  for (int round = 0; round < 64; ++round) {
    auto acts = h.take();
    if (acts.empty()) return;
    for (const auto& a : acts) {
      if (a.bytes) w.bytes[a.session] += a.bytes->size();
      if (a.kind == ActionKind::write_stream) w.frames[a.session].push_back(H::frame_payload(a));
      if (a.kind == ActionKind::close_session) w.closed.insert(a.session);
      if (a.kind == ActionKind::open_stream) h.relay.handle_stream_opened(a.stream, h.now);
      if (a.kind == ActionKind::write_stream) h.relay.handle_write_done(a.stream, h.now);
    }
  }
}

}  // namespace

TEST_CASE(
    "cockpit websocket: a silent session is closed after the liveness bound, releasing its lease") {
  Harness h;
  WsPeer robot = ws_robot(h, "r1");
  WsPeer holder = ws_viewer(h, "r1");
  WsPeer other = ws_viewer(h, "r1");
  holder.send(J(R"({"t":"teleop_start"})"));
  h.take();
  // Both keep pinging except the holder, whose socket went dead without a close.
  const TimeMs start = h.now;
  constexpr TimeMs kStep = 500;
  while (h.now < start + kWebSocketLivenessMs + kStep) {
    h.now += kStep;
    robot.send(J(R"({"t":"ping","n":1,"ts":0})"));
    other.send(J(R"({"t":"ping","n":1,"ts":0})"));
    if (auto t = h.relay.poll_timeout(); t && *t <= h.now) h.relay.handle_timeout(h.now);
    h.collect();
    if (H::closed(h.log, holder.id)) break;
  }
  auto acts = h.take();
  REQUIRE(H::closed(acts, holder.id));
  CHECK(h.now - start >= kWebSocketLivenessMs);
  CHECK(h.now - start <= kWebSocketLivenessMs + kStep);
  CHECK_FALSE(H::closed(acts, other.id));
  CHECK_FALSE(H::closed(acts, robot.id));
  h.relay.handle_session_closed(holder.id, h.now);  // the host closed the socket
  bool stopped = false;
  for (const auto& m : H::messages(acts, robot.id)) stopped = stopped || m["t"] == "teleop_stop";
  CHECK(stopped);
  other.send(J(R"({"t":"teleop_start"})"));
  CHECK(to_json(H::messages(h.take(), other.id).at(0)) == R"({"t":"teleop_started"})");
}

TEST_CASE(
    "cockpit websocket: the liveness rule keeps no deadline before a session could be silent") {
  // At the edge the core's earliest deadline is the Durable Object's alarm when it is far off
  // (web/edge/cockpit.js): a liveness look on a cadence would pre-empt the TURN refresh and
  // retries for as long as any WebSocket is open.
  Harness h;
  const TimeMs opened = h.now;
  WsPeer robot = ws_robot(h, "r1");
  h.take();
  REQUIRE(h.relay.poll_timeout());
  CHECK(*h.relay.poll_timeout() == opened + kWebSocketLivenessMs);
  // A peer pinging every 2 s is looked at once per bound, each time a bound after it was heard.
  std::size_t looks = 0;
  TimeMs last_ping = h.now;
  while (h.now < opened + 3 * kWebSocketLivenessMs) {
    h.now += 2'000;
    robot.send(J(R"({"t":"ping","n":1,"ts":0})"));
    last_ping = h.now;
    if (auto t = h.relay.poll_timeout(); t && *t <= h.now) {
      ++looks;
      h.relay.handle_timeout(h.now);
      REQUIRE(h.relay.poll_timeout());
      CHECK(*h.relay.poll_timeout() == last_ping + kWebSocketLivenessMs);
    }
    h.collect();
  }
  CHECK(looks == 3);
  CHECK_FALSE(H::closed(h.take(), robot.id));
}

TEST_CASE("cockpit websocket: without bufferedAmount, writes wait for acknowledged pongs") {
  RelayConfig c;
  c.websocket_buffered_amount = false;
  Harness h(c);
  WsPeer robot = ws_robot(h, "r1");
  WsPeer slow = ws_viewer(h, "r1", {"cam", "log"});
  WsPeer fast = ws_viewer(h, "r1", {"cam", "log"});
  Written w;
  carry(h, w);
  const std::string big(256 * 1024, 'x');
  // 40 latest frames of 256 KiB (10 MiB). The fast viewer reads, so it pings after every pong;
  // the slow one stopped reading, so it stopped pinging.
  for (int i = 1; i <= 40; ++i) {
    robot.frame("cam", i, std::to_string(i) + ":" + big);
    carry(h, w);
    fast.send(J(R"({"t":"ping","n":1,"ts":0})"));
    carry(h, w);
  }
  // The slow socket was handed at most the window and the frames already in flight when it shut;
  // the rest were superseded in place.
  CHECK(w.bytes[slow.id] <= kWebSocketAckWindowBytes + (kMaxLatestWritesInFlight + 1) * big.size());
  CHECK(w.frames[fast.id].size() == 40);
  CHECK(h.relay.counters("r1", "cam")->dropped > 0);
  // Reliable frames queue up to their caps behind the full window, then the viewer is
  // disconnected, as a full socket is where bufferedAmount exists.
  for (int i = 1; i <= int(kReliableMaxFrames) + kReliableWritesInFlight + 1; ++i) {
    robot.frame("log", i, "L", wire::Delivery::reliable);
    carry(h, w);
    fast.send(J(R"({"t":"ping","n":1,"ts":0})"));
    carry(h, w);
    if (w.closed.count(slow.id)) break;
  }
  CHECK(w.closed.count(slow.id));
  CHECK_FALSE(w.closed.count(fast.id));
  CHECK(w.frames[fast.id].size() == 40 + kReliableMaxFrames + 1);
}

TEST_CASE("cockpit websocket: a ping acknowledges only what preceded the previous pong") {
  RelayConfig c;
  c.websocket_buffered_amount = false;
  Harness h(c);
  WsPeer robot = ws_robot(h, "r1");
  WsPeer v = ws_viewer(h, "r1", {"cam"});
  Written w;
  carry(h, w);
  const std::string big(kWebSocketAckWindowBytes / 2, 'x');
  for (int i = 1; i <= 4; ++i) {
    robot.frame("cam", i, std::to_string(i) + big);
    carry(h, w);
  }
  const std::size_t before = w.frames[v.id].size();
  CHECK(before < 4);                          // the window shut
  v.send(J(R"({"t":"ping","n":1,"ts":0})"));  // no pong yet: nothing is acknowledged
  carry(h, w);
  CHECK(w.frames[v.id].size() == before);
  v.send(J(R"({"t":"ping","n":2,"ts":0})"));  // after pong 1: everything before it was read
  carry(h, w);
  CHECK(w.frames[v.id].size() > before);
  CHECK(w.frames[v.id].back().substr(0, 1) == "4");  // the newest, the others superseded
}

TEST_CASE("cockpit websocket: with bufferedAmount the host's signal alone paces writes") {
  Harness h;  // websocket_buffered_amount: the Deno host
  WsPeer robot = ws_robot(h, "r1");
  WsPeer v = ws_viewer(h, "r1", {"cam"});
  Written w;
  carry(h, w);
  const std::string big(kWebSocketAckWindowBytes / 2, 'x');
  for (int i = 1; i <= 4; ++i) {
    robot.frame("cam", i, std::to_string(i) + big);
    carry(h, w);
  }
  CHECK(w.frames[v.id].size() == 4);
}
