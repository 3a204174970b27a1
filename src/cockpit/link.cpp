#include "cockpit/link.hpp"

#include <cmath>

namespace tether::cockpit {

std::string_view link_state_name(LinkState s) {
  switch (s) {
    case LinkState::good: return "good";
    case LinkState::degraded: return "degraded";
    case LinkState::stalled: return "stalled";
  }
  return "stalled";
}

LinkState link_state(TimeMs silent_ms, std::optional<std::int64_t> rtt_ms, std::size_t backlog) {
  if (silent_ms >= kLinkStalledAfterMs) return LinkState::stalled;
  if (silent_ms >= kLinkDegradedAfterMs || (rtt_ms && *rtt_ms > kLinkDegradedRttMs) ||
      backlog > kLinkDegradedBacklogBytes)
    return LinkState::degraded;
  return LinkState::good;
}

void RobotLink::frame(std::size_t bytes, TimeMs now) {
  roll(now);
  heard(now);
  ++frames_;
  bytes_ += bytes;
}

void RobotLink::roll(TimeMs now) {
  const TimeMs span = now - window_start_;
  if (span < kLinkWindowMs) return;
  // A window with no frame at all for longer than one window is a rate of what it held, so a
  // robot that stops publishing reads 0 at the next look rather than its old rate.
  fps_ = double(frames_) * 1000.0 / double(span);
  bytes_per_s_ = double(bytes_) * 1000.0 / double(span);
  window_start_ = now;
  frames_ = 0;
  bytes_ = 0;
}

Json RobotLink::figures(std::size_t backlog, TimeMs now) {
  roll(now);
  const TimeMs silent = now > heard_ms_ ? now - heard_ms_ : 0;
  Json o = Json::object();
  o["state"] = link_state_name(link_state(silent, rtt_ms_, backlog));
  o["silentMs"] = silent;
  o["fps"] = std::round(fps_ * 10.0) / 10.0;
  o["bytesPerS"] = std::uint64_t(std::llround(bytes_per_s_));
  if (rtt_ms_) o["rttMs"] = *rtt_ms_;
  return o;
}

}  // namespace tether::cockpit
