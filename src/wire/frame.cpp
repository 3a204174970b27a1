#include "wire/frame.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "common/utf8.hpp"

namespace tether::wire {

std::string_view delivery_name(Delivery d) {
  return d == Delivery::reliable ? "reliable" : "latest";
}

std::optional<Delivery> delivery_from_name(std::string_view name) {
  if (name == "latest") return Delivery::latest;
  if (name == "reliable") return Delivery::reliable;
  return std::nullopt;
}

std::optional<FrameError> check_header(const FrameHeader& h) {
  if (h.ch.empty() || !is_valid_utf8(ByteView(std::string_view(h.ch))) ||
      utf8_code_points(h.ch) > kMaxChannelIdChars)
    return FrameError::invalid_header;
  if (h.seq < 0 || h.seq > kMaxSafeInteger || !std::isfinite(h.ts))
    return FrameError::invalid_header;
  if (h.meta && !h.meta->is_object()) return FrameError::invalid_header;
  return std::nullopt;
}

void append_header_json(std::string& out, const FrameHeader& h) {
  out += "{\"ch\":";
  // Channel ids rarely need escaping; when they do not, write them as they are rather than build
  // a Json value (an allocation and a copy) only to have append_json() copy them again.
  const bool plain = std::none_of(h.ch.begin(), h.ch.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\';
  });
  if (plain) {
    out += '"';
    out += h.ch;
    out += '"';
  } else {
    append_json(out, Json(h.ch));
  }
  out += ",\"seq\":";
  out += std::to_string(h.seq);
  out += ",\"ts\":";
  append_js_number(out, h.ts);
  out += ",\"delivery\":\"";
  out += delivery_name(h.delivery);
  out += '"';
  if (h.meta) {
    out += ",\"meta\":";
    append_json(out, *h.meta);
  }
  out += '}';
}

std::optional<FrameError> append_data_frame(Bytes& out, const FrameHeader& h, ByteView payload) {
  if (auto e = check_header(h)) return e;
  std::string header;
  header.reserve(64 + h.ch.size());  // the usual header without meta fits: one allocation
  append_header_json(header, h);
  if (header.size() > kMaxHeaderBytes) return FrameError::header_too_large;
  // meta built in code may hold strings that are not UTF-8; the encoder never writes a header its
  // own decoder refuses (the channel id was checked above).
  if (h.meta && !is_valid_utf8(ByteView(std::string_view(header)))) return FrameError::invalid_utf8;
  if (payload.size > kMaxFrameBytes - kDataPrefixBytes - header.size())
    return FrameError::frame_too_large;
  out.reserve(out.size() + kDataPrefixBytes + header.size() + payload.size);
  append_u32_le(out, std::uint32_t(header.size()));
  append_u32_le(out, std::uint32_t(payload.size));
  append(out, header);
  append(out, payload);
  return std::nullopt;
}

Result<Bytes, FrameError> encode_data_frame(const FrameHeader& h, ByteView payload) {
  Bytes out;
  if (auto e = append_data_frame(out, h, payload)) return err(*e);
  return out;
}

namespace {

// The canonical header, as every encoder writes it: {"ch":"..","seq":N,"ts":N,"delivery":".."}
// with no spaces or escapes, optionally followed by ,"meta":{..}. Decoding it by hand costs a
// small fraction of a general JSON parse (bench/README.md). This path only ever accepts: anything
// unusual, and every error, goes to parse_header_any_form(), so results and error codes stay
// exactly those of the general path.
class CanonicalHeaderReader {
 public:
  explicit CanonicalHeaderReader(ByteView text)
      : p_(text.as_chars().data()), end_(p_ + text.size) {}

