// libFuzzer harness: the room member's inbound parser and state machine (src/room/member.hpp).
// The input is a flags byte (bit 0: lanes; the rest seeds the backoff) and newline-separated relay
// messages for room "lab"; every fourth line the link drops and comes back, and every line tries
// a lane send to the first member. Properties: nothing crashes; the roster never holds ourselves,
// a duplicate or an unclean id; a lane is open only to a roster member while joined; every frame
// the member transmits is one JSON object; a deadline is never in the past; after close nothing but
// the hang-up leaves and no dial is scheduled.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json.hpp"
#include "room/json_scan.hpp"
#include "room/member.hpp"

using namespace tether;
using namespace tether::room;

namespace {
void check_actions(RoomMember& m, bool closed) {
  JsonScan scan;
  while (auto a = m.poll_action()) {
    if (closed && a->kind != MemberAction::Kind::hang_up) __builtin_trap();
    if (a->kind == MemberAction::Kind::transmit &&
        (!scan.parse(a->text, kMaxJsonDepth) || !scan.is_object(0))) {
      __builtin_trap();
    }
  }
  while (m.poll_event()) {
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  RoomMemberOptions o;
  o.room = "lab";
  o.origin = "alice";
  o.lanes = data[0] & 1;
  o.seed = data[0] >> 1;
  o.max_frame_bytes = 4096;
  RoomMember m(o);
  std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  TimeMs now = 0;
  m.handle_start(now);
  m.handle_link_open(now);
  check_actions(m, false);
  std::size_t start = 0;
  for (int line = 0; line < 128 && start <= input.size(); ++line) {
    std::size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    now += 7;
    m.handle_link_message(input.substr(start, end - start), now);
    start = end + 1;
    if (!m.roster().empty()) {
      (void)m.send_text(m.roster().front(),
                        input.substr(0, std::min<std::size_t>(input.size(), 300)), 0);
      (void)m.send_signal(m.roster().front(), R"({"k":"renegotiate"})");
    }
    check_actions(m, false);
    const auto& roster = m.roster();
    for (std::size_t i = 0; i < roster.size(); ++i) {
      if (roster[i] == o.origin || roster[i].empty() || roster[i].size() > kMaxPeerIdBytes)
        __builtin_trap();
      if (std::count(roster.begin(), roster.end(), roster[i]) != 1) __builtin_trap();
      if (m.lane_open(roster[i]) && !m.joined()) __builtin_trap();
    }
    if (m.lane_open("no\x01one")) __builtin_trap();  // never a roster id
    if ((line & 3) == 3) {
      m.handle_link_closed(now);
      check_actions(m, false);
      if (auto t = m.poll_timeout()) {
        if (*t < now) __builtin_trap();
        now = *t;
        m.handle_timeout(now);
        m.handle_link_open(now);
        check_actions(m, false);
      }
    }
  }
  m.handle_close();
  check_actions(m, true);
  m.handle_link_closed(now + 1);
  if (m.poll_timeout()) __builtin_trap();
  return 0;
}
