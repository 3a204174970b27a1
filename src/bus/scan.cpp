// See scan.hpp. Written by hand because no JSON library fits: the point is to validate in one
// pass without building values, and to leave the payload as text (bench/README.md § bus).
#include "bus/scan.hpp"

#include <array>
#include <cstdint>
#include <cstring>

#include "bus/limits.hpp"
#include "common/json.hpp"

// SIMD-128 for the string runs: WebAssembly SIMD (Node, Deno, Chromium and workerd all have it;
// CMakeLists.txt compiles this file with -msimd128 under emcc), SSE2 natively on x86-64 (always
// there), the eight-byte loop anywhere else.
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tether::bus {
namespace detail {

const std::uint8_t* skip_plain_scalar(const std::uint8_t* p, const std::uint8_t* end) {
  // Eight plain bytes at a time while no byte is a quote, a backslash, a control character or
  // non-ASCII (the usual bit tricks; a false alarm only hands the word to the byte loop).
  constexpr std::uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  while (end - p >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    const std::uint64_t q = w ^ (kOnes * '"'), b = w ^ (kOnes * '\\');
    const std::uint64_t special =
        (((q - kOnes) & ~q) | ((b - kOnes) & ~b) | ((w - kOnes * 0x20) & ~w) | w) & kHigh;
    // The lowest flagged byte is a real one (a borrow only ever flags bytes above a real match),
    // so the first special byte of the word is found without the byte loop. The word was read
    // little endian (memcpy of bytes, as WebAssembly and x86 lay them out).
    if (special) return p + (__builtin_ctzll(special) >> 3);
    p += 8;
  }
  while (p != end && *p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x80) ++p;
  return p;
}

#if defined(__wasm_simd128__) || defined(__SSE2__)
// One bit per byte of the sixteen at p that ends a plain run (bit i: byte i).
__attribute__((always_inline)) inline unsigned special_bits(const std::uint8_t* p) {
#if defined(__wasm_simd128__)
  const v128_t v = wasm_v128_load(p);
  // Signed v < 0 is a byte of 0x80 and above; unsigned v < 0x20 a control byte.
  const v128_t special = wasm_v128_or(wasm_v128_or(wasm_i8x16_eq(v, wasm_i8x16_splat('"')),
                                                   wasm_i8x16_eq(v, wasm_i8x16_splat('\\'))),
                                      wasm_v128_or(wasm_u8x16_lt(v, wasm_i8x16_splat(0x20)),
                                                   wasm_i8x16_lt(v, wasm_i8x16_splat(0))));
  return wasm_i8x16_bitmask(special);
#else
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  // min(v, 0x1F) == v exactly for the control bytes; the sign bits are the bytes >= 0x80.
  const __m128i special = _mm_or_si128(
      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
      _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v));
  return unsigned(_mm_movemask_epi8(special) | _mm_movemask_epi8(v));
#endif
}
#endif

// The loop for long runs, kept out of line: inlined into the scanner's one large function, the
// vector loop ran slower (register pressure), and a long run pays one call.
const std::uint8_t* skip_plain(const std::uint8_t* p, const std::uint8_t* end) {
#if defined(__wasm_simd128__) || defined(__SSE2__)
  while (end - p >= 16) {
    if (const unsigned bits = special_bits(p)) return p + __builtin_ctz(bits);
    p += 16;
  }
#endif
  return skip_plain_scalar(p, end);  // the tail, under sixteen bytes (or no SIMD at all)
}

// What the scanner calls: up to four blocks inline, where ids, names, keys and most payload
// strings end; a longer run continues in the out-of-line loop.
__attribute__((always_inline)) inline const std::uint8_t* skip_plain_inline(
    const std::uint8_t* p, const std::uint8_t* end) {
#if defined(__wasm_simd128__) || defined(__SSE2__)
  for (int i = 0; i < 4 && end - p >= 16; ++i, p += 16)
    if (const unsigned bits = special_bits(p)) return p + __builtin_ctz(bits);
  if (end - p >= 16) return skip_plain(p, end);
#endif
  return skip_plain_scalar(p, end);
}

}  // namespace detail

