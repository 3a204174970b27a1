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

struct Written;

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
  // A ping as the client cores send it on a WebSocket: `read` is what it read up to its last pong.
  void ping(const Written& w);
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
// write completes at once. Adds the bytes and the payloads written to each session, and where
// each session's last pong ended (what a client that reads everything reports as `read`).
struct Written {
  std::map<SessionId, std::size_t> bytes;
  std::map<SessionId, std::size_t> pong_end;
  bool pong_with_read = false;
  std::map<SessionId, std::vector<std::string>> frames;
  std::set<SessionId> closed;
};
void WsPeer::ping(const Written& w) {
  Json p = J(R"({"t":"ping","n":1,"ts":0})");
  auto it = w.pong_end.find(id);
  p["read"] = it == w.pong_end.end() ? 0 : it->second;
  send(p);
}

void carry(Harness& h, Written& w) {
  for (int round = 0; round < 64; ++round) {
    auto acts = h.take();
    if (acts.empty()) return;
    for (const auto& a : acts) {
      if (a.bytes) w.bytes[a.session] += a.bytes->size();
      for (const auto& m : H::messages({a}, a.session))
        if (m["t"] == "pong") {
          w.pong_end[a.session] = w.bytes[a.session];
          w.pong_with_read = w.pong_with_read || m.contains("read");
        }
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

TEST_CASE("cockpit websocket: without bufferedAmount, writes wait for reads pings confirm") {
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
    fast.ping(w);
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
    fast.ping(w);
    carry(h, w);
    if (w.closed.count(slow.id)) break;
  }
  CHECK(w.closed.count(slow.id));
  CHECK_FALSE(w.closed.count(fast.id));
  CHECK(w.frames[fast.id].size() == 40 + kReliableMaxFrames + 1);
}

TEST_CASE("cockpit websocket: a ping acknowledges only a read that ends exactly at a pong") {
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
  CHECK(before < 4);  // the window shut
  v.ping(w);          // no pong read yet (read 0): nothing is acknowledged
  carry(h, w);
  CHECK(w.frames[v.id].size() == before);
  REQUIRE(w.pong_end.count(v.id));
  const std::size_t end = w.pong_end[v.id];
  // Every other count acknowledges nothing: none at all, one byte off either way, a frame past it,
  // and more than was ever sent.
  for (Json read : {Json(), Json(end - 1), Json(end + 1), Json(end + big.size()),
                    Json(std::uint64_t(9007199254740991))}) {
    Json p = J(R"({"t":"ping","n":2,"ts":0})");
    if (!read.is_null()) p["read"] = read;
    v.send(p);
    carry(h, w);
    CHECK(w.frames[v.id].size() == before);
  }
  v.ping(w);  // read up to that pong: everything before it is acknowledged
  carry(h, w);
  CHECK(w.frames[v.id].size() > before);
  CHECK(w.frames[v.id].back().substr(0, 1) == "4");  // the newest, the others superseded
  // The pong echoes n and ts only: `read` is the client's word, not the relay's.
  CHECK_FALSE(w.pong_with_read);
}

TEST_CASE("cockpit websocket: a client that pings without reading gets no more room") {
  RelayConfig c;
  c.websocket_buffered_amount = false;
  Harness h(c);
  WsPeer robot = ws_robot(h, "r1");
  WsPeer slow = ws_viewer(h, "r1", {"cam"});
  Written w;
  carry(h, w);
  slow.ping(w);  // it read its welcome and first pong, then stopped reading
  carry(h, w);
  const std::size_t read_at_stop = w.pong_end[slow.id];
  const std::string big(256 * 1024, 'x');
  // 80 frames of 256 KiB (20 MiB) while it keeps pinging on a timer: with no read at all (an old
  // client's ping), and with the last read it really made.
  for (int i = 1; i <= 80; ++i) {
    robot.frame("cam", i, std::to_string(i) + ":" + big);
    carry(h, w);
    Json p = J(R"({"t":"ping","n":1,"ts":0})");
    if (i % 2) p["read"] = read_at_stop;
    slow.send(p);
    carry(h, w);
  }
  CHECK(w.bytes[slow.id] <= kWebSocketAckWindowBytes + (kMaxLatestWritesInFlight + 1) * big.size());
  CHECK(h.relay.counters("r1", "cam")->dropped > 0);
}

TEST_CASE("cockpit websocket: a client that never sends read is paced by its pings as before") {
  // Other v7 clients know no `read` field: they must not freeze once the window has been sent.
  RelayConfig c;
  c.websocket_buffered_amount = false;
  Harness h(c);
  WsPeer robot = ws_robot(h, "r1");
  WsPeer v = ws_viewer(h, "r1", {"cam"});
  Written w;
  carry(h, w);
  const std::string big(kWebSocketAckWindowBytes / 2, 'x');
  std::size_t delivered = 0;
  for (int i = 1; i <= 12; ++i) {  // 24 MiB, six times the window
    robot.frame("cam", i, std::to_string(i) + ":" + big);
    carry(h, w);
    v.send(J(R"({"t":"ping","n":1,"ts":0})"));  // reads everything, pings without `read`
    carry(h, w);
    delivered = w.frames[v.id].size();
  }
  CHECK(delivered >= 10);  // each ping reopened the window; a frozen viewer gets at most 2
  CHECK(w.frames[v.id].back().substr(0, 3) == "12:");
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

namespace {
// A paced viewer of the reliable "log" with 20 frames of `size` bytes queued; its stream opened
// and the first writes handed out, none completed. Returns the seqs of what those writes carried.
struct Backlog {
  StreamId stream = 0;
  std::vector<std::string> handed;
};
std::string seq_of(const CockpitAction& a) {
  const std::string p = H::frame_payload(a);
  return p.substr(0, p.find(':'));
}
Backlog paced_backlog(Harness& h, std::size_t size) {
  WsPeer robot = ws_robot(h, "r1");
  WsPeer v = ws_viewer(h, "r1", {"log"});
  h.take();
  const std::string big(size, 'x');
  for (int i = 1; i <= 20; ++i)
    robot.frame("log", i, std::to_string(i) + ":" + big, wire::Delivery::reliable);
  Backlog b;
  for (auto acts = h.take(); !acts.empty(); acts = h.take())
    for (const auto& a : acts) {
      if (a.session != v.id) continue;
      if (a.kind == ActionKind::open_stream) {
        b.stream = a.stream;
        h.relay.handle_stream_opened(a.stream, h.now);
      }
      if (a.kind == ActionKind::write_stream) b.handed.push_back(seq_of(a));
    }
  return b;
}
std::vector<std::string> seqs_written(const std::vector<CockpitAction>& acts) {
  std::vector<std::string> out;
  for (const auto& a : acts)
    if (a.kind == ActionKind::write_stream) out.push_back(seq_of(a));
  return out;
}
}  // namespace

TEST_CASE(
    "cockpit websocket: without bufferedAmount a counted writes_done hands out what singles do") {
  // 8 writes of 384 KiB in flight (3 MiB handed). Reported one by one, each completion sees the
  // bytes the one before it handed out: three more frames go, then the window (4 MiB) is full
  // and the rest wait for a ping. One count of 8 in one input must hand out the same three, not
  // eight (which it did while the window counted bytes only as they were polled).
  RelayConfig c;
  c.websocket_buffered_amount = false;
  Harness single(c), counted(c);
  Backlog s = paced_backlog(single, 384 * 1024);
  Backlog n = paced_backlog(counted, 384 * 1024);
  REQUIRE(s.handed.size() == kReliableWritesInFlight);
  REQUIRE(n.handed == s.handed);
  std::vector<std::string> one_by_one;
  for (std::size_t i = 0; i < kReliableWritesInFlight; ++i) {
    single.relay.handle_write_done(s.stream, single.now);
    for (auto& q : seqs_written(single.take())) one_by_one.push_back(q);
  }
  counted.relay.handle_writes_done(n.stream, kReliableWritesInFlight, counted.now);
  const std::vector<std::string> at_once = seqs_written(counted.take());
  CHECK(one_by_one == std::vector<std::string>{"9", "10", "11"});
  CHECK(at_once == one_by_one);
}
