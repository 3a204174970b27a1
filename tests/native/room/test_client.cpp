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

// The client driven as a host drives it: what it queued to send after each input, in order, and
// every refused write it reported.
struct Client {
  explicit Client(RoomClientOptions o) : core(std::move(o)) {}
  RoomClient core;
  std::vector<RefusedWrite> refused_;
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
  const std::vector<RefusedWrite>& refused() {
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
