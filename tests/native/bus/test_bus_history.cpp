// History ring, replay filtering and reconnect replay (agent-bus-and-swarm.md § Delivery
// semantics), and ack / command_response correlation.
#include <catch2/catch.hpp>

#include "harness.hpp"

using namespace bus_test;

namespace {

// Moves every offered text from `from` to `to`, as connection `conn_at_to`; returns the offers.
std::vector<Offer> carry(Bus& from, Bus& to, const std::string& conn_at_to, std::int64_t now) {
  std::vector<std::string> texts;
  auto offers = pump(from, [&](const std::string&, const std::string& t) {
    texts.push_back(t);
    return true;
  });
  for (const auto& t : texts) to.handle_text(conn_at_to, ByteView(std::string_view(t)), now);
  return offers;
}

}  // namespace

TEST_CASE("bus history: count rules (cap 200, invalid or non-positive mean 50)") {
  CHECK(Bus::history_count(Json(10)) == 10);
  CHECK(Bus::history_count(Json(200)) == 200);
  CHECK(Bus::history_count(Json(201)) == 200);
  CHECK(Bus::history_count(Json(1e12)) == 200);
  // Any positive whole number, however large (a double past 2^53 is still whole), gets the cap,
  // as from the public implementation (Number.isInteger(1e300) is true there).
  CHECK(Bus::history_count(Json(1e300)) == 200);
  CHECK(Bus::history_count(Json(18446744073709551615ULL)) == 200);
  CHECK(Bus::history_count(Json(3.0)) == 3);
  CHECK(Bus::history_count(Json(0)) == 50);
  CHECK(Bus::history_count(Json(-3)) == 50);
  CHECK(Bus::history_count(Json(2.5)) == 50);
  CHECK(Bus::history_count(Json("10")) == 50);
  CHECK(Bus::history_count(Json(nullptr)) == 50);
}

TEST_CASE(
    "bus history: a replay holds broadcasts and messages to or by the requester, never other "
    "peers' directs") {
  Bus hub(config("hub"));
  for (auto c : {"ca", "cb"}) hub.handle_connection_open(c, 0);
  deliver(hub, "ca", env("a0", MessageType::announce, ident("A"), std::nullopt));
  deliver(hub, "cb", env("b0", MessageType::announce, ident("B"), std::nullopt));
  deliver(hub, "ca",
          env("a1", MessageType::chat, ident("A"), std::nullopt, Json{{"text", "A to all"}}));
  deliver(hub, "cb",
          env("b1", MessageType::chat, ident("B"), std::string("hub"), Json{{"text", "B to hub"}}));
  deliver(hub, "ca",
          env("a2", MessageType::chat, ident("A"), std::string("hub"), Json{{"text", "A to hub"}}));
  REQUIRE(hub.send("B", MessageType::chat, Json{{"text", "hub to B"}}, std::nullopt, 5).ok());
  REQUIRE(hub.send("A", MessageType::chat, Json{{"text", "hub to A"}}, std::nullopt, 6).ok());
  REQUIRE(hub.broadcast(MessageType::event, Json{{"text", "hub to all"}}, std::nullopt, 7).ok());
  REQUIRE(hub.send("A", MessageType::swarm_have, Json::object(), std::nullopt, 8)
              .ok());  // transient: never kept
  pump_all(hub);
  drain_events(hub);
  std::vector<std::string> for_a;
  for (const auto& e : hub.history(200, "A")) for_a.push_back(e.payload_value().value("text", ""));
  CHECK(for_a == std::vector<std::string>{"A to all", "A to hub", "hub to A", "hub to all"});
  CHECK(hub.history(200, "").size() == 6);
  CHECK(hub.history(2, "A").size() == 2);
  CHECK(hub.history(2, "A").back().payload_value()["text"] == "hub to all");

  // The same through the wire: A asks, the hub answers with one history_replay per message, each
  // addressed to A and carrying the original envelope as its payload (agent-bus-notes.md).
  deliver(hub, "ca",
          env("q1", MessageType::history_request, ident("A"), std::string("hub"),
              Json{{"count", 500}}));
  auto offers = pump_all(hub);
  auto replays = of_type(offers, MessageType::history_replay);
  REQUIRE(replays.size() == for_a.size());
  std::vector<std::string> replayed;
  for (const auto& r : replays) {
    CHECK(r.to == std::string("A"));
    CHECK(r.from.stream_id == "hub");
    auto inner = envelope_from_json(r.payload);
    REQUIRE(inner.ok());
    replayed.push_back(inner->payload_value().value("text", ""));
  }
  CHECK(replayed == for_a);
  CHECK(envelope_from_json(replays[0].payload)->id ==
        "a1");  // the original id and sender, not copies
  CHECK(envelope_from_json(replays[0].payload)->from == ident("A"));
}

