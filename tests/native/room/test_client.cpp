// The room client core (src/room/client.hpp), rule by rule, against scripted server text.
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "room/client.hpp"

using namespace tether;
using namespace tether::room;

namespace {
Json parse(const std::string& s) {
  return parse_json(ByteView(std::string_view(s))).value;
}
const char* kWelcome =
    R"({"t":"welcome","room":"r","seq":0,"instance":"g1","schemaVersion":0,"mode":"up-to-date","peers":[],"members":[]})";

RoomClientOptions at_schema(double schema) {
  RoomClientOptions o{"r", "me", "w"};
  o.schema_version = schema;
  return o;
}

// The client driven as a host drives it: what it queued to send after each input, in order, and
// every refused write it reported.
struct Client {
  explicit Client(RoomClientOptions o) : core(std::move(o)) {}
  RoomClient core;
  std::vector<RoomClientEvent> refused_;
  std::vector<std::string> sent() {
    std::vector<std::string> out;
    while (auto m = core.poll_transmit()) out.push_back(*m);
    return out;
  }
  std::vector<std::string> receive(const std::string& text, TimeMs now) {
    core.handle_message(text, now);
    return sent();
  }
  std::optional<std::string> write(const std::string& ops, TimeMs now) {
    if (!core.write(ops, now)) return std::nullopt;
    auto out = sent();
    REQUIRE(out.size() == 1);
    return out[0];
  }
  const std::vector<RoomClientEvent>& refused() {
    while (auto e = core.poll_event()) refused_.push_back(*e);
    return refused_;
  }
  std::string hello() const { return core.hello(); }
  Json value() const { return core.value(); }
  std::size_t unacked() const { return core.unacked(); }
  double seq() const { return core.seq(); }
  bool welcomed() const { return core.welcomed(); }
  std::vector<std::string> tail_messages() const { return core.tail_messages(); }
};
}  // namespace

TEST_CASE("client: writes fill cites from live siblings, carry the epoch, and tick the clock") {
  Client c({"r", "me", "w"});
  CHECK(!c.write(R"([{"kind":"set","path":["a"],"next":1}])", 10));  // not welcomed yet
  c.receive(kWelcome, 10);
  c.receive(
      R"({"t":"env","room":"r","env":{"proto":3,"instance":"g1","origin":"other","writer":"x","version":1,"hlc":{"p":50,"l":0},"policyVersion":0,"ops":[{"kind":"set","path":["a"],"next":0,"cites":[],"epoch":2}],"seq":1}})",
      10);
  auto m = c.write(R"([{"kind":"set","path":["a"],"next":1}])", 20);
  REQUIRE(m);
  Json env = parse(*m)["env"];
  CHECK(env["version"] == 1);
  CHECK(env["instance"] == "g1");
  CHECK(env["hlc"] == Json{{"p", 50}, {"l", 2}});  // after observing 50.0, past the local 20
  CHECK(env["ops"][0]["cites"] == parse(R"([{"origin":"other","hlc":{"p":50,"l":0}}])"));
  CHECK(env["ops"][0]["epoch"] == 2);
  CHECK(c.value() == parse(R"({"a":1})"));  // our write supersedes the cited sibling
  CHECK(c.unacked() == 1);
}

TEST_CASE("client: the echo and a duplicate drop acknowledge, the tail is resent after a welcome") {
  Client c({"r", "me", "w"});
  c.receive(kWelcome, 0);
  std::string m1 = *c.write(R"([{"kind":"set","path":["a"],"next":1}])", 5);
  std::string m2 = *c.write(R"([{"kind":"set","path":["b"],"next":2}])", 6);
  auto resent = c.receive(
      R"({"t":"welcome","room":"r","seq":0,"instance":"g1","schemaVersion":0,"mode":"up-to-date","peers":[],"members":[]})",
      7);
  CHECK(resent == std::vector<std::string>{m1, m2});
  c.receive(R"({"t":"drop","room":"r","origin":"me","version":1,"reason":"duplicate"})", 8);
  CHECK(c.unacked() == 1);
  Json env = parse(m2)["env"];
  env["seq"] = 1;
  c.receive(to_json(Json{{"t", "env"}, {"room", "r"}, {"env", env}}), 9);
  CHECK(c.unacked() == 0);
  CHECK(c.refused().empty());
}

