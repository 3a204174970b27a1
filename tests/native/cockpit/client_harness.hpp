// Scripted sessions for the cockpit's client cores (viewer_session.hpp, robot_session.hpp,
// teleop_safety.hpp): relay messages in real wire bytes (framed by the relay harness's helpers),
// and the cores' actions decoded back into messages so tests assert on what goes out.
#pragma once
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cockpit/robot_session.hpp"
#include "cockpit/viewer_session.hpp"
#include "cockpit_harness.hpp"
#include "common/json.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"

namespace client_test {

using namespace tether;
using namespace tether::cockpit;

using cockpit_test::data_frame;
using cockpit_test::J;

// What the relay sends, framed for a lane: a control frame (viewer, WebTransport), a datagram
// (robot, WebTransport), an @control data frame (either, WebSocket; a robot's carrier).
inline Bytes relay_control_frame(const Json& m) {
  return cockpit_test::control_frame(m);
}
inline Bytes relay_datagram(const Json& m) {
  const std::string t = to_json(m);
  return Bytes(t.begin(), t.end());
}
inline Bytes relay_control_data_frame(const Json& m, std::int64_t seq = 0) {
  return data_frame("@control", seq, to_json(m), wire::Delivery::reliable);
}

// The JSON message inside an action's bytes, whatever the lane framed it as.
inline Json sent_message(const Bytes& b) {
  if (!b.empty() && b[0] == '{') return J(std::string(b.begin(), b.end()));
  auto f = wire::decode_data_frame(ByteView(b));
  if (f.ok()) {
    REQUIRE(f->header.ch == "@control");
    return J(std::string(f->payload.as_chars()));
  }
  REQUIRE(b.size() >= 4);
  REQUIRE(read_u32_le(b.data()) == b.size() - 4);  // a control-stream frame
  return J(std::string(b.begin() + 4, b.end()));
}

template <class Core>
auto drain_actions(Core& core) {
  std::vector<std::decay_t<decltype(*core.poll_action())>> out;
  while (auto a = core.poll_action()) out.push_back(std::move(*a));
  return out;
}
template <class Core>
auto drain_events(Core& core) {
  std::vector<std::decay_t<decltype(*core.poll_event())>> out;
  while (auto e = core.poll_event()) out.push_back(std::move(*e));
  return out;
}

// The messages a batch of actions sends, in order (connect and close carry none).
template <class Action>
std::vector<Json> messages(const std::vector<Action>& actions) {
  std::vector<Json> out;
  for (const auto& a : actions) {
    if (a.bytes.empty()) continue;
    auto f = wire::decode_data_frame(ByteView(a.bytes));
    if (f.ok() && f->header.ch != "@control") continue;  // channel data, not a message
    out.push_back(sent_message(a.bytes));
  }
  return out;
}
inline std::vector<std::string> types(const std::vector<Json>& ms) {
  std::vector<std::string> out;
  for (const auto& m : ms) out.push_back(m["t"].get<std::string>());
  return out;
}

inline Json demo_manifest() {
  return J(R"({"version":1,"channels":[
    {"ch":"cam","encoding":"jpeg.v1","delivery":"latest"},
    {"ch":"log","encoding":"json.v1","delivery":"reliable"},
    {"ch":"say","dir":"tx","encoding":"text.json.v1","delivery":"reliable","publish":true},
    {"ch":"drive","dir":"tx","encoding":"twist.json.v1"}],
    "panels":[{"id":"v","kind":"video","channels":["cam"]}]})");
}

}  // namespace client_test
