// Scripted sessions for the cockpit relay core: a robot and viewers speaking real wire bytes, and
// the relay's actions decoded back into messages and frames so tests assert on what went out.
#pragma once
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cockpit/relay.hpp"
#include "common/json.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"

namespace cockpit_test {

using namespace tether;
using namespace tether::cockpit;

inline Json J(const std::string& text) {
  auto p = parse_json(ByteView(std::string_view(text)));
  REQUIRE(p.ok());
  return p.value;
}

// A manifest with every delivery and direction the relay cares about.
inline Json demo_manifest() {
  return J(R"({"version":1,"channels":[
    {"ch":"cam","encoding":"jpeg.v1","delivery":"latest"},
    {"ch":"log","encoding":"json.v1","delivery":"reliable"},
    {"ch":"pose","encoding":"pose.json.v1"},
    {"ch":"say","dir":"tx","encoding":"text.json.v1","delivery":"reliable","publish":true},
    {"ch":"arm","dir":"tx","encoding":"json.v1","publish":true,"requiredScope":"arm"},
    {"ch":"drive","dir":"tx","encoding":"twist.json.v1"}],
    "panels":[{"id":"v","kind":"video","channels":["cam"]}]})");
}

inline Bytes control_frame(const Json& m) {
  auto b = wire::encode_control_frame(to_json(m));
  REQUIRE(b.ok());
  return b.value();
}

inline Bytes data_frame(const std::string& ch, std::int64_t seq, const std::string& payload,
                        wire::Delivery d = wire::Delivery::latest,
                        std::optional<Json> meta = std::nullopt) {
  wire::FrameHeader h;
  h.ch = ch;
  h.seq = seq;
  h.ts = 1.5;
  h.delivery = d;
  h.meta = std::move(meta);
  auto b = wire::encode_data_frame(h, ByteView(std::string_view(payload)));
  REQUIRE(b.ok());
  return b.value();
}

inline Bytes control_data_frame(const Json& m) {
  return data_frame("@control", 0, to_json(m), wire::Delivery::reliable);
}

struct Harness {
  CockpitRelay relay;
  std::int64_t now = 1000;
  std::vector<CockpitAction> log;  // every action, in order

  explicit Harness(RelayConfig c = {}) : relay(std::move(c)) {}

  void collect() {
    while (auto a = relay.poll_action()) log.push_back(std::move(*a));
  }
  std::vector<CockpitAction> take() {
    collect();
    std::vector<CockpitAction> out;
    out.swap(log);
    return out;
  }

  // --- sessions ---
  SessionId robot_session(Lane lane = Lane::webtransport) {
    return relay.handle_session_open(Role::robot, lane, now);
  }
  // Sends bytes on a fresh one-shot robot stream (workaround 1).
  void robot_stream(SessionId s, const Bytes& bytes) {
    StreamId st = relay.handle_incoming_open(s, now);
    REQUIRE(st != 0);
    relay.handle_incoming_data(st, ByteView(bytes), now);
    relay.handle_incoming_end(st, now);
    collect();
  }
  Json robot_hello(const std::string& id, const Json& manifest,
                   std::optional<std::string> token = std::nullopt) {
    Json h = J(R"({"t":"hello","v":7,"role":"robot"})");
    if (token) h["token"] = *token;
    h["robot"] = Json::object();
    h["robot"]["id"] = id;
    h["robot"]["name"] = "Robot " + id;
    h["robot"]["model"] = "sim";
    h["manifest"] = manifest;
    return h;
  }
  SessionId robot(const std::string& id, const Json& manifest = demo_manifest(),
                  std::optional<std::string> token = std::nullopt) {
    SessionId s = robot_session();
    robot_stream(s, control_data_frame(robot_hello(id, manifest, token)));
    return s;
  }
  void robot_frame(SessionId s, const std::string& ch, std::int64_t seq, const std::string& payload,
                   wire::Delivery d = wire::Delivery::latest) {
    robot_stream(s, data_frame(ch, seq, payload, d));
  }
  void robot_datagram(SessionId s, const Json& m) {
    const std::string t = to_json(m);
    relay.handle_datagram(s, ByteView(std::string_view(t)), now);
    collect();
  }