TEST_CASE("client: a refused write leaves the tail loudly and asks for a snapshot") {
  Client c({"r", "me", "w"});
  c.receive(kWelcome, 0);
  c.write(R"([{"kind":"set","path":["a"],"next":1}])", 5);
  auto out = c.receive(R"({"t":"drop","room":"r","origin":"me","version":1,"reason":"order"})", 6);
  REQUIRE(out.size() == 1);
  CHECK(parse(out[0]).count("seq") == 0);  // a hello without seq: the relay answers a snapshot
  CHECK(c.refused().size() == 1);
  CHECK(c.refused()[0].reason == "order");
  CHECK(c.unacked() == 0);
  // A new generation drops the tail written in the old one.
  Client d({"r", "me", "w"});
  d.receive(kWelcome, 0);
  d.write(R"([{"kind":"set","path":["a"],"next":1}])", 5);
  auto again = d.receive(
      R"({"t":"welcome","room":"r","seq":3,"instance":"g2","schemaVersion":1,"mode":"snapshot","registers":[],"wm":{},"peers":[],"members":[]})",
      6);
  CHECK(again.empty());
  CHECK(d.refused().size() == 1);
  CHECK(d.refused()[0].reason == "generation");
  CHECK(d.value() == Json::object());
}

TEST_CASE("client: a gap in seqs asks for a delta, the fold is last-writer-wins across paths") {
  Client c({"r", "me", "w"});
  c.receive(kWelcome, 0);
  auto env = [](int seq, int p, const char* path, const char* next, const char* kind = "set") {
    return std::string(
               R"({"t":"env","room":"r","env":{"proto":3,"instance":"g1","origin":"o","writer":"x","version":)") +
           std::to_string(seq) + R"(,"hlc":{"p":)" + std::to_string(p) +
           R"(,"l":0},"policyVersion":0,"ops":[{"kind":")" + kind + R"(","path":)" + path +
           R"(,"next":)" + next + R"(,"cites":[],"epoch":0}],"seq":)" + std::to_string(seq) + "}}";
  };
  c.receive(env(1, 10, R"(["doc","x"])", "1"), 0);
  c.receive(env(2, 20, "[]", R"({"doc":{"y":2}})"), 0);  // a newer root replaces the older subtree
  CHECK(c.value() == parse(R"({"doc":{"y":2}})"));
  c.receive(env(3, 30, R"(["doc","z"])", "3"), 0);  // a newer leaf lands inside it
  CHECK(c.value() == parse(R"({"doc":{"y":2,"z":3}})"));
  auto out = c.receive(env(5, 50, R"(["q"])", "5"), 0);  // seq 4 was lost
  REQUIRE(out.size() == 1);
  CHECK(parse(out[0])["seq"] == 3);
  CHECK(c.seq() == 3);
}

TEST_CASE("client: a late joiner whose clock lags writes above the stamps of a welcome snapshot") {
  // The room's root was set at p=1000 by a replica whose clock runs ahead; this client's clock
  // says 10. A leaf written below the root must stamp above it, or the root wins the fold and
  // the acknowledged leaf vanishes from every replica's value.
  Client c({"r", "late", "w"});
  c.receive(
      R"({"t":"welcome","room":"r","seq":1,"instance":"g1","schemaVersion":0,"mode":"snapshot","registers":[{"path":[],"siblings":[{"kind":"set","writer":"x","origin":"fast","hlc":{"p":1000,"l":3},"epoch":0,"value":{"doc":{}}}],"water":{"gone":{"p":2000,"l":0}}}],"wm":{"fast":1},"peers":[],"members":[]})",
      10);
  auto m = c.write(R"([{"kind":"set","path":["doc","x"],"next":1}])", 10);
  REQUIRE(m);
  Json hlc = parse(*m)["env"]["hlc"];
  CHECK(hlc == Json{{"p", 2000}, {"l", 2}});  // above the sibling and the watermark it learned
  CHECK(c.value() == parse(R"({"doc":{"x":1}})"));
}