namespace {

// Byte classes inside a JSON string: 0 = plain ASCII, 1 = quote, 2 = backslash, 3 = control
// character (never allowed raw, NUL included), 4 = a UTF-8 lead or stray byte.
constexpr std::array<std::uint8_t, 256> make_string_classes() {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[std::size_t(c)] = 3;
  t['"'] = 1;
  t['\\'] = 2;
  for (int c = 0x80; c < 0x100; ++c) t[std::size_t(c)] = 4;
  return t;
}
constexpr auto kStringClass = make_string_classes();

struct StringInfo {
  std::string_view raw;  // the bytes between the quotes
  bool escaped = false;
  std::size_t utf16 = 0;  // only counted for escape-free strings
  Span span;              // the bytes between the quotes, in UTF-16 units of the whole text
};

// A key compared with a literal of the same length: a fixed-size memcmp the compiler inlines.
template <std::size_t N>
bool is(std::string_view k, const char (&lit)[N]) {
  return k.size() == N - 1 && std::memcmp(k.data(), lit, N - 1) == 0;
}

class Scanner {
 public:
  Scanner(ByteView t, Tape* tape)
      : begin_(t.data), p_(t.data), end_(t.data + t.size), tape_(tape) {}

  std::optional<ScannedEnvelope> envelope() {
    ws();
    if (!eat('{')) return std::nullopt;
    ScannedEnvelope e;
    unsigned seen = 0;  // one bit per key: a repeated key goes to the DOM path
    ws();
    if (p_ != end_ && *p_ == '}') return std::nullopt;  // {} lacks required keys: DOM reports which
    for (;;) {
      StringInfo k;
      if (!string(k) || k.escaped) return std::nullopt;
      ws();
      if (!eat(':')) return std::nullopt;
      ws();
      const int key = top_key(k.raw);
      if (key < 0 || (seen & (1u << key))) return std::nullopt;
      seen |= 1u << key;
      if (!member(key, e)) return std::nullopt;
      ws();
      if (eat(',')) {
        ws();
        continue;
      }
      if (!eat('}')) return std::nullopt;
      break;
    }
    ws();
    if (p_ != end_) return std::nullopt;
    constexpr unsigned kRequired =
        (1u << kV) | (1u << kId) | (1u << kType) | (1u << kFrom) | (1u << kTs);
    if ((seen & kRequired) != kRequired) return std::nullopt;
    return e;
  }

 private:
  enum Key { kV, kId, kType, kFrom, kTo, kTopic, kTs, kPayload };

  // One comparison per key: the length and first letter pick the only candidate.
  static int top_key(std::string_view k) {
    switch (k.size()) {
      case 1: return k[0] == 'v' ? kV : -1;
      case 2: return is(k, "id") ? kId : is(k, "to") ? kTo : is(k, "ts") ? kTs : -1;
      case 4: return is(k, "type") ? kType : is(k, "from") ? kFrom : -1;
      case 5: return is(k, "topic") ? kTopic : -1;
      case 7: return is(k, "payload") ? kPayload : -1;
      default: return -1;
    }
  }

  bool member(int key, ScannedEnvelope& e) {
    switch (key) {
      case kV:
        // Exactly the token 1; 1.0, 1e0 and the rest are the DOM path's to judge.
        if (!eat('1')) return false;
        return p_ == end_ || !(is_digit(*p_) || *p_ == '.' || *p_ == 'e' || *p_ == 'E');
      case kId: return bounded(e.id, e.id_span, kMaxIdChars);
      case kType: {
        std::string_view name;
        Span ignored;
        if (!bounded(name, ignored, kMaxTypeChars)) return false;
        auto t = message_type_from_name(name);
        if (!t) return false;
        e.type = *t;
        return true;
      }
      case kFrom: {
        const std::uint8_t* start = p_;
        if (!from(e)) return false;
        e.from_text =
            std::string_view(reinterpret_cast<const char*>(start), std::size_t(p_ - start));
        return true;
      }
      case kTo: return nullable(e.to, e.to_span, kMaxToChars);
      case kTopic: return nullable(e.topic, e.topic_span, kMaxTopicChars);
      case kTs: return ts(e.ts);
      case kPayload: {
        const std::uint8_t* start = p_;
        const std::uint32_t begin = u16(p_);
        recording_ = tape_ != nullptr;
        const bool ok = value(2);  // the envelope object is depth 1
        recording_ = false;
        if (!ok) return false;
        e.payload = std::string_view(reinterpret_cast<const char*>(start), std::size_t(p_ - start));
        e.payload_span = Span{begin, u16(p_)};
        return true;
      }
    }
    return false;
  }