  std::optional<FrameHeader> read() {
    FrameHeader h;
    std::string_view ch, delivery;
    if (!literal("{\"ch\":") || !plain_string(ch) || !literal(",\"seq\":") || !natural(h.seq) ||
        !literal(",\"ts\":") || !decimal(h.ts) || !literal(",\"delivery\":") ||
        !plain_string(delivery))
      return std::nullopt;
    const auto d = delivery_from_name(delivery);
    if (!d) return std::nullopt;
    h.ch = std::string(ch);
    h.delivery = *d;
    if (!literal("}")) {
      // The rest is ,"meta":<object>}; the object's own text goes to the bounded JSON parser.
      if (!literal(",\"meta\":") || p_ == end_ || *p_ != '{' || end_[-1] != '}')
        return std::nullopt;
      const std::string_view text(p_, std::size_t(end_ - 1 - p_));
      // nlohmann takes a NUL byte for the end of its input: "{}\0}" would parse here as {} but
      // fail as a whole header. Valid JSON never holds a raw NUL, so leave such text to that path.
      if (text.find('\0') != std::string_view::npos) return std::nullopt;
      JsonParse meta = parse_json(ByteView(text));
      // Within the whole header the object sits one level deeper than it does on its own.
      if (!meta.ok() || !meta.value.is_object() || depth(meta.value) >= kMaxJsonDepth)
        return std::nullopt;
      h.meta = std::move(meta.value);
      p_ = end_;
    }
    if (p_ != end_ || check_header(h)) return std::nullopt;
    return h;
  }

 private:
  bool literal(std::string_view s) {
    if (std::size_t(end_ - p_) < s.size() || std::string_view(p_, s.size()) != s) return false;
    p_ += s.size();
    return true;
  }

  // A string without escapes or control characters; check_header() then validates its UTF-8.
  bool plain_string(std::string_view& out) {
    if (p_ == end_ || *p_ != '"') return false;
    const char* start = ++p_;
    for (; p_ != end_ && *p_ != '"'; ++p_) {
      const auto c = static_cast<unsigned char>(*p_);
      if (c < 0x20 || c == '\\') return false;
    }
    if (p_ == end_) return false;
    out = std::string_view(start, std::size_t(p_ - start));
    ++p_;
    return true;
  }

  // seq: 0|[1-9][0-9]* in at most 16 digits, so that it is exact; the range is checked later.
  bool natural(std::int64_t& out) {
    const char* start = p_;
    if (!digits()) return false;
    if (p_ - start > 16) return false;
    out = 0;
    for (const char* d = start; d != p_; ++d) out = out * 10 + (*d - '0');
    return true;
  }

  // ts: -?(0|[1-9][0-9]*)(.[0-9]+)?, converted exactly as nlohmann converts it (it calls strtod,
  // which rounds correctly). Integers of more than 15 digits and -0, which nlohmann reads as
  // integers, are left to the general path.
  bool decimal(double& out) {
    const char* start = p_;
    const bool negative = p_ != end_ && *p_ == '-';
    if (negative) ++p_;
    const char* int_start = p_;
    if (!digits()) return false;
    const char* int_end = p_;
    const char* frac_start = p_;
    if (p_ != end_ && *p_ == '.') {
      frac_start = ++p_;
      while (p_ != end_ && is_digit(*p_)) ++p_;
      if (p_ == frac_start) return false;
    } else if (int_end - int_start > 15) {
      return false;
    }
    const std::size_t frac_digits = std::size_t(p_ - frac_start);
    // Clinger's fast path: with the digits as an integer m <= 2^53 and at most 22 of them after
    // the point, m and 10^k are exact doubles and one IEEE division rounds correctly, which is
    // exactly strtod's answer. It matters in WASM, where musl's strtod costs about as much as
    // everything else in a header put together (bench/README.md).
    static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    std::uint64_t m = 0;  // 19 digits cannot overflow it
    const bool short_enough = std::size_t(int_end - int_start) + frac_digits <= 19;
    if (short_enough) {
      for (const char* d = int_start; d != int_end; ++d) m = m * 10 + std::uint64_t(*d - '0');
      for (const char* d = frac_start; d != p_; ++d) m = m * 10 + std::uint64_t(*d - '0');
    }
    if (short_enough && m <= (std::uint64_t(1) << 53) && frac_digits <= 22) {
      out = double(m) / kPow10[frac_digits];
      if (negative) out = -out;
    } else {
      char buf[32];
      const std::size_t n = std::size_t(p_ - start);
      if (n >= sizeof buf) return false;
      std::memcpy(buf, start, n);
      buf[n] = '\0';
      char* stop = nullptr;
      out = std::strtod(buf, &stop);
      // A locale whose decimal point is not '.' stops strtod early; the general path copes.
      if (stop != buf + n) return false;
    }
    return !(out == 0 && std::signbit(out));
  }

