// What the relay knows of each robot's link without any viewer watching it, and the verdict on it
// (docs/cockpit-protocol.md § Fleet link quality): when it last heard from the robot, the channel
// frames and bytes it received per second, the round-trip time the robot reports in its pings
// (`ping.rttMs`, optional: a robot that does not send it has no rtt), and the backlog of the
// robot's carrier. A viewer that asked for them (`fleet {link: true}`) gets these figures as each
// `robots` entry's `link`. Counting costs O(1) per message; the figures are read at most once per
// push (kLinkPushIntervalMs).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/drive.hpp"
#include "common/json.hpp"

namespace tether::cockpit {

// The rates are counted over windows of this length (the last whole window is reported).
constexpr TimeMs kLinkWindowMs = 2000;
// Pushes of link figures to a viewer that asked for them: at most one per this interval, and only
// when a robot's figures changed (its silence counts only once it reaches kLinkDegradedAfterMs,
// then in whole seconds).
constexpr TimeMs kLinkPushIntervalMs = 2000;
// Every robot session pings the relay every second (kRobotPingIntervalMs), even with nothing to
// publish: silence this long is three pings missed, and the link is stalled.
constexpr TimeMs kLinkStalledAfterMs = 3000;
// Silence this long (a ping missed), a round trip above this, or a carrier backlog above this is
// a degraded link.
constexpr TimeMs kLinkDegradedAfterMs = 2000;
constexpr std::int64_t kLinkDegradedRttMs = 500;
constexpr std::size_t kLinkDegradedBacklogBytes = 1024 * 1024;

enum class LinkState { good, degraded, stalled };
std::string_view link_state_name(LinkState s);

// The verdict for a robot's figures: stalled past kLinkStalledAfterMs of silence, degraded past
// the degraded bounds, good otherwise. An absent rtt (a robot that does not report it) does not
// count against the link.
LinkState link_state(TimeMs silent_ms, std::optional<std::int64_t> rtt_ms, std::size_t backlog);

// One robot's counters, kept by the relay for as long as the robot is registered.
class RobotLink {
 public:
  explicit RobotLink(TimeMs now = 0) : heard_ms_(now), window_start_(now) {}

  // Anything from the robot: a message, a ping, a frame.
  void heard(TimeMs now) { heard_ms_ = now > heard_ms_ ? now : heard_ms_; }
  // A channel frame of `bytes` bytes.
  void frame(std::size_t bytes, TimeMs now);
  // The robot's own round-trip time, from its ping.
  void rtt(std::int64_t ms) { rtt_ms_ = ms; }

  // {state, silentMs, fps, bytesPerS, rttMs?} at `now`, with `backlog` the carrier's unfinished
  // bytes. Non-const: reading may close a window.
  Json figures(std::size_t backlog, TimeMs now);

 private:
  void roll(TimeMs now);

  TimeMs heard_ms_;
  std::optional<std::int64_t> rtt_ms_;
  TimeMs window_start_;
  std::uint64_t frames_ = 0;
  std::uint64_t bytes_ = 0;
  double fps_ = 0;
  double bytes_per_s_ = 0;
};

}  // namespace tether::cockpit
