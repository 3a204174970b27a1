// The envelope parser (agent-bus-notes.md § The envelope): bounds, shape, hostile input.
#include <catch2/catch.hpp>

#include "bus/envelope.hpp"
#include "bus/limits.hpp"
#include "harness.hpp"

using namespace bus_test;

namespace {

std::string good() {
  return R"({"v":1,"id":"abc","type":"chat","from":{"streamId":"s1","role":"agent","name":"A","instanceId":"i1"},"to":null,"topic":null,"ts":1700000000000,"payload":{"text":"hi"}})";
}

BusErrorCode code_of(const std::string& text) {
  auto r = parse_envelope(ByteView(std::string_view(text)));
  REQUIRE_FALSE(r.ok());
  CHECK_FALSE(r.error().detail.empty());
  return r.error().code;
}

std::string with(const std::string& from, const std::string& to) {
  std::string s = good();
  auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("bus envelope: a valid envelope parses and re-serialises canonically") {
  auto r = parse_envelope(ByteView(std::string_view(good())));
  REQUIRE(r.ok());
  CHECK(r->id == "abc");
  CHECK(r->type == MessageType::chat);
  CHECK(r->from.stream_id == "s1");
  CHECK_FALSE(r->to);
  CHECK(r->ts == 1700000000000.0);
  CHECK(serialize_envelope(r.value()) == good());
}

TEST_CASE("bus envelope: missing to/topic/payload read as null and are written back") {
  auto r = parse_envelope(ByteView(std::string_view(
      R"({"v":1,"id":"x","type":"ping","from":{"streamId":"s","role":"r","name":"n","instanceId":"i"},"ts":5})")));
  REQUIRE(r.ok());
  CHECK(
      serialize_envelope(r.value()) ==
      R"({"v":1,"id":"x","type":"ping","from":{"streamId":"s","role":"r","name":"n","instanceId":"i"},"to":null,"topic":null,"ts":5,"payload":null})");
}

TEST_CASE("bus envelope: truncated and non-JSON input is refused") {
  const std::string g = good();
  for (std::size_t n :
       {std::size_t(0), std::size_t(1), std::size_t(10), g.size() / 2, g.size() - 1})
    CHECK(code_of(g.substr(0, n)) == BusErrorCode::not_json);
  CHECK(code_of("\xff\xfe") == BusErrorCode::not_json);
  CHECK(code_of("[1,2]") == BusErrorCode::not_object);
  CHECK(code_of("\"text\"") == BusErrorCode::not_object);
  CHECK(code_of(std::string(70, '[') + std::string(70, ']')) == BusErrorCode::not_json);
}

TEST_CASE("bus envelope: oversized input is refused before parsing") {
  std::string big = with("\"hi\"", "\"" + std::string(kMaxEnvelopeBytes, 'x') + "\"");
  CHECK(code_of(big) == BusErrorCode::too_large);
  // Exactly at the bound is fine.
  std::string pad = with("\"hi\"", "\"\"");
  std::string fit = with("\"hi\"", "\"" + std::string(kMaxEnvelopeBytes - pad.size(), 'x') + "\"");
  REQUIRE(fit.size() == kMaxEnvelopeBytes);
  CHECK(parse_envelope(ByteView(std::string_view(fit))).ok());
}

TEST_CASE("bus envelope: version, type and shape") {
  CHECK(code_of(with("\"v\":1", "\"v\":2")) == BusErrorCode::bad_version);
  CHECK(code_of(with("\"v\":1", "\"v\":\"1\"")) == BusErrorCode::bad_version);
  CHECK(code_of(with("\"v\":1,", "")) == BusErrorCode::missing_field);
  CHECK(code_of(with("\"chat\"", "\"shout\"")) == BusErrorCode::unknown_type);
  CHECK(code_of(with("\"chat\"", "7")) == BusErrorCode::bad_field);
  CHECK(code_of(with("\"v\":1,", "\"v\":1,\"extra\":true,")) == BusErrorCode::unknown_field);
  CHECK(code_of(with("\"instanceId\":\"i1\"", "\"instanceId\":\"i1\",\"admin\":true")) ==
        BusErrorCode::unknown_field);
  CHECK(
      code_of(with("{\"streamId\":\"s1\",\"role\":\"agent\",\"name\":\"A\",\"instanceId\":\"i1\"}",
                   "\"s1\"")) == BusErrorCode::bad_field);
  CHECK(code_of(with(",\"role\":\"agent\"", "")) == BusErrorCode::missing_field);
  CHECK(code_of(with("\"to\":null", "\"to\":5")) == BusErrorCode::bad_field);
  CHECK(code_of(with("\"topic\":null", "\"topic\":[]")) == BusErrorCode::bad_field);
}

TEST_CASE("bus envelope: every string is non-empty, NUL-free and bounded") {
  struct Field {
    std::string needle;
    std::string key;
    std::size_t max;
  };
  const std::vector<Field> fields = {
      {"\"id\":\"abc\"", "\"id\":", kMaxIdChars},
      {"\"streamId\":\"s1\"", "\"streamId\":", kMaxStreamIdChars},
      {"\"role\":\"agent\"", "\"role\":", kMaxRoleChars},
      {"\"name\":\"A\"", "\"name\":", kMaxNameChars},
      {"\"instanceId\":\"i1\"", "\"instanceId\":", kMaxInstanceIdChars},
      {"\"to\":null", "\"to\":", kMaxToChars},
      {"\"topic\":null", "\"topic\":", kMaxTopicChars},
  };
  for (const auto& f : fields) {
    INFO(f.key);
    CHECK(code_of(with(f.needle, f.key + "\"\"")) == BusErrorCode::empty_string);
    CHECK(code_of(with(f.needle, f.key + "\"a\\u0000b\"")) == BusErrorCode::nul_in_string);
    CHECK(code_of(with(f.needle, f.key + "\"" + std::string(f.max + 1, 'a') + "\"")) ==
          BusErrorCode::too_long);
    CHECK(parse_envelope(ByteView(std::string_view(
                             with(f.needle, f.key + "\"" + std::string(f.max, 'a') + "\""))))
              .ok());
  }
  // Lengths count UTF-16 units, as JavaScript does: an emoji is two.
  std::string emoji = "\xF0\x9F\x98\x80";
  std::string id64;
  for (int i = 0; i < 64; ++i) id64 += emoji;  // 128 units
  CHECK(
      parse_envelope(ByteView(std::string_view(with("\"id\":\"abc\"", "\"id\":\"" + id64 + "\""))))
          .ok());
  CHECK(code_of(with("\"id\":\"abc\"", "\"id\":\"" + id64 + "a\"")) == BusErrorCode::too_long);
  // The type bound applies before the closed-set check.
  CHECK(code_of(with("\"chat\"", "\"" + std::string(kMaxTypeChars + 1, 'c') + "\"")) ==
        BusErrorCode::too_long);
}

TEST_CASE("bus envelope: ts must be a finite number") {
  CHECK(code_of(with("1700000000000", "\"now\"")) == BusErrorCode::bad_field);
  CHECK(code_of(with("1700000000000", "1e999")) == BusErrorCode::not_json);  // JSON has no infinity
  CHECK(code_of(with(",\"ts\":1700000000000", "")) == BusErrorCode::missing_field);
  CHECK(parse_envelope(ByteView(std::string_view(with("1700000000000", "1.5")))).ok());
}

TEST_CASE("bus envelope: transient and history classes") {
  CHECK(is_transient(MessageType::file_chunk));
  CHECK(is_transient(MessageType::swarm_have));
  CHECK_FALSE(is_transient(MessageType::chat));
  CHECK_FALSE(is_transient(MessageType::handoff));
  CHECK(is_kept_in_history(MessageType::chat));
  CHECK(is_kept_in_history(MessageType::command));
  CHECK_FALSE(is_kept_in_history(MessageType::swarm_offer));
  CHECK_FALSE(is_kept_in_history(MessageType::history_replay));
  for (int i = 0; i < kMessageTypeCount; ++i)
    CHECK(message_type_from_name(message_type_name(MessageType(i))) == MessageType(i));
}

TEST_CASE("bus envelope: encode_envelope holds our own output to the same bounds") {
  Envelope e = env("id1", MessageType::chat, ident("me"), std::nullopt);
  e.from.name = std::string(kMaxNameChars + 1, 'n');
  auto r = encode_envelope(e);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().field == "from.name");
  e.from.name = "n";
  e.payload = std::string(kMaxEnvelopeBytes, 'x');
  CHECK(encode_envelope(e).error().code == BusErrorCode::too_large);
}

TEST_CASE("bus envelope: json_string_bytes counts JSON.stringify's UTF-8 bytes") {
  CHECK(json_string_bytes("") == 2);
  CHECK(json_string_bytes("ab") == 4);
  CHECK(json_string_bytes("a\"b") == 6);
  CHECK(json_string_bytes("\n") == 4);
  CHECK(json_string_bytes(std::string("\x01", 1)) == 8);
  CHECK(json_string_bytes("\xC3\xA9") == 4);  // é: two UTF-8 bytes
}

TEST_CASE("bus envelope: a number beyond a double's range is refused as not JSON, whole") {
  // Python's json.loads and JSON.parse read 1e400 as infinity; nlohmann refuses it, and so does
  // the bus: no JSON text can carry the value on, so the envelope is refused rather than changed.
  const std::string numbers[] = {"1e400", "-66665E666666666", "1" + std::string(400, '0')};
  for (const std::string& number : numbers) {
    for (const std::string& text :
         {with(R"({"text":"hi"})", "{\"n\":" + number + "}"), with("1700000000000", number)}) {
      auto r = parse_envelope(ByteView(std::string_view(text)));
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().code == BusErrorCode::not_json);
      CHECK(r.error().detail.find("beyond a double's range") != std::string::npos);
    }
  }
  // Tiny numbers are in range: they read as 0, as JSON.parse reads them.
  auto tiny =
      parse_envelope(ByteView(std::string_view(with(R"({"text":"hi"})", R"({"n":1e-400})"))));
  REQUIRE(tiny.ok());
  CHECK(tiny->payload_value()["n"].get<double>() == 0.0);
}

TEST_CASE("bus envelope: every type name maps to its type and nothing else maps") {
  for (int i = 0; i < tether::bus::kMessageTypeCount; ++i) {
    const auto t = tether::bus::MessageType(i);
    const std::string name(tether::bus::message_type_name(t));
    CHECK(tether::bus::message_type_from_name(name) == t);
    CHECK_FALSE(tether::bus::message_type_from_name(name + "s"));
    CHECK_FALSE(tether::bus::message_type_from_name(name.substr(1)));
    CHECK_FALSE(tether::bus::message_type_from_name("x" + name.substr(1)));
    CHECK_FALSE(tether::bus::message_type_from_name(name.substr(0, name.size() - 1) + "x"));
  }
  CHECK_FALSE(tether::bus::message_type_from_name(""));
  CHECK_FALSE(tether::bus::message_type_from_name(std::string(40, 'a')));
}
