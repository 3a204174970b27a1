// The mailbox golden conversation (fixtures/mailbox/conversation.json, written by tether_fixtures):
// the native build answers every request with exactly the recorded actions and ends with exactly
// the recorded records; tests/node/mailbox.test.mjs replays it against the WASM build.
#include <catch2/catch.hpp>
#include <variant>

#include "fixture_files.hpp"
#include "mailbox/action_json.hpp"
#include "mailbox/mailbox.hpp"

using namespace tether;
using namespace tether::mailbox;
using tether::mailbox::test::action_json;
using tether::testing::fixture;

namespace {

Bytes from_hex(const std::string& hex) {
  Bytes out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

}  // namespace

TEST_CASE("mailbox fixtures: the recorded conversation replays action for action",
          "[mailbox][fixtures]") {
  const Json f = fixture("mailbox/conversation.json");
  REQUIRE(f["steps"].size() >= 20);
  Mailbox core;
  core.loaded(0);
  std::size_t n = 0;
  for (const auto& step : f["steps"]) {
    INFO("step " << n++);
    TimeMs now = 0;
    if (step.contains("timeout")) {
      now = step["timeout"].get<TimeMs>();
      core.handle_timeout(now);
    } else {
      const Json& r = step["request"];
      now = r["now"].get<TimeMs>();
      const Bytes entropy = from_hex(r["entropy"].get<std::string>());
      const std::string body = r["body"].get<std::string>();
      core.handle_request(r["id"].get<RequestId>(), r["method"].get<std::string>(),
                          r["target"].get<std::string>(), r["authorization"].get<std::string>(),
                          ByteView(std::string_view(body)), ByteView(entropy), now);
    }
    Json got = Json::array();
    while (auto a = core.poll_action()) {
      got.push_back(action_json(*a));
      if (auto* p = std::get_if<Persist>(&*a)) core.handle_persisted(p->token, true, now);
    }
    CHECK(to_json(got) == to_json(step["actions"]));
  }
  Json records = Json::object();
  for (const auto& [k, v] : core.snapshot()) records[k] = v;
  CHECK(to_json(records) == to_json(f["records"]));
}
