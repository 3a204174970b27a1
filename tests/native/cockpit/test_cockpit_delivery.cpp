// Cockpit relay core: latest and reliable delivery (cockpit-wire-protocol.md § Delivery modes,
// workarounds 7, 11 and 12) and the counters of /api/stats.
#include "cockpit_harness.hpp"

using namespace cockpit_test;
using H = Harness;

namespace {
ChannelCounters counters(Harness& h, const std::string& ch) {
  auto c = h.relay.counters("r1", ch);
  REQUIRE(c);
  return *c;
}
}  // namespace

TEST_CASE("cockpit latest: each frame on its own stream, bytes forwarded unchanged") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"cam"});
  h.take();
  const Bytes frame = data_frame("cam", 1, "jpeg-1");
  h.robot_stream(r, frame);
  auto opens = H::kind(h.take(), ActionKind::open_stream, v);
  REQUIRE(opens.size() == 1);
  CHECK(opens[0].ch == "cam");
  CHECK(opens[0].delivery == wire::Delivery::latest);
  h.relay.handle_stream_opened(opens[0].stream, h.now);
  auto writes = H::kind(h.take(), ActionKind::write_stream, v);
  REQUIRE(writes.size() == 1);
  CHECK(*writes[0].bytes == frame);
  CHECK(counters(h, "cam").sent == 1);
}

TEST_CASE("cockpit latest: sendOrder decreases with every stream (workaround 7)") {
  Harness h;
  SessionId r = h.robot("r1");
  h.watcher("r1", {"cam"});
  std::vector<std::int64_t> orders;
  for (int i = 1; i <= 3; ++i) {
    h.robot_frame(r, "cam", i, "f");
    auto acts = h.take();
    for (auto& a : H::kind(acts, ActionKind::open_stream)) {
      orders.push_back(a.send_order);
      h.relay.handle_stream_opened(a.stream, h.now);
      h.relay.handle_write_done(a.stream, h.now);
    }
    h.take();
  }
  REQUIRE(orders.size() == 3);
  CHECK(orders[0] > orders[1]);
  CHECK(orders[1] > orders[2]);
}

TEST_CASE("cockpit latest: a frame older by seq than the newest is dropped") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"cam"});
  h.robot_frame(r, "cam", 5, "five");
  h.robot_frame(r, "cam", 4, "four");
  h.robot_frame(r, "cam", 5, "five again");
  CHECK(H::kind(h.take(), ActionKind::open_stream, v).size() == 1);
  CHECK(counters(h, "cam").dropped == 2);
}

TEST_CASE("cockpit latest: a send wedged in creation has its payload superseded in place") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"cam"});
  h.take();
  for (int i = 1; i <= 5; ++i) h.robot_frame(r, "cam", i, "frame-" + std::to_string(i));
  auto opens = H::kind(h.take(), ActionKind::open_stream, v);
  REQUIRE(opens.size() == 1);  // no stream churn while creation is wedged
  h.now += 5000;               // the viewer resumes much later
  h.relay.handle_stream_opened(opens[0].stream, h.now);
  auto acts = h.take();
  auto writes = H::kind(acts, ActionKind::write_stream, v);
  REQUIRE(writes.size() == 1);
  CHECK(H::frame_payload(writes[0]) == "frame-5");  // the newest, bound when the write starts
  CHECK(H::kind(acts, ActionKind::reset_stream, v).empty());
  auto c = counters(h, "cam");
  CHECK(c.sent == 1);
  CHECK(c.dropped == 4);
}

