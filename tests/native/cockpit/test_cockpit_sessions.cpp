// Cockpit relay core: hellos, registration, auth, watch and subscriptions
// (cockpit-wire-protocol.md § Sessions and messages; v7 notes § Viewer session).
#include "cockpit_harness.hpp"

using namespace cockpit_test;
using H = Harness;

TEST_CASE("cockpit: a robot hello is welcomed by datagram, then the carrier opens with subs n=1") {
  Harness h;
  SessionId r = h.robot("r1");
  auto acts = h.take();
  REQUIRE(acts.size() == 4);
  CHECK(acts[3].kind == ActionKind::reset_stream);  // the one-shot hello stream is done
  acts.pop_back();
  CHECK(acts[0].kind == ActionKind::send_datagram);
  CHECK(std::string(ByteView(*acts[0].bytes).as_chars()) == R"({"t":"welcome","v":7})");
  CHECK(acts[1].kind == ActionKind::open_carrier);
  CHECK(acts[2].kind == ActionKind::write_carrier);
  auto ms = H::messages(acts, r);
  REQUIRE(ms.size() == 2);
  CHECK(to_json(ms[1]) == R"({"t":"subs","chs":[],"n":1})");
  // The carrier's @control frame is a real data frame.
  auto f = wire::decode_data_frame(ByteView(*acts[2].bytes));
  REQUIRE(f.ok());
  CHECK(f->header.ch == "@control");
  CHECK(f->header.delivery == wire::Delivery::reliable);
}

TEST_CASE("cockpit: a resent identical hello is answered again and opens no second carrier") {
  Harness h;
  SessionId r = h.robot("r1");
  h.take();
  h.robot_stream(r, control_data_frame(h.robot_hello("r1", demo_manifest())));
  auto acts = h.take();
  REQUIRE(acts.size() == 2);
  CHECK(acts[1].kind == ActionKind::reset_stream);
  CHECK(to_json(H::messages(acts, r)[0]) == R"({"t":"welcome","v":7})");
  CHECK(H::kind(acts, ActionKind::open_carrier).empty());
}

TEST_CASE("cockpit: a repeated hello that changes identity or manifest is hello_mismatch") {
  for (int variant = 0; variant < 2; ++variant) {
    Harness h;
    SessionId r = h.robot("r1");
    h.take();
    Json hello = h.robot_hello("r1", demo_manifest());
    if (variant == 0)
      hello["robot"]["name"] = "renamed";
    else
      hello["manifest"]["channels"][1]["maxHz"] = 5;
    h.robot_stream(r, control_data_frame(hello));
    auto acts = h.take();
    CHECK(H::errors(acts, r) == std::vector<std::string>{"hello_mismatch"});
    CHECK(H::closed(acts, r));
    CHECK(h.relay.session_count() == 0);
  }
}

TEST_CASE("cockpit: a second robot with a connected robot's id gets robot_id_conflict") {
  Harness h;
  SessionId a = h.robot("r1");
  SessionId b = h.robot("r1");
  auto acts = h.take();
  CHECK(H::errors(acts, b) == std::vector<std::string>{"robot_id_conflict"});
  CHECK(H::closed(acts, b));
  CHECK_FALSE(H::closed(acts, a));
  // Once the first leaves, the id is free again.
  h.relay.handle_session_closed(a, h.now);
  SessionId c = h.robot("r1");
  CHECK(H::errors(h.take(), c).empty());
}

