// Payloads the bus never reads stay the text the scanner validated (Envelope::payload_text,
// bus_reads_payload): they must reach the message event byte for byte as received, and history
// replay must still write exactly the canonical bytes it wrote when every payload was a DOM
// (agent-bus-notes.md § The envelope; agent-bus-and-swarm.md § Delivery semantics). Types the bus
// reads (announce, ack, handoff, history_*) keep the DOM and keep working.
#include <catch2/catch.hpp>

#include "bus/json_out.hpp"
#include "harness.hpp"

using namespace bus_test;

namespace {

const std::string kFromA =
    R"("from":{"streamId":"A","role":"agent","name":"Agent A","instanceId":"i1"})";

// A payload as a sender may write it: whitespace, a \u escape, a trailing-zero fraction, a
// non-ASCII string, a duplicate key. Its canonical form differs in every one of those bytes.
const std::string kOddPayload =
    R"({ "text" : "h\u0069 \u00e9t\u00e9 😀", "n" : 1.50, "list" : [ 1 , true , null ], "k":1, "k":2 })";

std::string envelope_text(const std::string& id, const std::string& type, const std::string& to,
                          const std::string& payload) {
  return R"({"v":1,"id":")" + id + R"(","type":")" + type + R"(",)" + kFromA + R"(,"to":)" + to +
         R"(,"topic":null,"ts":1000,"payload":)" + payload + "}";
}

// The canonical bytes the DOM path gives for the same text: what every serialiser wrote before
// payloads could be kept as text.
std::string canonical_via_dom(const std::string& text) {
  auto e = parse_envelope_dom(ByteView(std::string_view(text)));
  REQUIRE(e.ok());
  return serialize_envelope(e.value());
}

std::string event_text(const Event& ev, const Bus& b) {
  std::string out;
  append_event_json(out, ev, b);
  return out;
}

}  // namespace

TEST_CASE("bus payload: unread types keep the scanned text, read types keep the DOM") {
  for (const char* type : {"chat", "file_chunk", "event", "command", "swarm_have"}) {
    const std::string text = envelope_text("m1", type, "null", kOddPayload);
    ParseInfo info;
    auto lazy =
        parse_envelope(ByteView(std::string_view(text)), &info, PayloadForm::text_unless_read);
    REQUIRE(lazy.ok());
    CHECK(lazy->payload_text == kOddPayload);
    CHECK(info.scanned);
    CHECK(info.raw_payload == kOddPayload);
    CHECK(lazy->payload.is_null());
    auto dom = parse_envelope(ByteView(std::string_view(text)));
    REQUIRE(dom.ok());
    CHECK(dom->payload_text.empty());
    // Same values, same canonical bytes, whichever form holds the payload.
    CHECK(lazy->payload_value() == dom->payload);
    CHECK(envelope_to_json(lazy.value()) == envelope_to_json(dom.value()));
    CHECK(serialize_envelope(lazy.value()) == serialize_envelope(dom.value()));
    CHECK(serialize_envelope(lazy.value()) == canonical_via_dom(text));
    CHECK(encode_envelope(lazy.value()).value() == encode_envelope(dom.value()).value());
    // As received: the canonical header with the payload verbatim.
    std::string as_received;
    append_envelope_as_received(as_received, lazy.value());
    CHECK(as_received == envelope_text("m1", type, "null", kOddPayload));
    Json scratch;
    CHECK(&lazy->payload_dom(scratch) == &scratch);
    CHECK(&dom->payload_dom(scratch) == &dom->payload);  // a DOM is never copied
  }
  for (const char* type : {"announce", "ack", "command_response", "handoff", "history_request",
                           "history_replay", "skill_update"}) {
    const std::string text = envelope_text("m1", type, "null", kOddPayload);
    auto e =
        parse_envelope(ByteView(std::string_view(text)), nullptr, PayloadForm::text_unless_read);
    REQUIRE(e.ok());
    CHECK(e->payload_text.empty());
    CHECK(e->payload == Json{{"text", "hi été 😀"},
                             {"n", 1.5},
                             {"list", Json::array({1, true, nullptr})},
                             {"k", 2}});
  }
  // No payload, or one the scanner leaves to the DOM path (an exponent): nothing kept as text.
  auto none = parse_envelope(
      ByteView(std::string_view(R"({"v":1,"id":"x","type":"chat",)" + kFromA + R"(,"ts":1})")),
      nullptr, PayloadForm::text_unless_read);
  REQUIRE(none.ok());
  CHECK(none->payload_text.empty());
  CHECK(none->payload.is_null());
  const std::string exp = envelope_text("x", "chat", "null", R"({"n":1e2})");
  ParseInfo info;
  auto dom_path =
      parse_envelope(ByteView(std::string_view(exp)), &info, PayloadForm::text_unless_read);
  REQUIRE(dom_path.ok());
  CHECK(!info.scanned);
  CHECK(dom_path->payload_text.empty());
  CHECK(dom_path->payload == Json{{"n", 100}});
}