TEST_CASE("cockpit latest: written streams are reset after 500 ms by newer offers and the reap") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"cam"});
  h.take();
  h.robot_frame(r, "cam", 1, "a");
  auto s1 = H::kind(h.take(), ActionKind::open_stream, v).at(0).stream;
  h.relay.handle_stream_opened(s1, h.now);
  h.relay.handle_write_done(s1, h.now);
  h.take();
  // Never FIN: the stream stays open until it is stale, and the relay names that moment.
  CHECK(h.relay.poll_timeout() == Timeout(h.now + kLatestStaleMs));
  h.now += kLatestStaleMs - 1;
  h.relay.handle_timeout(h.now);
  CHECK(H::kind(h.take(), ActionKind::reset_stream, v).empty());
  h.now += 1;
  h.robot_frame(r, "cam", 2, "b");  // a newer offer reaps it
  auto acts = h.take();
  auto resets = H::kind(acts, ActionKind::reset_stream, v);
  REQUIRE(resets.size() == 1);
  CHECK(resets[0].stream == s1);
  CHECK(resets[0].end == StreamEnd::expired);
  auto s2 = H::kind(acts, ActionKind::open_stream, v).at(0).stream;
  h.relay.handle_stream_opened(s2, h.now);
  h.relay.handle_write_done(s2, h.now);
  h.take();
  // The input went idle: the reap fires at the stream's own deadline, not on a period.
  REQUIRE(h.relay.poll_timeout() == Timeout(h.now + kLatestStaleMs));
  h.now += kLatestStaleMs - 1;
  h.relay.handle_timeout(h.now);  // early: harmless
  CHECK(H::kind(h.take(), ActionKind::reset_stream, v).empty());
  h.now += 1;
  h.relay.handle_timeout(h.now);
  resets = H::kind(h.take(), ActionKind::reset_stream, v);
  REQUIRE(resets.size() == 1);
  CHECK(resets[0].stream == s2);
  auto c = counters(h, "cam");
  CHECK(c.expired == 2);
  CHECK(c.aborted == 0);
  CHECK_FALSE(h.relay.poll_timeout());  // nothing left to reap: no timer
}

TEST_CASE(
    "cockpit latest: a stream still writing has no reap deadline, each written one has its own") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"cam"});
  h.take();
  CHECK_FALSE(h.relay.poll_timeout());
  h.robot_frame(r, "cam", 1, "a");
  auto s1 = H::kind(h.take(), ActionKind::open_stream, v).at(0).stream;
  h.relay.handle_stream_opened(s1, h.now);  // the write starts
  h.take();
  CHECK_FALSE(h.relay.poll_timeout());  // a writing stream is aborted by newer offers, not reaped
  const TimeMs first = h.now;
  h.now += 100;
  h.relay.handle_write_done(s1, h.now);
  CHECK(h.relay.poll_timeout() == Timeout(first + kLatestStaleMs));  // from when the write started
  h.robot_frame(r, "cam", 2, "b");
  auto s2 = H::kind(h.take(), ActionKind::open_stream, v).at(0).stream;
  h.relay.handle_stream_opened(s2, h.now);
  h.relay.handle_write_done(s2, h.now);
  h.take();
  CHECK(h.relay.poll_timeout() == Timeout(first + kLatestStaleMs));  // the earliest of the two
  h.now = first + kLatestStaleMs;
  h.relay.handle_timeout(h.now);
  auto resets = H::kind(h.take(), ActionKind::reset_stream, v);
  REQUIRE(resets.size() == 1);
  CHECK(resets[0].stream == s1);
  CHECK(h.relay.poll_timeout() == Timeout(first + 100 + kLatestStaleMs));  // then the next one
  // Unsubscribing resets the stream and takes its deadline with it.
  h.viewer_send(v, J(R"({"t":"unsub","ch":"cam"})"));
  CHECK_FALSE(h.relay.poll_timeout());
}

TEST_CASE("cockpit latest: a write-wedged stream is aborted once per stale window, newest resent") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"cam"});
  h.take();
  h.robot_frame(r, "cam", 1, "a");
  auto s1 = H::kind(h.take(), ActionKind::open_stream, v).at(0).stream;
  h.relay.handle_stream_opened(s1, h.now);  // the write starts and never completes
  h.take();
  h.now += kLatestStaleMs;
  h.robot_frame(r, "cam", 2, "b");
  auto acts = h.take();
  auto resets = H::kind(acts, ActionKind::reset_stream, v);
  REQUIRE(resets.size() == 1);
  CHECK(resets[0].stream == s1);
  CHECK(resets[0].end == StreamEnd::aborted);
  auto s2 = H::kind(acts, ActionKind::open_stream, v).at(0).stream;
  h.relay.handle_stream_opened(s2, h.now);
  auto w = H::kind(h.take(), ActionKind::write_stream, v);
  REQUIRE(w.size() == 1);
  CHECK(H::frame_payload(w[0]) == "b");
  CHECK(counters(h, "cam").aborted == 1);
  // Within the same window a newer offer does not reset again.
  h.now += 10;
  h.robot_frame(r, "cam", 3, "c");
  CHECK(H::kind(h.take(), ActionKind::reset_stream, v).empty());
}