TEST_CASE("client: a late joiner whose clock lags writes above the stamps of a welcome delta") {
  Client c({"r", "late", "w"});
  c.receive(kWelcome, 10);  // joined at seq 0; reconnects and catches up with a delta
  c.receive(
      R"({"t":"welcome","room":"r","seq":1,"instance":"g1","schemaVersion":0,"mode":"delta","envs":[{"proto":3,"instance":"g1","origin":"fast","writer":"x","version":1,"hlc":{"p":1000,"l":0},"policyVersion":0,"ops":[{"kind":"set","path":[],"next":{"doc":{}},"cites":[],"epoch":0}],"seq":1}],"peers":[],"members":[]})",
      10);
  auto m = c.write(R"([{"kind":"set","path":["doc","x"],"next":1}])", 10);
  REQUIRE(m);
  CHECK(parse(*m)["env"]["hlc"] == Json{{"p", 1000}, {"l", 2}});
  CHECK(c.value() == parse(R"({"doc":{"x":1}})"));
}

TEST_CASE("client: envelopes carry the client's schemaVersion") {
  Client c(at_schema(2));
  c.receive(kWelcome, 0);
  auto m = c.write(R"([{"kind":"set","path":["a"],"next":1}])", 5);
  REQUIRE(m);
  CHECK(parse(*m)["env"]["schemaVersion"] == 2);
  CHECK(parse(c.hello())["schemaVersion"] == 2);
}

TEST_CASE("client: a new client seeded with a persisted outbox resends it after the welcome") {
  Client old({"r", "me", "w"});
  old.receive(kWelcome, 0);
  std::string m1 = *old.write(R"([{"kind":"set","path":["a"],"next":1}])", 500);
  std::string m2 = *old.write(R"([{"kind":"set","path":["b"],"next":2}])", 501);
  std::vector<std::string> persisted = old.tail_messages();  // what the app kept on disk

  Client fresh({"r", "me", "w"});
  CHECK(fresh.core.seed_tail(persisted, 0).empty());
  CHECK(fresh.unacked() == 2);
  CHECK(fresh.sent().empty());  // nothing goes out before a welcome
  auto resent = fresh.receive(kWelcome, 1);
  CHECK(resent == std::vector<std::string>{m1, m2});
  CHECK(fresh.value() == parse(R"({"a":1,"b":2})"));
  // New writes continue the version counter and stamp above the seeded ones (the clock says 1).
  Json env = parse(*fresh.write(R"([{"kind":"set","path":["a"],"next":3}])", 1))["env"];
  CHECK(env["version"] == 3);
  CHECK(env["hlc"] == Json{{"p", 501}, {"l", 2}});
  // The relay already held version 1: its duplicate drop is the acknowledgement.
  fresh.receive(R"({"t":"drop","room":"r","origin":"me","version":1,"reason":"duplicate"})", 2);
  CHECK(fresh.unacked() == 2);
  CHECK(fresh.refused().empty());

  // After a cut (a migration while offline) the seeded tail is dropped loudly, not resent.
  Client cut({"r", "me", "w"});
  CHECK(cut.core.seed_tail(persisted, 0).empty());
  auto none = cut.receive(
      R"({"t":"welcome","room":"r","seq":4,"instance":"g2","schemaVersion":1,"mode":"snapshot","registers":[],"wm":{},"peers":[],"members":[]})",
      1);
  CHECK(none.empty());
  REQUIRE(cut.refused().size() == 2);
  CHECK(cut.refused()[0].reason == "generation");
}

TEST_CASE("client: a bad outbox is refused whole with a message naming the fix") {
  Client old({"r", "me", "w"});
  old.receive(kWelcome, 0);
  old.write(R"([{"kind":"set","path":["a"],"next":1}])", 5);
  old.write(R"([{"kind":"set","path":["b"],"next":1}])", 6);
  auto good = old.tail_messages();
  auto refused = [](std::vector<std::string> tail, RoomClientOptions o = {"r", "me", "w"}) {
    Client c(o);
    std::string err = c.core.seed_tail(tail, 0);
    CHECK(c.unacked() == 0);
    return err;
  };
  CHECK(refused({good[1], good[0]}).find("versions must increase") != std::string::npos);
  CHECK(refused({"{\"t\":\"env\""}).find("not a client env message") != std::string::npos);
  CHECK(refused(good, {"other", "me", "w"}).find("another room") != std::string::npos);
  CHECK(refused(good, {"r", "you", "w"}).find("another origin") != std::string::npos);
  std::string broken = good[0];
  broken.replace(broken.find("\"version\":1"), 11, "\"version\":0");
  CHECK(refused({broken}).find("malformed envelope (version)") != std::string::npos);
  Client welcomed({"r", "me", "w"});
  welcomed.receive(kWelcome, 0);
  CHECK(welcomed.core.seed_tail(good, 0).find("before its first welcome") != std::string::npos);
}

