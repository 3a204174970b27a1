// Reachability: the room roster against the transport's open/close (agent-bus-and-swarm.md
// § Delivery semantics, § Compatibility: the room's signaling stays authoritative). See
// "Reachability" in src/bus/bus.hpp. The same rule end to end over a loop transport:
// tests/node/bus.test.mjs (the dead-channel and signaling-blip cases).
#include <catch2/catch.hpp>

#include <algorithm>

#include "harness.hpp"

using namespace bus_test;

namespace {

int next_id = 0;

// Peer stream `stream` says something on `conn` (an announce: it binds the connection).
void announce_from(Bus& b, const std::string& conn, const std::string& stream,
                   std::int64_t now = 1000) {
  deliver(b, conn,
          env("an" + std::to_string(++next_id), MessageType::announce, ident(stream), std::nullopt,
              Json{{"skills", Json::array()}}),
          now);
}

// A bus "me" whose connection "c1" is open, listed, and bound to peer stream "p".
Bus with_peer() {
  Bus b(config("me"));
  b.handle_roster({"c1"}, 0);
  b.handle_connection_open("c1", 0);
  announce_from(b, "c1", "p");
  pump_all(b);
  drain_events(b);
  return b;
}

std::vector<std::string> sent_ids(Bus& b, std::initializer_list<const char*> texts) {
  std::vector<std::string> ids;
  for (const char* t : texts) {
    auto r = b.send("p", MessageType::chat, Json{{"text", t}}, std::nullopt, 10);
    REQUIRE(r.ok());
    CHECK(b.outcome(r->envelope.id) == SendStatus::queued);
    ids.push_back(r->envelope.id);
  }
  return ids;
}

std::vector<std::string> ids_of(const std::vector<Envelope>& v) {
  std::vector<std::string> out;
  for (const auto& e : v) out.push_back(e.id);
  return out;
}

std::vector<std::string> conns_of(const std::vector<Offer>& offers) {
  std::vector<std::string> out;
  for (const auto& o : offers) out.push_back(o.conn);
  return out;
}

bool listed_open(const Bus& b, const std::string& conn) {
  auto p = b.peer(conn);
  return p && p->open;
}

}  // namespace

TEST_CASE(
    "bus roster: a peer the roster dropped is queued for while its channel still looks open") {
  Bus b = with_peer();
  REQUIRE(b.is_open("p"));
  b.handle_roster({}, 0);  // its tab closed: the room says so long before the channel dies
  CHECK_FALSE(b.is_open("p"));
  CHECK_FALSE(b.is_open("c1"));
  CHECK_FALSE(b.peer("c1"));  // gone from the room's view
  CHECK(b.peers().empty());
  auto ids = sent_ids(b, {"one", "two", "three"});
  CHECK(pump_all(b).empty());  // nothing offered into the dying channel
  CHECK(b.queued("p") == 3);
  // A broadcast is not offered to it either.
  REQUIRE(b.broadcast(MessageType::chat, Json{{"text", "all"}}, std::nullopt, 20).ok());
  CHECK(pump_all(b).empty());
  // Its message on the old channel is delivered but does not make the channel reachable: only
  // the roster lists peers.
  announce_from(b, "c1", "p");
  CHECK(of_type(pump_all(b), MessageType::announce).empty());
  CHECK_FALSE(b.is_open("p"));
  CHECK(b.queued("p") == 3);
  // The restarted peer: the transport closes the old channel and opens a new one.
  b.handle_connection_closed("c1", 0);
  b.handle_connection_open("c1", 30);
  CHECK(b.is_open("c1"));  // open, not yet bound: the drop forgot the binding
  announce_from(b, "c1", "p");
  auto offers = pump_all(b);
  CHECK(of_type(offers, MessageType::announce).size() == 1);
  CHECK(ids_of(of_type(offers, MessageType::chat)) == ids);  // original ids, in order
  CHECK(b.queued("p") == 0);
  CHECK(b.is_open("p"));
}

TEST_CASE(
    "bus roster: a dropped peer's stream can be claimed by its new connection while the old "
    "lingers") {
  Bus b = with_peer();
  b.handle_roster({"c2"}, 0);
  auto ids = sent_ids(b, {"one", "two"});
  b.handle_connection_open("c2", 20);
  announce_from(b, "c2", "p");
  auto offers = pump_all(b);
  CHECK(ids_of(of_type(offers, MessageType::chat)) == ids);
  for (const auto& o : offers) CHECK(o.conn == "c2");
  CHECK(b.peer("c2")->stream_id == std::optional<std::string>("p"));
}