  // 0|[1-9][0-9]*. Whatever follows must then match the next literal, so 1e5 or 1.5 where an
  // integer is wanted falls through to the general path.
  bool digits() {
    if (p_ == end_ || !is_digit(*p_)) return false;
    if (*p_++ == '0') {
      if (p_ != end_ && is_digit(*p_)) return false;
    } else {
      while (p_ != end_ && is_digit(*p_)) ++p_;
    }
    return true;
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  // Bracket depth of a parsed value, as nesting_within() in common/json.cpp counts it.
  static std::size_t depth(const Json& v) {
    if (!v.is_object() && !v.is_array()) return 0;
    std::size_t deepest = 0;
    for (const auto& e : v) deepest = std::max(deepest, depth(e));
    return deepest + 1;
  }

  const char* p_;
  const char* end_;
};

// The general path: any key order and spacing, every error reported precisely.
Result<FrameHeader, FrameError> parse_header_any_form(ByteView header_json) {
  JsonParse parsed = parse_json(header_json);
  switch (parsed.error) {
    case JsonError::none: break;
    case JsonError::invalid_utf8: return err(FrameError::invalid_utf8);
    case JsonError::too_deep: return err(FrameError::too_deep);
    case JsonError::invalid_json:
    case JsonError::number_out_of_range: return err(FrameError::invalid_json);
  }
  Json& j = parsed.value;
  if (!j.is_object()) return err(FrameError::invalid_header);
  FrameHeader h;
  bool has_ch = false, has_seq = false, has_ts = false, has_delivery = false;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    Json& v = it.value();
    if (key == "ch") {
      if (!v.is_string()) return err(FrameError::invalid_header);
      h.ch = std::move(v.get_ref<std::string&>());
      has_ch = true;
    } else if (key == "seq") {
      auto seq = json_integer(v, 0, kMaxSafeInteger);
      if (!seq) return err(FrameError::invalid_header);
      h.seq = *seq;
      has_seq = true;
    } else if (key == "ts") {
      auto ts = json_finite(v);
      if (!ts) return err(FrameError::invalid_header);
      h.ts = *ts;
      has_ts = true;
    } else if (key == "delivery") {
      auto name = json_string(v);
      auto d = name ? delivery_from_name(*name) : std::nullopt;
      if (!d) return err(FrameError::invalid_header);
      h.delivery = *d;
      has_delivery = true;
    } else if (key == "meta") {
      if (!v.is_object()) return err(FrameError::invalid_header);
      h.meta = std::move(v);
    } else {
      return err(FrameError::invalid_header);
    }
  }
  if (!has_ch || !has_seq || !has_ts || !has_delivery) return err(FrameError::invalid_header);
  if (auto e = check_header(h)) return err(*e);
  return h;
}

}  // namespace

Result<FrameHeader, FrameError> parse_header(ByteView header_json) {
  if (header_json.size > kMaxHeaderBytes) return err(FrameError::header_too_large);
  if (auto h = CanonicalHeaderReader(header_json).read()) return std::move(*h);
  return parse_header_any_form(header_json);
}

Result<DataFrame, FrameError> decode_data_frame(ByteView frame) {
  if (frame.size < kDataPrefixBytes) return err(FrameError::truncated);
  const std::size_t header_len = read_u32_le(frame.data);
  const std::size_t payload_len = read_u32_le(frame.data + 4);
  if (header_len > kMaxHeaderBytes) return err(FrameError::header_too_large);
  if (payload_len > kMaxFrameBytes - kDataPrefixBytes - header_len)
    return err(FrameError::frame_too_large);
  const std::size_t total = kDataPrefixBytes + header_len + payload_len;
  if (frame.size < total) return err(FrameError::truncated);
  if (frame.size > total) return err(FrameError::trailing_bytes);
  auto header = parse_header(frame.sub(kDataPrefixBytes, header_len));
  if (!header) return err(header.error());
  return DataFrame{std::move(header.value()), frame.sub(kDataPrefixBytes, header_len),
                   frame.sub(kDataPrefixBytes + header_len, payload_len)};
}

std::optional<FrameError> append_control_frame(Bytes& out, std::string_view json) {
  if (json.empty()) return FrameError::empty_message;
  if (json.size() > kMaxControlBytes) return FrameError::control_too_large;
  append_u32_le(out, std::uint32_t(json.size()));
  append(out, json);
  return std::nullopt;
}

Result<Bytes, FrameError> encode_control_frame(std::string_view json) {
  Bytes out;
  if (auto e = append_control_frame(out, json)) return err(*e);
  return out;
}

}  // namespace tether::wire
