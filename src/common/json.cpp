#include "common/json.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common/utf8.hpp"

namespace tether {
namespace {

// Counts bracket nesting outside strings. Cheap, and runs before any allocation.
bool nesting_within(ByteView text, std::size_t limit) {
  std::size_t depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size; ++i) {
    const std::uint8_t c = text.data[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

void append_escaped(std::string& out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  out += '"';
  // Runs that need no escape are appended whole: a 64 KiB base64 string is one append.
  std::size_t run = 0;
  for (std::size_t i = next_json_special(s, 0); i < s.size(); i = next_json_special(s, i + 1)) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

}  // namespace

// Eight bytes at a time (SWAR): a long string's content is a run of plain bytes, and this is the
// loop that reading and writing it spends its time in.
std::size_t next_json_special(std::string_view t, std::size_t pos) {
  constexpr std::uint64_t kLo = 0x0101010101010101ull;
  constexpr std::uint64_t kHi = 0x8080808080808080ull;
  const std::size_t n = t.size();
  while (pos + 8 <= n) {
    std::uint64_t x;
    std::memcpy(&x, t.data() + pos, 8);
    const std::uint64_t q = x ^ (kLo * '"');
    const std::uint64_t b = x ^ (kLo * '\\');
    // Zero bytes of q or b, or bytes below 0x20: exact as to whether there is one in the word.
    const std::uint64_t m =
        ((q - kLo) & ~q & kHi) | ((b - kLo) & ~b & kHi) | ((x - kLo * 0x20) & ~x & kHi);
    if (m == 0) {
      pos += 8;
      continue;
    }
    for (std::size_t end = pos + 8; pos < end; ++pos) {
      const unsigned char c = static_cast<unsigned char>(t[pos]);
      if (c == '"' || c == '\\' || c < 0x20) return pos;
    }
  }
  for (; pos < n; ++pos) {
    const unsigned char c = static_cast<unsigned char>(t[pos]);
    if (c == '"' || c == '\\' || c < 0x20) return pos;
  }
  return n;
}

const char* json_error_name(JsonError e) {
  switch (e) {
    case JsonError::none: return "none";
    case JsonError::invalid_utf8: return "invalid_utf8";
    case JsonError::too_deep: return "too_deep";
    case JsonError::invalid_json: return "invalid_json";
    case JsonError::number_out_of_range: return "number_out_of_range";
  }
  return "invalid_json";
}

JsonParse parse_json(ByteView text) {
  JsonParse r;
  if (!is_valid_utf8(text)) {
    r.error = JsonError::invalid_utf8;
  } else if (text.size > 0 && std::memchr(text.data, 0, text.size) != nullptr) {
    // A raw NUL is never valid JSON (inside strings it must be escaped), but nlohmann's lexer
    // treats it as end of input, which would accept "{...}\0garbage".
    r.error = JsonError::invalid_json;
  } else if (text.size >= 3 && text.data[0] == 0xEF && text.data[1] == 0xBB &&
             text.data[2] == 0xBF) {
    // nlohmann skips a byte-order mark, JSON.parse does not: refuse it so that text we accept is
    // text every JavaScript peer accepts too.
    r.error = JsonError::invalid_json;
  } else if (!nesting_within(text, kMaxJsonDepth)) {
    r.error = JsonError::too_deep;
  } else {
    r.value = Json::parse(text.data, text.data + text.size, nullptr, /*allow_exceptions=*/false);
    if (r.value.is_discarded()) {
      r.error = JsonError::invalid_json;
      // Only on the failure path: is a number out of range the one thing wrong with it?
      std::string rewritten;
      if (json_overflow_as_null(text.as_chars(), rewritten) &&
          !Json::parse(rewritten, nullptr, /*allow_exceptions=*/false).is_discarded())
        r.error = JsonError::number_out_of_range;
    }
  }
  return r;
}

namespace {
// The length of the RFC 8259 number at the start of `t`: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
// (0 when there is none).
std::size_t json_number_length(std::string_view t) {
  std::size_t p = 0;
  auto digit = [&](std::size_t k) { return k < t.size() && t[k] >= '0' && t[k] <= '9'; };
  if (p < t.size() && t[p] == '-') ++p;
  if (!digit(p)) return 0;
  if (t[p] == '0')
    ++p;
  else
    while (digit(p)) ++p;
  if (p < t.size() && t[p] == '.') {
    if (!digit(p + 1)) return p;
    for (++p; digit(p);) ++p;
  }
  if (p < t.size() && (t[p] == 'e' || t[p] == 'E')) {
    std::size_t q = p + 1;
    if (q < t.size() && (t[q] == '+' || t[q] == '-')) ++q;
    if (!digit(q)) return p;
    for (p = q; digit(p);) ++p;
  }
  return p;
}
}  // namespace

bool json_overflow_as_null(std::string_view t, std::string& out) {
  out.clear();
  bool found = false, in_string = false, escaped = false;
  std::size_t copied = 0;
  auto number_byte = [](char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
  };
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (c != '-' && (c < '0' || c > '9')) continue;
    std::size_t end = i;
    bool exponent = false;
    for (; end < t.size() && number_byte(t[end]); ++end) exponent |= t[end] == 'e' || t[end] == 'E';
    // Without an exponent, only 309 digits or more can leave a double's range (DBL_MAX has 309;
    // fuzz_json_differential found 309 nines). Only a whole RFC 8259 number token counts (strtod
    // would also read "01e999", "1.e999" or a prefix).
    if ((exponent || end - i >= 309) && json_number_length(t.substr(i, end - i)) == end - i) {
      const std::string token(t.substr(i, end - i));
      if (std::isinf(std::strtod(token.c_str(), nullptr))) {
        out.append(t.data() + copied, i - copied);
        out += "null";
        copied = end;
        found = true;
      }
    }
    i = end - 1;
  }
  if (found) out.append(t.data() + copied, t.size() - copied);
  return found;
}

void append_json_string(std::string& out, std::string_view s) {
  append_escaped(out, s);
}

void append_js_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  if (v == 0) {  // JSON.stringify(-0) is "0"
    out += '0';
    return;
  }
  if (std::fabs(v) < 9007199254740992.0 && v == std::floor(v)) {
    out += std::to_string(static_cast<std::int64_t>(v));
    return;
  }
  // nlohmann prints the shortest round-trip digits (Grisu2), e.g. "1.5", "1e-05", "1.2e+22":
  // its to_chars, which is all Json(v).dump() runs for a finite double, without the serializer
  // (strings, escapes, containers), which nothing else in a size module needs. Re-lay those
  // digits out with ECMAScript Number::toString's rules.
  char grisu[64];  // nlohmann's own number buffer size; to_chars writes at most 24
  const std::string s(grisu, nlohmann::detail::to_chars(grisu, grisu + sizeof(grisu), v));
  std::string digits;
  int point = 0;  // position of the decimal point relative to the start of `digits`
  bool seen_point = false, negative = false;
  std::size_t i = 0;
  if (s[i] == '-') negative = true, ++i;
  for (; i < s.size() && s[i] != 'e' && s[i] != 'E'; ++i) {
    if (s[i] == '.') {
      seen_point = true;
      continue;
    }
    digits += s[i];
    if (!seen_point) ++point;
  }
  if (i < s.size()) point += std::atoi(s.c_str() + i + 1);
  // Strip leading zeros (as in "0.001") and trailing zeros.
  std::size_t lead = 0;
  while (lead + 1 < digits.size() && digits[lead] == '0') ++lead, --point;
  digits.erase(0, lead);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int k = int(digits.size()), n = point;
  if (negative) out += '-';
  if (k <= n && n <= 21) {
    out += digits;
    out.append(std::size_t(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, std::size_t(n));
    out += '.';
    out += digits.substr(std::size_t(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(std::size_t(-n), '0');
    out += digits;
  } else {
    out += digits[0];
    if (k > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += 'e';
    out += n - 1 >= 0 ? '+' : '-';
    out += std::to_string(std::abs(n - 1));
  }
}

std::size_t append_json(std::string& out, const Json& v, JsonNumbers numbers) {
  std::size_t deepest = 0;  // how deep the children nest; a container adds one
  switch (v.type()) {
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += ',';
        first = false;
        append_escaped(out, it.key());
        out += ':';
        deepest = std::max(deepest, append_json(out, it.value(), numbers));
      }
      out += '}';
      return deepest + 1;
    }
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ',';
        first = false;
        deepest = std::max(deepest, append_json(out, e, numbers));
      }
      out += ']';
      return deepest + 1;
    }
    case Json::value_t::string: append_escaped(out, v.get_ref<const std::string&>()); break;
    case Json::value_t::boolean: out += v.get<bool>() ? "true" : "false"; break;
    case Json::value_t::number_integer:
      if (numbers == JsonNumbers::js_double)
        append_js_number(out, v.get<double>());
      else
        out += std::to_string(v.get<std::int64_t>());
      break;
    case Json::value_t::number_unsigned:
      if (numbers == JsonNumbers::js_double)
        append_js_number(out, v.get<double>());
      else
        out += std::to_string(v.get<std::uint64_t>());
      break;
    case Json::value_t::number_float: append_js_number(out, v.get<double>()); break;
    default: out += "null"; break;
  }
  return 0;
}

std::string to_json(const Json& value) {
  std::string out;
  append_json(out, value);
  return out;
}

std::optional<std::string_view> json_string(const Json& v) {
  if (!v.is_string()) return std::nullopt;
  return std::string_view(v.get_ref<const std::string&>());
}

std::optional<std::int64_t> json_integer(const Json& v, std::int64_t min, std::int64_t max) {
  std::int64_t out;
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    out = v.get<std::int64_t>();
  } else if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > std::uint64_t(kMaxSafeInteger)) return std::nullopt;
    out = std::int64_t(u);
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > double(kMaxSafeInteger))
      return std::nullopt;
    out = std::int64_t(d);
  } else {
    return std::nullopt;
  }
  if (out < min || out > max) return std::nullopt;
  return out;
}

std::optional<double> json_finite(const Json& v) {
  if (!v.is_number()) return std::nullopt;
  const double d = v.get<double>();
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

}  // namespace tether