TEST_CASE(
    "cockpit: hello checks answer hello_required, version_mismatch, role_mismatch, "
    "missing_robot_id, invalid_manifest, rtc_unavailable") {
  struct Case {
    std::string code;
    std::function<Json(Harness&)> hello;
  };
  std::vector<Case> cases = {
      {"hello_required", [](Harness&) { return J(R"({"t":"ping","n":1,"ts":0})"); }},
      {"version_mismatch",
       [](Harness& h) {
         Json m = h.robot_hello("r1", demo_manifest());
         m["v"] = 5;
         return m;
       }},
      {"role_mismatch",
       [](Harness& h) {
         Json m = h.robot_hello("r1", demo_manifest());
         m["role"] = "viewer";
         return m;
       }},
      {"missing_robot_id",
       [](Harness& h) {
         Json m = h.robot_hello("r1", demo_manifest());
         m["robot"].erase("id");
         return m;
       }},
      {"invalid_manifest",
       [](Harness& h) {
         return h.robot_hello("r1", J(R"({"version":1,"channels":[{"ch":"@x","encoding":"a"}]})"));
       }},
      {"rtc_unavailable",
       [](Harness& h) {
         return h.robot_hello(
             "r1", J(R"({"version":1,"channels":[{"ch":"v","encoding":"video.webrtc.v1"}]})"));
       }},
  };
  for (auto& c : cases) {
    INFO(c.code);
    Harness h;
    SessionId r = h.robot_session();
    h.robot_stream(r, control_data_frame(c.hello(h)));
    auto acts = h.take();
    CHECK(H::errors(acts, r) == std::vector<std::string>{c.code});
    CHECK(H::closed(acts, r));
    CHECK(H::kind(acts, ActionKind::open_carrier).empty());
  }
}

TEST_CASE("cockpit: channel data before the hello is hello_required, early datagrams are dropped") {
  Harness h;
  SessionId r = h.robot_session();
  h.robot_datagram(r, J(R"({"t":"ping","n":1,"ts":0})"));
  CHECK(h.take().empty());
  h.robot_frame(r, "cam", 1, "x");
  auto acts = h.take();
  CHECK(H::errors(acts, r) == std::vector<std::string>{"hello_required"});
  CHECK(H::closed(acts, r));
}

TEST_CASE("cockpit: with an SFU configured, a track channel registers") {
  RelayConfig c;
  c.sfu = true;
  Harness h(c);
  SessionId r = h.robot_session();
  h.robot_stream(
      r, control_data_frame(h.robot_hello(
             "r1", J(R"({"version":1,"channels":[{"ch":"v","encoding":"video.webrtc.v1"}]})"))));
  CHECK(H::errors(h.take(), r).empty());
}

TEST_CASE("cockpit: auth file tokens gate both roles, auth_failed is terminal") {
  auto table = AuthTable::parse(ByteView(std::string_view(
      R"({"tokens":[{"token":"robot-token-0123456789","roles":["robot"]},
                    {"token":"viewer-token-0123456789","roles":["viewer"],"scopes":["arm"]}]})")));
  REQUIRE(table.ok());
  RelayConfig c;
  c.auth = table.value();
  Harness h(c);
  SessionId bad = h.robot("r1", demo_manifest(), std::string("viewer-token-0123456789"));
  auto acts = h.take();
  CHECK(H::errors(acts, bad) == std::vector<std::string>{"auth_failed"});
  CHECK(H::closed(acts, bad));
  CHECK(wire::error_info(wire::ErrorCode::auth_failed).final_for_client);
  SessionId none = h.robot("r1");
  CHECK(H::errors(h.take(), none) == std::vector<std::string>{"auth_failed"});
  SessionId good = h.robot("r1", demo_manifest(), std::string("robot-token-0123456789"));
  CHECK(H::errors(h.take(), good).empty());
  SessionId v_bad = h.viewer(std::string("nope-nope-nope-nope-nope"));
  CHECK(H::errors(h.take(), v_bad) == std::vector<std::string>{"auth_failed"});
  SessionId v = h.viewer(std::string("viewer-token-0123456789"));
  auto va = h.take();
  CHECK(H::errors(va, v).empty());
  CHECK(H::of_type(H::messages(va, v), "welcome").size() == 1);
}

TEST_CASE("cockpit: auth files with mistakes are refused with a reason") {
  for (const char* bad :
       {"[]", "{\"tokens\":{}}", R"({"tokens":[{"token":"short"}]})",
        R"({"tokens":[{"token":"0123456789abcdefg","roles":["admin"]}]})",
        R"({"tokens":[{"token":"0123456789abcdefg"},{"token":"0123456789abcdefg"}]})",
        R"({"tokens":[{"token":"0123456789abcdefg","extra":1}]})", "{"}) {
    INFO(bad);
    auto t = AuthTable::parse(ByteView(std::string_view(bad)));
    REQUIRE_FALSE(t.ok());
    CHECK_FALSE(t.error().empty());
  }
}

