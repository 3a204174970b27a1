// Receiving without the time (Bus::handle_text_untimed): the WASM glue passes a text without
// reading its clock and passes it again with the time only when the bus asks (bench/README.md
// § bus, round 4). Two buses fed the same script, one always with the time and one untimed first,
// must send and report exactly the same; the untimed one must ask exactly for the texts whose
// handling reads the time (Bus::reads_time, a held channel's wake), and changing the time of the
// others must change nothing.
#include <catch2/catch.hpp>

#include "bus/json_out.hpp"
#include "harness.hpp"

using namespace bus_test;

namespace {

struct Step {
  std::string conn;
  std::string text;
  bool reads_time;  // what the untimed bus must answer
};

std::string dump(Bus& b) {
  std::string out;
  for (const auto& o : pump_all(b)) out += o.conn + " > " + o.text + "\n";
  for (const auto& e : drain_events(b)) {
    out += "event ";
    if (e.spans) {
      // A spans-only message event has no envelope: its kind, tag and parts stand for it.
      out += "message tag " + std::to_string(e.text_tag) + " id " +
             std::to_string(e.spans->id_span.begin) + "-" + std::to_string(e.spans->id_span.end) +
             " conn " + e.conn;
    } else {
      append_event_json(out, e, b);
    }
    out += "\n";
  }
  return out;
}

// A bus with peer "p" bound on c1, a command of ours waiting for its response and a history
// request of ours outstanding, so that confirmations and replays are live.
Bus ready(bool spans_only, std::string& command_id) {
  BusConfig c = config("me", /*handoffs=*/true);
  c.message_spans_only = spans_only;
  Bus b(std::move(c));
  b.handle_roster({"c1", "c2"}, 0);
  b.handle_connection_open("c1", 0);
  b.handle_connection_open("c2", 0);
  deliver(b, "c1",
          env("an0", MessageType::announce, ident("p"), std::nullopt,
              Json{{"skills", Json::array({"handoff-v1"})}}),
          0);
  auto cmd = b.send("p", MessageType::command, Json{{"run", "x"}}, std::nullopt, 1);
  REQUIRE(cmd.ok());
  command_id = cmd->envelope.id;
  REQUIRE(b.request_history("p", Json(5), 1).ok());
  pump_all(b);
  drain_events(b);
  return b;
}

std::vector<Step> script(const std::string& command_id) {
  const Identity p = ident("p");
  const auto text = [](const Envelope& e) { return serialize_envelope(e); };
  const Json inner =
      envelope_to_json(env("old1", MessageType::chat, ident("x"), std::nullopt, Json{{"t", 1}}));
  std::vector<Step> s = {
      {"c1", text(env("m1", MessageType::chat, p, std::nullopt, Json{{"text", "hi"}})), false},
      {"c1", text(env("m2", MessageType::command, p, std::string("me"), Json{{"run", "ls"}})),
       false},
      {"c1",
       text(env("m3", MessageType::command_response, p, std::string("me"),
                Json{{"requestId", command_id}, {"ok", true}, {"result", 1}})),
       false},
      {"c1", text(env("m4", MessageType::ack, p, std::string("me"), Json{{"messageId", "zz"}})),
       false},
      {"c1", text(env("m5", MessageType::ping, p, std::string("me"), Json{{"ts", 5}})), true},
      {"c1",
       text(env("m6", MessageType::announce, p, std::nullopt, Json{{"skills", Json::array()}})),
       true},
      {"c1",
       text(env("m7", MessageType::history_request, p, std::string("me"), Json{{"count", 2}})),
       true},
      {"c1", text(env("m8", MessageType::history_replay, p, std::string("me"), inner)), true},
      {"c1",
       text(env("m9", MessageType::handoff, p, std::string("me"),
                Json{{"request", "do it"}, {"expiresAt", 5000}})),
       true},
      {"c1", text(env("m10", MessageType::event, p, std::nullopt, Json{{"level", "info"}})), false},
      // Refusals: junk, a forged sender, another's direct, our own stream id.
      {"c1", "{not json", false},
      {"c2", text(env("m11", MessageType::chat, p, std::nullopt)), false},
      {"c1", text(env("m12", MessageType::chat, p, std::string("other"))), false},
      {"c2", text(env("m13", MessageType::chat, ident("me"), std::nullopt)), false},
      // The DOM path (an escape in a header string), of a type that reads no time and one that does.
      {"c1",
       R"({"v":1,"id":"m\u0031","type":"chat","from":{"streamId":"p","role":"agent","name":"Agent p","instanceId":"i1"},"ts":7,"payload":{"text":"dom"}})",
       false},
      {"c1",
       R"({"v":1,"id":"m\u0032","type":"ping","to":"me","from":{"streamId":"p","role":"agent","name":"Agent p","instanceId":"i1"},"ts":7,"payload":{}})",
       true},
      // A second sender on c2, then the same sender again (the admitted shortcut).
      {"c2", text(env("m14", MessageType::chat, ident("q"), std::nullopt, Json{{"text", "q"}})),
       false},
      {"c2", text(env("m15", MessageType::chat, ident("q"), std::nullopt, Json{{"text", "q2"}})),
       false},
  };
  return s;
}

}  // namespace

TEST_CASE("bus untimed: a text asks for the time exactly when its handling reads it") {
  for (bool spans_only : {false, true}) {
    CAPTURE(spans_only);
    std::string id_a, id_b;
    Bus timed = ready(spans_only, id_a);
    Bus untimed = ready(spans_only, id_b);
    REQUIRE(id_a == id_b);
    std::int64_t now = 2000;
    std::uint64_t tag = 0;
    for (const Step& st : script(id_a)) {
      CAPTURE(st.text);
      now += 37;  // a different time for every step: a text handled with a wrong one would show
      ++tag;
      const ByteView t(std::string_view(st.text));
      timed.handle_text(st.conn, t, now, tag);
      const bool done = untimed.handle_text_untimed(st.conn, t, tag);
      CHECK(done == !st.reads_time);
      if (!done) {
        // Nothing changed: nothing to send, nothing to report, until it comes with the time.
        CHECK(dump(untimed).empty());
        untimed.handle_text(st.conn, t, now, tag);
      }
      CHECK(dump(untimed) == dump(timed));
    }
  }
}

TEST_CASE("bus untimed: a held channel's first message asks for the time, then wakes it") {
  std::string id;
  Bus b = ready(true, id);
  b.handle_roster({"c2"}, 10);        // c1 leaves the room, its channel still open
  b.handle_roster({"c1", "c2"}, 20);  // back: held until it carries a message
  pump_all(b);
  drain_events(b);
  const std::string chat =
      serialize_envelope(env("h1", MessageType::chat, ident("p"), std::nullopt, Json{{"t", 1}}));
  const ByteView t{std::string_view(chat)};
  CHECK_FALSE(b.handle_text_untimed("c1", t, 1));
  CHECK(b.peer("c1")->open == false);  // still held: nothing was done
  b.handle_text("c1", t, 12345, 1);
  CHECK(b.peer("c1")->open);
  // Our announce on the wake carries the time we gave.
  auto offers = pump_all(b);
  auto announces = of_type(offers, MessageType::announce);
  REQUIRE(announces.size() == 1);
  CHECK(announces[0].ts == 12345);
  // Awake now: the next message needs no time.
  const std::string again =
      serialize_envelope(env("h2", MessageType::chat, ident("p"), std::nullopt, Json{{"t", 2}}));
  CHECK(b.handle_text_untimed("c1", ByteView(std::string_view(again)), 2));
}
