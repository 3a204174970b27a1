#include "common/utf8.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace tether {

bool is_valid_utf8(ByteView bytes) {
  const std::uint8_t* p = bytes.data;
  const std::uint8_t* end = p + bytes.size;
  while (p < end) {
    // ASCII fast path, eight bytes at a time: headers and control messages are mostly ASCII.
    while (end - p >= 8) {
      std::uint64_t word;
      std::memcpy(&word, p, 8);
      if (word & 0x8080808080808080ull) break;
      p += 8;
    }
    if (p >= end) break;
    const std::uint8_t c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    std::size_t need;
    std::uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
    } else if (c == 0xE0) {
      need = 2, lo = 0xA0;
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
      need = 2;
    } else if (c == 0xED) {
      need = 2, hi = 0x9F;  // excludes UTF-16 surrogates
    } else if (c == 0xF0) {
      need = 3, lo = 0x90;
    } else if (c >= 0xF1 && c <= 0xF3) {
      need = 3;
    } else if (c == 0xF4) {
      need = 3, hi = 0x8F;  // nothing above U+10FFFF
    } else {
      return false;
    }
    if (std::size_t(end - p) <= need) return false;
    if (p[1] < lo || p[1] > hi) return false;
    for (std::size_t i = 2; i <= need; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
    }
    p += need + 1;
  }
  return true;
}

std::size_t utf8_code_points(std::string_view valid_text) {
  std::size_t n = 0;
  for (unsigned char c : valid_text) n += (c & 0xC0) != 0x80;
  return n;
}

std::size_t utf16_units(std::string_view valid_text) {
  std::size_t n = 0;
  for (unsigned char c : valid_text) {
    if ((c & 0xC0) != 0x80) ++n;  // a lead byte starts a code point
    if (c >= 0xF0) ++n;           // four-byte sequences are surrogate pairs in UTF-16
  }
  return n;
}

std::string_view utf8_prefix(std::string_view valid_text, std::size_t max_bytes) {
  if (valid_text.size() <= max_bytes) return valid_text;
  std::size_t n = max_bytes;
  while (n > 0 && (std::uint8_t(valid_text[n]) & 0xC0) == 0x80) --n;  // back to a lead byte
  return valid_text.substr(0, n);
}

std::string_view utf16_prefix(std::string_view valid_text, std::size_t max_units) {
  std::size_t units = 0;
  for (std::size_t i = 0; i < valid_text.size(); ++i) {
    const auto c = std::uint8_t(valid_text[i]);
    if ((c & 0xC0) == 0x80) continue;  // continuation: the code point was counted at its lead
    const std::size_t width = c >= 0xF0 ? 2 : 1;
    if (units + width > max_units) return valid_text.substr(0, i);
    units += width;
  }
  return valid_text;
}

char32_t utf8_code_point_at(std::string_view valid_text, std::size_t i, std::size_t& len) {
  const auto c = std::uint8_t(valid_text[i]);
  len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  char32_t cp = len == 1 ? c : c & (0x7F >> len);
  for (std::size_t k = 1; k < len && i + k < valid_text.size(); ++k)
    cp = cp << 6 | (std::uint8_t(valid_text[i + k]) & 0x3F);
  return cp;
}

bool js_space(char32_t cp) {
  if (cp > 0x20 && cp < 0x80) return false;  // the common case: printable ASCII
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

bool js_blank(std::string_view valid_text) {
  return js_trim(valid_text).empty();
}

std::string_view js_trim(std::string_view valid_text) {
  std::size_t begin = 0, end = 0, len = 0;
  bool seen = false;  // a code point that is not space
  for (std::size_t i = 0; i < valid_text.size(); i += len) {
    if (js_space(utf8_code_point_at(valid_text, i, len))) continue;
    if (!seen) begin = i;
    seen = true;
    end = i + len;
  }
  return seen ? valid_text.substr(begin, std::min(end, valid_text.size()) - begin)
              : std::string_view();
}

}  // namespace tether
