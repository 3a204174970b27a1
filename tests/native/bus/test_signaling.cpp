// The signaling negotiation (src/bus/signaling.hpp): the golden traces of
// fixtures/bus/signaling.json replayed core by core, and the rules one at a time.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "../../fixtures/room_script.hpp"
#include "bus/signaling.hpp"
#include "fixture_files.hpp"

using namespace tether;
using namespace tether::bus;
using tether::testing::fixture;

namespace {
struct Core {
  Signaling s;
  explicit Core(const std::string& self, std::uint64_t seed = 1)
      : s(SignalingOptions{self, seed, 10'000}) {}
  Json step(Json in, TimeMs now) {
    in["now"] = now;
    fixtures::signaling_apply(s, in);
    return fixtures::signaling_drain(s);
  }
};
std::vector<std::string> kinds(const Json& list) {
  std::vector<std::string> out;
  for (const auto& a : list) out.push_back(a["kind"].get<std::string>());
  return out;
}
Json sig(const std::string& from, const std::string& data) {
  return Json{{"in", "signal"}, {"from", from}, {"data", data}};
}
}  // namespace

TEST_CASE("signaling fixtures: every trace replays step by step") {
  const Json f = fixture("bus/signaling.json");
  REQUIRE(f["scenarios"].size() >= 6);
  for (const auto& sc : f["scenarios"]) {
    for (const auto& t : sc["traces"]) {
      Signaling s(SignalingOptions{t["options"]["selfId"].get<std::string>(),
                                   t["options"]["seed"].get<std::uint64_t>(),
                                   kSignalingOpenTimeoutMs});
      std::size_t k = 0;
      for (const auto& step : t["steps"]) {
        INFO(sc["name"].get<std::string>() << "/" << t["options"]["selfId"].get<std::string>()
                                           << " step " << k++ << ": " << step["input"].dump());
        fixtures::signaling_apply(s, step["input"]);
        Json out = fixtures::signaling_drain(s);
        CHECK(out["actions"] == step["actions"]);
        CHECK(out["events"] == step["events"]);
        CHECK(out["timeout"] == step["timeout"]);
      }
    }
  }
}

TEST_CASE("signaling: only the lower id offers, the higher asks, and refuses an offer from below") {
  Core b("b");
  Json out = b.step(Json{{"in", "welcome"}, {"members", {"a"}}}, 0);
  REQUIRE(kinds(out["actions"]) == std::vector<std::string>{"signal"});
  CHECK(out["actions"][0]["data"] == R"({"k":"renegotiate"})");
  // a (lower) may offer; c (higher) may not.
  out = b.step(sig("c", R"({"k":"offer","gen":"c.1","sdp":"v=0"})"), 1);
  CHECK(out["actions"].empty());
  CHECK(b.s.stats().refused_signals == 1);
  out = b.step(sig("a", R"({"k":"offer","gen":"a.1","sdp":"v=0"})"), 2);
  CHECK(kinds(out["actions"]) == std::vector<std::string>{"create", "answer"});
  CHECK(out["actions"][0]["offerer"] == false);
  CHECK(out["actions"][1]["sdp"] == "v=0");
  Core a("a");
  out = a.step(Json{{"in", "welcome"}, {"members", {"b"}}}, 0);
  CHECK(kinds(out["actions"]) == std::vector<std::string>{"create", "offer"});
  CHECK(out["actions"][0]["offerer"] == true);
}

TEST_CASE("signaling: answers and candidates of another generation are ignored") {
  Core a("a");
  Json out = a.step(Json{{"in", "welcome"}, {"members", {"b"}}}, 0);
  const std::string gen = out["actions"][0]["gen"];
  CHECK(gen == a.s.instance() + ".1");
  out = a.step(sig("b", R"({"k":"answer","gen":"other.1","sdp":"v=0"})"), 1);
  CHECK(out["actions"].empty());
  out = a.step(sig("b", R"({"k":"ice","gen":"other.1","c":{"candidate":"c"}})"), 1);
  CHECK(out["actions"].empty());
  CHECK(a.s.stats().refused_signals == 2);
  // The right generation: accepted; a duplicate answer is refused while the first is in flight.
  out = a.step(sig("b", R"({"k":"answer","gen":")" + gen + R"(","sdp":"v=0"})"), 2);
  CHECK(kinds(out["actions"]) == std::vector<std::string>{"accept"});
  out = a.step(sig("b", R"({"k":"answer","gen":")" + gen + R"(","sdp":"v=0"})"), 2);
  CHECK(out["actions"].empty());
  // A candidate before the remote description waits; remote-set releases it.
  out = a.step(sig("b", R"({"k":"ice","gen":")" + gen +
                            R"(","c":{"candidate":"cand","sdpMid":"0","sdpMLineIndex":0}})"),
               3);
  CHECK(out["actions"].empty());
  out = a.step(Json{{"in", "remote-set"}, {"peer", "b"}, {"gen", gen}}, 4);
  REQUIRE(kinds(out["actions"]) == std::vector<std::string>{"candidate"});
  CHECK(out["actions"][0]["candidate"] ==
        Json{{"candidate", "cand"}, {"sdpMid", "0"}, {"sdpMLineIndex", 0}});
}