// `levels` arrays nested around an empty one's contents: [[...[]...]] nests `levels` deep.
static Json nested_arrays(int levels) {
  Json v = Json::array();
  for (int i = 1; i < levels; ++i) v = Json::array({std::move(v)});
  return v;
}

TEST_CASE(
    "bus history: an entry that would nest past 64 once wrapped is left out of the replay, and "
    "nothing unparseable leaves") {
  // A chat whose payload nests 63 deep is a 64-deep envelope: within the bound, so accepted and
  // kept. Wrapped as a history_replay's payload it would nest 65 deep, which every reader, this
  // bus included, refuses; fuzz_bus_session found the replay going out anyway.
  Bus hub(config("hub"));
  hub.handle_connection_open("ca", 0);
  deliver(hub, "ca", env("a0", MessageType::announce, ident("A"), std::nullopt));
  deliver(hub, "ca", env("deep", MessageType::chat, ident("A"), std::nullopt, nested_arrays(63)));
  deliver(hub, "ca",
          env("flat", MessageType::chat, ident("A"), std::nullopt, Json{{"text", "flat"}}));
  pump_all(hub);
  drain_events(hub);
  REQUIRE(hub.history(200, "A").size() == 2);  // both were accepted and kept

  deliver(
      hub, "ca",
      env("q1", MessageType::history_request, ident("A"), std::string("hub"), Json{{"count", 10}}));
  auto offers = pump_all(hub);
  REQUIRE_FALSE(offers.empty());
  for (const auto& o : offers) {
    INFO(o.text.substr(0, 120));
    CHECK(parse_envelope(ByteView(std::string_view(o.text))).ok());
  }
  auto replays = of_type(offers, MessageType::history_replay);
  REQUIRE(replays.size() == 1);
  CHECK(envelope_from_json(replays[0].payload)->id == "flat");
}

TEST_CASE("bus send: a payload nesting past 63 is refused before it is sent") {
  Bus b(config("me"));
  b.handle_connection_open("c", 0);
  REQUIRE(b.broadcast(MessageType::chat, nested_arrays(63), std::nullopt, 1).ok());
  auto deep = b.broadcast(MessageType::chat, nested_arrays(64), std::nullopt, 2);
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.error().code == BusErrorCode::bad_payload);
  CHECK(deep.error().field == "payload");
  CHECK_THAT(deep.error().detail, Catch::Contains("flatten"));
  auto direct = b.send("peer", MessageType::chat, Json{{"a", nested_arrays(63)}}, std::nullopt, 3);
  REQUIRE_FALSE(direct.ok());
  CHECK(direct.error().code == BusErrorCode::bad_payload);
}

TEST_CASE("bus history: the ring is bounded") {
  Bus b(config("me"));
  for (std::size_t i = 0; i < kHistoryCapacity + 10; ++i)
    REQUIRE(b.broadcast(MessageType::chat, Json{{"n", i}}, std::nullopt, 1).ok());
  auto all = b.history(100000, "");
  REQUIRE(all.size() == kHistoryCapacity);
  CHECK(all.front().payload_value()["n"] == 10);
}

