#include "wire/frame.hpp"

#include <cmath>

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
  append_json(out, Json(h.ch));
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
  append_header_json(header, h);
  if (header.size() > kMaxHeaderBytes) return FrameError::header_too_large;
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

Result<FrameHeader, FrameError> parse_header(ByteView header_json) {
  if (header_json.size > kMaxHeaderBytes) return err(FrameError::header_too_large);
  JsonParse parsed = parse_json(header_json);
  switch (parsed.error) {
    case JsonError::none: break;
    case JsonError::invalid_utf8: return err(FrameError::invalid_utf8);
    case JsonError::too_deep: return err(FrameError::too_deep);
    case JsonError::invalid_json: return err(FrameError::invalid_json);
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
