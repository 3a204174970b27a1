// The payloads of messages written as words (src/bus/typed_payload.hpp): the shapes a ninja-p2p
// peer acts on (docs/agent-bus.md § Payloads with fixed shapes) and every refusal, with the
// hostile inputs the CLI's argv and an MCP client's JSON can carry.
#include <catch2/catch.hpp>

#include <optional>
#include <set>
#include <string>

#include "bus/limits.hpp"
#include "bus/typed_payload.hpp"

using namespace tether;
using namespace tether::bus;

namespace {

Json payload(std::string_view type, std::string_view text,
             std::optional<std::string_view> args = std::nullopt) {
  auto r = typed_payload(type, text, args);
  REQUIRE(r.ok());
  return r.value();
}

WordsRefusal refused(std::string_view type, std::string_view text,
                     std::optional<std::string_view> args = std::nullopt) {
  auto r = typed_payload(type, text, args);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

Json answer(std::string_view id, std::optional<std::string_view> result,
            std::optional<std::string_view> error = std::nullopt) {
  auto r = command_response_from(id, result, error);
  REQUIRE(r.ok());
  return r.value();
}

WordsRefusal answer_refused(std::string_view id, std::optional<std::string_view> result,
                            std::optional<std::string_view> error = std::nullopt) {
  auto r = command_response_from(id, result, error);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

std::string nested(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

}  // namespace

TEST_CASE(
    "typed payload: a command is {command, args?}, an ack {messageId}, chat and event {text}") {
  CHECK(payload("command", "deploy") == Json{{"command", "deploy"}});
  CHECK(payload("command", " deploy\n", R"({"env":"prod","n":[1,2.5]})") ==
        Json::parse(R"({"command":"deploy","args":{"env":"prod","n":[1,2.5]}})"));
  CHECK(payload("command", "reset", "null") == Json::parse(R"({"command":"reset","args":null})"));
  CHECK(payload("ack", "\tm1 ") == Json{{"messageId", "m1"}});
  CHECK(payload("chat", "hello there") == Json{{"text", "hello there"}});
  CHECK(payload("event", " built ") == Json{{"text", " built "}});  // text is sent as given
}

TEST_CASE("typed payload: words split where JavaScript splits them, Unicode spaces included") {
  // U+00A0 (no-break space), U+3000 (ideographic space) and U+FEFF separate words as \s does in
  // JS; U+200B (zero-width space) and U+180E do not.
  CHECK(refused("command", "deploy\xC2\xA0now").count == 2);
  CHECK(refused("command",
                "a\xE3\x80\x80"
                "b\xEF\xBB\xBF"
                "c")
            .count == 3);
  CHECK(refused("ack",
                "a\xE2\x80\xA8"
                "b")
            .code == WordsError::many_words);
  CHECK(payload("command",
                "\xE2\x80\x83"
                "deploy\xE2\x80\x83") == Json{{"command", "deploy"}});
  CHECK(payload("command", "de\xE2\x80\x8Bploy") == Json{{"command", "de\xE2\x80\x8Bploy"}});
  CHECK(payload("command", "\xE1\xA0\x8E") == Json{{"command", "\xE1\xA0\x8E"}});
  CHECK(payload("command", "d\xC3\xA9ploy") == Json{{"command", "d\xC3\xA9ploy"}});
}

TEST_CASE("typed payload: each refusal says what is wrong, with the count it found") {
  auto many = refused("command", "deploy now please");
  CHECK(many.code == WordsError::many_words);
  CHECK(many.count == 3);
  CHECK(refused("command", "").code == WordsError::no_word);
  CHECK(refused("command", " \t\n ").code == WordsError::no_word);
  CHECK(refused("ack", "a b").count == 2);
  CHECK(refused("ack", "").code == WordsError::no_word);
  CHECK(refused("chat", "").code == WordsError::no_text);
  CHECK(refused("event", "").code == WordsError::no_text);
  CHECK(refused("command_response", "done").code == WordsError::use_respond);
  CHECK(refused("chat", "hi", "{}").code == WordsError::args_not_command);
  CHECK(refused("ack", "m1", "1").code == WordsError::args_not_command);
  // Types whose payload is not words, and names that are no type at all.
  for (const char* t : {"announce", "handoff", "file_offer", "ping", "Chat", "", "bogus"})
    CHECK(refused(t, "hi").code == WordsError::not_words_type);
}

TEST_CASE("typed payload: truncated, malformed and hostile args JSON is refused, never thrown") {
  for (const char* bad : {"{bad", "{\"env\":", "[1,2", "", " ", "{\"a\":1}x", "'x'", "NaN",
                          "{\"a\":1,}", "\"\\ud800\"", "\xEF\xBB\xBF{}"}) {
    auto r = refused("command", "deploy", std::string_view(bad));
    CHECK(r.code == WordsError::args_not_json);
    CHECK(r.json == JsonError::invalid_json);
  }
  CHECK(refused("command", "x", std::string_view("{}\0{}", 5)).json == JsonError::invalid_json);
  CHECK(refused("command", "x", "\"\xFF\"").json == JsonError::invalid_utf8);
  CHECK(refused("command", "x", "1e400").json == JsonError::number_out_of_range);
  // Nesting: two levels sit above the args (the envelope, the payload).
  CHECK(payload("command", "x", nested(kMaxPayloadValueDepth))["args"].is_array());
  auto deep = refused("command", "x", nested(kMaxPayloadValueDepth + 1));
  CHECK(deep.code == WordsError::args_too_deep);
  CHECK(deep.bound == kMaxPayloadValueDepth);
  CHECK(refused("command", "x", nested(100000)).code == WordsError::args_too_deep);
  // Past the envelope's bound the text is refused before it is parsed.
  const std::string big = "\"" + std::string(kMaxEnvelopeBytes, 'a') + "\"";
  auto large = refused("command", "x", big);
  CHECK(large.code == WordsError::args_too_large);
  CHECK(large.count == big.size());
  CHECK(large.bound == kMaxEnvelopeBytes);
}

TEST_CASE("typed payload: text that is too large or not UTF-8 is refused") {
  auto large = refused("chat", std::string(kMaxEnvelopeBytes + 1, 'a'));
  CHECK(large.code == WordsError::text_too_large);
  CHECK(large.count == kMaxEnvelopeBytes + 1);
  CHECK(refused("command", std::string(kMaxEnvelopeBytes + 1, ' ')).code ==
        WordsError::text_too_large);
  // A lone surrogate as a JS string reaches the core as ED A0 80 (Embind's UTF-8 of it).
  CHECK(refused("chat", "hi \xED\xA0\x80").code == WordsError::not_utf8);
  CHECK(refused("ack", "\xC0\xAF").code == WordsError::not_utf8);
  CHECK(refused("command", "trunc\xE2\x82").code == WordsError::not_utf8);
  CHECK(refused("ack", "\xC0\xAF").input == WordsInput::text);  // the ack's id is its text
}

TEST_CASE("typed payload: an ack's messageId is held to the bus id bound") {
  const std::string at(kMaxIdChars, 'i');
  CHECK(payload("ack", at) == Json{{"messageId", at}});
  auto over = refused("ack", at + "i");
  CHECK(over.code == WordsError::id_too_long);
  CHECK(over.count == kMaxIdChars + 1);
  CHECK(over.bound == kMaxIdChars);
  // Counted in UTF-16 units, as JavaScript counts it: 64 emoji are 128 units, 65 are 130.
  std::string emoji;
  for (int i = 0; i < 64; ++i) emoji += "\xF0\x9F\x98\x80";
  CHECK(payload("ack", emoji)["messageId"] == emoji);
  CHECK(refused("ack", emoji + "\xF0\x9F\x98\x80").count == 130);
  CHECK(refused("ack", std::string("m\0", 2) + "1").code == WordsError::nul_in_id);
}

TEST_CASE("command response: {requestId, ok: true, result} or {requestId, ok: false, error}") {
  CHECK(answer("r1", R"({"n":1})") ==
        Json::parse(R"({"requestId":"r1","ok":true,"result":{"n":1}})"));
  CHECK(answer("r1", std::nullopt) == Json::parse(R"({"requestId":"r1","ok":true,"result":null})"));
  CHECK(answer("r1", "\"done\"") == Json::parse(R"({"requestId":"r1","ok":true,"result":"done"})"));
  CHECK(answer("r1", std::nullopt, "no disk") ==
        Json::parse(R"({"requestId":"r1","ok":false,"error":"no disk"})"));
  // The error is cut to kMaxErrorTextBytes on a code point boundary, as Bus::respond cuts it.
  std::string long_error(kMaxErrorTextBytes - 1, 'e');
  long_error += "\xC3\xA9tail";
  const Json cut = answer("r1", std::nullopt, long_error);
  CHECK(cut["error"].get<std::string>() == std::string(kMaxErrorTextBytes - 1, 'e'));
}

TEST_CASE("command response: each refusal, and hostile ids, results and errors") {
  CHECK(answer_refused("", "1").code == WordsError::no_request_id);
  CHECK(answer_refused("r1", "1", "x").code == WordsError::result_and_error);
  CHECK(answer_refused("r1", std::nullopt, "").code == WordsError::no_error_text);
  auto bad_error = answer_refused("r1", std::nullopt, "bad \xED\xA0\x80");
  CHECK(bad_error.code == WordsError::not_utf8);
  CHECK(bad_error.input == WordsInput::error_text);
  CHECK(words_input_name(bad_error.input) == "error");
  const std::string at(kMaxIdChars, 'r');
  CHECK(answer(at, "1")["requestId"] == at);
  auto over = answer_refused(at + "r", "1");
  CHECK(over.code == WordsError::id_too_long);
  CHECK(over.count == kMaxIdChars + 1);
  CHECK(over.bound == kMaxIdChars);
  // Far past the bound: refused without counting it all.
  CHECK(answer_refused(std::string(1 << 20, 'r'), "1").code == WordsError::id_too_long);
  CHECK(answer_refused(std::string("r\0"
                                   "1",
                                   3),
                       "1")
            .code == WordsError::nul_in_id);
  auto bad_id = answer_refused("r\xFF", "1");
  CHECK(bad_id.code == WordsError::not_utf8);
  CHECK(bad_id.input == WordsInput::request_id);
  CHECK(words_input_name(bad_id.input) == "requestId");
  CHECK(answer_refused("r1", "{\"a\":").code == WordsError::result_not_json);
  CHECK(answer_refused("r1", "").code == WordsError::result_not_json);
  CHECK(answer_refused("r1", "-1e999").json == JsonError::number_out_of_range);
  CHECK(answer_refused("r1", nested(kMaxPayloadValueDepth + 1)).code ==
        WordsError::result_too_deep);
  CHECK(answer("r1", nested(kMaxPayloadValueDepth))["result"].is_array());
  auto large = answer_refused("r1", std::string(kMaxEnvelopeBytes + 1, ' '));
  CHECK(large.code == WordsError::result_too_large);
  CHECK(large.bound == kMaxEnvelopeBytes);
}

TEST_CASE("typed payload: every refusal code has its own name") {
  std::set<std::string_view> names;
  for (int i = 0; i < kWordsErrorCount; ++i) names.insert(words_error_name(WordsError(i)));
  CHECK(names.size() == std::size_t(kWordsErrorCount));
  CHECK(words_error_name(WordsError::many_words) == "many_words");
  CHECK(words_error_name(WordsError::not_utf8) == "not_utf8");
}