TEST_CASE(
    "bus history: reconnect with queued messages and a replay loses nothing and delivers nothing "
    "twice") {
  Bus a(config("A", false, 1));
  Bus b(config("B", false, 2));
  a.handle_connection_open("toB", 0);
  b.handle_connection_open("toA", 0);
  carry(a, b, "toA", 1);
  carry(b, a, "toB", 1);
  drain_events(a);
  drain_events(b);
  // B goes away; A keeps talking to it and broadcasting.
  a.handle_connection_closed("toB", 0);
  b.handle_connection_closed("toA", 0);
  for (int i = 0; i < 3; ++i)
    REQUIRE(a.send("B", MessageType::chat, Json{{"text", "d" + std::to_string(i)}}, std::nullopt,
                   10 + i)
                .ok());
  REQUIRE(
      a.broadcast(MessageType::chat, Json{{"text", "missed broadcast"}}, std::nullopt, 20).ok());
  CHECK(carry(a, b, "toA", 20).empty());
  // The channel comes back but closes again right after open: the first replay attempt fails.
  a.handle_connection_open("toB", 30);
  pump_none(a);
  CHECK(a.queued("B") == 3);
  // It reopens for real. B asks A for history as well.
  a.handle_connection_open("toB", 40);
  b.handle_connection_open("toA", 40);
  REQUIRE(b.request_history("A", Json(50), 40).ok());
  for (int round = 0; round < 4; ++round) {
    carry(a, b, "toA", 41);
    carry(b, a, "toB", 41);
  }
  std::vector<std::string> got;
  for (const auto& e : events_of(drain_events(b), EventKind::message))
    if (e.envelope->type == MessageType::chat)
      got.push_back(e.envelope->payload_value()["text"].get<std::string>() +
                    (e.replayed ? "*" : ""));
  // Live flush first, in order; the replay adds only the broadcast B missed (marked *).
  CHECK(got == std::vector<std::string>{"d0", "d1", "d2", "missed broadcast*"});
  CHECK(a.queued("B") == 0);
}

