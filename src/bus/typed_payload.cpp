// See typed_payload.hpp.
#include "bus/typed_payload.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>

#include "bus/bus.hpp"
#include "bus/envelope.hpp"
#include "bus/limits.hpp"
#include "common/utf8.hpp"

namespace tether::bus {
namespace {

static_assert(kMaxPayloadValueDepth + 2 == kMaxJsonDepth,
              "args and result sit two levels inside the envelope");

Err<WordsRefusal> refuse(WordsError code, std::size_t count = 0, std::size_t bound = 0,
                         JsonError json = JsonError::none) {
  return err(WordsRefusal{code, count, bound, json});
}

struct Words {
  std::string_view first;
  std::size_t count = 0;
};

// How many words valid UTF-8 text holds, and the first of them.
Words words(std::string_view t) {
  Words w;
  std::size_t start = std::string_view::npos;
  for (std::size_t i = 0, len = 0; i <= t.size(); i += len) {
    const bool space = i == t.size() || js_space(utf8_code_point_at(t, i, len));
    if (!space && start == std::string_view::npos) {
      start = i;
      ++w.count;
    } else if (space && start != std::string_view::npos) {
      if (w.count == 1) w.first = t.substr(start, i - start);
      start = std::string_view::npos;
    }
    if (i == t.size()) break;
  }
  return w;
}

// An ack's messageId or an answer's requestId, held to the bound of every envelope id.
std::optional<WordsRefusal> check_id(std::string_view id) {
  auto bad = check_string(id, kMaxIdChars, "id");
  if (!bad) return std::nullopt;
  switch (bad->code) {
    case BusErrorCode::too_long:
      return WordsRefusal{WordsError::id_too_long,
                          is_valid_utf8(ByteView(id)) ? utf16_units(id) : id.size(), kMaxIdChars};
    case BusErrorCode::nul_in_string: return WordsRefusal{WordsError::nul_in_id};
    case BusErrorCode::empty_string: return WordsRefusal{WordsError::no_request_id};
    default: {
      // An ack's id is its text, which was checked first: only a request id gets here.
      WordsRefusal r{WordsError::not_utf8};
      r.input = WordsInput::request_id;
      return r;
    }
  }
}

// How deep a value nests (a container counts 1). parse_json bounds it at kMaxJsonDepth, so the
// recursion is shallow.
std::size_t nesting(const Json& v) {
  if (!v.is_structured()) return 0;
  std::size_t deepest = 0;
  for (const auto& child : v) deepest = std::max(deepest, nesting(child));
  return deepest + 1;
}

// JSON text for args or a result, bounded before it is parsed.
std::optional<WordsRefusal> parse_value(std::string_view text, WordsError too_large,
                                        WordsError not_json, WordsError too_deep, Json& out) {
  if (text.size() > kMaxEnvelopeBytes)
    return WordsRefusal{too_large, text.size(), kMaxEnvelopeBytes};
  JsonParse p = parse_json(ByteView(text));
  if (p.error == JsonError::too_deep || (p.ok() && nesting(p.value) > kMaxPayloadValueDepth))
    return WordsRefusal{too_deep, 0, kMaxPayloadValueDepth};
  if (!p.ok()) return WordsRefusal{not_json, 0, 0, p.error};
  out = std::move(p.value);
  return std::nullopt;
}

}  // namespace

std::string_view words_error_name(WordsError e) {
  switch (e) {
    case WordsError::not_words_type: return "not_words_type";
    case WordsError::use_respond: return "use_respond";
    case WordsError::args_not_command: return "args_not_command";
    case WordsError::no_word: return "no_word";
    case WordsError::many_words: return "many_words";
    case WordsError::no_text: return "no_text";
    case WordsError::text_too_large: return "text_too_large";
    case WordsError::args_too_large: return "args_too_large";
    case WordsError::args_not_json: return "args_not_json";
    case WordsError::args_too_deep: return "args_too_deep";
    case WordsError::no_request_id: return "no_request_id";
    case WordsError::result_and_error: return "result_and_error";
    case WordsError::no_error_text: return "no_error_text";
    case WordsError::result_too_large: return "result_too_large";
    case WordsError::result_not_json: return "result_not_json";
    case WordsError::result_too_deep: return "result_too_deep";
    case WordsError::id_too_long: return "id_too_long";
    case WordsError::nul_in_id: return "nul_in_id";
    case WordsError::not_utf8: return "not_utf8";
  }
  return "not_words_type";
}

std::string_view words_input_name(WordsInput i) {
  switch (i) {
    case WordsInput::text: return "text";
    case WordsInput::request_id: return "requestId";
    case WordsInput::error_text: return "error";
  }
  return "text";
}

Result<Json, WordsRefusal> typed_payload(std::string_view type, std::string_view text,
                                         std::optional<std::string_view> args_json) {
  const auto t = message_type_from_name(type);
  if (t == MessageType::command_response) return refuse(WordsError::use_respond);
  if (t != MessageType::chat && t != MessageType::event && t != MessageType::command &&
      t != MessageType::ack)
    return refuse(WordsError::not_words_type);
  if (args_json && t != MessageType::command) return refuse(WordsError::args_not_command);
  if (text.size() > kMaxEnvelopeBytes)
    return refuse(WordsError::text_too_large, text.size(), kMaxEnvelopeBytes);
  if (!is_valid_utf8(ByteView(text))) return refuse(WordsError::not_utf8);
  if (t == MessageType::chat || t == MessageType::event) {
    if (text.empty()) return refuse(WordsError::no_text);
    return Json{{"text", std::string(text)}};
  }
  const Words w = words(text);
  if (w.count == 0) return refuse(WordsError::no_word);
  if (w.count > 1) return refuse(WordsError::many_words, w.count);
  if (t == MessageType::ack) {
    if (auto bad = check_id(w.first)) return err(*bad);
    return Json{{"messageId", std::string(w.first)}};
  }
  Json payload{{"command", std::string(w.first)}};
  if (args_json) {
    Json args;
    if (auto bad = parse_value(*args_json, WordsError::args_too_large, WordsError::args_not_json,
                               WordsError::args_too_deep, args))
      return err(*bad);
    payload["args"] = std::move(args);
  }
  return payload;
}

Result<Json, WordsRefusal> command_response_from(std::string_view request_id,
                                                 std::optional<std::string_view> result_json,
                                                 std::optional<std::string_view> error) {
  if (request_id.empty()) return refuse(WordsError::no_request_id);
  if (auto bad = check_id(request_id)) return err(*bad);
  if (result_json && error) return refuse(WordsError::result_and_error);
  Json outcome = Json::object();
  if (error) {
    if (error->empty()) return refuse(WordsError::no_error_text);
    if (!is_valid_utf8(ByteView(*error))) {
      WordsRefusal r{WordsError::not_utf8};
      r.input = WordsInput::error_text;
      return err(r);
    }
    // Cut before it is copied (command_response_payload's own cut then keeps it whole).
    outcome["error"] = std::string(utf8_prefix(*error, kMaxErrorTextBytes));
  } else if (result_json) {
    Json result;
    if (auto bad = parse_value(*result_json, WordsError::result_too_large,
                               WordsError::result_not_json, WordsError::result_too_deep, result))
      return err(*bad);
    outcome["result"] = std::move(result);
  }
  auto p = command_response_payload(request_id, outcome);
  // The outcome above is one command_response_payload takes; a refusal would be a bug here.
  if (!p) return refuse(WordsError::no_error_text);
  return std::move(p.value());
}

}  // namespace tether::bus
