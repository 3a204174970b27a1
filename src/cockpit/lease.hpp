// The relay's teleop lease component (cockpit-wire-v7-notes.md § Teleop): one holder per robot,
// a generation bumped on every grant and stamped on every robot-bound teleop message, commands
// forwarded only from the holder, and the release (teleop_stop robot-ward) when the holder stops,
// leaves or watches another robot. The robot's side of the chain is teleop_safety.hpp.
//
// Generations only grow for a robot across relay restarts and Durable Object evictions, because
// the robot keeps its floor while the relay starts afresh (docs/cockpit-protocol.md § The teleop
// lease). Without any coordination, a grant's generation is at least the relay's wall clock in
// microsecond-sized steps (kLeaseGensPerMs per millisecond), so a new process starts above
// anything an older one could have issued unless it granted over a thousand leases a millisecond
// or the clock stepped back across the restart. Where the host can store a number (the edge's
// Durable Object storage), the core also asks it to persist every generation before the grant
// goes out (persist_lease_gen) and starts above the stored one (RelayConfig::lease_gen_floor), so
// no clock is trusted there at all.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "cockpit/outbox.hpp"
#include "cockpit/session.hpp"
#include "common/drive.hpp"
#include "common/json.hpp"

namespace tether::cockpit {

// Lease generations per millisecond of the relay's wall clock: far more grants than any relay
// makes, and (2^53 - 1) / 1000 ms reaches the year 2255 before gen leaves JSON's safe integers.
constexpr std::int64_t kLeaseGensPerMs = 1000;

class Lease {
 public:
  // `wall_clock_ms`: the wall-clock time (ms since the Unix epoch) at now_ms == 0, or 0 for none.
  // `floor`: a generation already issued; every new one is above it.
  Lease(std::int64_t wall_clock_ms, std::uint64_t floor)
      : wall_clock_ms_(wall_clock_ms), gen_counter_(floor) {}

  // teleop_start from a viewer watching `robot`: granted (persist_lease_gen, teleop_started, and
  // teleop_start {gen} to the robot) or refused with teleop_held.
  void start(Session& viewer, Robot& robot, Sessions& sessions, Outbox& out, TimeMs now);
  // teleop_stop from a viewer: releases the lease if it holds it.
  void stop(const Session& viewer, Robot& robot, Sessions& sessions, Outbox& out);
  // twist or stop from a viewer (its own gen already stripped by the parser): forwarded with the
  // lease's gen when the viewer holds the lease of `robot` (the one it watches, when connected),
  // else counted and dropped.
  void command(const Session& viewer, Robot* robot, Json body, Sessions& sessions, Outbox& out);
  // The viewer leaves the robot (unwatch, disconnect): the lease is released if it held it.
  void viewer_left(SessionId viewer, Robot& robot, Sessions& sessions, Outbox& out);
  // The robot's session ended: the holder learns the lease is gone (nothing goes robot-ward).
  void robot_left(const std::string& robot_id, Sessions& sessions, Outbox& out);

  SessionId holder(const std::string& robot_id) const;
  std::uint64_t dropped() const { return dropped_; }
  // A generation issued elsewhere (a handoff ticket's floor): every new one is above it.
  void raise_floor(std::uint64_t floor) {
    if (floor > gen_counter_) gen_counter_ = floor;
  }
  // The newest generation issued.
  std::uint64_t last_gen() const { return gen_counter_; }

 private:
  std::uint64_t next_gen(TimeMs now);

  struct State {
    SessionId holder = 0;
    std::uint64_t gen = 0;
  };
  void release(State& st, Robot& robot, Sessions& sessions, Outbox& out);

  std::map<std::string, State> leases_;  // by robot id, while its robot is connected
  std::int64_t wall_clock_ms_;
  // Relay-wide, so the generations a robot sees only grow while this relay runs (and, through
  // next_gen, across relays).
  std::uint64_t gen_counter_;
  std::uint64_t dropped_ = 0;  // teleop commands from viewers that do not hold the lease
};

}  // namespace tether::cockpit
