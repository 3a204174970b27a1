// The payload of a direct message written as words (the agent CLI's `send` and `respond`, the MCP
// send and respond tools), in the shapes a peer acts on (docs/agent-bus.md § Payloads with fixed
// shapes; agent-bus-notes.md § Bus messages whose payload the public implementation fixes). A
// ninja-p2p peer runs a command only when its payload names it in a `command` string, and matches
// an answer to its request only by `requestId`, so `{text}` would reach it as neither: a command
// is `{command, args?}`, an ack `{messageId}`, an answer `{requestId, ok, result | error}`; chat
// and event stay `{text}`. The host words each refusal for its own caller (the CLI's flags, the
// MCP tool's arguments: web/agent/typed-payload.js); which shape, and what is refused, is decided
// here.
#pragma once
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

#include "bus/envelope.hpp"
#include "common/json.hpp"
#include "common/result.hpp"

namespace tether::bus {

enum class WordsError {
  // typed_payload
  not_words_type,    // the type's payload is not written as words (announce, handoff, a typo)
  use_respond,       // command_response: it answers a command by id, command_response_from
  args_not_command,  // args with a type other than command
  no_word,           // command or ack without its one word
  many_words,        // command or ack with more than one word (count: how many)
  no_text,           // chat or event with no text
  text_too_large,    // the text alone is over kMaxEnvelopeBytes (count: its bytes)
  args_too_large,    // the args text is over kMaxEnvelopeBytes (count: its bytes)
  args_not_json,     // the args text is not JSON: truncated, malformed (json: why)
  args_too_deep,     // the args nest deeper than kMaxPayloadValueDepth (bound)
  // command_response_from
  no_request_id,     // an answer that names no command
  result_and_error,  // an answer with both a result and an error
  no_error_text,     // an error that says nothing
  result_too_large,  // the result text is over kMaxEnvelopeBytes (count: its bytes)
  result_not_json,   // the result text is not JSON (json: why)
  result_too_deep,   // the result nests deeper than kMaxPayloadValueDepth (bound)
  // both
  id_too_long,  // an ack's messageId or an answer's requestId over kMaxIdChars (count: its
                // length in UTF-16 units, bound)
  nul_in_id,    // a NUL in that id (no envelope id holds one)
  not_utf8,     // text, an id or the error text that is not UTF-8 (a lone surrogate in JS)
};
constexpr int kWordsErrorCount = 19;

// The refusal's name as JS sees it ("many_words", ...); web/glue/bus.d.ts lists them.
std::string_view words_error_name(WordsError e);

// Which of the caller's inputs a not_utf8 refusal is about, so its words can name it.
enum class WordsInput { text, request_id, error_text };

// The input's name as JS sees it: "text", "requestId", "error".
std::string_view words_input_name(WordsInput i);

struct WordsRefusal {
  WordsError code = WordsError::no_word;
  std::size_t count = 0;             // see the codes above
  std::size_t bound = 0;             // the bound a *_too_large, *_too_deep or id_too_long broke
  JsonError json = JsonError::none;  // args_not_json, result_not_json: why the text did not parse
  WordsInput input = WordsInput::text;  // not_utf8: the input that is not UTF-8
};

// The types a person (the CLI's `send`) or an MCP client sends directly, in the order their
// refusals list them: the conversation (chat, event) and commands with their answers and acks.
// Every other type the bus and its hosts send themselves, each at its own step of a protocol
// (announce, ping, history, handoffs, files, swarms, skill updates), so a hand-written one would
// speak out of turn.
constexpr std::array<MessageType, 5> kDirectSendTypes = {MessageType::chat, MessageType::command,
                                                         MessageType::command_response,
                                                         MessageType::event, MessageType::ack};

// The payload a message of `type` (its wire name) carries when its words are `text`. A command is
// `{command, args?}`: one word, trimmed, and `args_json` (JSON text) when given, which goes with a
// command only; an ack `{messageId}`: one word, an id within kMaxIdChars. Words are separated by
// what JavaScript's `\s` matches, as the CLI's words and an MCP client's text are JavaScript
// strings. Chat and event are `{text}` as given. command_response is command_response_from's;
// every other type is refused.
Result<Json, WordsRefusal> typed_payload(std::string_view type, std::string_view text,
                                         std::optional<std::string_view> args_json);

// The command_response answering command `request_id` (its envelope id, within kMaxIdChars):
// `{requestId, ok: true, result}` (`result_json` parsed; null when not given), or, when `error`
// is given (non-empty), `{requestId, ok: false, error}` with the error cut to kMaxErrorTextBytes
// (command_response_payload, as Bus::respond writes it).
Result<Json, WordsRefusal> command_response_from(std::string_view request_id,
                                                 std::optional<std::string_view> result_json,
                                                 std::optional<std::string_view> error);

}  // namespace tether::bus