  bool from(ScannedEnvelope& e) {
    if (!eat('{')) return false;
    unsigned seen = 0;
    ws();
    for (;;) {
      StringInfo k;
      if (!string(k) || k.escaped) return false;
      ws();
      if (!eat(':')) return false;
      ws();
      int key = -1;
      bool ok = false;
      const std::string_view kr = k.raw;
      if (is(kr, "streamId"))
        key = 0, ok = bounded(e.stream_id, e.stream_id_span, kMaxStreamIdChars);
      else if (is(kr, "role"))
        key = 1, ok = bounded(e.role, e.role_span, kMaxRoleChars);
      else if (is(kr, "name"))
        key = 2, ok = bounded(e.name, e.name_span, kMaxNameChars);
      else if (is(kr, "instanceId"))
        key = 3, ok = bounded(e.instance_id, e.instance_id_span, kMaxInstanceIdChars);
      if (!ok || (seen & (1u << key))) return false;
      seen |= 1u << key;
      ws();
      if (eat(',')) {
        ws();
        continue;
      }
      if (!eat('}')) return false;
      return seen == 0xF;
    }
  }

  // A header string: escape-free, non-empty, within `max` UTF-16 units. (No NUL: a raw control
  // byte is refused by string(), an escaped one is an escape.)
  bool bounded(std::string_view& out, Span& span, std::size_t max) {
    StringInfo s;
    if (!string(s) || s.escaped || s.raw.empty() || s.utf16 > max) return false;
    out = s.raw;
    span = s.span;
    return true;
  }

  bool nullable(std::optional<std::string_view>& out, std::optional<Span>& span, std::size_t max) {
    if (p_ != end_ && *p_ == 'n') {
      out.reset();
      span.reset();
      return literal("null");
    }
    std::string_view s;
    Span at;
    if (!bounded(s, at, max)) return false;
    out = s;
    span = at;
    return true;
  }

