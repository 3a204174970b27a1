// The bus golden vectors (fixtures/bus/, written by tether_fixtures): the native build must
// accept, canonicalise and refuse exactly as recorded; tests/node/bus.test.mjs checks the WASM build.
#include <catch2/catch.hpp>

#include "bus/bus.hpp"
#include "fixture_files.hpp"

using namespace tether;
using namespace tether::bus;
using tether::testing::fixture;

namespace {

std::string invalid_text(const Json& v) {
  if (v.contains("text")) return v["text"].get<std::string>();
  if (v.contains("text_b64")) {
    Bytes b = testing::b64(v["text_b64"]);
    return std::string(b.begin(), b.end());
  }
  const Json& r = v["repeat"];
  return r["prefix"].get<std::string>() + std::string(r["count"].get<std::size_t>(), r["char"].get<std::string>()[0]) +
         r["suffix"].get<std::string>();
}

}  // namespace

TEST_CASE("bus fixtures: envelopes parse to their canonical form or their refusal", "[bus][fixtures]") {
  const Json f = fixture("bus/envelopes.json");
  REQUIRE(f["valid"].size() >= 8);
  for (const auto& v : f["valid"]) {
    INFO(v["name"].get<std::string>());
    auto e = parse_envelope(ByteView(std::string_view(v["text"].get<std::string>())));
    REQUIRE(e.ok());
    CHECK(serialize_envelope(e.value()) == v["canonical"].get<std::string>());
    CHECK(is_transient(e->type) == v["transient"].get<bool>());
    CHECK(is_kept_in_history(e->type) == v["history"].get<bool>());
    // The canonical form is a fixed point.
    auto again = parse_envelope(ByteView(std::string_view(v["canonical"].get<std::string>())));
    REQUIRE(again.ok());
    CHECK(serialize_envelope(again.value()) == v["canonical"].get<std::string>());
  }
  REQUIRE(f["invalid"].size() >= 25);
  for (const auto& v : f["invalid"]) {
    INFO(v["name"].get<std::string>());
    const std::string text = invalid_text(v);
    auto e = parse_envelope(ByteView(std::string_view(text)));
    REQUIRE_FALSE(e.ok());
    CHECK(bus_error_name(e.error().code) == v["code"].get<std::string>());
    CHECK(e.error().field == v["field"].get<std::string>());
  }
  for (const auto& v : f["historyCounts"]) CHECK(Bus::history_count(v["count"]) == v["effective"].get<std::size_t>());
}