TEST_CASE("cockpit latest: writes in flight are bounded, the newest waits parked") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"cam"});
  h.take();
  std::vector<StreamId> writing;
  for (int i = 1; i <= 10; ++i) {
    h.robot_frame(r, "cam", i, "f" + std::to_string(i));
    for (auto& a : H::kind(h.take(), ActionKind::open_stream, v)) {
      h.relay.handle_stream_opened(a.stream, h.now);
      writing.push_back(a.stream);
    }
    h.take();
  }
  CHECK(writing.size() == 4);
  h.relay.handle_write_done(writing[0], h.now);
  auto opens = H::kind(h.take(), ActionKind::open_stream, v);
  REQUIRE(opens.size() == 1);
  h.relay.handle_stream_opened(opens[0].stream, h.now);
  auto w = H::kind(h.take(), ActionKind::write_stream, v);
  REQUIRE(w.size() == 1);
  CHECK(H::frame_payload(w[0]) == "f10");
}

TEST_CASE("cockpit reliable: one persistent ordered stream per viewer and channel") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"log"});
  h.take();
  for (int i = 1; i <= 3; ++i)
    h.robot_frame(r, "log", i, "L" + std::to_string(i), wire::Delivery::reliable);
  auto acts = h.take();
  auto opens = H::kind(acts, ActionKind::open_stream, v);
  REQUIRE(opens.size() == 1);
  CHECK(opens[0].delivery == wire::Delivery::reliable);
  const StreamId st = opens[0].stream;
  CHECK(H::kind(acts, ActionKind::write_stream).empty());
  h.relay.handle_stream_opened(st, h.now);
  std::vector<std::string> got;
  for (auto& w : H::kind(h.take(), ActionKind::write_stream, v)) {
    CHECK(w.stream == st);
    got.push_back(H::frame_payload(w));
  }
  CHECK(got == std::vector<std::string>{"L1", "L2", "L3"});  // in order, pipelined
  for (int i = 0; i < 3; ++i) h.relay.handle_write_done(st, h.now);
  CHECK(h.take().empty());
  // Reliable frames are never dropped by seq.
  h.robot_frame(r, "log", 1, "again", wire::Delivery::reliable);
  CHECK(H::kind(h.take(), ActionKind::write_stream, v).size() == 1);
}

TEST_CASE("cockpit reliable: the manifest's delivery wins over the header's") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"log"});
  h.take();
  h.robot_frame(r, "log", 1, "x", wire::Delivery::latest);
  auto opens = H::kind(h.take(), ActionKind::open_stream, v);
  REQUIRE(opens.size() == 1);
  CHECK(opens[0].delivery == wire::Delivery::reliable);
}

TEST_CASE("cockpit reliable: 64 frames queue, the 65th disconnects the viewer, others live on") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId slow = h.watcher("r1", {"log"});
  SessionId fast = h.watcher("r1", {"log"});
  h.take();
  StreamId fast_stream = 0;
  for (std::size_t i = 1; i <= kReliableMaxFrames; ++i) {
    h.robot_frame(r, "log", std::int64_t(i), "x", wire::Delivery::reliable);
    auto acts = h.take();
    for (auto& a : H::kind(acts, ActionKind::open_stream, fast)) {
      fast_stream = a.stream;
      h.relay.handle_stream_opened(a.stream, h.now);
    }
    for (auto& a : H::kind(h.take(), ActionKind::write_stream, fast)) (void)a;
    if (fast_stream) h.relay.handle_write_done(fast_stream, h.now);
    h.take();
    CHECK_FALSE(H::closed(acts, slow));
  }
  h.robot_frame(r, "log", 65, "x", wire::Delivery::reliable);
  auto acts = h.take();
  CHECK(H::closed(acts, slow));
  CHECK_FALSE(H::closed(acts, fast));
  CHECK(counters(h, "log").dropped == kReliableMaxFrames + 1);
  CHECK(H::kind(acts, ActionKind::write_stream, fast).size() == 1);
  h.relay.handle_write_done(fast_stream, h.now);
  h.robot_frame(r, "log", 66, "y", wire::Delivery::reliable);
  CHECK(H::kind(h.take(), ActionKind::write_stream, fast).size() == 1);
}

