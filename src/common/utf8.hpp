// Strict UTF-8 validation. The wire never repairs text: invalid bytes are rejected, never replaced
// with U+FFFD (cockpit-wire-v7-notes.md § Framing reminders). nlohmann's lexer also refuses
// ill-formed strings, but a separate pass lets the wire report `invalid_utf8` apart from
// `invalid_json`, and its ASCII fast path costs less than the parse it guards.
#pragma once
#include <cstddef>
#include <string_view>

#include "common/bytes.hpp"

namespace tether {

// True when `bytes` is well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing
// above U+10FFFF, no truncated sequence.
bool is_valid_utf8(ByteView bytes);

// Number of code points in text already known to be valid UTF-8.
std::size_t utf8_code_points(std::string_view valid_text);

// JavaScript's `string.length` for valid UTF-8 text: code points, counting those above U+FFFF
// (four-byte sequences, surrogate pairs in UTF-16) twice. Bounds shared with JS peers use it.
std::size_t utf16_units(std::string_view valid_text);

// The longest prefix of valid UTF-8 text that is at most max_bytes long and ends on a code point
// boundary (so it is valid UTF-8 itself).
std::string_view utf8_prefix(std::string_view valid_text, std::size_t max_bytes);

// The longest prefix of valid UTF-8 text whose JavaScript length (utf16_units) is at most
// max_units and that ends on a code point boundary: what `s.slice(0, max_units)` keeps of a JS
// string, except that a surrogate pair is never split.
std::string_view utf16_prefix(std::string_view valid_text, std::size_t max_units);

// The code point that starts at byte `i` of valid UTF-8 text, and its length in bytes (`len`);
// never reads past the text, whatever the bytes.
char32_t utf8_code_point_at(std::string_view valid_text, std::size_t i, std::size_t& len);
// Whether a code point is what JavaScript's `\s` matches and `String.prototype.trim()` strips
// (ECMA-262 WhiteSpace and LineTerminator): the set js_blank names below.
bool js_space(char32_t cp);

// Whether valid UTF-8 text is empty or only what JavaScript's `String.prototype.trim()` strips:
// tab, LF, VT, FF, CR, space, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F,
// U+3000 and U+FEFF. A name JS peers refuse as blank is refused here too.
bool js_blank(std::string_view valid_text);
// Valid UTF-8 text without what `String.prototype.trim()` strips at either end (the set above).
std::string_view js_trim(std::string_view valid_text);

}  // namespace tether
