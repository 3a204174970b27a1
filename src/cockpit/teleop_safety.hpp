// The robot side of the teleop safety chain (cockpit-wire-v7-notes.md § Teleop): a twist of the
// current lease moves the robot; `stop`, `teleop_stop`, session loss and a watchdog without twists
// (watchdogMs, default 300) zero the command; a generation floor permanently rejects anything
// older than the newest lease, so a released holder's late datagrams can never move the robot.
// Sans-IO: the watchdog is a deadline the host's driver wakes it at (src/common/drive.hpp). The
// robot session (robot_session.hpp) runs one; a robot with its own transport may run one alone.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/drive.hpp"
#include "common/json.hpp"
#include "wire/messages.hpp"

namespace tether::cockpit {

constexpr TimeMs kDefaultWatchdogMs = 300;  // v7 notes § Teleop
// A robot may choose its own watchdog within these bounds.
constexpr TimeMs kMinWatchdogMs = 1;
constexpr TimeMs kMaxWatchdogMs = 60'000;

struct TwistCommand {
  double vx = 0;
  double vy = 0;
  double wz = 0;
  bool moving() const { return vx != 0 || vy != 0 || wz != 0; }
  bool operator==(const TwistCommand& o) const { return vx == o.vx && vy == o.vy && wz == o.wz; }
};

// Why the command changed (or the lease did).
enum class SafetyCause { teleop_start, twist, stop, teleop_stop, session_lost, watchdog };
constexpr std::size_t kSafetyCauseCount = 6;
std::string_view safety_cause_name(SafetyCause c);

struct SafetyEvent {
  TwistCommand command;  // what to apply from now on
  SafetyCause cause;
  std::uint64_t active;  // the lease obeyed, 0 for none
  std::uint64_t floor;   // the lowest generation still accepted
};

class TeleopSafety {
 public:
  // `watchdog_ms` is clamped to [kMinWatchdogMs, kMaxWatchdogMs].
  explicit TeleopSafety(TimeMs watchdog_ms = kDefaultWatchdogMs);

  // A relay message. teleop_start, teleop_stop, twist and stop (relay-sent, so they carry gen)
  // are judged; anything else is ignored. Returns whether it was obeyed.
  bool handle_message(const wire::Message& m, TimeMs now);
  // The session to the relay was lost: stop, and forget the lease.
  void handle_session_lost(TimeMs now);
  // The watchdog: a command older than watchdog_ms is zeroed.
  Timeout poll_timeout() const;
  void handle_timeout(TimeMs now);
  // Every obeyed message and every zeroing, in order.
  std::optional<SafetyEvent> poll_event() { return events_.poll(); }

  const TwistCommand& command() const { return command_; }
  std::uint64_t active() const { return active_; }
  std::uint64_t floor() const { return floor_; }
  TimeMs watchdog_ms() const { return watchdog_ms_; }

 private:
  void set(TwistCommand c, SafetyCause cause);

  TimeMs watchdog_ms_;
  std::uint64_t floor_ = 0;
  std::uint64_t active_ = 0;
  TwistCommand command_;
  TimeMs last_twist_ms_ = 0;
  PollQueue<SafetyEvent> events_;
};

}  // namespace tether::cockpit