TEST_CASE("bus payload: a received chat, event and file_chunk reach the event text byte for byte") {
  Bus me(config("me"));
  me.handle_connection_open("ca", 0);
  pump_all(me);
  drain_events(me);
  for (const char* type : {"chat", "event", "file_chunk"}) {
    const std::string text = envelope_text(std::string("id-") + type, type, R"("me")", kOddPayload);
    me.handle_text("ca", ByteView(std::string_view(text)), 1000);
    auto msgs = events_of(drain_events(me), EventKind::message);
    REQUIRE(msgs.size() == 1);
    const Event& ev = msgs[0];
    CHECK(ev.envelope->payload_text == kOddPayload);
    CHECK(ev.envelope->payload.is_null());
    CHECK(ev.payload_text.empty());  // not a second copy
    CHECK(event_text(ev, me) ==
          R"({"kind":"message","envelope":)" + text + R"(,"peer":"ca","replayed":false})");
    // The values an app reads are the DOM path's.
    CHECK(ev.envelope->payload_value() ==
          parse_envelope_dom(ByteView(std::string_view(text)))->payload);
  }
  // Kept in history as text (file_chunk is transient: never kept), still the canonical bytes.
  auto kept = me.history(200, "");
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].payload_text == kOddPayload);
  CHECK(serialize_envelope(kept[0]) ==
        canonical_via_dom(envelope_text("id-chat", "chat", R"("me")", kOddPayload)));
  CHECK(serialize_envelope(kept[1]) ==
        canonical_via_dom(envelope_text("id-event", "event", R"("me")", kOddPayload)));
}

TEST_CASE(
    "bus payload: a payload kept as text replays with the canonical bytes and arrives with the "
    "same values") {
  Bus hub(config("hub"));
  Bus a(config("A"));
  hub.handle_connection_open("ca", 0);
  a.handle_connection_open("chub", 0);
  // Each side learns the other's stream from its announce.
  auto exchange = [&](std::int64_t now) {
    std::vector<std::string> to_hub, to_a;
    pump(a, [&](const std::string&, const std::string& t) { return to_hub.push_back(t), true; });
    pump(hub, [&](const std::string& c, const std::string& t) {
      return c == "ca" ? (to_a.push_back(t), true) : false;
    });
    for (const auto& t : to_hub) hub.handle_text("ca", ByteView(std::string_view(t)), now);
    for (const auto& t : to_a) a.handle_text("chub", ByteView(std::string_view(t)), now);
    return to_a;
  };
  exchange(0);
  const std::string chat =
      R"({"v":1,"id":"b1","type":"chat","from":{"streamId":"B","role":"agent","name":"Agent B","instanceId":"i1"},"to":null,"topic":"t","ts":900,"payload":)" +
      kOddPayload + "}";
  hub.handle_connection_open("cb", 0);
  pump_all(hub);
  hub.handle_text("cb", ByteView(std::string_view(chat)), 900);
  drain_events(hub);
  REQUIRE(hub.history(200, "A").size() == 1);
  CHECK(hub.history(200, "A")[0].payload_text == kOddPayload);

  // A asks the hub; the hub's replay carries the entry exactly as the DOM path would write it.
  drain_events(a);
  REQUIRE(a.request_history("hub", Json(10), 1000).ok());
  exchange(1000);  // the request reaches the hub
  std::vector<std::string> replays;
  for (const auto& t : exchange(1000))  // and its replay reaches A
    if (parsed(t).type == MessageType::history_replay) replays.push_back(t);
  REQUIRE(replays.size() == 1);
  const std::string canonical = canonical_via_dom(chat);
  // One replay for the one message, its payload the original envelope (agent-bus-notes.md).
  CHECK(replays[0].size() > canonical.size());
  CHECK(replays[0].substr(replays[0].size() - canonical.size() - 11) ==
        R"("payload":)" + canonical + "}");
  auto msgs = events_of(drain_events(a), EventKind::message);
  REQUIRE(msgs.size() == 1);
  CHECK(msgs[0].replayed);
  CHECK(msgs[0].envelope->id == "b1");
  CHECK(serialize_envelope(*msgs[0].envelope) == canonical);
  CHECK(msgs[0].envelope->payload_value() ==
        parse_envelope_dom(ByteView(std::string_view(chat)))->payload);
}