TEST_CASE("cockpit reliable: the 16 MiB cap, a lone oversize frame still queues") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"log"});
  h.take();
  const std::string big(kReliableMaxBytes + 10, 'b');
  h.robot_frame(r, "log", 1, big, wire::Delivery::reliable);
  auto acts = h.take();
  CHECK_FALSE(H::closed(acts, v));
  const StreamId st = H::kind(acts, ActionKind::open_stream, v).at(0).stream;
  h.robot_frame(r, "log", 2, "small", wire::Delivery::reliable);
  CHECK(H::closed(h.take(), v));
  (void)st;
  // Half the cap twice fits; a third does not.
  Harness h2;
  SessionId r2 = h2.robot("r1");
  SessionId v2 = h2.watcher("r1", {"log"});
  const std::string half(kReliableMaxBytes / 2 - 100, 'h');
  h2.robot_frame(r2, "log", 1, half, wire::Delivery::reliable);
  h2.robot_frame(r2, "log", 2, half, wire::Delivery::reliable);
  CHECK_FALSE(H::closed(h2.take(), v2));
  h2.robot_frame(r2, "log", 3, half, wire::Delivery::reliable);
  CHECK(H::closed(h2.take(), v2));
}

TEST_CASE("cockpit: @ channels and undeclared channels are never forwarded") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"cam"});
  h.take();
  h.robot_frame(r, "@secret", 1, "x");
  h.robot_frame(r, "other", 1, "x");
  h.robot_frame(r, "say", 1, "x");  // a tx channel coming from the robot
  auto acts = h.take();
  CHECK(H::kind(acts, ActionKind::open_stream, v).empty());
  CHECK(H::kind(acts, ActionKind::write_stream, v).empty());
}

TEST_CASE("cockpit: unsub resets the channel's streams") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"cam", "log"});
  h.robot_frame(r, "cam", 1, "x");
  h.robot_frame(r, "log", 1, "x", wire::Delivery::reliable);
  auto acts = h.take();
  auto opens = H::kind(acts, ActionKind::open_stream, v);
  REQUIRE(opens.size() == 2);
  h.viewer_send(v, J(R"({"t":"unsub","ch":"cam"})"));
  h.viewer_send(v, J(R"({"t":"unsub","ch":"log"})"));
  auto resets = H::kind(h.take(), ActionKind::reset_stream, v);
  REQUIRE(resets.size() == 2);
  CHECK(resets[0].end == StreamEnd::closing);
  // The host's late open of a reset stream changes nothing.
  h.relay.handle_stream_opened(opens[0].stream, h.now);
  CHECK(h.take().empty());
}

TEST_CASE(
    "cockpit: a failed reliable stream disconnects the viewer, a failed latest one is dropped") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"cam", "log"});
  h.robot_frame(r, "cam", 1, "x");
  h.robot_frame(r, "log", 1, "x", wire::Delivery::reliable);
  auto opens = H::kind(h.take(), ActionKind::open_stream, v);
  REQUIRE(opens.size() == 2);
  h.relay.handle_stream_failed(opens[0].stream, h.now);
  CHECK_FALSE(H::closed(h.take(), v));
  h.robot_frame(r, "cam", 2, "y");
  CHECK(H::kind(h.take(), ActionKind::open_stream, v).size() == 1);
  h.relay.handle_stream_failed(opens[1].stream, h.now);
  CHECK(H::closed(h.take(), v));
}

