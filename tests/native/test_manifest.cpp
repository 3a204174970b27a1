// Manifest v1: golden vectors plus the rules of cockpit-wire-protocol.md § Manifest.
#include <catch2/catch.hpp>

#include "fixture_files.hpp"
#include "wire/limits.hpp"
#include "wire/manifest.hpp"

using namespace tether;
using namespace tether::wire;
using namespace tether::testing;

namespace {
Result<Json, ManifestErrors> check(const char* text) {
  return validate_manifest(parse_json(ByteView(std::string_view(text))).value);
}
}  // namespace

TEST_CASE("golden: manifests validate to their normal form or their errors") {
  const Json file = fixture("wire/manifests.json");
  REQUIRE(file["vectors"].size() >= 25);
  for (const auto& v : file["vectors"]) {
    INFO(v["name"].get<std::string>());
    auto r = validate_manifest(v["manifest"]);
    if (v.contains("normal")) {
      REQUIRE(r);
      CHECK(to_json(r.value()) == to_json(v["normal"]));
    } else {
      REQUIRE_FALSE(r);
      REQUIRE(r.error().size() == v["errors"].size());
      for (std::size_t i = 0; i < r.error().size(); ++i) {
        CHECK(manifest_error_name(r.error()[i].code) == v["errors"][i]["code"].get<std::string>());
        CHECK(r.error()[i].path == v["errors"][i]["path"].get<std::string>());
        CHECK_FALSE(r.error()[i].message.empty());
      }
    }
  }
}

TEST_CASE("normal form fills every default") {
  auto r = check(R"({"version":1,"channels":[{"ch":"cam","encoding":"jpeg.v1"}],"panels":[{"id":"v","kind":"video","channels":["cam"]}]})");
  REQUIRE(r);
  const Json& ch = r.value()["channels"][0];
  CHECK(ch["dir"] == "rx");
  CHECK(ch["delivery"] == "latest");
  CHECK(ch["params"] == Json::object());
  CHECK(ch["publish"] == false);
  CHECK_FALSE(ch.contains("requiredScope"));
  CHECK(r.value()["panels"][0]["title"] == "v");
  CHECK(to_json(r.value()["layout"]) == R"({"row":["v"]})");
  CHECK(r.value()["pages"] == Json::array());
}

TEST_CASE("panel kinds are validated by their channels, unknown kinds pass through") {
  CHECK(check(R"({"version":1,"channels":[{"ch":"m","encoding":"costmap.zlib.v1"}],"panels":[{"id":"p","kind":"map2d","channels":["m"]}]})"));
  CHECK(check(R"({"version":1,"channels":[{"ch":"m","encoding":"costmap.zlib.v1"},{"ch":"p","encoding":"pose.json.v1","delivery":"reliable"}],"panels":[{"id":"p","kind":"map2d","channels":["m","p"]}]})"));
  // map2d's optional pose must be a pose.
  CHECK_FALSE(check(R"({"version":1,"channels":[{"ch":"m","encoding":"costmap.zlib.v1"},{"ch":"x","encoding":"json.v1"}],"panels":[{"id":"p","kind":"map2d","channels":["m","x"]}]})"));
  CHECK(check(R"({"version":1,"channels":[{"ch":"v","encoding":"video.webrtc.v1"}],"panels":[{"id":"p","kind":"video","channels":["v"]}]})"));
  CHECK_FALSE(check(R"({"version":1,"channels":[{"ch":"v","encoding":"jpeg.v1"},{"ch":"w","encoding":"jpeg.v1"}],"panels":[{"id":"p","kind":"video","channels":["v","w"]}]})"));
  CHECK(check(R"({"version":1,"channels":[{"ch":"x","encoding":"anything.v1"}],"panels":[{"id":"p","kind":"sparkline","channels":["x","x"]}]})"));
}

TEST_CASE("errors are collected in document order, and capped") {
  std::string many = R"({"version":1,"channels":[)";
  for (int i = 0; i < 100; ++i) many += std::string(i ? "," : "") + R"({"ch":"@bad"})";
  many += "]}";
  auto r = check(many.c_str());
  REQUIRE_FALSE(r);
  CHECK(r.error().size() == kMaxManifestErrors);
  CHECK(r.error()[0].path == "channels[0].ch");
}

TEST_CASE("hostile manifests are refused with a reason, never a crash") {
  CHECK_FALSE(check(R"({"version":1,"channels":{}})"));
  CHECK_FALSE(check(R"({"version":1,"channels":[1,"x",null]})"));
  CHECK_FALSE(check(R"({"version":1,"channels":[],"panels":[{"id":1,"kind":[],"channels":"x"}]})"));
  CHECK_FALSE(check(R"({"version":1,"channels":[],"layout":{"row":"p"}})"));
  CHECK_FALSE(check(R"({"version":1,"channels":[],"layout":{"row":[],"shares":[1]}})"));
  CHECK_FALSE(check(R"({"version":1.5,"channels":[]})"));
  CHECK(check(R"({"version":1.0,"channels":[]})"));
  std::string lots = R"({"version":1,"channels":[)";
  for (int i = 0; i < 300; ++i) lots += std::string(i ? "," : "") + R"({"ch":"c)" + std::to_string(i) + R"(","encoding":"json.v1"})";
  lots += "]}";
  auto r = check(lots.c_str());
  REQUIRE_FALSE(r);
  CHECK(manifest_error_name(r.error()[0].code) == "too_many");
}