  // ts: -?(0|[1-9][0-9]*)(.[0-9]+)? with at most 19 digits whose value as an integer m is at
  // most 2^53, converted with Clinger's exact fast path (m and 10^k are exact doubles for k <= 22,
  // so one IEEE division rounds correctly): strtod's answer, which is what nlohmann gives (and
  // for integer tokens nlohmann's integer, exact below 2^53), without musl's strtod cost
  // (bench/README.md). -0 (nlohmann reads "-0" as the integer 0), exponents and longer numbers go
  // to the DOM path.
  bool ts(double& out) {
    static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const bool negative = eat('-');
    std::uint64_t m = 0;  // 19 digits cannot overflow it
    int digits = 0, frac = 0;
    if (p_ == end_ || !is_digit(*p_)) return false;
    if (*p_ == '0') {
      ++p_;
      digits = 1;
    } else {
      while (p_ != end_ && is_digit(*p_)) {
        m = m * 10 + std::uint64_t(*p_++ - '0');
        if (++digits > 19) return false;
      }
    }
    if (eat('.')) {
      while (p_ != end_ && is_digit(*p_)) {
        m = m * 10 + std::uint64_t(*p_++ - '0');
        if (++digits > 19) return false;
        ++frac;
      }
      if (frac == 0) return false;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E' || is_digit(*p_))) return false;
    if (negative && m == 0) return false;
    if (m > (std::uint64_t(1) << 53) || frac > 22) return false;
    out = double(m) / kPow10[frac];
    if (negative) out = -out;
    return true;
  }

  // Any JSON value at nesting `depth` (containers count from 1, as parse_json's bound does).
  bool value(std::size_t depth) {
    if (p_ == end_) return false;
    const std::uint32_t at = u16(p_);
    switch (*p_) {
      case '"': {
        StringInfo s;
        if (!string(s)) return false;
        record(s.escaped ? TapeKind::string_escaped : TapeKind::string, s.span);
        return true;
      }
      case '{': {
        if (depth > kMaxJsonDepth) return false;
        ++p_;
        record(TapeKind::object_begin, Span{at, at + 1});
        ws();
        if (eat('}')) return record(TapeKind::object_end, Span{u16(p_) - 1, u16(p_)}), true;
        for (;;) {
          StringInfo k;
          if (!string(k)) return false;
          record(k.escaped ? TapeKind::key_escaped : TapeKind::key, k.span);
          ws();
          if (!eat(':')) return false;
          ws();
          if (!value(depth + 1)) return false;
          ws();
          if (eat(',')) {
            ws();
            continue;
          }
          if (!eat('}')) return false;
          record(TapeKind::object_end, Span{u16(p_) - 1, u16(p_)});
          return true;
        }
      }
      case '[': {
        if (depth > kMaxJsonDepth) return false;
        ++p_;
        record(TapeKind::array_begin, Span{at, at + 1});
        ws();
        if (eat(']')) return record(TapeKind::array_end, Span{u16(p_) - 1, u16(p_)}), true;
        for (;;) {
          if (!value(depth + 1)) return false;
          ws();
          if (eat(',')) {
            ws();
            continue;
          }
          if (!eat(']')) return false;
          record(TapeKind::array_end, Span{u16(p_) - 1, u16(p_)});
          return true;
        }
      }
      case 't': return literal("true") && (record(TapeKind::true_value, Span{at, at + 4}), true);
      case 'f': return literal("false") && (record(TapeKind::false_value, Span{at, at + 5}), true);
      case 'n': return literal("null") && (record(TapeKind::null_value, Span{at, at + 4}), true);
      default:
        if (!number()) return false;
        record(TapeKind::number, Span{at, u16(p_)});
        return true;
    }
  }

  // One token on the tape, while the payload is being scanned and the tape has room.
  __attribute__((always_inline)) void record(TapeKind kind, Span span) {
    if (!recording_) return;
    if (tape_->size() >= 3 * kMaxTapeTokens) {
      tape_->clear();
      recording_ = false;  // too long to beat JSON.parse: the host parses the payload's span
      return;
    }
    tape_->push_back(std::uint32_t(kind));
    tape_->push_back(span.begin);
    tape_->push_back(span.end);
  }

  // The UTF-16 offset of a position reached by the scan: its byte offset less the bytes that
  // multi-byte sequences before it took beyond their UTF-16 length (only strings hold any).
  std::uint32_t u16(const std::uint8_t* at) const {
    return std::uint32_t(std::size_t(at - begin_) - extra_);
  }

  // A payload number. Left to the DOM path: exponents, over 300 digits and negative zeros, the
  // only numbers whose value JSON.parse and nlohmann + the canonical writer could disagree on
  // (-0 is written "0"; a value past the double range becomes Infinity in JS, null in ours).
  bool number() {
    const bool negative = eat('-');
    bool nonzero = false;
    std::size_t digits = 0;
    if (p_ == end_ || !is_digit(*p_)) return false;
    if (*p_ == '0') {
      ++p_;
      digits = 1;
    } else {
      while (p_ != end_ && is_digit(*p_)) ++p_, ++digits;
      nonzero = true;
    }
    if (eat('.')) {
      std::size_t frac = 0;
      while (p_ != end_ && is_digit(*p_)) nonzero |= *p_++ != '0', ++frac;
      if (frac == 0) return false;
      digits += frac;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E' || is_digit(*p_))) return false;
    return digits <= 300 && !(negative && !nonzero);
  }

  // A string, p_ on its opening quote. Checks what nlohmann's lexer checks: no raw control
  // bytes, strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF), escapes from
  // the JSON set, and \u surrogates only as a high-low pair (JSON.parse would take a lone one;
  // the DOM path refuses it, so the scanner must not accept it either).
  __attribute__((always_inline)) bool string(StringInfo& s) {
    if (!eat('"')) return false;
    const std::uint8_t* start = p_;
    const std::uint32_t begin16 = u16(p_);
    std::size_t units = 0;
    for (;;) {
      const std::uint8_t* run = p_;
      p_ = detail::skip_plain_inline(p_, end_);
      units += std::size_t(p_ - run);
      if (p_ == end_) return false;
      switch (kStringClass[*p_]) {
        case 1:
          s.raw = std::string_view(reinterpret_cast<const char*>(start), std::size_t(p_ - start));
          s.utf16 = units;
          s.span = Span{begin16, u16(p_)};
          ++p_;
          return true;
        case 2:
          s.escaped = true;
          if (!escape()) return false;
          break;
        case 3: return false;
        default: {
          const int n = utf8_sequence();
          if (n == 0) return false;
          units += n == 4 ? 2 : 1;
          extra_ += std::size_t(n == 4 ? 2 : n - 1);
        }
      }
    }
  }

  bool escape() {
    ++p_;  // the backslash
    if (p_ == end_) return false;
    switch (*p_++) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't': return true;
      case 'u': {
        unsigned u = 0;
        if (!hex4(u)) return false;
        if (u >= 0xDC00 && u <= 0xDFFF) return false;  // a low surrogate alone
        if (u < 0xD800 || u > 0xDBFF) return true;
        unsigned lo = 0;
        if (!eat('\\') || !eat('u') || !hex4(lo)) return false;
        return lo >= 0xDC00 && lo <= 0xDFFF;
      }
      default: return false;
    }
  }

  bool hex4(unsigned& out) {
    if (end_ - p_ < 4) return false;
    for (int i = 0; i < 4; ++i) {
      const std::uint8_t c = *p_++;
      unsigned d;
      if (c >= '0' && c <= '9')
        d = c - '0';
      else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
      else
        return false;
      out = out * 16 + d;
    }
    return true;
  }

  // One well-formed multi-byte UTF-8 sequence (RFC 3629 table): its length, or 0.
  int utf8_sequence() {
    const std::uint8_t c = *p_;
    const std::size_t left = std::size_t(end_ - p_);
    auto cont = [&](std::size_t i, std::uint8_t lo, std::uint8_t hi) {
      return i < left && p_[i] >= lo && p_[i] <= hi;
    };
    int n = 0;
    if (c >= 0xC2 && c <= 0xDF)
      n = cont(1, 0x80, 0xBF) ? 2 : 0;
    else if (c == 0xE0)
      n = cont(1, 0xA0, 0xBF) && cont(2, 0x80, 0xBF) ? 3 : 0;
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
      n = cont(1, 0x80, 0xBF) && cont(2, 0x80, 0xBF) ? 3 : 0;
    else if (c == 0xED)
      n = cont(1, 0x80, 0x9F) && cont(2, 0x80, 0xBF) ? 3 : 0;
    else if (c == 0xF0)
      n = cont(1, 0x90, 0xBF) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) ? 4 : 0;
    else if (c >= 0xF1 && c <= 0xF3)
      n = cont(1, 0x80, 0xBF) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) ? 4 : 0;
    else if (c == 0xF4)
      n = cont(1, 0x80, 0x8F) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) ? 4 : 0;
    p_ += n;
    return n;
  }

  bool literal(std::string_view word) {
    if (std::size_t(end_ - p_) < word.size()) return false;
    for (char ch : word)
      if (*p_++ != std::uint8_t(ch)) return false;
    return true;
  }

  static bool is_digit(std::uint8_t c) { return c >= '0' && c <= '9'; }
  bool eat(char c) {
    if (p_ != end_ && *p_ == std::uint8_t(c)) {
      ++p_;
      return true;
    }
    return false;
  }
  // JSON whitespace only; a byte-order mark is not (JSON.parse refuses it, so does parse_json).
  void ws() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  const std::uint8_t* begin_;
  const std::uint8_t* p_;
  const std::uint8_t* end_;
  Tape* tape_;
  bool recording_ = false;
  std::size_t extra_ = 0;
};