TEST_CASE("bus history: unsolicited, excess, batched or malformed replays are refused") {
  Bus b(config("me"));
  b.handle_connection_open("c", 0);
  Json fake = envelope_to_json(
      env("f1", MessageType::chat, ident("x"), std::nullopt, Json{{"text", "injected"}}));
  auto replay = [&](const std::string& id, Json payload, std::int64_t now) {
    deliver(b, "c",
            env(id, MessageType::history_replay, ident("p"), std::string("me"), std::move(payload)),
            now);
    return drain_events(b);
  };
  auto ev = replay("r1", fake, 0);
  REQUIRE(events_of(ev, EventKind::rejected).size() == 1);
  CHECK(events_of(ev, EventKind::message).empty());
  // Asked for three: each replay carries one envelope; bad ones are refused one by one, good ones
  // delivered, other peers' directs skipped, and a fourth is refused as excess.
  REQUIRE(b.request_history("p", Json(3), 10).ok());
  ev = replay("r2", Json{{"v", 1}, {"id", ""}}, 20);
  auto rej = events_of(ev, EventKind::rejected);
  REQUIRE(rej.size() == 1);
  CHECK(rej[0].error.field.rfind("payload", 0) == 0);
  ev = replay("r3", fake, 20);
  auto msgs = events_of(ev, EventKind::message);
  REQUIRE(msgs.size() == 1);
  CHECK(msgs[0].replayed);
  CHECK(msgs[0].envelope->id == "f1");
  CHECK(msgs[0].envelope->payload_value()["text"] == "injected");
  Json other = envelope_to_json(
      env("o1", MessageType::chat, ident("x"), std::string("someone"), Json{{"text", "private"}}));
  ev = replay("r4", other, 20);
  CHECK(events_of(ev, EventKind::message).empty());
  CHECK(events_of(ev, EventKind::rejected).empty());
  ev = replay("r5", envelope_to_json(env("f2", MessageType::chat, ident("x"), std::nullopt)), 20);
  REQUIRE(events_of(ev, EventKind::rejected).size() == 1);
  CHECK(events_of(ev, EventKind::message).empty());
  // tether's old batch shape is refused with what to send instead; so is a replay too late.
  REQUIRE(b.request_history("p", Json(3), 30).ok());
  ev = replay("r6", Json{{"messages", Json::array({fake})}}, 30);
  rej = events_of(ev, EventKind::rejected);
  REQUIRE(rej.size() == 1);
  CHECK(rej[0].error.detail.find("one history_replay per message") != std::string::npos);
  ev = replay("r7", envelope_to_json(env("f3", MessageType::chat, ident("x"), std::nullopt)),
              30 + kHistoryReplyWindowMs + 1);
  CHECK(events_of(ev, EventKind::rejected).size() == 1);
  // A replay of something already delivered is not delivered twice.
  REQUIRE(b.request_history("p", Json(5), 100'000).ok());
  ev = replay("r8", fake, 100'000);
  CHECK(events_of(ev, EventKind::message).empty());
  CHECK(events_of(ev, EventKind::rejected).empty());
}

TEST_CASE("bus confirmations: ack and command_response correlate by message id and peer") {
  Bus b(config("me"));
  b.handle_connection_open("c", 0);
  deliver(b, "c", env("a", MessageType::announce, ident("p"), std::nullopt));
  auto cmd = b.send("p", MessageType::command, Json{{"run", "x"}}, std::nullopt, 1);
  REQUIRE(cmd.ok());
  pump_all(b);
  drain_events(b);
  // ninja-p2p's shape: the answered command's id is `requestId`.
  deliver(b, "c",
          env("r1", MessageType::command_response, ident("p"), std::string("me"),
              Json{{"requestId", cmd->envelope.id}, {"ok", true}, {"result", nullptr}}));
  auto conf = events_of(drain_events(b), EventKind::confirmation);
  REQUIRE(conf.size() == 1);
  CHECK(conf[0].message_id == cmd->envelope.id);
  CHECK(conf[0].for_type == MessageType::command);
  CHECK(conf[0].peer_stream == "p");
  // requestId decides when present: a messageId beside a wrong one confirms nothing.
  deliver(b, "c",
          env("r1b", MessageType::command_response, ident("p"), std::string("me"),
              Json{{"requestId", "other"}, {"messageId", cmd->envelope.id}, {"ok", true}}));
  CHECK(events_of(drain_events(b), EventKind::confirmation).empty());
  // A record from before tether wrote requestId (messageId only) still correlates.
  deliver(b, "c",
          env("r1c", MessageType::command_response, ident("p"), std::string("me"),
              Json{{"messageId", cmd->envelope.id}, {"ok", true}}));
  CHECK(events_of(drain_events(b), EventKind::confirmation).size() == 1);
  // An ack for an id we never sent, or from the wrong peer, confirms nothing.
  deliver(b, "c",
          env("r2", MessageType::ack, ident("p"), std::string("me"), Json{{"messageId", "nope"}}));
  CHECK(events_of(drain_events(b), EventKind::confirmation).empty());

  // match_receipt, as the sidecar's `receipt` uses it over inbox and archive.
  Envelope fail = env("r3", MessageType::command_response, ident("p"), std::string("me"),
                      Json{{"requestId", "req"}, {"ok", false}, {"error", "boom"}});
  auto r = match_receipt(fail, "req", "p");
  REQUIRE(r);
  CHECK(r->kind == Receipt::Kind::command_response);
  CHECK_FALSE(r->ok);
  CHECK_FALSE(match_receipt(fail, "req", "q"));
  CHECK_FALSE(match_receipt(fail, "other", "p"));
}

TEST_CASE("bus ack/respond build the confirmation payloads") {
  Bus b(config("me"));
  Envelope in = env("m1", MessageType::command, ident("p"), std::string("me"));
  auto a = b.ack(in, Json{{"note", "ok"}}, 5);
  REQUIRE(a.ok());
  CHECK(a->envelope.type == MessageType::ack);
  CHECK(a->envelope.to == std::string("p"));
  CHECK(a->envelope.payload == Json{{"messageId", "m1"}, {"note", "ok"}});
  // command_response {requestId, ok, result | error} (agent-bus-notes.md), and nothing else.
  auto r = b.respond(in, Json{{"result", 42}}, 6);
  REQUIRE(r.ok());
  CHECK(r->envelope.type == MessageType::command_response);
  CHECK(r->envelope.to == std::string("p"));
  CHECK(r->envelope.payload == Json{{"requestId", "m1"}, {"ok", true}, {"result", 42}});
  CHECK(b.respond(in, Json::object(), 6)->envelope.payload ==
        Json{{"requestId", "m1"}, {"ok", true}, {"result", nullptr}});
  auto no = b.respond(in, Json{{"error", "not allowed"}}, 7);
  REQUIRE(no.ok());
  CHECK(no->envelope.payload == Json{{"requestId", "m1"}, {"ok", false}, {"error", "not allowed"}});
  CHECK(b.respond(in, Json{{"ok", false}, {"error", "x"}}, 7).ok());
  for (const Json& bad :
       {Json{{"messageId", "forged"}, {"result", 1}}, Json{{"error", ""}}, Json{{"error", 5}},
        Json{{"error", "x"}, {"result", 1}}, Json{{"ok", false}},
        Json{{"ok", true}, {"error", "x"}}, Json(42), Json{{"output", "done"}}}) {
    INFO(bad.dump());
    auto refused = b.respond(in, bad, 8);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code == BusErrorCode::bad_payload);
  }
  // Long error text is cut on a code point boundary.
  std::string long_error(kMaxErrorTextBytes - 1, 'x');
  long_error += "\xC3\xA9\xC3\xA9";
  auto cut = b.respond(in, Json{{"error", long_error}}, 9);
  REQUIRE(cut.ok());
  CHECK(cut->envelope.payload["error"].get<std::string>() ==
        std::string(kMaxErrorTextBytes - 1, 'x'));
}

TEST_CASE(
    "bus history: a direct that left through another path is noted: replayed to its peer, "
    "correlated with its ack") {
  Bus me(config("me"));
  me.handle_connection_open("ca", 0);
  deliver(me, "ca", env("a0", MessageType::announce, ident("A"), std::nullopt));
  Envelope mine = env("m1", MessageType::chat, ident("me"), std::string("A"),
                      Json{{"text", "from the disk outbox"}});
  REQUIRE_FALSE(me.note_sent(mine).has_value());
  Envelope other =
      env("m2", MessageType::chat, ident("me"), std::string("B"), Json{{"text", "to B"}});
  REQUIRE_FALSE(me.note_sent(other).has_value());
  std::vector<std::string> for_a;
  for (const auto& e : me.history(200, "A")) for_a.push_back(e.payload_value().value("text", ""));
  CHECK(for_a == std::vector<std::string>{"from the disk outbox"});
  // Refusals: not ours, not direct, transient.
  auto forged = me.note_sent(env("x1", MessageType::chat, ident("A"), std::string("B")));
  REQUIRE(forged.has_value());
  CHECK(forged->field == "from.streamId");
  auto bcast = me.note_sent(env("x2", MessageType::chat, ident("me"), std::nullopt));
  REQUIRE(bcast.has_value());
  CHECK(bcast->field == "to");
  auto transient = me.note_sent(env("x3", MessageType::swarm_have, ident("me"), std::string("A")));
  REQUIRE(transient.has_value());
  CHECK(transient->field == "type");
  CHECK(me.history(200, "").size() == 2);
  // A's ack of the noted message correlates with it.
  drain_events(me);
  deliver(me, "ca",
          env("a1", MessageType::ack, ident("A"), std::string("me"), Json{{"messageId", "m1"}}));
  bool confirmed = false;
  for (const auto& ev : drain_events(me))
    if (ev.kind == EventKind::confirmation && ev.message_id == "m1") confirmed = true;
  CHECK(confirmed);
}
