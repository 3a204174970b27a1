#include "cockpit/teleop_safety.hpp"

#include <algorithm>

namespace tether::cockpit {

using wire::MessageType;

std::string_view safety_cause_name(SafetyCause c) {
  switch (c) {
    case SafetyCause::teleop_start: return "teleop_start";
    case SafetyCause::twist: return "twist";
    case SafetyCause::stop: return "stop";
    case SafetyCause::teleop_stop: return "teleop_stop";
    case SafetyCause::session_lost: return "session_lost";
    case SafetyCause::watchdog: return "watchdog";
  }
  return "stop";
}

TeleopSafety::TeleopSafety(TimeMs watchdog_ms)
    : watchdog_ms_(std::clamp(watchdog_ms, kMinWatchdogMs, kMaxWatchdogMs)) {}

void TeleopSafety::set(TwistCommand c, SafetyCause cause) {
  command_ = c;
  events_.push(SafetyEvent{command_, cause, active_, floor_});
}

bool TeleopSafety::handle_message(const wire::Message& m, TimeMs now) {
  switch (m.type) {
    case MessageType::teleop_start:
    case MessageType::teleop_stop:
    case MessageType::twist:
    case MessageType::stop: break;
    default: return false;
  }
  // Relay-sent teleop messages always carry gen (wire schema); without one, nothing is obeyed.
  auto g = m.body.contains("gen") ? json_integer(m.body["gen"], 0, kMaxSafeInteger) : std::nullopt;
  if (!g) return false;
  const std::uint64_t gen = std::uint64_t(*g);
  if (gen < floor_) return false;
  switch (m.type) {
    case MessageType::teleop_start:
      floor_ = gen;
      active_ = gen;
      set(TwistCommand{}, SafetyCause::teleop_start);
      return true;
    case MessageType::teleop_stop:
      // Everything of this lease and before is over for good.
      floor_ = gen + 1;
      active_ = 0;
      set(TwistCommand{}, SafetyCause::teleop_stop);
      return true;
    case MessageType::twist: {
      // Only the lease being obeyed drives; with none (active 0) nothing does, whatever gen says.
      if (active_ == 0 || gen != active_) return false;
      TwistCommand c;
      c.vx = m.body["vx"].get<double>();
      c.vy = m.body["vy"].get<double>();
      c.wz = m.body["wz"].get<double>();
      last_twist_ms_ = now;
      set(c, SafetyCause::twist);
      return true;
    }
    case MessageType::stop: set(TwistCommand{}, SafetyCause::stop); return true;
    default: return false;
  }
}

void TeleopSafety::handle_session_lost(TimeMs) {
  active_ = 0;
  set(TwistCommand{}, SafetyCause::session_lost);
}

Timeout TeleopSafety::poll_timeout() const {
  if (!command_.moving()) return std::nullopt;
  // "after watchdogMs without a twist": stale once more than watchdog_ms has passed.
  return last_twist_ms_ + watchdog_ms_ + 1;
}

void TeleopSafety::handle_timeout(TimeMs now) {
  if (command_.moving() && now - last_twist_ms_ > watchdog_ms_)
    set(TwistCommand{}, SafetyCause::watchdog);
}

}  // namespace tether::cockpit
