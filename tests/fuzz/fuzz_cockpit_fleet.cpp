// libFuzzer harness: what crosses between the objects of a fleet split over Durable Objects
// (src/cockpit/fleet.hpp): a handoff ticket given to a robot object, a presence report given to
// the directory, a robots list given to a robot object. The first byte picks which. Properties:
// nothing crashes; a ticket that decodes encodes and decodes again to the same ticket; whatever
// arrives, the relay's own sessions survive it (the robot stays registered).
#include <cstddef>
#include <cstdint>
#include <string>

#include "cockpit/fleet.hpp"
#include "cockpit/relay.hpp"
#include "wire/frame.hpp"

using namespace tether;
using namespace tether::cockpit;

namespace {

Bytes hello_frame() {
  const std::string hello =
      R"({"t":"hello","v":7,"role":"robot","robot":{"id":"rover-a","name":"A","model":"sim"},)"
      R"("manifest":{"version":1,"channels":[{"ch":"pose","encoding":"pose.json.v1"}]}})";
  wire::FrameHeader h;
  h.ch = "@control";
  h.delivery = wire::Delivery::reliable;
  auto b = wire::encode_data_frame(h, ByteView(std::string_view(hello)));
  if (!b) __builtin_trap();
  return b.value();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const ByteView input(data + 1, size - 1);
  const TimeMs now = 1000;
  if (data[0] % 3 == 0) {
    if (auto t = decode_ticket(input)) {
      auto again = decode_ticket(ByteView(std::string_view(encode_ticket(t.value()))));
      if (!again || again->robot_id != t->robot_id || again->hello != t->hello ||
          again->welcomed != t->welcomed || again->watch != t->watch ||
          again->gen_floor != t->gen_floor)
        __builtin_trap();
    }
  }
  CockpitRelay relay(RelayConfig{});
  const bool directory = data[0] % 3 == 1;
  relay.set_fleet_part(directory ? FleetPart::directory : FleetPart::robot, "rover-a");
  SessionId robot = 0;
  if (!directory) {
    robot = relay.handle_session_open(Role::robot, Lane::websocket, now);
    Bytes hello = hello_frame();
    relay.handle_ws_message(robot, ByteView(hello), now);
  }
  switch (data[0] % 3) {
    case 0: {
      SessionId s = relay.handle_session_open(Role::viewer, Lane::websocket, now);
      relay.handle_handoff(s, input, now);
      break;
    }
    case 1: relay.handle_presence(1, input, now); break;
    case 2: relay.handle_fleet_robots(input, now); break;
  }
  while (relay.poll_action()) {
  }
  if (!directory && relay.counters("rover-a", "pose") == std::nullopt) __builtin_trap();
  (void)relay.stats();
  return 0;
}
