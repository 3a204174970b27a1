// Per-peer ordered queues and identity binding (agent-bus-and-swarm.md § Delivery semantics,
// § Connection race this prevents, § Untrusted wire input).
#include <catch2/catch.hpp>

#include "harness.hpp"

using namespace bus_test;

namespace {

// A bus "me" that knows peer stream "p" on connection "c1" (bound by p's announce).
Bus known_peer(bool open = true) {
  Bus b(config("me"));
  if (open) b.handle_connection_open("c1", 0);
  deliver(
      b, "c1",
      env("a1", MessageType::announce, ident("p"), std::nullopt, Json{{"skills", Json::array()}}));
  pump_all(b);
  drain_events(b);
  return b;
}

std::vector<std::string> texts_of(const std::vector<Offer>& offers, MessageType t) {
  std::vector<std::string> v;
  for (const auto& e : of_type(offers, t)) v.push_back(e.payload_value().value("text", ""));
  return v;
}

}  // namespace

TEST_CASE("bus queue: an open peer gets a direct message now") {
  Bus b = known_peer();
  auto r = b.send("p", MessageType::chat, Json{{"text", "hello"}}, std::nullopt, 10);
  REQUIRE(r.ok());
  auto offers = pump_all(b);
  REQUIRE(offers.size() == 1);
  CHECK(offers[0].conn == "c1");
  CHECK(offers[0].text == *r->text);
  CHECK(b.outcome(r->envelope.id) == SendStatus::sent);
  CHECK(b.queued("p") == 0);
}

TEST_CASE("bus queue: peerConnected before dataChannelOpen: a rejected send is queued, not lost") {
  Bus b = known_peer();
  auto r = b.send("p", MessageType::chat, Json{{"text", "one"}}, std::nullopt, 10);
  REQUIRE(r.ok());
  auto offers = pump_none(b);  // the SDK said false: the channel is not ready
  REQUIRE(offers.size() == 1);
  CHECK(b.outcome(r->envelope.id) == SendStatus::queued);
  CHECK(b.queued("p") == 1);
  // The channel opens: the same envelope (same id and type) is retried and accepted.
  b.handle_connection_open("c1", 20);
  auto again = pump_all(b);
  auto chats = of_type(again, MessageType::chat);
  REQUIRE(chats.size() == 1);
  CHECK(chats[0].id == r->envelope.id);
  CHECK(b.queued("p") == 0);
}

TEST_CASE(
    "bus queue: a flush removes only what the transport accepted and keeps the rest in order") {
  Bus b = known_peer();
  b.handle_connection_closed("c1", 0);
  for (int i = 0; i < 5; ++i)
    REQUIRE(
        b.send("p", MessageType::chat, Json{{"text", std::to_string(i)}}, std::nullopt, i).ok());
  CHECK(pump_all(b).empty());  // offline: nothing offered
  CHECK(b.queued("p") == 5);
  b.handle_connection_open("c1", 10);
  int accepted = 0;
  auto offers = pump(b, [&](const std::string&, const std::string& text) {
    if (parsed(text).type != MessageType::chat) return true;
    return ++accepted <= 2;  // the channel closes after two
  });
  CHECK(texts_of(offers, MessageType::chat) == std::vector<std::string>{"0", "1"});
  CHECK(b.queued("p") == 3);
  // The failed message was offered once and nothing behind it was offered out of order.
  CHECK(of_type(offers, MessageType::chat, false).size() == 3);
  b.handle_connection_open("c1", 20);
  auto rest = pump_all(b);
  CHECK(texts_of(rest, MessageType::chat) == std::vector<std::string>{"2", "3", "4"});
  CHECK(b.queued("p") == 0);
}

TEST_CASE("bus queue: a new ordinary send retries the backlog first and queues behind it") {
  Bus b = known_peer();
  REQUIRE(b.send("p", MessageType::chat, Json{{"text", "old"}}, std::nullopt, 1).ok());
  pump_none(b);
  REQUIRE(b.queued("p") == 1);
  // Still blocked: the new message goes behind, and nothing was reordered.
  auto r = b.send("p", MessageType::chat, Json{{"text", "new"}}, std::nullopt, 2);
  auto blocked = pump_none(b);
  REQUIRE(blocked.size() == 1);
  CHECK(parsed(blocked[0].text).payload_value()["text"] == "old");
  CHECK(b.outcome(r->envelope.id) == SendStatus::queued);
  CHECK(b.queued("p") == 2);
  // Unblocked by the next send: everything in order.
  REQUIRE(b.send("p", MessageType::chat, Json{{"text", "newer"}}, std::nullopt, 3).ok());
  CHECK(texts_of(pump_all(b), MessageType::chat) ==
        std::vector<std::string>{"old", "new", "newer"});
}