TEST_CASE("client: hostile server text (non-object envelopes, registers, paths) changes nothing") {
  // Found by fuzz_room_client: an envelope that is not an object reached nlohmann's value(),
  // which aborts the WASM module.
  Client c({"r", "me", "w"});
  c.receive(kWelcome, 0);
  c.receive(
      R"({"t":"welcome","room":"r","seq":1,"instance":"g1","schemaVersion":0,"mode":"delta","envs":[1,null,"x",[2]],"peers":[],"members":[]})",
      1);
  c.receive(R"({"t":"env","room":"r","env":5})", 2);
  c.receive(R"({"t":"env","room":"r","env":{"seq":2,"hlc":7,"ops":[{"path":["a"],"cites":[3]}]}})",
            3);
  c.receive(
      R"({"t":"welcome","room":"r","seq":1,"instance":"g1","schemaVersion":0,"mode":"snapshot","registers":[{"path":null},{"path":"x","siblings":[4]},7],"wm":{},"peers":[],"members":[]})",
      4);
  CHECK(c.write(R"([{"kind":"set","path":["a"],"next":1}])", 5));
  CHECK(c.value() == parse(R"({"a":1})"));
}

// Read acknowledgements (room/read_ack.hpp): the client counts every frame of its socket and
// acknowledges at the marks of the interval a welcome advertised; never to a relay that did not.
TEST_CASE("client: acknowledges what it read at each mark, only when the relay asked") {
  const std::string welcome =
      R"({"t":"welcome","room":"r","seq":0,"instance":"g1","schemaVersion":0,"readAck":1024,"mode":"up-to-date","peers":[],"members":[]})";
  const std::string pad(600, 'x');
  const std::string presence =
      R"({"t":"presence","room":"r","peer":{"origin":"b","data":")" + pad + R"("}})";
  Client c({"r", "a", "w", 0, 0});
  SECTION("advertised: the claim, then a read at each frame that crosses a multiple") {
    c.core.connect();
    double n = static_cast<double>(welcome.size());
    CHECK(c.receive(welcome, 1) ==
          std::vector<std::string>{R"({"t":"read","room":"r","bytes":0})"});
    n += static_cast<double>(presence.size());
    CHECK(c.receive(presence, 2).empty());  // below 1024
    n += static_cast<double>(presence.size());
    REQUIRE(n > 1024);
    CHECK(c.receive(presence, 3) ==
          std::vector<std::string>{R"({"t":"read","room":"r","bytes":)" +
                                   std::to_string(static_cast<long long>(n)) + "}"});
    // A new socket counts from zero: the same frames earn the same acknowledgements again.
    CHECK(parse(c.core.connect())["t"] == "hello");
    CHECK(c.receive(welcome, 4).size() == 1);
    CHECK(c.receive(presence, 5).empty());
    CHECK(c.receive(presence, 6).size() == 1);
  }
  SECTION("not advertised: never a read, however much arrives") {
    c.core.connect();
    CHECK(c.receive(kWelcome, 1).empty());
    for (int i = 0; i < 10; ++i) CHECK(c.receive(presence, 2 + i).empty());
  }
  SECTION("a message that is not the frame's own text stops acknowledgements on the socket") {
    c.core.connect();
    CHECK(c.receive(welcome, 1).size() == 1);
    c.core.handle_message(presence, 2, /*frame=*/false);
    CHECK(c.sent().empty());
    for (int i = 0; i < 4; ++i) CHECK(c.receive(presence, 3 + i).empty());
  }
}

