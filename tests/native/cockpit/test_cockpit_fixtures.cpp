// The client cores against their golden conversations (fixtures/cockpit/clients.json): each
// script's inputs replayed through the native build must give, step by step, the same actions,
// bytes, events and deadlines the file pins. tests/node/cockpit-clients.test.mjs does the same
// through the WASM build.
#include <catch2/catch.hpp>

#include "../../fixtures/cockpit_replay.hpp"
#include "fixture_files.hpp"

using namespace tether;
using namespace tether::testing;

namespace {

void check_replay(const Json& expected, const Json& got) {
  REQUIRE(got.is_array());
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("step " << i << ": " << to_json(expected[i]["in"]) << " at "
                 << to_json(expected[i]["now"]));
    CHECK(to_json(got[i]["out"]["actions"]) == to_json(expected[i]["out"]["actions"]));
    CHECK(to_json(got[i]["out"]["events"]) == to_json(expected[i]["out"]["events"]));
    CHECK(to_json(got[i]["out"]["timeout"]) == to_json(expected[i]["out"]["timeout"]));
    CHECK(to_json(got[i]["out"].value("result", Json())) ==
          to_json(expected[i]["out"].value("result", Json())));
  }
}

}  // namespace

TEST_CASE("golden: the viewer session's conversations replay byte for byte") {
  const Json file = fixture("cockpit/clients.json");
  REQUIRE(file["viewer"].size() >= 3);
  for (const Json& script : file["viewer"]) {
    INFO(script["name"].get<std::string>());
    check_replay(script["steps"], cockpit::replay::replay_viewer(script));
  }
}

TEST_CASE("golden: the robot session's conversations replay byte for byte") {
  const Json file = fixture("cockpit/clients.json");
  REQUIRE(file["robot"].size() >= 4);
  for (const Json& script : file["robot"]) {
    INFO(script["name"].get<std::string>());
    check_replay(script["steps"], cockpit::replay::replay_robot(script));
  }
}