  SessionId viewer_session() {
    return relay.handle_session_open(Role::viewer, Lane::webtransport, now);
  }
  void viewer_send(SessionId s, const Json& m) {
    Bytes b = control_frame(m);
    relay.handle_control_data(s, ByteView(b), now);
    collect();
  }
  void viewer_datagram(SessionId s, const Json& m) {
    const std::string t = to_json(m);
    relay.handle_datagram(s, ByteView(std::string_view(t)), now);
    collect();
  }
  void viewer_publish(SessionId s, const std::string& ch, const std::string& id,
                      const std::string& payload) {
    Json meta = Json::object();
    meta["id"] = id;
    Bytes b = data_frame(ch, 1, payload, wire::Delivery::reliable, meta);
    StreamId st = relay.handle_incoming_open(s, now);
    REQUIRE(st != 0);
    relay.handle_incoming_data(st, ByteView(b), now);
    relay.handle_incoming_end(st, now);
    collect();
  }
  SessionId viewer(std::optional<std::string> token = std::nullopt) {
    SessionId s = viewer_session();
    Json h = J(R"({"t":"hello","v":7,"role":"viewer"})");
    if (token) h["token"] = *token;
    viewer_send(s, h);
    return s;
  }
  SessionId watcher(const std::string& robot_id, std::vector<std::string> subs = {}) {
    SessionId v = viewer();
    Json w = J(R"({"t":"watch"})");
    w["robotId"] = robot_id;
    viewer_send(v, w);
    for (const auto& ch : subs) {
      Json m = J(R"({"t":"sub"})");
      m["ch"] = ch;
      viewer_send(v, m);
    }
    return v;
  }

  // --- decoding what went out ---
  // Messages sent to a session on its reply lane (datagrams for robots, the control stream for
  // viewers) and, for robots, @control frames on the carrier.
  static std::vector<Json> messages(const std::vector<CockpitAction>& actions, SessionId s) {
    std::vector<Json> out;
    for (const auto& a : actions) {
      if (a.session != s || !a.bytes) continue;
      if (a.kind == ActionKind::send_datagram) {
        if (a.bytes->size() >= 8 && (*a.bytes)[0] != '{') {  // WebSocket lane
          auto f = wire::decode_data_frame(ByteView(*a.bytes));
          REQUIRE(f.ok());
          out.push_back(J(std::string(f->payload.as_chars())));
        } else {
          out.push_back(J(std::string(ByteView(*a.bytes).as_chars())));
        }
      } else if (a.kind == ActionKind::write_control) {
        const Bytes& b = *a.bytes;
        if (auto f = wire::decode_data_frame(ByteView(b)); f.ok()) {  // WebSocket lane
          out.push_back(J(std::string(f->payload.as_chars())));
          continue;
        }
        REQUIRE(b.size() >= 4);
        REQUIRE(read_u32_le(b.data()) == b.size() - 4);
        out.push_back(J(std::string(b.begin() + 4, b.end())));
      } else if (a.kind == ActionKind::write_carrier) {
        auto f = wire::decode_data_frame(ByteView(*a.bytes));
        REQUIRE(f.ok());
        if (f->header.ch == "@control") out.push_back(J(std::string(f->payload.as_chars())));
      }
    }
    return out;
  }
  static std::vector<Json> of_type(const std::vector<Json>& ms, const std::string& t) {
    std::vector<Json> out;
    for (const auto& m : ms)
      if (m["t"] == t) out.push_back(m);
    return out;
  }
  static std::vector<std::string> errors(const std::vector<CockpitAction>& actions, SessionId s) {
    std::vector<std::string> out;
    for (const auto& m : messages(actions, s))
      if (m["t"] == "error") out.push_back(m["code"].get<std::string>());
    return out;
  }
  static std::vector<CockpitAction> kind(const std::vector<CockpitAction>& actions, ActionKind k,
                                         SessionId s = 0) {
    std::vector<CockpitAction> out;
    for (const auto& a : actions)
      if (a.kind == k && (s == 0 || a.session == s)) out.push_back(a);
    return out;
  }
  static bool closed(const std::vector<CockpitAction>& actions, SessionId s) {
    return !kind(actions, ActionKind::close_session, s).empty();
  }
  // The data frames written on a session's carrier that are not @control.
  static std::vector<wire::FrameHeader> carrier_frames(
      const std::vector<CockpitAction>& actions, SessionId s,
      std::vector<std::string>* payloads = nullptr) {
    std::vector<wire::FrameHeader> out;
    for (const auto& a : kind(actions, ActionKind::write_carrier, s)) {
      auto f = wire::decode_data_frame(ByteView(*a.bytes));
      REQUIRE(f.ok());
      if (f->header.ch == "@control") continue;
      out.push_back(f->header);
      if (payloads) payloads->push_back(std::string(f->payload.as_chars()));
    }
    return out;
  }
  static std::string frame_payload(const CockpitAction& a) {
    auto f = wire::decode_data_frame(ByteView(*a.bytes));
    REQUIRE(f.ok());
    return std::string(f->payload.as_chars());
  }
};

}  // namespace cockpit_test
