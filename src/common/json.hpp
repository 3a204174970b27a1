// Bounded JSON for untrusted input, on nlohmann::json with exceptions off (TOOLCHAIN.md: a throw
// aborts a WASM module). Numbers are written the way JavaScript's JSON.stringify writes them, so
// bytes we encode match what the TypeScript side of the protocol encodes.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/bytes.hpp"

namespace tether {

// Wire objects keep their key order: golden vectors depend on it.
using Json = nlohmann::ordered_json;

// Deeper nesting than this is refused before parsing: the parser would cope, but a hostile
// `[[[[...` costs stack in everything that walks the result later.
constexpr std::size_t kMaxJsonDepth = 64;

// number_out_of_range: the text is JSON but holds a number beyond a double's range (1e400):
// JSON.parse reads it as Infinity, which no JSON text can carry back, so the paths that parse
// with nlohmann refuse it (docs/rooms.md, "Numbers out of range", has the rule on every path).
enum class JsonError { none, invalid_utf8, too_deep, invalid_json, number_out_of_range };
const char* json_error_name(JsonError e);

// `text` with every number token outside strings whose value is beyond a double's range written
// as null, what JSON.stringify(JSON.parse(text)) writes for it; true when one was found. Meant
// for text already known to be JSON (elsewhere it only rewrites such tokens).
bool json_overflow_as_null(std::string_view text, std::string& out);

struct JsonParse {
  Json value;
  JsonError error = JsonError::none;
  bool ok() const { return error == JsonError::none; }
};

// Parses UTF-8 JSON text. Invalid UTF-8, nesting beyond kMaxJsonDepth and syntax errors are
// reported as values; nothing throws.
JsonParse parse_json(ByteView text);

// Serialises compactly with JSON.stringify's number format (integral doubles without ".0",
// exponent form only outside 1e-7..1e21). Non-finite numbers are written as null, as in JS.
// How integers are written: `exact` keeps 64-bit integers as parsed; `js_double` writes every
// number as the double JavaScript would hold (integers past 2^53 round), for output that must
// match a JS peer byte for byte (the room relay's reference is JavaScript).
enum class JsonNumbers { exact, js_double };
std::string to_json(const Json& value);
// append_json returns how deep the value nests (a container counts 1, a scalar 0), which it knows
// for free while it writes: a writer that wraps the text can refuse what would nest past
// kMaxJsonDepth, the bound every reader of ours parses with.
std::size_t append_json(std::string& out, const Json& value,
                        JsonNumbers numbers = JsonNumbers::exact);

// One string as JSON.stringify writes it (the escapes append_json uses).
void append_json_string(std::string& out, std::string_view s);

// The position of the next byte at or after `pos` that a JSON string cannot hold as it is ('"',
// '\\' or a control byte below 0x20), or t.size(). Writing and scanning strings both spend their
// time here (the room relay's scanner reads with it; append_json_string writes with it).
std::size_t next_json_special(std::string_view t, std::size_t pos);

// The same number format for one double.
void append_js_number(std::string& out, double v);

// Typed reads that never throw.
std::optional<std::string_view> json_string(const Json& v);
// A number that is an integer in [min, max], whether written as 12 or 12.0.
std::optional<std::int64_t> json_integer(const Json& v, std::int64_t min, std::int64_t max);
std::optional<double> json_finite(const Json& v);

// JavaScript's Number.MAX_SAFE_INTEGER: the largest integer every peer can represent exactly.
constexpr std::int64_t kMaxSafeInteger = (std::int64_t(1) << 53) - 1;

}  // namespace tether