void append_quoted(std::string& out, std::string_view raw) {
  out += '"';
  out += raw;  // escape-free by construction: the bytes are the canonical form
  out += '"';
}

}  // namespace

std::optional<ScannedEnvelope> scan_envelope(ByteView text, Tape* tape) {
  if (tape) tape->clear();
  if (text.size == 0 || text.size > kMaxFileChunkEnvelopeBytes) return std::nullopt;
  auto e = Scanner(text, tape).envelope();
  // Over its type's bound: the DOM path gives the refusal.
  if (e && text.size > max_envelope_bytes(e->type)) return std::nullopt;
  return e;
}

void append_scanned_result(std::string& out, const ScannedEnvelope& e) {
  out.reserve(out.size() + e.payload.size() + 256);
  out += "{\"ok\":true,\"envelope\":{\"v\":1,\"id\":";
  append_quoted(out, e.id);
  out += ",\"type\":";
  append_quoted(out, message_type_name(e.type));
  out += ",\"from\":{\"streamId\":";
  append_quoted(out, e.stream_id);
  out += ",\"role\":";
  append_quoted(out, e.role);
  out += ",\"name\":";
  append_quoted(out, e.name);
  out += ",\"instanceId\":";
  append_quoted(out, e.instance_id);
  out += "},\"to\":";
  if (e.to)
    append_quoted(out, *e.to);
  else
    out += "null";
  out += ",\"topic\":";
  if (e.topic)
    append_quoted(out, *e.topic);
  else
    out += "null";
  out += ",\"ts\":";
  append_js_number(out, e.ts);
  out += ",\"payload\":";
  if (e.payload.empty())
    out += "null";
  else
    out += e.payload;
  out += "}}";
}

}  // namespace tether::bus