TEST_CASE("bus queue: transient traffic bypasses the backlog and is never queued") {
  Bus b = known_peer();
  REQUIRE(b.send("p", MessageType::chat, Json{{"text", "held"}}, std::nullopt, 1).ok());
  pump_none(b);
  // The swarm message goes out ahead of the blocked chat.
  auto t = b.send("p", MessageType::swarm_have, Json{{"fileId", "x"}}, std::nullopt, 2);
  REQUIRE(t.ok());
  auto offers = pump(b, [](const std::string&, const std::string& text) {
    return parsed(text).type == MessageType::swarm_have;
  });
  REQUIRE(of_type(offers, MessageType::swarm_have).size() == 1);
  CHECK(b.outcome(t->envelope.id) == SendStatus::sent);
  CHECK(b.queued("p") == 1);
  // Rejected transient: reported, never queued, never in history.
  auto u = b.send("p", MessageType::file_chunk, Json{{"transferId", "t"}}, std::nullopt, 3);
  REQUIRE(u.ok());
  pump_none(b);
  CHECK_FALSE(b.outcome(u->envelope.id));
  CHECK(b.queued("p") == 1);
  // Offline: refused outright.
  b.handle_connection_closed("c1", 0);
  auto v = b.send("p", MessageType::swarm_request, Json::object(), std::nullopt, 4);
  REQUIRE_FALSE(v.ok());
  CHECK(v.error().code == BusErrorCode::not_accepted);
  for (const auto& e : b.history(500, "")) CHECK_FALSE(is_transient(e.type));
}

TEST_CASE("bus queue: peers are independent") {
  Bus b(config("me"));
  b.handle_connection_open("c1", 0);
  b.handle_connection_open("c2", 0);
  deliver(b, "c1", env("a1", MessageType::announce, ident("p"), std::nullopt));
  deliver(b, "c2", env("a2", MessageType::announce, ident("q"), std::nullopt));
  pump_all(b);
  REQUIRE(b.send("p", MessageType::chat, Json{{"text", "to p"}}, std::nullopt, 1).ok());
  REQUIRE(b.send("q", MessageType::chat, Json{{"text", "to q"}}, std::nullopt, 1).ok());
  // p's channel rejects; q's accepts.
  auto offers = pump(b, [](const std::string& conn, const std::string&) { return conn == "c2"; });
  CHECK(b.queued("p") == 1);
  CHECK(b.queued("q") == 0);
  REQUIRE(b.send("q", MessageType::chat, Json{{"text", "again"}}, std::nullopt, 2).ok());
  auto more = pump(b, [](const std::string& conn, const std::string&) { return conn == "c2"; });
  CHECK(texts_of(more, MessageType::chat) == std::vector<std::string>{"again"});
}

TEST_CASE("bus queue: messages to a peer never seen wait for it to bind") {
  Bus b(config("me"));
  b.handle_connection_open("c9", 0);
  pump_all(b);
  REQUIRE(b.send("later", MessageType::command, Json{{"cmd", "x"}}, std::nullopt, 1).ok());
  CHECK(pump_all(b).empty());
  CHECK(b.queued("later") == 1);
  // Its first envelope on c9 binds the stream and flushes.
  deliver(b, "c9", env("a", MessageType::announce, ident("later"), std::nullopt));
  auto offers = pump_all(b);
  REQUIRE(of_type(offers, MessageType::command).size() == 1);
  CHECK(offers.back().conn == "c9");
}

TEST_CASE("bus queue: the backlog is bounded by a named limit") {
  Bus b = known_peer(false);
  for (std::size_t i = 0; i < kMaxQueuedPerPeer; ++i)
    REQUIRE(b.send("p", MessageType::chat, Json{{"n", i}}, std::nullopt, 1).ok());
  auto r = b.send("p", MessageType::chat, Json{{"n", -1}}, std::nullopt, 1);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == BusErrorCode::queue_full);
  CHECK(b.queued("p") == kMaxQueuedPerPeer);
}

TEST_CASE("bus identity: a connection is bound to its first stream and cannot send as another") {
  Bus b = known_peer();
  deliver(b, "c1", env("x", MessageType::chat, ident("victim"), std::nullopt));
  auto ev = drain_events(b);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].kind == EventKind::rejected);
  CHECK(ev[0].error.code == BusErrorCode::forged_identity);
  // The room lives on: the bound peer still talks.
  deliver(b, "c1",
          env("y", MessageType::chat, ident("p"), std::nullopt, Json{{"text", "still here"}}));
  auto ok = events_of(drain_events(b), EventKind::message);
  REQUIRE(ok.size() == 1);
  CHECK(ok[0].envelope->payload_value()["text"] == "still here");
}