TEST_CASE("cockpit reliable: at most kReliableWritesInFlight writes are outstanding") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"log"});
  for (int i = 1; i <= 20; ++i)
    h.robot_frame(r, "log", i, std::to_string(i), wire::Delivery::reliable);
  const StreamId st = H::kind(h.take(), ActionKind::open_stream, v).at(0).stream;
  h.relay.handle_stream_opened(st, h.now);
  auto w = H::kind(h.take(), ActionKind::write_stream, v);
  REQUIRE(w.size() == kReliableWritesInFlight);
  CHECK(H::frame_payload(w.back()) == std::to_string(kReliableWritesInFlight));
  h.relay.handle_write_done(st, h.now);
  w = H::kind(h.take(), ActionKind::write_stream, v);
  REQUIRE(w.size() == 1);
  CHECK(H::frame_payload(w[0]) == std::to_string(kReliableWritesInFlight + 1));
  CHECK(h.relay.counters("r1", "log")->sent == kReliableWritesInFlight + 1);
}

TEST_CASE(
    "cockpit reliable: frames reach viewers in seq order when one-shot streams finish out of "
    "order") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"log", "cam"});
  h.take();
  // The robot opens three streams in seq order; they finish 3, 1, 2.
  StreamId s1 = h.relay.handle_incoming_open(r, h.now);
  StreamId s2 = h.relay.handle_incoming_open(r, h.now);
  StreamId s3 = h.relay.handle_incoming_open(r, h.now);
  // A latest frame's stream opened in between does not hold reliable frames back once it is done.
  StreamId sc = h.relay.handle_incoming_open(r, h.now);
  auto feed = [&](StreamId st, const Bytes& b) {
    h.relay.handle_incoming_data(st, ByteView(b), h.now);
    h.relay.handle_incoming_end(st, h.now);
  };
  feed(s3, data_frame("log", 3, "L3", wire::Delivery::reliable));
  feed(s1, data_frame("log", 1, "L1", wire::Delivery::reliable));
  feed(sc, data_frame("cam", 1, "C1"));
  feed(s2, data_frame("log", 2, "L2", wire::Delivery::reliable));
  auto acts = h.take();
  StreamId log_stream = 0;
  for (const auto& o : H::kind(acts, ActionKind::open_stream, v))
    if (o.ch == "log") log_stream = o.stream;
  REQUIRE(log_stream != 0);
  h.relay.handle_stream_opened(log_stream, h.now);
  std::vector<std::string> got;
  for (auto& w : H::kind(h.take(), ActionKind::write_stream, v)) got.push_back(H::frame_payload(w));
  CHECK(got == std::vector<std::string>{"L1", "L2", "L3"});
}

TEST_CASE("cockpit reliable: a gap no stream can fill is not waited for") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"log"});
  h.take();
  // seq 5 then 7: nothing is in flight that could carry 6, so 7 goes at once.
  h.robot_frame(r, "log", 5, "L5", wire::Delivery::reliable);
  h.robot_frame(r, "log", 7, "L7", wire::Delivery::reliable);
  // A frame waiting on an earlier stream goes when that stream ends without a frame (a reset).
  StreamId early = h.relay.handle_incoming_open(r, h.now);
  StreamId late = h.relay.handle_incoming_open(r, h.now);
  Bytes b9 = data_frame("log", 9, "L9", wire::Delivery::reliable);
  h.relay.handle_incoming_data(late, ByteView(b9), h.now);
  h.relay.handle_incoming_end(late, h.now);
  auto acts = h.take();
  StreamId st = H::kind(acts, ActionKind::open_stream, v).at(0).stream;
  h.relay.handle_stream_opened(st, h.now);
  std::vector<std::string> got;
  for (auto& w : H::kind(h.take(), ActionKind::write_stream, v)) got.push_back(H::frame_payload(w));
  CHECK(got == std::vector<std::string>{"L5", "L7"});  // L9 waits for `early`
  h.relay.handle_incoming_end(early, h.now);
  got.clear();
  for (auto& w : H::kind(h.take(), ActionKind::write_stream, v)) got.push_back(H::frame_payload(w));
  CHECK(got == std::vector<std::string>{"L9"});
}

// --- counted write completions (handle_writes_done) ---------------------------------------------

