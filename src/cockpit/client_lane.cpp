#include "cockpit/client_lane.hpp"

#include "common/utf8.hpp"
#include "wire/frame.hpp"
#include "wire/limits.hpp"

namespace tether::cockpit {

std::optional<std::string> client_message(const Json& message, wire::Sender from) {
  auto m = wire::validate_message(message, from);
  if (!m) return std::nullopt;
  std::string text = wire::encode_message(m.value());
  // The whole text, so nothing built in code (a manifest, say) gets out that a peer would refuse.
  if (text.size() > wire::kMaxControlBytes || !is_valid_utf8(ByteView(std::string_view(text))))
    return std::nullopt;
  return text;
}

std::string host_text(std::string_view text) {
  std::string out(text.substr(0, kMaxHostTextBytes));
  // Cut on a code point, then keep only what is UTF-8 (bytes that are not become '?').
  while (!out.empty() && (std::uint8_t(out.back()) & 0xC0) == 0x80 &&
         out.size() == kMaxHostTextBytes)
    out.pop_back();
  if (is_valid_utf8(ByteView(std::string_view(out)))) return out;
  for (char& c : out)
    if (std::uint8_t(c) >= 0x80) c = '?';
  return out;
}

Bytes ClientLane::control_data_frame(const std::string& json, TimeMs now) {
  wire::FrameHeader h;
  h.ch = wire::kControlChannel;
  h.seq = std::int64_t(control_seq_++);
  h.ts = double(now) / 1000.0;
  h.delivery = wire::Delivery::reliable;
  Bytes out;
  // A validated message is under kMaxControlBytes, so the frame always encodes.
  (void)wire::append_data_frame(out, h, ByteView(std::string_view(json)));
  return out;
}

Bytes ClientLane::control_message(const std::string& json, TimeMs now) {
  if (lane_ == Lane::websocket) return control_data_frame(json, now);
  Bytes out;
  (void)wire::append_control_frame(out, json);
  return out;
}

Bytes ClientLane::datagram(const std::string& json, TimeMs now) {
  if (lane_ == Lane::websocket) return control_data_frame(json, now);
  return Bytes(json.begin(), json.end());
}

}  // namespace tether::cockpit