TEST_CASE("cockpit: a viewer gets welcome and robots, and robots pushes on every change") {
  Harness h;
  SessionId v = h.viewer();
  auto acts = h.take();
  auto ms = H::messages(acts, v);
  REQUIRE(ms.size() == 2);
  CHECK(to_json(ms[0]) == R"({"t":"welcome","v":7})");
  CHECK(to_json(ms[1]) == R"({"t":"robots","robots":[]})");
  SessionId r = h.robot("r1");
  ms = H::messages(h.take(), v);
  REQUIRE(ms.size() == 1);
  CHECK(to_json(ms[0]) ==
        R"({"t":"robots","robots":[{"id":"r1","name":"Robot r1","model":"sim"}]})");
  h.relay.handle_session_closed(r, h.now);
  ms = H::messages(h.take(), v);
  REQUIRE(ms.size() == 1);
  CHECK(to_json(ms[0]) == R"({"t":"robots","robots":[]})");
}

TEST_CASE("cockpit: watch answers manifest, unknown_robot for a robot that is not connected") {
  Harness h;
  h.robot("r1");
  SessionId v = h.viewer();
  h.take();
  h.viewer_send(v, J(R"({"t":"watch","robotId":"nobody"})"));
  CHECK(H::errors(h.take(), v) == std::vector<std::string>{"unknown_robot"});
  h.viewer_send(v, J(R"({"t":"watch","robotId":"r1"})"));
  auto ms = H::messages(h.take(), v);
  REQUIRE(ms.size() == 1);
  CHECK(ms[0]["t"] == "manifest");
  CHECK(ms[0]["robotId"] == "r1");
  CHECK(ms[0]["manifest"]["channels"].size() == 6);
  CHECK(ms[0]["manifest"]["channels"][0]["dir"] == "rx");  // the normal form
}

TEST_CASE("cockpit: sub and unsub send full subs snapshots with a monotonic n") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v1 = h.watcher("r1");
  SessionId v2 = h.watcher("r1");
  h.take();
  h.viewer_send(v1, J(R"({"t":"sub","ch":"cam"})"));
  h.viewer_send(v2, J(R"({"t":"sub","ch":"log"})"));
  h.viewer_send(v2, J(R"({"t":"sub","ch":"cam"})"));    // already wanted: no new snapshot
  h.viewer_send(v1, J(R"({"t":"unsub","ch":"cam"})"));  // v2 still wants it: none
  h.viewer_send(v2, J(R"({"t":"unsub","ch":"cam"})"));
  auto subs = H::of_type(H::messages(h.take(), r), "subs");
  REQUIRE(subs.size() == 3);
  CHECK(to_json(subs[0]) == R"({"t":"subs","chs":["cam"],"n":2})");
  CHECK(to_json(subs[1]) == R"({"t":"subs","chs":["cam","log"],"n":3})");
  CHECK(to_json(subs[2]) == R"({"t":"subs","chs":["log"],"n":4})");
}

TEST_CASE("cockpit: no_watch, unknown_channel (undeclared or tx) and unknown_robot on sub") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.viewer();
  h.take();
  h.viewer_send(v, J(R"({"t":"sub","ch":"cam"})"));
  h.viewer_send(v, J(R"({"t":"unsub","ch":"cam"})"));
  CHECK(H::errors(h.take(), v) == std::vector<std::string>{"no_watch", "no_watch"});
  h.viewer_send(v, J(R"({"t":"watch","robotId":"r1"})"));
  h.viewer_send(v, J(R"({"t":"sub","ch":"nope"})"));
  h.viewer_send(v, J(R"({"t":"sub","ch":"say"})"));
  h.viewer_send(v, J(R"({"t":"unsub","ch":"nope"})"));
  CHECK(H::errors(h.take(), v) ==
        std::vector<std::string>{"unknown_channel", "unknown_channel", "unknown_channel"});
  h.relay.handle_session_closed(r, h.now);
  h.take();
  h.viewer_send(v, J(R"({"t":"sub","ch":"cam"})"));
  CHECK(H::errors(h.take(), v) == std::vector<std::string>{"unknown_robot"});
}

