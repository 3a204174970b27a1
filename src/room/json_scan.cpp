// The relay's validating JSON scanner (json_scan.hpp).
#include "room/json_scan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "common/bytes.hpp"
#include "common/json.hpp"
#include "common/utf8.hpp"

namespace tether::room {

namespace {
int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

namespace {

void put_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}
}  // namespace

bool JsonScan::parse(std::string_view text, std::size_t max_depth) {
  text_ = text;
  pos_ = 0;
  max_depth_ = max_depth;
  failed_ = false;
  nodes_.clear();
  overflow_.clear();
  if (text.size() >= kNone) return false;
  if (!is_valid_utf8(ByteView(text))) return false;
  skip_ws();
  value(0);
  skip_ws();
  return !failed_ && pos_ == text_.size();
}

void JsonScan::skip_ws() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
    ++pos_;
  }
}

// Consumes a string token at pos_ (which holds '"'); validates escapes, including surrogate pairs.
bool JsonScan::string_token(bool& escaped) {
  escaped = false;
  ++pos_;
  while (pos_ < text_.size()) {
    pos_ = next_json_special(text_, pos_);
    if (pos_ >= text_.size()) break;
    unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c == '"') {
      ++pos_;
      return true;
    }
    if (c < 0x20) return false;
    escaped = true;
    if (++pos_ >= text_.size()) return false;
    char e = text_[pos_++];
    if (e == 'u') {
      auto read4 = [&](std::uint32_t& v) {
        if (pos_ + 4 > text_.size()) return false;
        v = 0;
        for (int k = 0; k < 4; ++k) {
          int h = hex(text_[pos_ + k]);
          if (h < 0) return false;
          v = v * 16 + static_cast<std::uint32_t>(h);
        }
        pos_ += 4;
        return true;
      };
      std::uint32_t v;
      if (!read4(v)) return false;
      if (v >= 0xdc00 && v <= 0xdfff) return false;  // a lone low surrogate
      if (v >= 0xd800 && v <= 0xdbff) {
        std::uint32_t low;
        if (pos_ + 2 > text_.size() || text_[pos_] != '\\' || text_[pos_ + 1] != 'u') return false;
        pos_ += 2;
        if (!read4(low) || low < 0xdc00 || low > 0xdfff) return false;
      }
    } else if (!std::strchr("\"\\/bfnrt", e) || e == 0) {
      return false;
    }
  }
  return false;
}

std::uint32_t JsonScan::value(std::size_t depth) {
  if (failed_ || pos_ >= text_.size()) {
    failed_ = true;
    return kNone;
  }
  std::uint32_t idx = static_cast<std::uint32_t>(nodes_.size());
  nodes_.emplace_back();
  nodes_[idx].begin = static_cast<std::uint32_t>(pos_);
  char c = text_[pos_];
  auto literal = [&](const char* word, Type t, bool truthy) {
    std::size_t n = std::strlen(word);
    if (text_.compare(pos_, n, word) != 0) {
      failed_ = true;
      return;
    }
    pos_ += n;
    nodes_[idx].type = t;
    nodes_[idx].truthy = truthy;
  };
  if (c == '{' || c == '[') {
    if (depth + 1 > max_depth_) {
      failed_ = true;
      return kNone;
    }
    bool object = c == '{';
    nodes_[idx].type = object ? Type::object : Type::array;
    ++pos_;
    skip_ws();
    std::uint32_t prev = kNone;
    if (pos_ < text_.size() && text_[pos_] == (object ? '}' : ']')) {
      ++pos_;
    } else {
      while (!failed_) {
        std::uint32_t kb = 0, ke = 0;
        bool kesc = false;
        if (object) {
          if (pos_ >= text_.size() || text_[pos_] != '"') {
            failed_ = true;
            break;
          }
          kb = static_cast<std::uint32_t>(pos_ + 1);
          if (!string_token(kesc)) {
            failed_ = true;
            break;
          }
          ke = static_cast<std::uint32_t>(pos_ - 1);
          skip_ws();
          if (pos_ >= text_.size() || text_[pos_] != ':') {
            failed_ = true;
            break;
          }
          ++pos_;
          skip_ws();
        }
        std::uint32_t child = value(depth + 1);
        if (failed_) break;
        nodes_[child].key_begin = kb;
        nodes_[child].key_end = ke;
        nodes_[child].key_escaped = kesc;
        if (prev == kNone)
          nodes_[idx].first = child;
        else
          nodes_[prev].next = child;
        prev = child;
        ++nodes_[idx].count;
        skip_ws();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          skip_ws();
          continue;
        }
        if (pos_ < text_.size() && text_[pos_] == (object ? '}' : ']')) {
          ++pos_;
          break;
        }
        failed_ = true;
      }
    }
  } else if (c == '"') {
    nodes_[idx].type = Type::string;
    bool esc;
    if (!string_token(esc)) failed_ = true;
    nodes_[idx].escaped = esc;
  } else if (c == 't') {
    literal("true", Type::boolean, true);
  } else if (c == 'f') {
    literal("false", Type::boolean, false);
  } else if (c == 'n') {
    literal("null", Type::null, false);
  } else if (c == '-' || (c >= '0' && c <= '9')) {
    nodes_[idx].type = Type::number;
    std::size_t p = pos_;
    auto digit = [&](std::size_t i) {
      return i < text_.size() && text_[i] >= '0' && text_[i] <= '9';
    };
    if (text_[p] == '-') ++p;
    if (!digit(p)) {
      failed_ = true;
    } else if (text_[p] == '0') {
      ++p;
    } else {
      while (digit(p)) ++p;
    }
    if (!failed_ && p < text_.size() && text_[p] == '.') {
      ++p;
      if (!digit(p)) failed_ = true;
      while (digit(p)) ++p;
    }
    bool exponent = false;
    if (!failed_ && p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
      exponent = true;
      ++p;
      if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
      if (!digit(p)) failed_ = true;
      while (digit(p)) ++p;
    }
    pos_ = p;
    // Beyond a double's range (only with an exponent or 309 digits or more, as many as DBL_MAX
    // has, so other numbers cost nothing here): JSON.parse reads +-Infinity, which number() gives
    // too; json() writes null.
    if (!failed_ && (exponent || p - nodes_[idx].begin >= 309)) {
      nodes_[idx].end = static_cast<std::uint32_t>(p);
      if (std::isinf(number(idx))) overflow_.push_back(idx);
    }
  } else {
    failed_ = true;
  }
  if (failed_) return kNone;
  nodes_[idx].end = static_cast<std::uint32_t>(pos_);
  return idx;
}

