// The relay's teleop lease component (cockpit-wire-v7-notes.md § Teleop): one holder per robot,
// a generation bumped on every grant and stamped on every robot-bound teleop message, commands
// forwarded only from the holder, and the release (teleop_stop robot-ward) when the holder stops,
// leaves or watches another robot. The robot's side of the chain is teleop_safety.hpp.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "cockpit/outbox.hpp"
#include "cockpit/session.hpp"
#include "common/json.hpp"

namespace tether::cockpit {

class Lease {
 public:
  // teleop_start from a viewer watching `robot`: granted (teleop_started, and teleop_start {gen}
  // to the robot) or refused with teleop_held.
  void start(Session& viewer, Robot& robot, Sessions& sessions, Outbox& out);
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

 private:
  struct State {
    SessionId holder = 0;
    std::uint64_t gen = 0;
  };
  void release(State& st, Robot& robot, Sessions& sessions, Outbox& out);

  std::map<std::string, State> leases_;  // by robot id, while its robot is connected
  // Relay-wide, so the generations a robot sees only grow while this relay runs.
  std::uint64_t gen_counter_ = 0;
  std::uint64_t dropped_ = 0;  // teleop commands from viewers that do not hold the lease
};

}  // namespace tether::cockpit