// docs/rooms.md § The room client: a client created again under an origin it used before (a
// reload) must write above what the room holds from that origin, else its writes are answered
// `duplicate` and dropped from the tail as acknowledged, while the room never kept them.
TEST_CASE("client: a welcome raises the version counter above the room's mark for our origin") {
  Client c({"r", "tab", "w"});
  c.receive(
      R"({"t":"welcome","room":"r","seq":7,"instance":"g1","schemaVersion":0,"mode":"snapshot","registers":[],"wm":{"tab":5,"other":9},"peers":[],"members":[]})",
      10);
  auto m = c.write(R"([{"kind":"set","path":["a"],"next":1}])", 20);
  REQUIRE(m);
  CHECK(parse(*m)["env"]["version"] == 6);
  // A delta: the highest version of ours among its envelopes.
  Client d({"r", "tab", "w"});
  d.receive(kWelcome, 0);
  CHECK(parse(*d.write(R"([{"kind":"set","path":["a"],"next":1}])", 5))["env"]["version"] == 1);
  auto env = [](const char* origin, int version, int seq) {
    return std::string(R"({"proto":3,"instance":"g1","origin":")") + origin +
           R"(","writer":"w","version":)" + std::to_string(version) +
           R"(,"hlc":{"p":1,"l":0},"policyVersion":0,"ops":[{"kind":"set","path":["b"],"next":0,"cites":[],"epoch":0}],"seq":)" +
           std::to_string(seq) + "}";
  };
  d.receive(
      std::string(
          R"({"t":"welcome","room":"r","seq":3,"instance":"g1","schemaVersion":0,"mode":"delta","envs":[)") +
          env("tab", 4, 2) + "," + env("other", 8, 3) + R"(],"peers":[],"members":[]})",
      6);
  CHECK(parse(*d.write(R"([{"kind":"set","path":["a"],"next":2}])", 7))["env"]["version"] == 5);
  // A mark below what we wrote never lowers the counter.
  d.receive(
      R"({"t":"welcome","room":"r","seq":9,"instance":"g1","schemaVersion":0,"mode":"snapshot","registers":[],"wm":{"tab":2},"peers":[],"members":[]})",
      8);
  d.sent();
  CHECK(parse(*d.write(R"([{"kind":"set","path":["a"],"next":3}])", 9))["env"]["version"] == 6);
}

// docs/rooms.md § The room client: a refused hello and an eject naming our writer are reported,
// and the client is not welcomed until a hello is accepted; another writer's eject is not ours.
TEST_CASE("client: a reject and an eject naming our writer are events, others' ejects are not") {
  Client c({"r", "me", "w"});
  c.receive(R"({"t":"reject","room":"r","reason":"schema","expected":4})", 1);
  REQUIRE(c.refused().size() == 1);
  CHECK(c.refused()[0].kind == RoomClientEvent::Kind::rejected);
  CHECK(c.refused()[0].reason == "schema");
  CHECK(c.refused()[0].expected == 4);
  CHECK(!c.welcomed());
  c.receive(kWelcome, 2);
  REQUIRE(c.write(R"([{"kind":"set","path":["a"],"next":1}])", 3));
  c.receive(R"({"t":"eject","room":"r","writer":"other","reason":"rate"})", 4);
  CHECK(c.refused().size() == 1);  // broadcast under ejection 'writer': not ours
  CHECK(c.welcomed());
  c.receive(R"({"t":"eject","room":"r","writer":"w","reason":"can-write"})", 5);
  REQUIRE(c.refused().size() == 2);
  CHECK(c.refused()[1].kind == RoomClientEvent::Kind::ejected);
  CHECK(c.refused()[1].reason == "can-write");
  CHECK(!c.welcomed());
  CHECK(!c.write(R"([{"kind":"set","path":["a"],"next":2}])", 6));
  CHECK(c.unacked() == 1);  // the tail stays for tail() and the next welcome
  // A reconnect's refused hello unwelcomes a client that had been welcomed.
  Client d({"r", "me", "w"});
  d.receive(kWelcome, 0);
  d.receive(R"({"t":"reject","room":"r","reason":"policy-version","expected":2})", 1);
  REQUIRE(d.refused().size() == 1);
  CHECK(d.refused()[0].reason == "policy-version");
  CHECK(!d.welcomed());
  CHECK(!d.write(R"([{"kind":"set","path":["a"],"next":1}])", 2));
  Client e({"r", "me", "w"});
  e.receive(R"({"t":"reject","room":"r","reason":"unauthorized"})", 1);
  REQUIRE(e.refused().size() == 1);
  CHECK(e.refused()[0].expected == -1);
}

// docs/rooms.md § Migrations: the room's document survives a client of a newer schema.
namespace {
const char* kWrittenAtSchema1 =
    R"({"t":"welcome","room":"r","seq":3,"instance":"g1","schemaVersion":1,"mode":"snapshot","registers":[{"path":["a"],"siblings":[{"kind":"set","writer":"x","origin":"old","hlc":{"p":100,"l":0},"epoch":0,"value":1}],"water":{}}],"wm":{"old":3},"peers":[],"members":[]})";
}  // namespace