TEST_CASE("bus payload: the types the bus reads still act on their payloads") {
  Bus me(config("me", /*handoffs=*/true));
  me.handle_connection_open("ca", 0);
  pump_all(me);
  drain_events(me);
  // announce: skills are read (handoff-v1 makes the peer a handoff target).
  me.handle_text("ca",
                 ByteView(std::string_view(envelope_text("a0", "announce", "null",
                                                         R"({ "skills" : [ "handoff-v1" ] })"))),
                 1000);
  REQUIRE(me.peer("ca"));
  CHECK(me.peer("ca")->handoff);
  CHECK(me.peer("ca")->announce == Json{{"skills", Json::array({"handoff-v1"})}});
  // ack: correlated with what we sent by messageId.
  auto sent = me.send("A", MessageType::command, Json{{"run", "make"}}, std::nullopt, 1000);
  REQUIRE(sent.ok());
  pump_all(me);
  drain_events(me);
  me.handle_text(
      "ca",
      ByteView(std::string_view(envelope_text(
          "k1", "ack", R"("me")", R"({ "messageId" : ")" + sent->envelope.id + R"(" })"))),
      1000);
  auto evs = drain_events(me);
  auto conf = events_of(evs, EventKind::confirmation);
  REQUIRE(conf.size() == 1);
  CHECK(conf[0].message_id == sent->envelope.id);
  CHECK(conf[0].for_type == MessageType::command);
  auto acks = events_of(evs, EventKind::message);
  REQUIRE(acks.size() == 1);
  CHECK(acks[0].envelope->payload_text.empty());
  // The event still hands on the text as received, from the DOM envelope's side copy.
  CHECK(event_text(acks[0], me).find(R"("payload":{ "messageId" : ")") != std::string::npos);
  // handoff: checked and delivered with its request and expiry.
  me.handle_text("ca",
                 ByteView(std::string_view(envelope_text(
                     "h1", "handoff", R"("me")", R"({"request":"review","expiresAt":5000})"))),
                 1000);
  auto handoffs = events_of(drain_events(me), EventKind::handoff);
  REQUIRE(handoffs.size() == 1);
  CHECK(event_json(handoffs[0], me)["request"] == "review");
  CHECK(event_json(handoffs[0], me)["expiresAt"] == 5000);
  REQUIRE(me.confirm_handoff(handoffs[0].key, 1001).ok());
  // history_request: the count is read (1 entry asked, 1 replayed).
  REQUIRE(me.broadcast(MessageType::chat, Json{{"text", "one"}}, std::nullopt, 1002).ok());
  REQUIRE(me.broadcast(MessageType::chat, Json{{"text", "two"}}, std::nullopt, 1003).ok());
  pump_all(me);
  me.handle_text("ca",
                 ByteView(std::string_view(
                     envelope_text("q1", "history_request", R"("me")", R"({ "count" : 1 })"))),
                 1004);
  auto replays = of_type(pump_all(me), MessageType::history_replay);
  REQUIRE(replays.size() == 1);
  CHECK(replays[0].payload["payload"]["text"] == "two");
}

namespace {

// The text between UTF-16 offsets [begin, end) of UTF-8 text, as String.prototype.slice cuts it.
std::string slice16(const std::string& text, std::uint32_t begin, std::uint32_t end) {
  std::size_t byte = 0, unit = 0, from = std::string::npos;
  while (byte <= text.size()) {
    if (unit == begin && from == std::string::npos) from = byte;
    if (unit == end) return text.substr(from, byte - from);
    if (byte == text.size()) break;
    const auto c = static_cast<unsigned char>(text[byte]);
    const std::size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    byte += len;
    unit += len == 4 ? 2 : 1;
  }
  FAIL("span past the text");
  return {};
}

// What a JavaScript host does with a spans-only message event: the header from slices of its own
// text, the payload from the tape (or JSON.parse of the payload's span when there is none).
Json read_spans(const std::string& text, const Event& ev) {
  REQUIRE(ev.spans);
  const ScannedEnvelope& v = *ev.spans;
  auto str = [&](Span s) { return slice16(text, s.begin, s.end); };
  auto parse = [](const std::string& t) {
    JsonParse p = parse_json(ByteView(std::string_view(t)));
    REQUIRE(p.ok());
    return p.value;
  };
  Json payload;
  if (v.payload_span.end == v.payload_span.begin) {
    payload = nullptr;
  } else if (ev.tape.empty()) {
    payload = parse(str(v.payload_span));
  } else {
    std::vector<Json> stack;
    std::vector<std::string> keys;
    std::optional<Json> done;
    auto put = [&](Json value) {
      if (stack.empty())
        done = std::move(value);
      else if (stack.back().is_array())
        stack.back().push_back(std::move(value));
      else {
        stack.back()[keys.back()] = std::move(value);
        keys.pop_back();
      }
    };
    for (std::size_t i = 0; i < ev.tape.size(); i += 3) {
      const auto kind = TapeKind(ev.tape[i]);
      const Span s{ev.tape[i + 1], ev.tape[i + 2]};
      switch (kind) {
        case TapeKind::object_begin: stack.push_back(Json::object()); break;
        case TapeKind::array_begin: stack.push_back(Json::array()); break;
        case TapeKind::object_end:
        case TapeKind::array_end: {
          Json v2 = std::move(stack.back());
          stack.pop_back();
          put(std::move(v2));
          break;
        }
        case TapeKind::key: keys.push_back(str(s)); break;
        case TapeKind::key_escaped:
          keys.push_back(parse(slice16(text, s.begin - 1, s.end + 1)).get<std::string>());
          break;
        case TapeKind::string: put(str(s)); break;
        case TapeKind::string_escaped: put(parse(slice16(text, s.begin - 1, s.end + 1))); break;
        case TapeKind::number: put(parse(str(s))); break;
        case TapeKind::true_value: put(true); break;
        case TapeKind::false_value: put(false); break;
        case TapeKind::null_value: put(nullptr); break;
      }
    }
    REQUIRE(done);
    payload = *done;
  }
  return Json{{"v", 1},
              {"id", str(v.id_span)},
              {"type", std::string(message_type_name(v.type))},
              {"from",
               {{"streamId", str(v.stream_id_span)},
                {"role", str(v.role_span)},
                {"name", str(v.name_span)},
                {"instanceId", str(v.instance_id_span)}}},
              {"to", v.to_span ? Json(str(*v.to_span)) : Json(nullptr)},
              {"topic", v.topic_span ? Json(str(*v.topic_span)) : Json(nullptr)},
              {"ts", v.ts},
              {"payload", payload}};
}

// A bus as the WASM glue drives it (message_spans_only), its connection "ca" open.
Bus spans_only_bus() {
  BusConfig c = config("me");
  c.message_spans_only = true;
  Bus me(c);
  me.handle_connection_open("ca", 0);
  pump_all(me);
  drain_events(me);
  return me;
}

}  // namespace

TEST_CASE(
    "bus payload: with message_spans_only a scanned message is read from the host's own text") {
  Bus me = spans_only_bus();
  // Non-ASCII strings (UTF-16 offsets differ from byte offsets after them), escapes in keys and
  // strings, nesting, every literal; a topic and a direct `to`.
  const std::string odd =
      R"({"t\u00e9":"é😀x","n":[1.5,-2,0,{"a":null,"b":true,"c":false}],"s":"a\"b"})";
  const std::string texts[] = {
      envelope_text("c1", "chat", "null", kOddPayload),
      envelope_text("c2", "chat", R"("me")", odd),
      envelope_text("f1", "file_chunk", R"("me")", R"({"transferId":"t","index":0,"data":"QUJD"})"),
      R"({"v":1,"id":"é1","type":"event",)" + kFromA +
          R"(,"to":null,"topic":"tö/pic","ts":1.25,"payload":"x"})",
      R"({"v":1,"id":"n1","type":"event",)" + kFromA + R"(,"to":null,"topic":null,"ts":7})",
  };
  std::uint64_t tag = 100;
  for (const auto& text : texts) {
    me.handle_text("ca", ByteView(std::string_view(text)), 1000, ++tag);
    auto msgs = events_of(drain_events(me), EventKind::message);
    REQUIRE(msgs.size() == 1);
    CHECK_FALSE(msgs[0].envelope);
    CHECK(msgs[0].text_tag == tag);
    CHECK(read_spans(text, msgs[0]) ==
          envelope_to_json(parse_envelope_dom(ByteView(std::string_view(text))).value()));
  }
  // More tokens than kMaxTapeTokens: no tape, the payload's span is parsed instead.
  Json big = Json::array();
  for (std::size_t i = 0; i < kMaxTapeTokens; ++i) big.push_back(i);
  const std::string long_text = envelope_text("c3", "chat", "null", big.dump());
  me.handle_text("ca", ByteView(std::string_view(long_text)), 1000, 7);
  auto msgs = events_of(drain_events(me), EventKind::message);
  REQUIRE(msgs.size() == 1);
  CHECK(msgs[0].tape.empty());
  CHECK(read_spans(long_text, msgs[0])["payload"] == big);
  // Left to the DOM path (an exponent): the event carries the envelope and no spans.
  me.handle_text("ca",
                 ByteView(std::string_view(envelope_text("c4", "chat", "null", R"({"n":1e2})"))),
                 1000, 8);
  msgs = events_of(drain_events(me), EventKind::message);
  REQUIRE(msgs.size() == 1);
  CHECK_FALSE(msgs[0].spans);
  REQUIRE(msgs[0].envelope);
  CHECK(msgs[0].envelope->payload_value() == Json{{"n", 100.0}});
  // History still holds what was delivered by reference: a replay writes it canonically.
  me.handle_text("ca",
                 ByteView(std::string_view(
                     envelope_text("q1", "history_request", R"("me")", R"({"count":10})"))),
                 1004);
  auto replays = of_type(pump_all(me), MessageType::history_replay);
  REQUIRE(replays.size() == 6);  // every message but the transient file_chunk, oldest first
  CHECK(replays[0].payload ==
        envelope_to_json(parse_envelope_dom(ByteView(std::string_view(texts[0]))).value()));
  CHECK(replays[1].payload["payload"] == parse_json(ByteView(std::string_view(odd))).value);
  CHECK(replays[4].payload["payload"] == big);
}

