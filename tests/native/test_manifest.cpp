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
  auto r = check(
      R"({"version":1,"channels":[{"ch":"cam","encoding":"jpeg.v1"}],"panels":[{"id":"v","kind":"video","channels":["cam"]}]})");
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
  CHECK(check(
      R"({"version":1,"channels":[{"ch":"m","encoding":"costmap.zlib.v1"}],"panels":[{"id":"p","kind":"map2d","channels":["m"]}]})"));
  CHECK(check(
      R"({"version":1,"channels":[{"ch":"m","encoding":"costmap.zlib.v1"},{"ch":"p","encoding":"pose.json.v1","delivery":"reliable"}],"panels":[{"id":"p","kind":"map2d","channels":["m","p"]}]})"));
  // map2d's optional pose must be a pose.
  CHECK_FALSE(check(
      R"({"version":1,"channels":[{"ch":"m","encoding":"costmap.zlib.v1"},{"ch":"x","encoding":"json.v1"}],"panels":[{"id":"p","kind":"map2d","channels":["m","x"]}]})"));
  CHECK(check(
      R"({"version":1,"channels":[{"ch":"v","encoding":"video.webrtc.v1"}],"panels":[{"id":"p","kind":"video","channels":["v"]}]})"));
  CHECK_FALSE(check(
      R"({"version":1,"channels":[{"ch":"v","encoding":"jpeg.v1"},{"ch":"w","encoding":"jpeg.v1"}],"panels":[{"id":"p","kind":"video","channels":["v","w"]}]})"));
  CHECK(check(
      R"({"version":1,"channels":[{"ch":"x","encoding":"anything.v1"}],"panels":[{"id":"p","kind":"sparkline","channels":["x","x"]}]})"));
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
  for (int i = 0; i < 300; ++i)
    lots += std::string(i ? "," : "") + R"({"ch":"c)" + std::to_string(i) +
            R"(","encoding":"json.v1"})";
  lots += "]}";
  auto r = check(lots.c_str());
  REQUIRE_FALSE(r);
  CHECK(manifest_error_name(r.error()[0].code) == "too_many");
}

// Where v7 is silent, dimos v5 (the protocol's predecessor) decides (docs/cockpit-protocol.md
// § Manifest).
TEST_CASE("v5 judgement: encodings and kinds are bounded at 64 characters") {
  const std::string enc64(64, 'e'), enc65(65, 'e');
  CHECK(check((R"({"version":1,"channels":[{"ch":"a","encoding":")" + enc64 + R"("}]})").c_str()));
  auto r =
      check((R"({"version":1,"channels":[{"ch":"a","encoding":")" + enc65 + R"("}]})").c_str());
  REQUIRE_FALSE(r);
  CHECK(r.error()[0].path == "channels[0].encoding");
  CHECK(r.error()[0].code == ManifestErrorCode::bad_value);
  auto k = check(
      (R"({"version":1,"channels":[],"panels":[{"id":"p","kind":")" + enc65 + R"("}]})").c_str());
  REQUIRE_FALSE(k);
  CHECK(k.error()[0].path == "panels[0].kind");
}

TEST_CASE("v5 judgement: a row or column has at least one child") {
  auto r = check(
      R"({"version":1,"channels":[],"panels":[{"id":"a","kind":"note"}],"layout":{"row":["a",{"col":[]}]}})");
  REQUIRE_FALSE(r);
  CHECK(r.error()[0].code == ManifestErrorCode::bad_layout);
  CHECK(r.error()[0].path == "layout.row[1].col");
  CHECK_FALSE(check(R"({"version":1,"channels":[],"layout":{"row":[]}})"));
  // With nothing to place, the normal form's layout is null, and null validates to itself.
  auto none = check(R"({"version":1,"channels":[]})");
  REQUIRE(none);
  CHECK(none.value()["layout"].is_null());
  auto again = validate_manifest(none.value());
  REQUIRE(again);
  CHECK(again.value() == none.value());
}

TEST_CASE("v5 judgement: a panel is placed at most once across the layout and the pages") {
  const char* panels =
      R"("channels":[],"panels":[{"id":"a","kind":"note"},{"id":"b","kind":"note"}])";
  auto both = check(
      (std::string(R"({"version":1,)") + panels + R"(,"layout":{"row":["a","b"]},"pages":["b"]})")
          .c_str());
  REQUIRE_FALSE(both);
  CHECK(both.error()[0].path == "pages[0]");
  CHECK(both.error()[0].code == ManifestErrorCode::bad_layout);
  auto twice = check((std::string(R"({"version":1,)") + panels + R"(,"pages":["a","a"]})").c_str());
  REQUIRE_FALSE(twice);
  CHECK(twice.error()[0].path == "pages[1]");
  // The default layout leaves out what the pages show, so the normal form obeys the rule too.
  auto dflt = check((std::string(R"({"version":1,)") + panels + R"(,"pages":["b"]})").c_str());
  REQUIRE(dflt);
  CHECK(to_json(dflt.value()["layout"]) == R"({"row":["a"]})");
  CHECK(validate_manifest(dflt.value()));
}

TEST_CASE("v5 judgement: unknown keys are ignored and dropped from the normal form") {
  auto r = check(R"({"version":1,"theme":"dark",
    "channels":[{"ch":"x","encoding":"json.v1","qos":{"depth":3}}],
    "panels":[{"id":"p","kind":"note","channels":["x"],"icon":"star"}],
    "layout":{"row":["p"],"gap":4,"shares":[2]},"pages":[]})");
  REQUIRE(r);
  CHECK_FALSE(r.value().contains("theme"));
  CHECK_FALSE(r.value()["channels"][0].contains("qos"));
  CHECK_FALSE(r.value()["panels"][0].contains("icon"));
  CHECK(to_json(r.value()["layout"]) == R"({"row":["p"],"shares":[2]})");
  CHECK(validate_manifest(r.value()).value() == r.value());
}

TEST_CASE("the chat rule: its shared tx channels must be publishable") {
  const std::string chans =
      R"({"ch":"c","encoding":"chat.json.v1","delivery":"reliable"},{"ch":"j","encoding":"json.v1"})";
  auto with = [&](bool text_pub, bool audio_pub) {
    return check(
        (std::string(
             R"({"version":1,"channels":[{"ch":"s","dir":"tx","encoding":"text.json.v1","delivery":"reliable","publish":)") +
         (text_pub ? "true" : "false") + "}," + chans +
         R"(,{"ch":"a","dir":"tx","encoding":"audio.json.v1","delivery":"reliable","publish":)" +
         (audio_pub ? "true" : "false") +
         R"(}],"panels":[{"id":"t","kind":"chat","channels":["s","c","j","a"]}]})")
            .c_str());
  };
  CHECK(with(true, true));
  auto text = with(false, true);
  REQUIRE_FALSE(text);
  CHECK(text.error()[0].path == "panels[0].channels[0]");
  CHECK(text.error()[0].code == ManifestErrorCode::panel_rule);
  auto audio = with(true, false);
  REQUIRE_FALSE(audio);
  CHECK(audio.error()[0].path == "panels[0].channels[3]");
}
