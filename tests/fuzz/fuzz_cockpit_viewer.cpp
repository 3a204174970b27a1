// libFuzzer harness: the cockpit viewer session core (src/cockpit/viewer_session.hpp) driven by a
// hostile relay and a hostile operator. The input is a list of steps `op | u16-LE len | len bytes`.
// Properties: nothing crashes or leaks; everything the session sends is a valid viewer message
// framed for its lane (or, for a publish, a data frame on a channel that is not reserved); every
// event is JSON; a deadline the session reports has passed once handle_timeout ran at it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cockpit/viewer_session.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"

using namespace tether;
using namespace tether::cockpit;

namespace {

void check_message(ByteView json) {
  if (!wire::parse_message(json, wire::Sender::viewer)) __builtin_trap();
}

void check(ViewerSession& v) {
  const Lane lane = v.lane();
  while (auto a = v.poll_action()) {
    const ByteView b(a->bytes);
    switch (a->kind) {
      case ViewerActionKind::send_control:
      case ViewerActionKind::send_datagram:
        if (lane == Lane::websocket) {
          auto f = wire::decode_data_frame(b);
          if (!f || f->header.ch != wire::kControlChannel) __builtin_trap();
          check_message(f->payload);
        } else if (a->kind == ViewerActionKind::send_control) {
          if (b.size < 4 || read_u32_le(b.data) != b.size - 4) __builtin_trap();
          check_message(ByteView(b.data + 4, b.size - 4));
        } else {
          check_message(b);
        }
        break;
      case ViewerActionKind::send_stream: {
        auto f = wire::decode_data_frame(b);
        if (!f || wire::is_reserved_channel(f->header.ch)) __builtin_trap();
        break;
      }
      case ViewerActionKind::connect:
      case ViewerActionKind::close:
        if (!a->bytes.empty()) __builtin_trap();
        break;
      case ViewerActionKind::rtc_open:
      case ViewerActionKind::rtc_accept:
      case ViewerActionKind::rtc_answer: {
        auto args = parse_json(ByteView(std::string_view(a->json)));
        if (!a->bytes.empty() || !args.ok() || !args.value.is_object()) __builtin_trap();
        break;
      }
    }
  }
  while (auto e = v.poll_event()) {
    if (!parse_json(ByteView(std::string_view(e->json))).ok()) __builtin_trap();
  }
}

double number(ByteView body, std::size_t i) {
  double d = 0;
  if (body.size >= (i + 1) * 8) std::memcpy(&d, body.data + i * 8, 8);
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ViewerSession v(size % 2 ? std::optional<std::string>("fuzz-token-0123456789") : std::nullopt);
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
      case 0: v.handle_start(now); break;
      case 1: v.handle_connected(flag & 1 ? Lane::websocket : Lane::webtransport, now); break;
      case 2: v.handle_disconnected(text, now); break;
      case 3: v.handle_control_data(body, now); break;
      case 4: (void)v.handle_ws_message(body, now); break;
      case 5: {
        if (auto t = v.poll_timeout(); t && (flag & 1))
          now = std::max(now, *t);
        else
          now += TimeMs(len) * 7;
        v.handle_timeout(now);
        check(v);
        if (auto t = v.poll_timeout(); t && *t <= now) __builtin_trap();  // not settled
        break;
      }
      case 6: v.watch(text, now); break;
      case 7: {
        std::vector<std::string> chs;
        std::string cur;
        for (char c : text) {
          if (c == ',')
            chs.push_back(std::move(cur)), cur.clear();
          else
            cur.push_back(c);
        }
        chs.push_back(cur);
        v.want(chs, now);
        break;
      }
      case 8: v.teleop_start(now); break;
      case 9: v.teleop_stop(now); break;
      case 10: (void)v.drive(number(body, 0), number(body, 1), number(body, 2), now); break;
      case 11: v.estop(now); break;
      case 12: {
        const std::size_t cut = std::min<std::size_t>(flag * 4, text.size());
        (void)v.publish(text.substr(0, cut), body, text.substr(cut, 16), now);
        break;
      }
      case 13: v.handle_stop(now); break;
      case 14:  // WebRTC: the host's offer or answer, a media report, the connection's state
        if (flag & 4)
          v.handle_rtc_media(text.substr(0, flag * 2), len, now);
        else if (flag & 8)
          v.handle_rtc_state(flag & 1 ? "failed" : text, now);
        else if (flag & 1)
          (void)v.handle_rtc_offer(text, now);
        else
          (void)v.handle_rtc_answer(text, now);
        break;
      default: now += TimeMs(flag); break;
    }
    check(v);
  }
  return 0;
}