TEST_CASE("bus payload: a live message kept in the queue's own slot keeps every event in order") {
  // The first event of an empty queue goes to a slot the queue keeps (Bus::Events::emplace_live):
  // whatever comes after it, polled or peeked, still follows it, and a slot used again carries
  // nothing from the event it held before.
  Bus me = spans_only_bus();
  const std::string chat1 = envelope_text("k1", "chat", "null", R"({"text":"one"})");
  const std::string chat2 = envelope_text("k2", "chat", "null", R"({"text":"two"})");
  const std::string not_ours = envelope_text("k3", "chat", R"("someone-else")", "null");
  const std::string dom = envelope_text("k4", "chat", "null", R"({"n":1e2})");  // the DOM path's
  const auto feed = [&](const std::string& t, std::uint64_t tag) {
    me.handle_text("ca", ByteView(std::string_view(t)), 1000, tag);
  };
  feed(chat1, 0);  // binds the connection (a peer event comes first)
  drain_events(me);
  for (int round = 0; round < 3; ++round) {
    feed(chat1, 1);
    feed(not_ours, 2);
    feed(chat2, 3);
    feed(dom, 4);
    feed(chat1, 5);
    std::vector<Event> got;
    if (round == 1) {
      got = drain_events(me);
    } else {
      for (Event* e = me.peek_event(); e; e = me.peek_event()) {
        got.push_back(*e);
        me.pop_event();
      }
    }
    REQUIRE(got.size() == 5);
    CHECK(got[0].kind == EventKind::message);
    CHECK(got[0].text_tag == 1);
    CHECK(got[1].kind == EventKind::rejected);
    CHECK(got[1].error.code == BusErrorCode::not_for_us);
    CHECK(got[2].text_tag == 3);
    CHECK(read_spans(chat2, got[2]) ==
          envelope_to_json(parse_envelope_dom(ByteView(std::string_view(chat2))).value()));
    CHECK(got[3].envelope);
    CHECK_FALSE(got[3].spans);
    CHECK(got[4].text_tag == 5);
    for (const Event& e : {got[0], got[2], got[4]}) {
      CHECK(e.kind == EventKind::message);
      CHECK(e.conn == "ca");
      CHECK_FALSE(e.envelope);
      CHECK_FALSE(e.replayed);
      CHECK(e.error.detail.empty());
      CHECK(e.spans);
    }
    CHECK_FALSE(me.has_events());
    // Alone in the queue, each message takes the slot again.
    feed(chat2, 6);
    REQUIRE(me.has_events());
    auto one = drain_events(me);
    REQUIRE(one.size() == 1);
    CHECK(one[0].text_tag == 6);
    CHECK(read_spans(chat2, one[0]) == read_spans(chat2, got[2]));
  }
  // The slot read and dropped while later events still wait: a message arriving then queues
  // behind them, not in the free slot ahead of them.
  feed(chat1, 11);
  feed(not_ours, 12);
  feed(dom, 13);
  REQUIRE(me.peek_event());
  CHECK(me.peek_event()->text_tag == 11);
  me.pop_event();
  feed(chat2, 14);
  auto rest = drain_events(me);
  REQUIRE(rest.size() == 3);
  CHECK(rest[0].kind == EventKind::rejected);
  CHECK(rest[1].envelope);
  CHECK(rest[2].text_tag == 14);
}

