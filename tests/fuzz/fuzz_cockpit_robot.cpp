// libFuzzer harness: the robot session core (src/cockpit/robot_session.hpp) and its teleop safety
// chain driven by a hostile relay (datagrams, carrier bytes, WebSocket messages) and a hostile
// robot application. The input is a list of steps `op | u16-LE len | len bytes`.
// Properties: nothing crashes or leaks; everything the robot sends is a valid robot message in an
// @control frame, a datagram for its lane, or a frame on a declared rx channel; the safety chain
// never leaves a command standing without a lease, and a deadline reported has passed once
// handle_timeout ran at it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cockpit/robot_session.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"

using namespace tether;
using namespace tether::cockpit;

namespace {

const char* kManifest = R"({"version":1,"channels":[
  {"ch":"cam","encoding":"jpeg.v1"},{"ch":"log","encoding":"json.v1","delivery":"reliable"},
  {"ch":"say","dir":"tx","encoding":"text.json.v1","delivery":"reliable","publish":true},
  {"ch":"front","encoding":"video.webrtc.v1"}]})";
const char* kChannels[] = {"cam", "log", "say", "@control", "ghost", "front"};

void check_message(ByteView json) {
  if (!wire::parse_message(json, wire::Sender::robot)) __builtin_trap();
}

void check(RobotSession& r) {
  while (auto a = r.poll_action()) {
    const ByteView b(a->bytes);
    if (a->kind == RobotActionKind::send_stream ||
        (a->kind == RobotActionKind::send_datagram && r.lane() == Lane::websocket)) {
      auto f = wire::decode_data_frame(b);
      if (!f) __builtin_trap();
      if (f->header.ch == wire::kControlChannel)
        check_message(f->payload);
      else if (f->header.ch != "cam" && f->header.ch != "log" && f->header.ch != "front")
        __builtin_trap();  // rx only
    } else if (a->kind == RobotActionKind::send_datagram) {
      check_message(b);
    } else if (a->kind == RobotActionKind::rtc_open || a->kind == RobotActionKind::rtc_accept) {
      auto args = parse_json(ByteView(std::string_view(a->json)));
      if (!b.empty() || !args.ok() || !args.value.is_object()) __builtin_trap();
    } else if (!a->bytes.empty()) {
      __builtin_trap();
    }
  }
  while (auto e = r.poll_event()) {
    if (!e->body.is_object()) __builtin_trap();
  }
  const TeleopSafety& s = r.safety();
  if (s.active() == 0 && s.command().moving()) __builtin_trap();  // no lease, no motion
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  RobotConfig c;
  c.id = "r1";
  c.name = "Fuzz";
  c.model = "m";
  c.manifest = parse_json(ByteView(std::string_view(kManifest))).value;
  c.watchdog_ms = size % 2 ? 300 : 50;
  auto made = RobotSession::create(std::move(c));
  if (!made) __builtin_trap();
  RobotSession& r = made.value();
  TimeMs now = 0;
  std::size_t pos = 0;
  int steps = 0;
  while (pos + 3 <= size && steps++ < 512) {
    const unsigned op = data[pos] & 0x0f, flag = data[pos] >> 4;
    const std::size_t len =
        std::min<std::size_t>(data[pos + 1] | data[pos + 2] << 8, size - pos - 3);
    const ByteView body(data + pos + 3, len);
    const std::string text(body.as_chars());
    pos += 3 + len;
    switch (op) {
      case 0: r.handle_start(now); break;
      case 1: r.handle_connected(flag & 1 ? Lane::websocket : Lane::webtransport, now); break;
      case 2: r.handle_disconnected(text, now); break;
      case 3: r.handle_datagram(body, now); break;
      case 4: r.handle_carrier_data(body, now); break;
      case 5: r.handle_ws_message(body, now); break;
      case 6: {
        if (auto t = r.poll_timeout(); t && (flag & 1))
          now = std::max(now, *t);
        else
          now += TimeMs(len) * 7;
        r.handle_timeout(now);
        check(r);
        if (auto t = r.poll_timeout(); t && *t <= now) __builtin_trap();  // not settled
        break;
      }
      case 7: {
        std::optional<Json> meta;
        if (flag & 8) meta = parse_json(body).value;
        (void)r.send(kChannels[flag % 5], body, meta, double(len), now);
        break;
      }
      case 8: (void)r.ack(kChannels[flag % 5], text, now); break;
      case 9: (void)r.nack(kChannels[flag % 5], text, text, text, now); break;
      case 10: r.handle_stop(now); break;
      case 11: {  // the host's offer: an SDP and a tracks list, from the body
        auto tracks = parse_json(body);
        Json list = tracks.ok() ? tracks.value : Json::array();
        if (flag & 1)
          list = Json::array({Json::object({{"mid", "0"}, {"ch", kChannels[flag % 6]}})});
        (void)r.handle_rtc_offer(text, list, now);
        break;
      }
      case 12: (void)r.handle_media_resumed(kChannels[flag % 6], TimeMs(len) * 100, now); break;
      case 13: r.handle_rtc_state(flag & 1 ? "failed" : text, now); break;
      default: now += TimeMs(flag) * 13; break;
    }
    check(r);
  }
  return 0;
}