TEST_CASE("cockpit: watching another robot drops the old subscriptions") {
  Harness h;
  SessionId a = h.robot("a");
  SessionId b = h.robot("b");
  SessionId v = h.watcher("a", {"cam", "log"});
  h.take();
  h.viewer_send(v, J(R"({"t":"watch","robotId":"b"})"));
  auto acts = h.take();
  auto subs_a = H::of_type(H::messages(acts, a), "subs");
  REQUIRE(subs_a.size() == 1);
  CHECK(subs_a[0]["chs"] == Json::array());
  CHECK(H::of_type(H::messages(acts, b), "subs").empty());
  h.robot_frame(a, "cam", 1, "x");
  CHECK(H::kind(h.take(), ActionKind::open_stream).empty());
}

TEST_CASE("cockpit: a robot that returns is re-baselined with what its viewers still want") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"cam"});
  h.take();
  h.relay.handle_session_closed(r, h.now);
  auto acts = h.take();
  // The watcher learns the robot left: manifest without a manifest.
  auto man = H::of_type(H::messages(acts, v), "manifest");
  REQUIRE(man.size() == 1);
  CHECK_FALSE(man[0].contains("manifest"));
  SessionId r2 = h.robot("r1");
  acts = h.take();
  auto subs = H::of_type(H::messages(acts, r2), "subs");
  REQUIRE(subs.size() == 1);
  CHECK(to_json(subs[0]) == R"({"t":"subs","chs":["cam"],"n":1})");
  CHECK(H::of_type(H::messages(acts, v), "manifest").size() == 1);
}

TEST_CASE("cockpit: invalid messages are dropped with invalid_control and the session lives") {
  Harness h;
  SessionId v = h.viewer();
  h.take();
  h.viewer_send(v, J(R"({"t":"watch"})"));
  h.viewer_send(v, J(R"({"t":"subs","chs":[],"n":1})"));  // relay-only type
  Bytes junk = {3, 0, 0, 0, '{', '{', '}'};
  h.relay.handle_control_data(v, ByteView(junk), h.now);
  auto acts = h.take();
  CHECK(H::errors(acts, v) ==
        std::vector<std::string>{"invalid_control", "invalid_control", "invalid_control"});
  CHECK_FALSE(H::closed(acts, v));
  h.viewer_send(v, J(R"({"t":"ping","n":3,"ts":2})"));
  CHECK(to_json(H::messages(h.take(), v)[0]) == R"({"t":"pong","n":3,"ts":2})");
}

TEST_CASE("cockpit: a control frame over 64 KiB is control_too_large and ends the session") {
  Harness h;
  SessionId v = h.viewer();
  h.take();
  Bytes prefix;
  append_u32_le(prefix, 64 * 1024 + 1);
  h.relay.handle_control_data(v, ByteView(prefix), h.now);
  auto acts = h.take();
  CHECK(H::errors(acts, v) == std::vector<std::string>{"control_too_large"});
  CHECK(H::closed(acts, v));
}

TEST_CASE("cockpit: a viewer's first message must be hello") {
  Harness h;
  SessionId v = h.viewer_session();
  h.viewer_send(v, J(R"({"t":"watch","robotId":"r1"})"));
  auto acts = h.take();
  CHECK(H::errors(acts, v) == std::vector<std::string>{"hello_required"});
  CHECK(H::closed(acts, v));
}

TEST_CASE("cockpit: a carrier failure fails the robot session with carrier_failed") {
  Harness h;
  SessionId r = h.robot("r1");
  const StreamId carrier = H::kind(h.take(), ActionKind::open_carrier, r).at(0).stream;
  SessionId v = h.viewer();
  h.take();
  h.relay.handle_stream_failed(carrier, h.now);
  auto acts = h.take();
  CHECK(H::errors(acts, r) == std::vector<std::string>{"carrier_failed"});
  CHECK(H::closed(acts, r));
  CHECK(to_json(H::of_type(H::messages(acts, v), "robots")[0]) == R"({"t":"robots","robots":[]})");
}

// How a test answers carrier writes: never, each with write_done, or a viewer's 8 at once with
// one counted writes_done.
enum class Drain { none, each, counted };

