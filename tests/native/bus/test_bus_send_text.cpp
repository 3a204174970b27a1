// What we are given to send must be text a receiver can read (found by fuzz_mcp_tool_input: the
// MCP tools' arguments reach Bus::send, broadcast and handoff). A peer id, topic or handoff request
// that is not valid UTF-8 is refused with the field named, never queued as an envelope every
// receiver, this bus included, would refuse as invalid_utf8.
#include <catch2/catch.hpp>

#include "harness.hpp"

using namespace bus_test;

TEST_CASE("bus send: a peer, topic or handoff request that is not UTF-8 is refused by name") {
  Bus b(config("S"));
  b.handle_connection_open("c", 1000);
  deliver(b, "c",
          env("a", MessageType::announce, ident("R"), std::nullopt,
              Json{{"skills", Json::array({"handoff-v1"})}}));
  while (auto t = b.poll_transmit()) b.handle_transmit_result(t->token, true, 1000);

  // A lone surrogate's three bytes (what a careless UTF-16 to UTF-8 conversion writes).
  auto to = b.send("R\xed\xa0\x80", MessageType::chat, Json{{"text", "x"}}, std::nullopt, 1000);
  REQUIRE_FALSE(to.ok());
  CHECK(to.error().code == BusErrorCode::bad_field);
  CHECK(to.error().field == "to");
  CHECK(to.error().detail == "to is not valid UTF-8; send text");

  auto topic = b.broadcast(MessageType::chat, Json{{"text", "x"}}, std::string("t\xff"), 1000);
  REQUIRE_FALSE(topic.ok());
  CHECK(topic.error().field == "topic");

  auto handoff = b.handoff("R", "do \xc3\x28 it", 2000, 1000);
  REQUIRE_FALSE(handoff.ok());
  CHECK(handoff.error().code == BusErrorCode::bad_payload);
  CHECK(handoff.error().field == "payload.request");
  CHECK_FALSE(b.poll_transmit());  // nothing was queued

  // The same calls with text go out, and parse as we sent them.
  auto ok = b.send("R", MessageType::chat, Json{{"text", "x"}}, std::string("t\xc3\xa9"), 1000);
  REQUIRE(ok.ok());
  CHECK(parse_envelope(ByteView(std::string_view(*ok->text))).ok());
  CHECK(b.handoff("R", "do \xc3\xa9 it", 2000, 1000).ok());
}
