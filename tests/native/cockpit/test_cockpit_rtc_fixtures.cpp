// WebRTC brokering against its golden conversations (fixtures/cockpit/rtc.json): the relay with an
// SFU, and the client cores' WebRTC video, replayed through the native build step by step, every
// action and deadline as the file pins them. tests/node/cockpit-rtc.test.mjs replays the same file
// through the WASM build.
#include <catch2/catch.hpp>

#include "../../fixtures/cockpit_replay.hpp"
#include "../../fixtures/cockpit_rtc_replay.hpp"
#include "fixture_files.hpp"

using namespace tether;
using namespace tether::testing;

namespace {

void same_steps(const Json& expected, const Json& got) {
  REQUIRE(got.is_array());
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("step " << i << ": " << to_json(expected[i]["in"]) << " at "
                 << to_json(expected[i]["now"]));
    CHECK(to_json(got[i]["out"]) == to_json(expected[i]["out"]));
  }
}

}  // namespace

TEST_CASE("golden: the relay's WebRTC brokering replays action for action") {
  const Json file = fixture("cockpit/rtc.json");
  REQUIRE(file["relay"].size() >= 3);
  for (const Json& script : file["relay"]) {
    INFO(script["name"].get<std::string>());
    same_steps(script["steps"], cockpit::replay::replay_relay(script));
  }
}

TEST_CASE("golden: the client cores' WebRTC video replays action for action") {
  const Json file = fixture("cockpit/rtc.json");
  for (const Json& script : file["viewer"]) {
    INFO(script["name"].get<std::string>());
    same_steps(script["steps"], cockpit::replay::replay_viewer(script));
  }
  for (const Json& script : file["robot"]) {
    INFO(script["name"].get<std::string>());
    same_steps(script["steps"], cockpit::replay::replay_robot(script));
  }
}