// Fills a robot's carrier with 32 KiB publishes from `viewers` viewers (8 each, the pending
// limit), answering its writes as `drain` says.
static std::vector<CockpitAction> fill_carrier(Harness& h, SessionId r, int viewers, Drain drain) {
  const std::string value(wire::kMaxPublishBytes, 'v');
  std::vector<CockpitAction> all;
  for (int i = 0; i < viewers; ++i) {
    SessionId v = h.watcher("r1");
    StreamId carrier = 0;
    std::size_t unanswered = 0;
    for (int k = 0; k < int(kMaxPendingPublishes); ++k) {
      h.viewer_publish(v, "say", "p" + std::to_string(k), value);
      for (auto& a : h.take()) {
        if (a.kind == ActionKind::write_carrier && a.session == r) {
          carrier = a.stream;
          ++unanswered;
          if (drain == Drain::each) h.relay.handle_write_done(a.stream, h.now);
        }
        all.push_back(std::move(a));
      }
    }
    if (drain == Drain::counted && carrier) h.relay.handle_writes_done(carrier, unanswered, h.now);
  }
  return all;
}

TEST_CASE("cockpit: a carrier whose unfinished writes pass 32 MiB fails with carrier_failed") {
  // 128 viewers x 8 pending publishes x 32 KiB = 32 MiB of payload; with their headers the last
  // one passes the cap. The host never reports a write done, as a robot that stopped reading.
  Harness h;
  SessionId r = h.robot("r1");
  h.take();
  auto acts = fill_carrier(h, r, 128, Drain::none);
  CHECK(H::errors(acts, r) == std::vector<std::string>{"carrier_failed"});
  CHECK(H::closed(acts, r));
  // The same load with every write completing never fails, whether each completion is reported
  // alone or a viewer's eight in one counted writes_done.
  for (Drain d : {Drain::each, Drain::counted}) {
    Harness h2;
    SessionId r2 = h2.robot("r1");
    h2.take();
    auto acts2 = fill_carrier(h2, r2, 128, d);
    CHECK(H::errors(acts2, r2).empty());
    CHECK_FALSE(H::closed(acts2, r2));
  }
}

TEST_CASE("cockpit: corrupt framing on a robot stream kills only that stream") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"cam"});
  h.take();
  StreamId st = h.relay.handle_incoming_open(r, h.now);
  Bytes bad;
  append_u32_le(bad, 70 * 1024);  // header over 64 KiB
  append_u32_le(bad, 1);
  h.relay.handle_incoming_data(st, ByteView(bad), h.now);
  auto acts = h.take();
  auto resets = H::kind(acts, ActionKind::reset_stream, r);
  REQUIRE(resets.size() == 1);
  CHECK(resets[0].stream == st);
  CHECK_FALSE(H::closed(acts, r));
  h.robot_frame(r, "cam", 1, "jpeg");
  CHECK(H::kind(h.take(), ActionKind::open_stream, v).size() == 1);
}

TEST_CASE("cockpit: robot pings are answered with pong datagrams") {
  Harness h;
  SessionId r = h.robot("r1");
  h.take();
  h.robot_datagram(r, J(R"({"t":"ping","n":9,"ts":1.25})"));
  auto acts = h.take();
  REQUIRE(acts.size() == 1);
  CHECK(acts[0].kind == ActionKind::send_datagram);
  CHECK(std::string(ByteView(*acts[0].bytes).as_chars()) == R"({"t":"pong","n":9,"ts":1.25})");
}

TEST_CASE("cockpit: over a WebSocket, replies are @control data frames") {
  Harness h;
  SessionId r = h.relay.handle_session_open(Role::robot, Lane::websocket, h.now);
  Bytes hello = control_data_frame(h.robot_hello("ws1", demo_manifest()));
  h.relay.handle_ws_message(r, ByteView(hello), h.now);
  auto acts = h.take();
  REQUIRE(acts.size() == 3);
  auto f = wire::decode_data_frame(ByteView(*acts[0].bytes));
  REQUIRE(f.ok());
  CHECK(f->header.ch == "@control");
  CHECK(std::string(f->payload.as_chars()) == R"({"t":"welcome","v":7})");
  SessionId v = h.relay.handle_session_open(Role::viewer, Lane::websocket, h.now);
  Bytes vh = control_data_frame(J(R"({"t":"hello","v":7,"role":"viewer"})"));
  h.relay.handle_ws_message(v, ByteView(vh), h.now);
  acts = h.take();
  REQUIRE(H::kind(acts, ActionKind::write_control, v).size() == 2);
  auto w = wire::decode_data_frame(ByteView(*acts[0].bytes));
  REQUIRE(w.ok());
  CHECK(std::string(w->payload.as_chars()) == R"({"t":"welcome","v":7})");
  Bytes junk = {1, 2, 3};
  h.relay.handle_ws_message(v, ByteView(junk), h.now);
  acts = h.take();
  CHECK_FALSE(H::closed(acts, v));
  REQUIRE(H::kind(acts, ActionKind::write_control, v).size() == 1);
}