TEST_CASE(
    "bus payload: with message_spans_only an ack's tape finds the confirmed id as the DOM does") {
  // Two buses alike but for message_spans_only: the one the WASM glue drives reads an ack's or
  // command_response's id from the payload's tape and skips the DOM when it names nothing we wait
  // on; whatever the tape cannot tell (escapes, non-ASCII, no tape) goes to the DOM. Each text
  // must confirm exactly what the DOM-only bus confirms.
  BusConfig spans_config = config("me");
  spans_config.message_spans_only = true;
  Bus spans(spans_config), dom(config("me"));
  std::string id;
  for (Bus* b : {&spans, &dom}) {
    b->handle_connection_open("ca", 0);
    b->handle_text("ca", ByteView(std::string_view(envelope_text("h", "chat", "null", "1"))), 1);
    auto sent = b->send("A", MessageType::command, Json{{"run", "x"}}, std::nullopt, 2);
    REQUIRE(sent.ok());
    CHECK((id.empty() || id == sent->envelope.id));  // same seed: the same id on both
    id = sent->envelope.id;
    pump_all(*b);
    drain_events(*b);
  }
  std::string big = R"({"messageId":")" + id + R"(","list":[)";
  for (std::size_t i = 0; i < kMaxTapeTokens; ++i) big += (i ? ",1" : "1");
  big += "]}";
  struct Case {
    const char* type;
    std::string payload;
    std::size_t confirmations;
  };
  const Case cases[] = {
      {"ack", R"({"messageId":")" + id + R"("})", 1},
      {"ack", R"({"messageId":"nope"})", 0},
      {"ack", R"({"message\u0049d":")" + id + R"("})", 1},                // an escaped key
      {"ack", R"({"messageId":"nope","messageId":")" + id + R"("})", 1},  // the last one counts
      {"ack", R"({"messageId":")" + id + R"(","messageId":"nope"})", 0},
      {"ack", R"({"x":{"messageId":")" + id + R"("},"messageId":"nope"})", 0},  // nested: not it
      {"ack", R"({"x":[{"a":[1]}],"messageId":")" + id + R"("})", 1},
      {"ack", R"({"x":"é","messageId":")" + id + R"("})", 1},  // non-ASCII: the DOM reads it
      {"ack", R"({"messageId":")" + id + R"(\u0020"})", 0},    // an escaped value
      {"ack", R"({"messageId":5})", 0},
      {"ack", R"("just text")", 0},
      {"ack", "null", 0},
      {"ack", big, 1},  // no tape
      {"command_response", R"({"requestId":")" + id + R"(","ok":true})", 1},
      {"command_response", R"({"requestId":5,"messageId":")" + id + R"("})", 0},
      {"command_response", R"({"messageId":")" + id + R"("})", 1},
  };
  int n = 0;
  for (const Case& c : cases) {
    const std::string text = envelope_text("k" + std::to_string(++n), c.type, R"("me")", c.payload);
    INFO(text);
    for (Bus* b : {&spans, &dom}) {
      b->handle_text("ca", ByteView(std::string_view(text)), 10);
      pump_all(*b);
      auto events = drain_events(*b);
      CHECK(events_of(events, EventKind::message).size() == 1);
      CHECK(events_of(events, EventKind::confirmation).size() == c.confirmations);
    }
  }
}
