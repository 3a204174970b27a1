// The bus golden vectors (fixtures/bus/, written by tether_fixtures): the native build must
// accept, canonicalise and refuse exactly as recorded; tests/node/bus.test.mjs checks the WASM build.
#include <catch2/catch.hpp>

#include "../fixtures/bus_exchange.hpp"
#include "bus/bus.hpp"
#include "bus/shares.hpp"
#include "bus/transfer.hpp"
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
  return r["prefix"].get<std::string>() +
         std::string(r["count"].get<std::size_t>(), r["char"].get<std::string>()[0]) +
         r["suffix"].get<std::string>();
}

}  // namespace

TEST_CASE("bus fixtures: envelopes parse to their canonical form or their refusal",
          "[bus][fixtures]") {
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
  for (const auto& v : f["historyCounts"])
    CHECK(Bus::history_count(v["count"]) == v["effective"].get<std::size_t>());
}

TEST_CASE("bus fixtures: exchanges with a ninja-p2p peer replay to the recorded answers",
          "[bus][fixtures]") {
  const Json f = fixture("bus/ninja.json");
  REQUIRE(f["exchanges"].size() >= 7);
  for (const auto& x : f["exchanges"]) {
    INFO(x["name"].get<std::string>());
    Bus b(exchange::config_of(x));
    std::size_t n = 0;
    for (const auto& s : x["steps"]) {
      INFO("step " << n++ << ": " << s["do"].get<std::string>());
      const Json got = exchange::run_step(b, s);
      CHECK(got["out"] == s["out"]);
      CHECK(got["delivered"] == s["delivered"]);
      CHECK(got["rejected"] == s["rejected"]);
      CHECK(got["confirmed"] == s["confirmed"]);
      CHECK(got.value("error", std::string()) == s.value("error", std::string()));
    }
  }
}

TEST_CASE("bus fixtures: the ninja-p2p file and command shapes", "[bus][fixtures]") {
  const Json f = fixture("bus/ninja.json");
  for (const auto& x : f["exchanges"]) {
    INFO(x["name"].get<std::string>());
    if (x.contains("commands"))
      for (const auto& c : x["commands"]) {
        auto parsed = parse_share_command(exchange::parse_text(c["text"]));
        REQUIRE(parsed);
        if (c.contains("parsed")) {
          REQUIRE(parsed->ok());
          CHECK(share_command_name(parsed->value().kind) ==
                c["parsed"]["command"].get<std::string>());
          CHECK(parsed->value().share == c["parsed"]["share"].get<std::string>());
          CHECK(parsed->value().path == c["parsed"]["path"].get<std::string>());
        } else {
          REQUIRE_FALSE(parsed->ok());
          CHECK(bus_error_name(parsed->error().code) == c["error"]["code"].get<std::string>());
          CHECK(parsed->error().detail == c["error"]["detail"].get<std::string>());
        }
      }
    if (x["name"] != "get_file_pulled") continue;
    // The ninja-p2p peer's offer and 12,000-byte chunks verify to the recorded bytes.
    FileReceiver rx;
    Bytes got;
    bool verified = false;
    for (const auto& s : x["steps"]) {
      if (s["do"] != "receive") continue;
      const Envelope e = exchange::parse_text(s["text"]);
      if (e.type == MessageType::file_offer)
        REQUIRE(rx.offer(e.from.stream_id, e.payload_value()).ok());
      if (e.type == MessageType::file_chunk) {
        auto c = rx.chunk(e.from.stream_id, e.payload_value());
        REQUIRE(c.ok());
        got.insert(got.end(), c->data.begin(), c->data.end());
      }
      if (e.type == MessageType::file_complete)
        verified = rx.complete(e.from.stream_id, e.payload_value()).ok();
    }
    CHECK(verified);
    CHECK(got == testing::b64(x["file"]["bytes_b64"]));
  }
}