TEST_CASE(
    "bus roster: a re-listed peer whose channel stayed open is held until it carries a message") {
  Bus b = with_peer();
  b.handle_roster({}, 0);  // its signaling blipped: the channel is alive, the room briefly lost it
  auto ids = sent_ids(b, {"one", "two"});
  b.handle_roster({"c1"}, 0);  // back on the roster, the same channel
  CHECK_FALSE(b.is_open("c1"));
  CHECK_FALSE(b.is_open("p"));
  REQUIRE(b.peer("c1"));
  CHECK_FALSE(b.peer("c1")->open);  // listed, but held
  auto more = sent_ids(b, {"three"});
  ids.push_back(more[0]);
  CHECK(pump_all(b).empty());  // nothing flushed to a held channel, not even our announce
  CHECK(b.queued("p") == 3);
  drain_events(b);
  // The peer's bus re-announces when its signaling comes back: the channel is proven alive.
  announce_from(b, "c1", "p", 40);
  auto offers = pump_all(b);
  REQUIRE(!offers.empty());
  CHECK(parsed(offers[0].text).type == MessageType::announce);  // woken as connection_open would
  CHECK(ids_of(of_type(offers, MessageType::chat)) == ids);     // then the backlog, in order
  for (const auto& o : offers) CHECK(o.conn == "c1");
  CHECK(b.queued("p") == 0);
  CHECK(b.is_open("p"));
  CHECK(listed_open(b, "c1"));
  auto events = drain_events(b);
  CHECK_FALSE(events_of(events, EventKind::peer).empty());
  CHECK(events_of(events, EventKind::message).size() == 1);  // and the message itself is delivered
  // Awake now: an ordinary send goes out at once.
  auto r = b.send("p", MessageType::chat, Json{{"text", "after"}}, std::nullopt, 50);
  REQUIRE(r.ok());
  CHECK(pump_all(b).size() == 1);
  CHECK(b.outcome(r->envelope.id) == SendStatus::sent);
}

TEST_CASE("bus roster: a message the bus refuses still wakes a held channel") {
  Bus b = with_peer();
  b.handle_roster({}, 0);
  b.handle_roster({"c1"}, 0);
  const std::string junk = "{not an envelope";
  b.handle_text("c1", ByteView(std::string_view(junk)), 40);
  CHECK(events_of(drain_events(b), EventKind::rejected).size() == 1);
  CHECK(b.is_open("c1"));  // it carried something: alive (the drop forgot its stream)
  auto offers = pump_all(b);
  CHECK(conns_of(offers) == std::vector<std::string>{"c1"});
  CHECK(of_type(offers, MessageType::announce).size() == 1);
}

TEST_CASE("bus roster: a held channel is woken by a fresh connection_open") {
  Bus b = with_peer();
  b.handle_roster({}, 0);
  auto ids = sent_ids(b, {"one", "two"});
  b.handle_roster({"c1"}, 0);
  CHECK(pump_all(b).empty());
  b.handle_connection_open("c1", 30);  // the transport negotiated anew
  CHECK(b.is_open("c1"));
  auto offers = pump_all(b);
  CHECK(conns_of(offers) == std::vector<std::string>{"c1"});  // our announce
  CHECK(of_type(offers, MessageType::announce).size() == 1);
  announce_from(b, "c1", "p", 40);  // binds it again: the backlog follows
  CHECK(ids_of(of_type(pump_all(b), MessageType::chat)) == ids);
  CHECK(b.queued("p") == 0);
}

TEST_CASE(
    "bus roster: connection_closed while held, then messages do not wake it, and an open does") {
  Bus b = with_peer();
  b.handle_roster({}, 0);
  auto ids = sent_ids(b, {"one"});
  b.handle_roster({"c1"}, 0);
  b.handle_connection_closed("c1", 0);
  REQUIRE(b.peer("c1"));  // still listed, now closed
  CHECK_FALSE(b.peer("c1")->open);
  // A late message from the closed channel: delivered, but nothing is offered back.
  announce_from(b, "c1", "p", 40);
  CHECK(events_of(drain_events(b), EventKind::message).size() == 1);
  CHECK(pump_all(b).empty());
  CHECK(b.queued("p") == 1);
  b.handle_connection_open("c1", 50);
  auto offers = pump_all(b);
  CHECK(of_type(offers, MessageType::announce).size() == 1);
  CHECK(ids_of(of_type(offers, MessageType::chat)) == ids);  // bound by the late message
}