void JsonScan::unescape(std::string_view s, std::string& out) {
  out.clear();
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    // Runs without a backslash go across in one append (most of a long string).
    std::size_t run = s.find('\\', i);
    if (run == std::string_view::npos) run = s.size();
    if (run > i) {
      out.append(s.data() + i, run - i);
      i = run;
      if (i == s.size()) break;
    }
    char e = s[++i];
    switch (e) {
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        auto read4 = [&](std::size_t at) {
          std::uint32_t v = 0;
          for (int k = 0; k < 4; ++k) v = v * 16 + static_cast<std::uint32_t>(hex(s[at + k]));
          return v;
        };
        std::uint32_t cp = read4(i + 1);
        i += 4;
        if (cp >= 0xd800 && cp <= 0xdbff) {  // validated: a low surrogate escape follows
          std::uint32_t low = read4(i + 3);
          i += 6;
          cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        }
        put_utf8(out, cp);
        break;
      }
      default: out += e; break;  // " \ /
    }
  }
}

std::string_view JsonScan::str(std::uint32_t i, std::string& scratch) const {
  const Node& n = nodes_[i];
  std::string_view content = text_.substr(n.begin + 1, n.end - n.begin - 2);
  if (!n.escaped) return content;
  unescape(content, scratch);
  return scratch;
}

std::string_view JsonScan::key(std::uint32_t i, std::string& scratch) const {
  const Node& n = nodes_[i];
  std::string_view content = text_.substr(n.key_begin, n.key_end - n.key_begin);
  if (!n.key_escaped) return content;
  unescape(content, scratch);
  return scratch;
}

std::uint32_t JsonScan::field(std::uint32_t obj, std::string_view wanted) const {
  if (!is_object(obj)) return kNone;
  std::uint32_t found = kNone;
  std::string scratch;
  for (std::uint32_t c = nodes_[obj].first; c != kNone; c = nodes_[c].next) {
    const Node& n = nodes_[c];
    if (!n.key_escaped) {
      if (text_.compare(n.key_begin, n.key_end - n.key_begin, wanted) == 0) found = c;
    } else if (key(c, scratch) == wanted) {
      found = c;
    }
  }
  return found;
}

void JsonScan::append_json(std::string& out, std::uint32_t i) const {
  const Node& n = nodes_[i];
  auto it =
      std::lower_bound(overflow_.begin(), overflow_.end(), n.begin,
                       [&](std::uint32_t o, std::uint32_t at) { return nodes_[o].begin < at; });
  std::uint32_t copied = n.begin;
  for (; it != overflow_.end() && nodes_[*it].begin < n.end; ++it) {
    out.append(text_.data() + copied, nodes_[*it].begin - copied);
    out += "null";
    copied = nodes_[*it].end;
  }
  out.append(text_.data() + copied, n.end - copied);
}

std::string_view JsonScan::json(std::uint32_t i, std::string& scratch) const {
  if (overflow_.empty()) return raw(i);
  scratch.clear();
  append_json(scratch, i);
  return scratch;
}

double JsonScan::number(std::uint32_t i) const {
  std::string_view r = raw(i);
  // The common shapes (versions, hlc stamps, epochs, seqs: [-]digits[.digits], 15 significant
  // digits at most) without strtod: the digits as an integer are exact (< 10^15 < 2^53) and so is
  // the power of ten (<= 10^22), so the one IEEE division rounds correctly, to the double strtod
  // reads (Clinger's fast path). Anything else (an exponent, more digits) goes to strtod.
  {
    std::size_t p = 0;
    const bool negative = !r.empty() && r[0] == '-';
    if (negative) p = 1;
    double mantissa = 0;
    int digits = 0;
    int fraction = -1;  // digits after the point, once one was read
    bool plain = p < r.size();
    for (; plain && p < r.size(); ++p) {
      const char ch = r[p];
      if (ch >= '0' && ch <= '9') {
        mantissa = mantissa * 10 + (ch - '0');
        if (mantissa != 0) ++digits;  // leading zeros are not significant
        if (fraction >= 0) ++fraction;
      } else if (ch == '.' && fraction < 0) {
        fraction = 0;
      } else {
        plain = false;
      }
    }
    if (plain && digits <= 15 && fraction <= 22) {
      double scale = 1;  // 10^fraction, exact: every power of ten to 10^22 is a double
      for (int k = 0; k < fraction; ++k) scale *= 10;
      const double v = mantissa / scale;
      return negative ? -v : v;
    }
  }
  char buf[64];
  if (r.size() < sizeof(buf)) {
    std::memcpy(buf, r.data(), r.size());
    buf[r.size()] = 0;
    return std::strtod(buf, nullptr);
  }
  std::string copy(r);
  return std::strtod(copy.c_str(), nullptr);
}

}  // namespace tether::room