TEST_CASE("cockpit: /api/stats lists robots, channels and counters") {
  Harness h;
  SessionId r = h.robot("r1");
  h.watcher("r1", {"cam"});
  h.robot_frame(r, "cam", 1, "x");
  Json s = h.relay.stats();
  CHECK(s["version"] == 7);
  CHECK(s["viewers"] == 1);
  REQUIRE(s["robots"].size() == 1);
  CHECK(s["robots"][0]["id"] == "r1");
  CHECK(s["robots"][0]["subs"] == J(R"(["cam"])"));
  CHECK(s["robots"][0]["channels"].contains("cam"));
}

TEST_CASE("cockpit: error datagrams to a robot stay under the datagram size, cut on a code point") {
  Harness h;
  SessionId r = h.robot_session();
  Json m = h.robot_hello("r1", demo_manifest());
  // A manifest error whose path holds a long multi-byte channel id.
  std::string id;
  for (int i = 0; i < 64; ++i) id += "\xc3\xa9";  // é, 2 bytes each
  Json bad = demo_manifest();
  bad["panels"][0]["channels"][0] = id;
  h.robot_stream(r, control_data_frame(h.robot_hello("r1", bad)));
  auto acts = h.take();
  auto dg = H::kind(acts, ActionKind::send_datagram, r);
  REQUIRE(dg.size() == 1);
  CHECK(dg[0].bytes->size() < 1211);
  CHECK(H::errors(acts, r) == std::vector<std::string>{"invalid_manifest"});
  (void)m;
}

TEST_CASE(
    "cockpit: a frame that closes its session mid-chunk leaves the rest of the chunk unread") {
  // Found by fuzz_cockpit_relay: hello_mismatch closed the session while its stream's decoder was
  // still walking the chunk.
  Harness h;
  SessionId r = h.robot("r1");
  h.take();
  Json changed = h.robot_hello("r1", demo_manifest());
  changed["robot"]["model"] = "other";
  Bytes chunk = control_data_frame(changed);
  const Bytes more = data_frame("cam", 1, "after");
  chunk.insert(chunk.end(), more.begin(), more.end());
  StreamId st = h.relay.handle_incoming_open(r, h.now);
  h.relay.handle_incoming_data(st, ByteView(chunk), h.now);
  h.relay.handle_incoming_end(st, h.now);
  auto acts = h.take();
  CHECK(H::errors(acts, r) == std::vector<std::string>{"hello_mismatch"});
  CHECK(H::closed(acts, r));
  CHECK(h.relay.session_count() == 0);
}

TEST_CASE("cockpit: a one-shot stream is stopped once its frame is in, extra frames are dropped") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1", {"cam"});
  h.take();
  Bytes two = data_frame("cam", 1, "one");
  const Bytes second = data_frame("cam", 2, "two");
  two.insert(two.end(), second.begin(), second.end());
  StreamId st = h.relay.handle_incoming_open(r, h.now);
  h.relay.handle_incoming_data(st, ByteView(two.data(), 5),
                               h.now);  // a partial frame: keep reading
  CHECK(H::kind(h.take(), ActionKind::reset_stream, r).empty());
  h.relay.handle_incoming_data(st, ByteView(two.data() + 5, two.size() - 5), h.now);
  auto acts = h.take();
  auto resets = H::kind(acts, ActionKind::reset_stream, r);
  REQUIRE(resets.size() == 1);
  CHECK(resets[0].stream == st);
  CHECK(H::kind(acts, ActionKind::open_stream, v).size() == 1);
  CHECK(h.relay.stats()["dropped"]["extra_frame_on_one_shot_stream"] == 1);
}
