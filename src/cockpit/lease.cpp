#include "cockpit/lease.hpp"

#include <algorithm>
#include <utility>

namespace tether::cockpit {

namespace {

Json teleop_message(const char* type, std::uint64_t gen) {
  Json m = Json::object();
  m["t"] = type;
  m["gen"] = gen;
  return m;
}

void to_robot(Robot& robot, const Json& message, Sessions& sessions, Outbox& out) {
  if (Session* s = sessions.find(robot.session)) out.send(s->ep, message);
}

}  // namespace

std::uint64_t Lease::next_gen(TimeMs now) {
  std::uint64_t gen = gen_counter_ + 1;
  const std::int64_t wall = wall_clock_ms_ > 0 ? wall_clock_ms_ + now : 0;
  if (wall > 0 && wall <= kMaxSafeInteger / kLeaseGensPerMs)
    gen = std::max(gen, std::uint64_t(wall) * std::uint64_t(kLeaseGensPerMs));
  return gen;
}

void Lease::start(Session& viewer, Robot& robot, Sessions& sessions, Outbox& out, TimeMs now) {
  const std::string& id = viewer.watching;
  State& st = leases_[id];
  if (st.holder && st.holder != viewer.ep.id) {
    out.send_error(
        viewer.ep, wire::ErrorCode::teleop_held,
        "another viewer holds the teleop lease of " + id + "; wait for it to be released");
    return;
  }
  st.holder = viewer.ep.id;
  st.gen = gen_counter_ = next_gen(now);
  // Stored before anything names it, so a host with output gates (a Durable Object) holds the
  // grant until the generation is durable.
  out.push(ActionKind::persist_lease_gen, 0).gen = st.gen;
  Json started = Json::object();
  started["t"] = "teleop_started";
  out.send(viewer.ep, started);
  to_robot(robot, teleop_message("teleop_start", st.gen), sessions, out);
}

void Lease::stop(const Session& viewer, Robot& robot, Sessions& sessions, Outbox& out) {
  viewer_left(viewer.ep.id, robot, sessions, out);
}

void Lease::command(const Session& viewer, Robot* robot, Json body, Sessions& sessions,
                    Outbox& out) {
  auto it = leases_.find(viewer.watching);
  if (!robot || it == leases_.end() || it->second.holder != viewer.ep.id) {
    ++dropped_;  // only the holder drives
    return;
  }
  body["gen"] = it->second.gen;
  to_robot(*robot, body, sessions, out);
}

void Lease::viewer_left(SessionId viewer, Robot& robot, Sessions& sessions, Outbox& out) {
  const std::string& id = robot.identity["id"].get_ref<const std::string&>();
  auto it = leases_.find(id);
  if (it == leases_.end() || it->second.holder != viewer) return;
  release(it->second, robot, sessions, out);
}

void Lease::robot_left(const std::string& robot_id, Sessions& sessions, Outbox& out) {
  auto it = leases_.find(robot_id);
  if (it == leases_.end()) return;
  if (it->second.holder) {
    if (Session* v = sessions.find(it->second.holder))
      out.send(v->ep, teleop_message("teleop_stop", it->second.gen));
  }
  leases_.erase(it);
}

SessionId Lease::holder(const std::string& robot_id) const {
  auto it = leases_.find(robot_id);
  return it == leases_.end() ? 0 : it->second.holder;
}

void Lease::release(State& st, Robot& robot, Sessions& sessions, Outbox& out) {
  st.holder = 0;
  to_robot(robot, teleop_message("teleop_stop", st.gen), sessions, out);
}

}  // namespace tether::cockpit