TEST_CASE("signaling: a welcome keeps healthy connections and rebuilds the rest") {
  Core a("a");
  Json out = a.step(Json{{"in", "welcome"}, {"members", {"b", "c"}}}, 0);
  CHECK(kinds(out["actions"]) == std::vector<std::string>{"create", "offer", "create", "offer"});
  const std::string gen_b = out["actions"][0]["gen"];
  a.step(Json{{"in", "channels-open"}, {"peer", "b"}, {"gen", gen_b}}, 1);
  CHECK(a.s.is_open("b"));
  a.step(Json{{"in", "down"}}, 2);
  out = a.step(Json{{"in", "rebuild"}, {"peer", "b"}}, 3);  // held: signaling is down
  CHECK(kinds(out["actions"]) == std::vector<std::string>{});
  out = a.step(Json{{"in", "welcome"}, {"members", {"b", "c"}}}, 4);
  // b was asked for while down: rebuilt even though healthy; c never opened: rebuilt.
  CHECK(kinds(out["actions"]) ==
        std::vector<std::string>{"close", "create", "offer", "close", "create", "offer"});
  CHECK(kinds(out["events"]) == std::vector<std::string>{"roster", "close", "reconnect"});
  out = a.step(Json{{"in", "welcome"}, {"members", {"b"}}},
               5);  // nothing changed for b's new generation
  CHECK(kinds(out["actions"]) == std::vector<std::string>{"close", "create", "offer"});
}

TEST_CASE("signaling: no signal leaves while signaling is down, and hostile data is refused") {
  Core a("a");
  Json out = a.step(Json{{"in", "roster"}, {"members", {"b"}}}, 0);
  out = a.step(Json{{"in", "rebuild"}, {"peer", "b"}}, 1);
  CHECK(out["actions"].empty());  // not welcomed: no signaling to carry it
  a.step(Json{{"in", "welcome"}, {"members", {"b"}}}, 2);
  std::string big(kMaxSignalDataBytes + 1, ' ');
  a.step(sig("b", big), 3);
  a.step(
      sig("b", std::string(R"({"k":"offer","gen":")") + std::string(65, 'g') + R"(","sdp":"v"})"),
      3);
  a.step(sig("b", "{\"k\":\"renegotiate\"" + std::string(70, ' ') + "}"), 3);  // valid: a re-offers
  CHECK(a.s.stats().refused_signals == 2);
}

TEST_CASE("signaling: the open timeout negotiates again, an unanswered renegotiate is sent again") {
  Core a("a");
  Json out = a.step(Json{{"in", "welcome"}, {"members", {"b"}}}, 1000);
  CHECK(out["timeout"] == 11000);
  out = a.step(Json{{"in", "timeout"}}, 10999);  // early: harmless
  CHECK(out["actions"].empty());
  out = a.step(Json{{"in", "timeout"}}, 11000);
  CHECK(kinds(out["actions"]) == std::vector<std::string>{"close", "create", "offer"});
  CHECK(out["timeout"] == 21000);
  Core b("b");
  out = b.step(Json{{"in", "welcome"}, {"members", {"a"}}}, 0);
  CHECK(out["timeout"] == 10000);
  out = b.step(Json{{"in", "timeout"}}, 10000);
  CHECK(kinds(out["actions"]) == std::vector<std::string>{"signal"});
  // A peer that left the roster is not asked for again.
  b.step(Json{{"in", "roster"}, {"members", Json::array()}}, 10001);
  out = b.step(Json{{"in", "timeout"}}, 20000);
  CHECK(out["actions"].empty());
}
