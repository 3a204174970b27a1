// libFuzzer harness: the cockpit relay core driven by a hostile script of session events, on robot
// and viewer sessions over both lanes. The input is a list of steps `op | u16-LE len | len bytes`;
// the op's low nibble picks the event and its high nibble the target (session or stream).
// Properties: nothing crashes or leaks; every message the relay sends validates as a relay
// message of protocol v7; every frame it writes decodes; a closed session never gets more actions;
// a deadline the relay reports is never in the past once handle_timeout ran at it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include "cockpit/relay.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"

using namespace tether;
using namespace tether::cockpit;

namespace {

RelayConfig config(bool buffered_amount) {
  RelayConfig c;
  c.websocket_buffered_amount = buffered_amount;  // the edge paces WebSockets by acknowledged pongs
  c.wall_clock_ms = 1'752'576'000'000;
  return c;
}

struct Driver {
  explicit Driver(bool buffered_amount) : relay(config(buffered_amount)) {}
  CockpitRelay relay;
  std::int64_t now = 0;
  std::vector<std::pair<SessionId, Lane>> sessions;
  std::set<SessionId> closed;
  std::vector<StreamId> incoming;
  std::vector<StreamId> opening, writing, carriers;

  void check() {
    while (auto polled = relay.poll_action()) {
      const CockpitAction& a = *polled;
      if (closed.count(a.session)) __builtin_trap();  // actions after close
      Lane lane = Lane::webtransport;
      for (auto& [s, l] : sessions)
        if (s == a.session) lane = l;
      switch (a.kind) {
        case ActionKind::send_datagram:
        case ActionKind::write_control: {
          if (!a.bytes) __builtin_trap();
          ByteView json(*a.bytes);
          if (lane == Lane::websocket) {
            auto f = wire::decode_data_frame(json);
            if (!f || f->header.ch != "@control") __builtin_trap();
            json = f->payload;
          } else if (a.kind == ActionKind::write_control) {
            if (a.bytes->size() < 4 || read_u32_le(a.bytes->data()) != a.bytes->size() - 4)
              __builtin_trap();
            json = ByteView(a.bytes->data() + 4, a.bytes->size() - 4);
          }
          if (!wire::parse_message(json, wire::Sender::relay)) __builtin_trap();
          break;
        }
        case ActionKind::write_carrier:
        case ActionKind::write_stream:
          if (!a.bytes || !wire::decode_data_frame(ByteView(*a.bytes))) __builtin_trap();
          if (a.kind == ActionKind::write_stream) writing.push_back(a.stream);
          break;
        case ActionKind::open_stream: opening.push_back(a.stream); break;
        case ActionKind::open_carrier: carriers.push_back(a.stream); break;
        case ActionKind::close_session: closed.insert(a.session); break;
        default: break;
      }
    }
  }

  SessionId session(unsigned target) {
    if (sessions.empty()) return 0;
    return sessions[target % sessions.size()].first;
  }
  static StreamId pick(std::vector<StreamId>& v, unsigned target) {
    if (v.empty()) return 0;
    const std::size_t i = target % v.size();
    StreamId s = v[i];
    v.erase(v.begin() + std::ptrdiff_t(i));
    return s;
  }
  void open(Role r, Lane l) {
    if (sessions.size() >= 16) return;
    if (SessionId s = relay.handle_session_open(r, l, now)) sessions.emplace_back(s, l);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Driver d(size % 2 == 0);
  std::size_t pos = 0;
  int steps = 0;
  while (pos + 3 <= size && steps++ < 512) {
    const unsigned op = data[pos] & 0x0f, target = data[pos] >> 4;
    const std::size_t len =
        std::min<std::size_t>(data[pos + 1] | data[pos + 2] << 8, size - pos - 3);
    const ByteView body(data + pos + 3, len);
    pos += 3 + len;
    switch (op) {
      case 0: d.open(Role::robot, Lane::webtransport); break;
      case 1: d.open(Role::viewer, Lane::webtransport); break;
      case 2: d.open(Role::robot, Lane::websocket); break;
      case 3: d.open(Role::viewer, Lane::websocket); break;
      case 4: d.relay.handle_control_data(d.session(target), body, d.now); break;
      case 5: d.relay.handle_datagram(d.session(target), body, d.now); break;
      case 6: {
        StreamId st = d.relay.handle_incoming_open(d.session(target), d.now);
        if (st) {
          d.incoming.push_back(st);
          d.relay.handle_incoming_data(st, body, d.now);
        }
        break;
      }
      case 7:
        if (!d.incoming.empty())
          d.relay.handle_incoming_data(d.incoming[target % d.incoming.size()], body, d.now);
        break;
      case 8: d.relay.handle_incoming_end(Driver::pick(d.incoming, target), d.now); break;
      case 9: d.relay.handle_ws_message(d.session(target), body, d.now); break;
      case 10: d.relay.handle_stream_opened(Driver::pick(d.opening, target), d.now); break;
      case 11: {
        // A viewer stream's write, or one of a carrier's (a carrier takes many); with bit 4 of the
        // target, a counted batch of them (any count: the core bounds it by what is outstanding).
        const StreamId st = (target & 8) && !d.carriers.empty()
                                ? d.carriers[target % d.carriers.size()]
                                : Driver::pick(d.writing, target);
        if (target & 4)
          d.relay.handle_writes_done(st, len, d.now);
        else
          d.relay.handle_write_done(st, d.now);
        break;
      }
      case 12: d.relay.handle_stream_failed(Driver::pick(d.opening, target), d.now); break;
      case 13:
        d.now += std::int64_t(len) * 10;
        d.relay.handle_timeout(d.now);
        break;
      case 14: {
        SessionId s = d.session(target);
        d.relay.handle_session_closed(s, d.now);
        d.closed.insert(s);
        break;
      }
      case 15: d.relay.handle_stream_failed(Driver::pick(d.carriers, target), d.now); break;
    }
    d.check();
    (void)d.relay.stats();
  }
  return 0;
}