TEST_CASE("client: a newer client writes nothing into an older written room until it migrates") {
  Client c(at_schema(2));
  c.receive(kWrittenAtSchema1, 200);
  CHECK(c.core.room_schema_version() == 1);
  CHECK(c.core.write(R"([{"kind":"set","path":["a"],"next":2}])", 210).refusal ==
        WriteRefusal::needs_migration);
  CHECK(c.sent().empty());
  CHECK(c.core.unacked() == 0);
  CHECK(c.value() == parse(R"({"a":1})"));  // nothing of the room's was touched
  // A migration replaces the document, so it must say what the whole document is.
  CHECK(c.core.migrate(R"([{"kind":"set","path":["b"],"next":2}])", 210).refusal ==
        WriteRefusal::migration_root);
  REQUIRE(c.core.migrate(R"([{"kind":"set","path":[],"next":{"a":1,"b":2}}])", 220));
  auto out = c.sent();
  REQUIRE(out.size() == 1);
  Json env = parse(out[0])["env"];
  CHECK(env["schemaVersion"] == 2);
  CHECK(env["instance"] == "g1");
  // Until the new generation's welcome, a write would land in the dead one.
  CHECK(c.core.write(R"([{"kind":"set","path":["c"],"next":3}])", 230).refusal ==
        WriteRefusal::migrating);
  CHECK(c.core.migrate(R"([{"kind":"set","path":[],"next":{}}])", 230).refusal ==
        WriteRefusal::migrating);
  // The echo, then the relay's re-welcome into the generation the migration cut.
  env["seq"] = 4;
  c.receive(to_json(Json{{"t", "env"}, {"room", "r"}, {"env", env}}), 240);
  CHECK(c.core.unacked() == 0);
  c.receive(
      R"({"t":"welcome","room":"r","seq":4,"instance":"g2","schemaVersion":2,"mode":"snapshot","registers":[{"path":[],"siblings":[{"kind":"set","writer":"w","origin":"me","hlc":{"p":220,"l":0},"epoch":0,"value":{"a":1,"b":2}}],"water":{}}],"wm":{},"peers":[],"members":[]})",
      250);
  CHECK(c.refused().empty());
  CHECK(c.core.room_schema_version() == 2);
  auto m = c.write(R"([{"kind":"set","path":["c"],"next":3}])", 260);
  REQUIRE(m);
  CHECK(parse(*m)["env"]["schemaVersion"] == 2);
  CHECK(parse(*m)["env"]["instance"] == "g2");
  CHECK(c.core.migrate(R"([{"kind":"set","path":[],"next":{}}])", 270).refusal ==
        WriteRefusal::no_migration);
}

TEST_CASE("client: ordinary writes carry the room's schema, and one migrated past us is outdated") {
  Client c(at_schema(1));
  c.receive(kWrittenAtSchema1, 200);
  auto m = c.write(R"([{"kind":"set","path":["a"],"next":5}])", 210);
  REQUIRE(m);
  CHECK(parse(*m)["env"]["schemaVersion"] == 1);
  // Another client migrated the room to schema 2 while we were in it.
  c.receive(
      R"({"t":"welcome","room":"r","seq":9,"instance":"g2","schemaVersion":2,"mode":"snapshot","registers":[],"wm":{},"peers":[],"members":[]})",
      220);
  CHECK(c.core.write(R"([{"kind":"set","path":["a"],"next":6}])", 230).refusal ==
        WriteRefusal::outdated);
  CHECK(c.sent().empty());
  // A room raised to Infinity (an envelope's 1e999, written null) is newer than any client.
  c.receive(
      R"({"t":"welcome","room":"r","seq":10,"instance":"g3","schemaVersion":null,"mode":"snapshot","registers":[],"wm":{},"peers":[],"members":[]})",
      240);
  CHECK(c.core.write(R"([{"kind":"set","path":["a"],"next":7}])", 250).refusal ==
        WriteRefusal::outdated);
}