TEST_CASE(
    "bus identity: with conn_is_stream the very first envelope must come from the peer's own id") {
  BusConfig cfg = config("me");
  cfg.conn_is_stream = true;
  Bus b(cfg);
  b.handle_connection_open("alice", 0);
  pump_all(b);
  drain_events(b);
  // Without the option the first envelope would bind connection "alice" to stream "bob".
  deliver(b, "alice", env("x", MessageType::chat, ident("bob"), std::nullopt));
  auto rejected = events_of(drain_events(b), EventKind::rejected);
  REQUIRE(rejected.size() == 1);
  CHECK(rejected[0].error.code == BusErrorCode::forged_identity);
  CHECK(rejected[0].error.field == "from.streamId");
  deliver(b, "alice",
          env("y", MessageType::chat, ident("alice"), std::nullopt, Json{{"text", "me"}}));
  auto ok = events_of(drain_events(b), EventKind::message);
  REQUIRE(ok.size() == 1);
  CHECK(ok[0].envelope->from.stream_id == "alice");
}

TEST_CASE("bus identity: a new connection cannot claim an established, open peer's stream") {
  Bus b = known_peer();
  b.handle_connection_open("c2", 0);
  pump_all(b);
  drain_events(b);
  deliver(b, "c2", env("x", MessageType::chat, ident("p"), std::nullopt));
  auto rejected = events_of(drain_events(b), EventKind::rejected);
  REQUIRE(rejected.size() == 1);
  CHECK(rejected[0].error.code == BusErrorCode::forged_identity);
  // Our own stream id is never accepted from anyone.
  deliver(b, "c2", env("y", MessageType::chat, ident("me"), std::nullopt));
  CHECK(events_of(drain_events(b), EventKind::rejected).size() == 1);
  // After the first connection closes, the peer may come back on a new one (a reconnect).
  b.handle_connection_closed("c1", 0);
  deliver(b, "c2", env("z", MessageType::chat, ident("p", "i2"), std::nullopt));
  CHECK(events_of(drain_events(b), EventKind::message).size() == 1);
}

TEST_CASE("bus identity: malformed or misaddressed envelopes are refused locally") {
  Bus b = known_peer();
  const std::string junk = "{\"v\":1,\"id\":";
  b.handle_text("c1", ByteView(std::string_view(junk)), 1);
  deliver(b, "c1", env("m", MessageType::chat, ident("p"), std::string("someone-else")));
  auto ev = drain_events(b);
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].error.code == BusErrorCode::not_json);
  CHECK(ev[1].error.code == BusErrorCode::not_for_us);
  CHECK(b.peer("c1")->open);
  CHECK(b.peer("c1")->stream_id == std::string("p"));
}

TEST_CASE("bus broadcast: offered once to every open connection, never queued") {
  Bus b(config("me"));
  b.handle_connection_open("c1", 0);
  b.handle_connection_open("c2", 0);
  b.handle_connection_open("c3", 0);
  b.handle_connection_closed("c3", 0);
  pump_all(b);
  auto r = b.broadcast(MessageType::chat, Json{{"text", "all"}}, std::string("news"), 5);
  REQUIRE(r.ok());
  auto offers = pump(b, [](const std::string& conn, const std::string&) { return conn == "c1"; });
  REQUIRE(offers.size() == 2);
  CHECK(b.last_broadcast_accepted() == std::vector<ConnId>{"c1"});
  CHECK(b.last_broadcast_rejected() == std::vector<ConnId>{"c2"});
  CHECK(b.queued_total() == 0);
  CHECK(r->envelope.topic == std::string("news"));
}

TEST_CASE("bus queue: the peer's announce retries a failed flush") {
  Bus b = known_peer();
  b.handle_connection_closed("c1", 0);
  for (int i = 0; i < 3; ++i)
    REQUIRE(
        b.send("p", MessageType::chat, Json{{"text", std::to_string(i)}}, std::nullopt, i).ok());
  b.handle_connection_open("c1", 10);
  auto failed = pump_none(b);  // our announce and the first replay are both rejected
  CHECK(failed.size() == 2);
  CHECK(b.queued("p") == 3);
  deliver(
      b, "c1",
      env("a2", MessageType::announce, ident("p"), std::nullopt, Json{{"skills", Json::array()}}),
      11);
  CHECK(texts_of(pump_all(b), MessageType::chat) == std::vector<std::string>{"0", "1", "2"});
  CHECK(b.queued("p") == 0);
}
