// The swarm golden vectors (fixtures/swarm/, written by tether_swarm_fixtures): the native build
// must read and write exactly these bytes; tests/node/swarm.test.mjs checks the WASM build.
#include <catch2/catch.hpp>

#include "fixture_files.hpp"
#include "swarm/messages.hpp"

using namespace tether;
using namespace tether::swarm;
using tether::testing::fixture;

TEST_CASE("swarm fixtures: messages parse to their canonical form or their refusal", "[swarm][fixtures]") {
  const Json f = fixture("swarm/messages.json");
  REQUIRE(f["valid"].size() >= 10);
  for (const auto& v : f["valid"]) {
    INFO(v["name"].get<std::string>());
    const std::string text = v["text"].get<std::string>();
    auto m = parse_message_text(ByteView(std::string_view(text)));
    REQUIRE(m.ok());
    CHECK(message_type(m.value()) == v["type"].get<std::string>());
    CHECK(encode_message_text(m.value()) == v["canonical"].get<std::string>());
  }
  REQUIRE(f["invalid"].size() >= 10);
  for (const auto& v : f["invalid"]) {
    INFO(v["name"].get<std::string>());
    const std::string text = v["text"].get<std::string>();
    auto m = parse_message_text(ByteView(std::string_view(text)));
    REQUIRE_FALSE(m.ok());
    CHECK(message_error_name(m.error().code) == v["code"].get<std::string>());
    CHECK(m.error().field == v["field"].get<std::string>());
  }
}

TEST_CASE("swarm fixtures: binary-lane frames", "[swarm][fixtures]") {
  const Json f = fixture("swarm/frames.json");
  for (const auto& v : f["frames"]) {
    INFO(v["name"].get<std::string>());
    const Bytes frame = testing::b64(v["frame_b64"]);
    auto parsed = parse_chunk_frame(ByteView(frame));
    REQUIRE(parsed);
    CHECK(to_hex(parsed->file_id) == v["file_id"].get<std::string>());
    CHECK(parsed->index == v["index"].get<std::uint32_t>());
    CHECK(parsed->data.to_bytes() == testing::b64(v["data_b64"]));
    CHECK(encode_chunk_frame(parsed->file_id, parsed->index, parsed->data) == frame);
  }
  for (const auto& v : f["ignored"]) {
    INFO(v["name"].get<std::string>());
    CHECK_FALSE(parse_chunk_frame(ByteView(testing::b64(v["frame_b64"]))));
  }
}