// After our migration, the socket dropped before its echo: the reconnect's welcome is the new
// generation's, and whether our migration made it is in its registers.
TEST_CASE("client: a migration whose echo was lost is judged by the new generation's snapshot") {
  Client c(at_schema(2));
  c.receive(kWrittenAtSchema1, 200);
  REQUIRE(c.core.migrate(R"([{"kind":"set","path":[],"next":{"a":1}}])", 300));
  c.sent();
  SECTION("ours cut it: the sibling at its stamp is the acknowledgement") {
    c.receive(
        R"({"t":"welcome","room":"r","seq":4,"instance":"g2","schemaVersion":2,"mode":"snapshot","registers":[{"path":[],"siblings":[{"kind":"set","writer":"w","origin":"me","hlc":{"p":300,"l":0},"epoch":0,"value":{"a":1}}],"water":{}}],"wm":{},"peers":[],"members":[]})",
        310);
    CHECK(c.refused().empty());
    CHECK(c.value() == parse(R"({"a":1})"));
  }
  SECTION("another's cut it first: ours is refused as generation, loudly") {
    c.receive(
        R"({"t":"welcome","room":"r","seq":4,"instance":"g2","schemaVersion":2,"mode":"snapshot","registers":[{"path":[],"siblings":[{"kind":"set","writer":"y","origin":"rival","hlc":{"p":290,"l":0},"epoch":0,"value":{"theirs":1}}],"water":{}}],"wm":{},"peers":[],"members":[]})",
        310);
    REQUIRE(c.refused().size() == 1);
    CHECK(c.refused()[0].reason == "generation");
  }
  CHECK(c.core.unacked() == 0);
  // The room is at our schema either way: an ordinary write goes, a second migration does not.
  CHECK(c.write(R"([{"kind":"set","path":["b"],"next":2}])", 320));
  CHECK(c.core.migrate(R"([{"kind":"set","path":[],"next":{}}])", 330).refusal ==
        WriteRefusal::no_migration);
}

TEST_CASE("client: the first write into a room nobody has written may carry our schema") {
  Client c(at_schema(3));
  c.receive(kWelcome, 0);  // seq 0, schema 0
  auto m = c.write(R"([{"kind":"set","path":[],"next":{}}])", 5);
  REQUIRE(m);
  CHECK(parse(*m)["env"]["schemaVersion"] == 3);
  // It cuts a generation, so the next write waits for that welcome.
  CHECK(c.core.write(R"([{"kind":"set","path":["a"],"next":1}])", 6).refusal ==
        WriteRefusal::migrating);
  CHECK(c.core.write(R"({"not":"ops"})", 7).refusal == WriteRefusal::migrating);
}

TEST_CASE("client: a room the relay lost is reported with the document we held") {
  Client c({"r", "me", "w"});
  c.receive(kWelcome, 0);
  c.receive(
      R"({"t":"env","room":"r","env":{"proto":3,"instance":"g1","origin":"other","writer":"x","version":1,"hlc":{"p":50,"l":0},"policyVersion":0,"ops":[{"kind":"set","path":[],"next":{"kept":1}}],"seq":1}})",
      60);
  REQUIRE(c.write(R"([{"kind":"set","path":["mine"],"next":2}])", 70));
  // The relay restarted without storage: the same name, a new generation, seq 0, same schema.
  c.receive(
      R"({"t":"welcome","room":"r","seq":0,"instance":"g9","schemaVersion":0,"mode":"up-to-date","peers":[],"members":[]})",
      80);
  auto events = c.refused();
  REQUIRE(events.size() == 2);
  CHECK(events[0].kind == RoomClientEvent::Kind::lost);
  CHECK(events[0].reason == "room-lost");
  CHECK(parse(events[0].envelope) == parse(R"({"kept":1,"mine":2})"));
  CHECK(events[1].kind == RoomClientEvent::Kind::refused);
  CHECK(events[1].reason == "generation");
  CHECK(c.value() == Json::object());
  // Writing it back is the application's call, and an ordinary write.
  CHECK(c.write(R"([{"kind":"set","path":[],"next":{"kept":1,"mine":2}}])", 90));
}

TEST_CASE("client: a migration's new generation is not a lost room") {
  Client c(at_schema(1));
  c.receive(kWrittenAtSchema1, 200);
  c.receive(
      R"({"t":"welcome","room":"r","seq":9,"instance":"g2","schemaVersion":2,"mode":"snapshot","registers":[],"wm":{},"peers":[],"members":[]})",
      220);
  CHECK(c.refused().empty());
}