TEST_CASE(
    "bus roster: a dropped channel that closes is forgotten, and re-listed it is known, not open") {
  Bus b = with_peer();
  b.handle_roster({}, 0);
  b.handle_connection_closed("c1", 0);
  CHECK(b.peers().empty());
  b.handle_roster({"c1"}, 0);
  REQUIRE(b.peer("c1"));
  CHECK_FALSE(b.peer("c1")->open);
  CHECK_FALSE(b.is_open("c1"));
  announce_from(b, "c1", "p", 40);  // not held (its channel closed): a message does not open it
  CHECK(pump_all(b).empty());
  CHECK_FALSE(b.is_open("p"));
}

TEST_CASE("bus roster: a roster never opens a connection the transport has not opened") {
  Bus b(config("me"));
  b.handle_roster({"x"}, 0);
  REQUIRE(b.peer("x"));
  CHECK_FALSE(b.peer("x")->open);
  CHECK_FALSE(b.is_open("x"));
  b.handle_roster({}, 0);
  b.handle_roster({"x"}, 0);  // re-listed, never opened: not held, simply not open
  CHECK_FALSE(b.is_open("x"));
  announce_from(b, "x", "px");
  CHECK(pump_all(b).empty());
  auto r = b.send("px", MessageType::chat, Json{{"text", "hi"}}, std::nullopt, 10);
  REQUIRE(r.ok());
  CHECK(pump_all(b).empty());
  CHECK(b.outcome(r->envelope.id) == SendStatus::queued);
  // The transport opens it (a peer whose channel opened before the roster listed it is open too).
  b.handle_connection_open("x", 20);
  CHECK(b.is_open("px"));
  CHECK(of_type(pump_all(b), MessageType::chat).size() == 1);
  b.handle_connection_open("y", 30);  // not on any roster yet: rosters lag channels
  CHECK(b.is_open("y"));
}

TEST_CASE("bus roster: signaling_restored announces to open, listed, unheld connections only") {
  Bus b(config("me"));
  b.handle_roster({"a", "dropped", "held", "never", "closed"}, 0);
  for (const char* c : {"a", "dropped", "held", "closed"}) b.handle_connection_open(c, 0);
  b.handle_connection_closed("closed", 0);
  b.handle_roster({"a", "never", "closed"}, 0);          // drops "dropped" and "held"
  b.handle_roster({"a", "never", "closed", "held"}, 0);  // "held" is back on its old channel
  pump_all(b);
  drain_events(b);
  b.handle_signaling_restored(100);
  auto offers = pump_all(b);
  CHECK(conns_of(offers) == std::vector<std::string>{"a"});
  CHECK(of_type(offers, MessageType::announce).size() == 1);
  auto events = events_of(drain_events(b), EventKind::peer);
  REQUIRE(events.size() == 1);
  CHECK(events[0].conn == "a");
  // Announces are what peers whose rosters dropped us wake on; nothing else changed here.
  CHECK(b.is_open("a"));
  CHECK_FALSE(b.is_open("held"));
}

TEST_CASE(
    "bus roster: signaling_restored retries a backlog whose last flush the transport refused") {
  Bus b = with_peer();
  auto r = b.send("p", MessageType::chat, Json{{"text", "one"}}, std::nullopt, 10);
  REQUIRE(r.ok());
  pump_none(b);  // refused: kept
  CHECK(b.queued("p") == 1);
  b.handle_signaling_restored(20);
  auto offers = pump_all(b);
  CHECK(of_type(offers, MessageType::announce).size() == 1);
  CHECK(ids_of(of_type(offers, MessageType::chat)) == std::vector<std::string>{r->envelope.id});
  CHECK(b.queued("p") == 0);
}