namespace {
// A reliable viewer with `frames` frames of "log" queued behind its open stream; returns the
// stream and the payloads of the writes handed out so far (the first kReliableWritesInFlight).
std::pair<StreamId, std::vector<std::string>> reliable_backlog(Harness& h, SessionId& v,
                                                               int frames) {
  SessionId r = h.robot("r1");
  v = h.watcher("r1", {"log"});
  h.take();
  for (int i = 1; i <= frames; ++i)
    h.robot_frame(r, "log", i, "L" + std::to_string(i), wire::Delivery::reliable);
  const StreamId st = H::kind(h.take(), ActionKind::open_stream, v).at(0).stream;
  h.relay.handle_stream_opened(st, h.now);
  std::vector<std::string> got;
  for (auto& w : H::kind(h.take(), ActionKind::write_stream, v)) got.push_back(H::frame_payload(w));
  return {st, got};
}

std::vector<std::string> written(const std::vector<CockpitAction>& acts, SessionId v) {
  std::vector<std::string> got;
  for (auto& w : H::kind(acts, ActionKind::write_stream, v)) got.push_back(H::frame_payload(w));
  return got;
}
}  // namespace

TEST_CASE("cockpit writes done: a count is the same as that many write_done calls") {
  Harness counted, single;
  SessionId vc = 0, vs = 0;
  auto [stc, firstc] = reliable_backlog(counted, vc, 20);
  auto [sts, firsts] = reliable_backlog(single, vs, 20);
  REQUIRE(firstc.size() == kReliableWritesInFlight);
  CHECK(firstc == firsts);
  counted.relay.handle_writes_done(stc, 3, counted.now);
  for (int i = 0; i < 3; ++i) single.relay.handle_write_done(sts, single.now);
  auto a = counted.take();
  auto b = single.take();
  CHECK(written(a, vc) == std::vector<std::string>{"L9", "L10", "L11"});
  CHECK(written(a, vc) == written(b, vs));
  CHECK(a.size() == b.size());
  CHECK(counters(counted, "log").sent == counters(single, "log").sent);
}

TEST_CASE("cockpit writes done: completions beyond the writes outstanding are ignored") {
  // Only the 8 writes handed out can complete: the 8 the completions free go out and stay
  // outstanding, and the rest of the queue waits for them (a count that ran on would mark writes
  // done that the host never completed and skip ahead).
  Harness h;
  SessionId v = 0;
  auto [st, first] = reliable_backlog(h, v, 20);
  h.relay.handle_writes_done(st, 100, h.now);
  auto next = written(h.take(), v);
  CHECK(next == std::vector<std::string>{"L9", "L10", "L11", "L12", "L13", "L14", "L15", "L16"});
  h.relay.handle_writes_done(st, 100, h.now);
  CHECK(written(h.take(), v) == std::vector<std::string>{"L17", "L18", "L19", "L20"});
  h.relay.handle_writes_done(st, 100, h.now);
  CHECK(h.take().empty());
  CHECK(counters(h, "log").sent == 20);
  // A stream that is none of the relay's, and a count of 0, change nothing.
  h.relay.handle_writes_done(st + 1000, 5, h.now);
  h.relay.handle_writes_done(st, 0, h.now);
  CHECK(h.take().empty());
}

TEST_CASE("cockpit writes done: a latest stream has one write, so any count completes one") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"cam"});
  h.take();
  std::vector<StreamId> writing;
  for (int i = 1; i <= 6; ++i) {
    h.robot_frame(r, "cam", i, "f" + std::to_string(i));
    for (auto& a : H::kind(h.take(), ActionKind::open_stream, v)) {
      h.relay.handle_stream_opened(a.stream, h.now);
      writing.push_back(a.stream);
    }
    h.take();
  }
  REQUIRE(writing.size() == kMaxLatestWritesInFlight);  // f5 was parked, then f6 over it
  h.relay.handle_writes_done(writing[0], 5, h.now);
  auto opens = H::kind(h.take(), ActionKind::open_stream, v);
  REQUIRE(opens.size() == 1);  // the parked frame goes, once
  h.relay.handle_stream_opened(opens[0].stream, h.now);
  CHECK(written(h.take(), v) == std::vector<std::string>{"f6"});
  h.relay.handle_writes_done(writing[0], 5, h.now);  // already done
  CHECK(h.take().empty());
}