TEST_CASE("bus roster: is_open names a peer as PeerInfo does: its stream, else its connection") {
  Bus b(config("me"));
  CHECK_FALSE(b.is_open("nobody"));
  CHECK_FALSE(b.is_open(""));
  b.handle_connection_open("c1", 0);
  CHECK(b.is_open("c1"));
  announce_from(b, "c1", "p");
  CHECK(b.is_open("p"));
  CHECK_FALSE(b.is_open("c1"));  // bound: it is peer "p" now
  b.handle_connection_closed("c1", 0);
  CHECK_FALSE(b.is_open("p"));
  b.handle_connection_open("c1", 10);
  CHECK(b.is_open("p"));
  // is_open agrees with peers() for every connection, whatever the state.
  b.handle_roster({"c1", "c2"}, 0);
  b.handle_connection_open("c2", 10);
  b.handle_roster({"c2"}, 0);
  for (const auto& p : b.peers()) CHECK(b.is_open(p.stream_id.value_or(p.conn)) == p.open);
}

TEST_CASE("bus roster: a sender admitted just before is checked again after every change") {
  // Bus::admit_scanned skips admit()'s checks for the same sender on the same connection as the
  // last admitted message; each change to connections or streams must end that shortcut.
  const auto chat_from = [&](Bus& b, const std::string& conn, const Identity& who,
                             std::optional<std::string> to = std::nullopt) {
    deliver(b, conn,
            env("ch" + std::to_string(++next_id), MessageType::chat, who, std::move(to),
                Json{{"text", "hi"}}));
    return drain_events(b);
  };
  Bus b = with_peer();
  chat_from(b, "c1", ident("p"));  // admitted: the shortcut is primed
  // A roster drop unbinds c1: the same sender on c1 binds it again (a peer event says so).
  b.handle_roster({}, 0);
  drain_events(b);
  auto ev = chat_from(b, "c1", ident("p"));
  CHECK(events_of(ev, EventKind::peer).size() == 1);
  CHECK(events_of(ev, EventKind::message).size() == 1);
  // Re-listed while open, c1 is held: the next message from the same sender wakes it.
  b.handle_roster({"c1"}, 0);
  drain_events(b);
  pump_all(b);
  chat_from(b, "c1", ident("p"));
  CHECK(of_type(pump_all(b), MessageType::announce).size() == 1);
  CHECK(b.is_open("p"));
  // Another connection cannot claim p while c1 is reachable, shortcut or not.
  b.handle_connection_open("c2", 0);
  pump_all(b);
  drain_events(b);
  chat_from(b, "c1", ident("p"));
  ev = chat_from(b, "c2", ident("p"));
  REQUIRE(events_of(ev, EventKind::rejected).size() == 1);
  CHECK(events_of(ev, EventKind::rejected)[0].error.code == BusErrorCode::forged_identity);
  // The same connection naming another stream, or addressed elsewhere, is refused after a
  // message the shortcut took.
  chat_from(b, "c1", ident("p"));
  ev = chat_from(b, "c1", ident("q"));
  REQUIRE(events_of(ev, EventKind::rejected).size() == 1);
  CHECK(events_of(ev, EventKind::rejected)[0].error.code == BusErrorCode::forged_identity);
  chat_from(b, "c1", ident("p"));
  ev = chat_from(b, "c1", ident("p"), std::string("someone-else"));
  REQUIRE(events_of(ev, EventKind::rejected).size() == 1);
  CHECK(events_of(ev, EventKind::rejected)[0].error.code == BusErrorCode::not_for_us);
  // A restart (a new instance id) on the same connection is a change the peer learns of.
  chat_from(b, "c1", ident("p"));
  ev = chat_from(b, "c1", ident("p", "i2"));
  CHECK(events_of(ev, EventKind::peer).size() == 1);
  REQUIRE(b.peer("c1"));
  REQUIRE(b.peer("c1")->identity);
  CHECK(b.peer("c1")->identity->instance_id == "i2");
  // Closed and reopened: bound again by its next message.
  b.handle_connection_closed("c1", 0);
  b.handle_roster({"c2"}, 0);
  drain_events(b);
  b.handle_roster({"c1", "c2"}, 0);
  b.handle_connection_open("c1", 0);
  pump_all(b);
  drain_events(b);
  ev = chat_from(b, "c1", ident("p", "i2"));
  CHECK(events_of(ev, EventKind::peer).size() == 1);
  CHECK(b.is_open("p"));
}
