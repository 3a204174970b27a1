// Embind surface of the cockpit's client cores (src/cockpit/viewer_session.hpp, robot_session.hpp,
// teleop_safety.hpp), for the cockpit app, robots and agents (wasm/module.cmake): never the edge,
// which hosts only the relay (cockpit_relay_bindings.cpp). Marshalling only (DESIGN.md rule 4);
// each core is driven by the one contract (src/common/drive.hpp) through web/glue/driver.js.
//
// Shaped like the wire bindings, for the same reason (bench/README.md: an Embind call costs far
// more than a small frame's work): bytes go in through a staging buffer whose address JS learns
// from reserve(); an action comes out as a record of doubles at a fixed address, and pollAction()
// returns its kind's number, or -1 when there is none. Bytes an action carries stay alive until
// the next poll that carries other bytes (cockpit_port.hpp). Strings an action carries rarely
// (a close reason, a channel id) come from actionText().
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cockpit/robot_session.hpp"
#include "cockpit/teleop_safety.hpp"
#include "cockpit/viewer_session.hpp"
#include "cockpit_port.hpp"
#include "staging.hpp"
#include "wire/messages.hpp"

namespace tether::cockpit::bindings {
namespace {

using emscripten::val;

using tether::bindings::address_of;
using tether::bindings::Staging;

// --- the clients ------------------------------------------------------------------------------
// One record shape for the viewer, the robot and the safety chain: an action's or an event's kind
// and bytes; a twist command's numbers after the safety chain's calls.

enum ClientRecord : std::size_t {
  kClientKind,
  kClientBytes,  // serial, address, length
  kClientBytesAt,
  kClientBytesLen,
  kClientVx,  // the teleop command: vx, vy, wz, active lease, floor
  kClientVy,
  kClientWz,
  kClientActive,
  kClientFloor,
  kClientRecordSize
};

Lane lane_from(const std::string& name) {
  return name == "websocket" ? Lane::websocket : Lane::webtransport;
}

// What every client handle shares: staging, the record, held bytes and texts.
class ClientPort {
 public:
  double reserve(std::size_t n) { return staging_.reserve(n); }
  double record() const { return address_of(record_); }
  std::string action_text() const { return action_text_; }
  // An rtc action's arguments (JSON text), "" for other actions.
  std::string action_json() const { return action_json_; }
  std::string event_text() const { return event_text_; }

 protected:
  template <class Action>
  int put_action(std::optional<Action> a) {
    if (!a) return -1;
    bytes_ = a->bytes.empty() ? nullptr : share(std::move(a->bytes));
    held_.hold(bytes_, record_ + kClientBytes);
    action_text_ = std::move(a->reason);
    action_json_ = std::move(a->json);
    record_[kClientKind] = double(static_cast<int>(a->kind));
    return static_cast<int>(a->kind);
  }
  void put_command(const TeleopSafety& s) {
    record_[kClientVx] = s.command().vx;
    record_[kClientVy] = s.command().vy;
    record_[kClientWz] = s.command().wz;
    record_[kClientActive] = double(s.active());
    record_[kClientFloor] = double(s.floor());
  }

  Staging staging_;
  double record_[kClientRecordSize] = {};
  HeldBytes held_;
  SharedBytes bytes_;
  std::string action_text_;
  std::string action_json_;
  std::string event_text_;
};

std::optional<std::string> optional_text(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return s;
}

class ViewerHandle : public ClientPort {
 public:
  // `token` "" for none.
  explicit ViewerHandle(const std::string& token) : viewer_(optional_text(token)) {}

  void start(double now) { viewer_.handle_start(TimeMs(now)); }
  void connected(const std::string& lane, double now) {
    viewer_.handle_connected(lane_from(lane), TimeMs(now));
  }
  void disconnected(const std::string& detail, double now) {
    viewer_.handle_disconnected(detail, TimeMs(now));
  }
  void control_data(std::size_t n, double now) {
    viewer_.handle_control_data(staging_.get(n), TimeMs(now));
  }
  bool ws_message(std::size_t n, double now) {
    return viewer_.handle_ws_message(staging_.get(n), TimeMs(now));
  }
  bool frame(const std::string& ch, double seq, double now) {
    return viewer_.handle_frame(ch, std::int64_t(seq), TimeMs(now));
  }
  bool stopped() const { return viewer_.stopped(); }
  void timeout(double now) { viewer_.handle_timeout(TimeMs(now)); }
  void stop(double now) { viewer_.handle_stop(TimeMs(now)); }

  bool watch(const std::string& robot_id, double now) {
    return viewer_.watch(robot_id, TimeMs(now));
  }
  void fleet_link(bool on, double now) { viewer_.fleet_link(on, TimeMs(now)); }
  // `channels_json` is a JSON array of channel ids (a list crosses as one string).
  void want(const std::string& channels_json, double now) {
    std::vector<std::string> chs;
    JsonParse p = parse_json(ByteView(std::string_view(channels_json)));
    if (p.ok() && p.value.is_array()) {
      for (const Json& c : p.value)
        if (c.is_string()) chs.push_back(c.get<std::string>());
    }
    viewer_.want(chs, TimeMs(now));
  }
  void teleop_start(double now) { viewer_.teleop_start(TimeMs(now)); }
  void teleop_stop(double now) { viewer_.teleop_stop(TimeMs(now)); }
  bool drive(double vx, double vy, double wz, double now) {
    return viewer_.drive(vx, vy, wz, TimeMs(now));
  }
  void estop(double now) { viewer_.estop(TimeMs(now)); }
  std::string publish(const std::string& ch, std::size_t n, const std::string& id, double now) {
    return std::string(publish_result_name(viewer_.publish(ch, staging_.get(n), id, TimeMs(now))));
  }
  bool rtc_offer(const std::string& sdp, double now) {
    return viewer_.handle_rtc_offer(sdp, TimeMs(now));
  }
  bool rtc_answer(const std::string& sdp, double now) {
    return viewer_.handle_rtc_answer(sdp, TimeMs(now));
  }
  void rtc_state(const std::string& state, double now) {
    viewer_.handle_rtc_state(state, TimeMs(now));
  }
  void rtc_media(const std::string& ch, double frames, double now) {
    viewer_.handle_rtc_media(ch, frames > 0 ? std::uint64_t(frames) : 0, TimeMs(now));
  }

  int poll_action() { return put_action(viewer_.poll_action()); }
  int poll_event() {
    auto e = viewer_.poll_event();
    if (!e) return -1;
    event_text_ = std::move(e->json);
    return static_cast<int>(e->kind);
  }
  double poll_timeout() const { return timeout_value(viewer_.poll_timeout()); }

 private:
  ViewerSession viewer_;
};

class RobotHandle : public ClientPort {
 public:
  // `config_json`: {id, name, model, manifest, token?, watchdogMs?}. error() says what is wrong.
  explicit RobotHandle(const std::string& config_json) {
    JsonParse p = parse_json(ByteView(std::string_view(config_json)));
    if (!p.ok()) {
      error_ = "the robot config is not JSON";
      error_code_ = std::string(robot_setup_error_name(RobotSetupError::invalid_config));
      return;
    }
    auto rc = robot_config_from_json(p.value);
    if (!rc) {
      error_ = rc.error();
      error_code_ = std::string(robot_setup_error_name(RobotSetupError::invalid_config));
      return;
    }
    auto r = RobotSession::create(std::move(rc.value()));
    if (!r) {
      error_ = r.error().message;
      error_code_ = std::string(robot_setup_error_name(r.error().kind));
      return;
    }
    robot_ = std::make_unique<RobotSession>(std::move(r.value()));
    manifest_ = to_json(robot_->manifest());
  }
  std::string error() const { return error_; }
  // The kind of error() by name (robot_setup_error_name: manifestUnsupported, ...), "" for none.
  std::string error_code() const { return error_code_; }
  std::string manifest() const { return manifest_; }

  void start(double now) { robot_->handle_start(TimeMs(now)); }
  void connected(const std::string& lane, double now) {
    robot_->handle_connected(lane_from(lane), TimeMs(now));
  }
  void disconnected(const std::string& detail, double now) {
    robot_->handle_disconnected(detail, TimeMs(now));
  }
  void datagram(std::size_t n, double now) {
    robot_->handle_datagram(staging_.get(n), TimeMs(now));
  }
  void carrier_data(std::size_t n, double now) {
    robot_->handle_carrier_data(staging_.get(n), TimeMs(now));
  }
  void carrier_end(double now) { robot_->handle_carrier_end(TimeMs(now)); }
  void ws_message(std::size_t n, double now) {
    robot_->handle_ws_message(staging_.get(n), TimeMs(now));
  }
  void timeout(double now) { robot_->handle_timeout(TimeMs(now)); }
  void stop(double now) { robot_->handle_stop(TimeMs(now)); }

  // The channel of the sends that follow: JS passes it only when it changes.
  void set_channel(const std::string& ch) { channel_ = ch; }
  // Sends the staged payload on the set channel; `meta_json` "" for none. Returns the SendResult.
  int send(std::size_t n, const std::string& meta_json, double ts, double now) {
    std::optional<Json> meta;
    if (!meta_json.empty()) {
      JsonParse p = parse_json(ByteView(std::string_view(meta_json)));
      if (!p.ok() || !p.value.is_object()) return static_cast<int>(SendResult::invalid);
      meta = std::move(p.value);
    }
    return static_cast<int>(robot_->send(channel_, staging_.get(n), meta, ts, TimeMs(now)));
  }
  bool ack(const std::string& ch, const std::string& id, double now) {
    return robot_->ack(ch, id, TimeMs(now));
  }
  bool nack(const std::string& ch, const std::string& id, const std::string& code,
            const std::string& message, double now) {
    return robot_->nack(ch, id, code, message, TimeMs(now));
  }
  // `tracks_json`: [{mid, ch}] as JSON text.
  bool rtc_offer(const std::string& sdp, const std::string& tracks_json, double now) {
    JsonParse p = parse_json(ByteView(std::string_view(tracks_json)));
    return p.ok() && robot_->handle_rtc_offer(sdp, p.value, TimeMs(now));
  }
  bool media_resumed(const std::string& ch, double gap_ms, double now) {
    return robot_->handle_media_resumed(ch, TimeMs(gap_ms), TimeMs(now));
  }
  void rtc_state(const std::string& state, double now) {
    robot_->handle_rtc_state(state, TimeMs(now));
  }
  bool welcomed() const { return robot_->welcomed(); }
  bool wants(const std::string& ch) const { return robot_->wants(ch); }
  // Writes the teleop command into the record.
  void command() { put_command(robot_->safety()); }

  int poll_action() { return put_action(robot_->poll_action()); }
  int poll_event() {
    auto e = robot_->poll_event();
    if (!e) return -1;
    event_text_ = to_json(e->body);
    bytes_ = e->payload.empty() ? nullptr : share(std::move(e->payload));
    held_.hold(bytes_, record_ + kClientBytes);
    return static_cast<int>(e->kind);
  }
  double poll_timeout() const { return timeout_value(robot_->poll_timeout()); }

 private:
  std::unique_ptr<RobotSession> robot_;
  std::string error_;
  std::string error_code_;
  std::string manifest_;
  std::string channel_;
};

class SafetyHandle : public ClientPort {
 public:
  explicit SafetyHandle(double watchdog_ms) : safety_(TimeMs(watchdog_ms)) {}
  // A relay message as JSON text; false when it is no valid relay message or was not obeyed.
  bool message(const std::string& text, double now) {
    auto m = wire::parse_message(ByteView(std::string_view(text)), wire::Sender::relay);
    return m && safety_.handle_message(m.value(), TimeMs(now));
  }
  void session_lost(double now) { safety_.handle_session_lost(TimeMs(now)); }
  void timeout(double now) { safety_.handle_timeout(TimeMs(now)); }
  double poll_timeout() const { return timeout_value(safety_.poll_timeout()); }
  // The next change, written into the record; returns its SafetyCause or -1.
  int poll_event() {
    auto e = safety_.poll_event();
    put_command(safety_);
    if (!e) return -1;
    record_[kClientVx] = e->command.vx;
    record_[kClientVy] = e->command.vy;
    record_[kClientWz] = e->command.wz;
    record_[kClientActive] = double(e->active);
    record_[kClientFloor] = double(e->floor);
    return static_cast<int>(e->cause);
  }
  void command() { put_command(safety_); }
  double watchdog_ms() const { return double(safety_.watchdog_ms()); }

 private:
  TeleopSafety safety_;
};

val client_record_layout() {
  val o = val::object();
  o.set("size", double(kClientRecordSize));
  o.set("kind", double(kClientKind));
  o.set("bytes", double(kClientBytes));
  o.set("bytesAt", double(kClientBytesAt));
  o.set("bytesLen", double(kClientBytesLen));
  o.set("vx", double(kClientVx));
  o.set("vy", double(kClientVy));
  o.set("wz", double(kClientWz));
  o.set("active", double(kClientActive));
  o.set("floor", double(kClientFloor));
  return o;
}

template <class E, std::string_view (*Name)(E)>
val enum_names(std::size_t n) {
  return names_of(n, [](int i) { return Name(static_cast<E>(i)); });
}

// Every name and number the client glue reads, from the core.
val client_tables() {
  val o = val::object();
  o.set("viewerActions",
        enum_names<ViewerActionKind, viewer_action_kind_name>(kViewerActionKindCount));
  o.set("viewerEvents", enum_names<ViewerEventKind, viewer_event_kind_name>(kViewerEventKindCount));
  o.set("robotActions", enum_names<RobotActionKind, robot_action_kind_name>(kRobotActionKindCount));
  o.set("robotEvents", enum_names<RobotEventKind, robot_event_kind_name>(kRobotEventKindCount));
  o.set("sendResults", enum_names<SendResult, send_result_name>(kSendResultCount));
  o.set("safetyCauses", enum_names<SafetyCause, safety_cause_name>(kSafetyCauseCount));
  o.set("robotSetupErrors",
        enum_names<RobotSetupError, robot_setup_error_name>(kRobotSetupErrorCount));
  o.set("record", client_record_layout());
  val limits = val::object();
  limits.set("viewerPingIntervalMs", double(kViewerPingIntervalMs));
  limits.set("viewerWsPingIntervalMs", double(kViewerWsPingIntervalMs));
  limits.set("twistResendMs", double(kTwistResendMs));
  limits.set("helloResendMs", double(kHelloResendMs));
  limits.set("helloTimeoutMs", double(kHelloTimeoutMs));
  limits.set("robotPingIntervalMs", double(kRobotPingIntervalMs));
  limits.set("robotReconnectMs", double(kRobotReconnectMs));
  limits.set("defaultWatchdogMs", double(kDefaultWatchdogMs));
  limits.set("minWatchdogMs", double(kMinWatchdogMs));
  limits.set("maxWatchdogMs", double(kMaxWatchdogMs));
  limits.set("sfuTrackTimeoutMs", double(kSfuTrackTimeoutMs));
  limits.set("rtcStallMs", double(kRtcStallMs));
  limits.set("rtcReopenMs", double(kRtcReopenMs));
  val backoff = val::array();
  for (std::size_t i = 0; i < kViewerBackoffMs.size(); ++i)
    backoff.set(i, double(kViewerBackoffMs[i]));
  limits.set("viewerBackoffMs", backoff);
  o.set("limits", limits);
  return o;
}
}  // namespace

EMSCRIPTEN_BINDINGS(tether_cockpit_clients) {
  using namespace emscripten;
  class_<ClientPort>("CockpitClientPort")
      .function("reserve", &ClientPort::reserve)
      .function("record", &ClientPort::record)
      .function("actionText", &ClientPort::action_text)
      .function("actionJson", &ClientPort::action_json)
      .function("eventText", &ClientPort::event_text);
  class_<ViewerHandle, base<ClientPort>>("CockpitViewerCore")
      .constructor<std::string>()
      .function("handleStart", &ViewerHandle::start)
      .function("handleConnected", &ViewerHandle::connected)
      .function("handleDisconnected", &ViewerHandle::disconnected)
      .function("handleControlData", &ViewerHandle::control_data)
      .function("handleWsMessage", &ViewerHandle::ws_message)
      .function("handleFrame", &ViewerHandle::frame)
      .function("stopped", &ViewerHandle::stopped)
      .function("handleTimeout", &ViewerHandle::timeout)
      .function("handleStop", &ViewerHandle::stop)
      .function("watch", &ViewerHandle::watch)
      .function("fleetLink", &ViewerHandle::fleet_link)
      .function("want", &ViewerHandle::want)
      .function("teleopStart", &ViewerHandle::teleop_start)
      .function("teleopStop", &ViewerHandle::teleop_stop)
      .function("drive", &ViewerHandle::drive)
      .function("estop", &ViewerHandle::estop)
      .function("publish", &ViewerHandle::publish)
      .function("handleRtcOffer", &ViewerHandle::rtc_offer)
      .function("handleRtcAnswer", &ViewerHandle::rtc_answer)
      .function("handleRtcState", &ViewerHandle::rtc_state)
      .function("handleRtcMedia", &ViewerHandle::rtc_media)
      .function("pollAction", &ViewerHandle::poll_action)
      .function("pollEvent", &ViewerHandle::poll_event)
      .function("pollTimeout", &ViewerHandle::poll_timeout);
  class_<RobotHandle, base<ClientPort>>("CockpitRobotCore")
      .constructor<std::string>()
      .function("error", &RobotHandle::error)
      .function("errorCode", &RobotHandle::error_code)
      .function("manifest", &RobotHandle::manifest)
      .function("handleStart", &RobotHandle::start)
      .function("handleConnected", &RobotHandle::connected)
      .function("handleDisconnected", &RobotHandle::disconnected)
      .function("handleDatagram", &RobotHandle::datagram)
      .function("handleCarrierData", &RobotHandle::carrier_data)
      .function("handleCarrierEnd", &RobotHandle::carrier_end)
      .function("handleWsMessage", &RobotHandle::ws_message)
      .function("handleTimeout", &RobotHandle::timeout)
      .function("handleStop", &RobotHandle::stop)
      .function("setChannel", &RobotHandle::set_channel)
      .function("send", &RobotHandle::send)
      .function("ack", &RobotHandle::ack)
      .function("nack", &RobotHandle::nack)
      .function("handleRtcOffer", &RobotHandle::rtc_offer)
      .function("handleMediaResumed", &RobotHandle::media_resumed)
      .function("handleRtcState", &RobotHandle::rtc_state)
      .function("welcomed", &RobotHandle::welcomed)
      .function("wants", &RobotHandle::wants)
      .function("command", &RobotHandle::command)
      .function("pollAction", &RobotHandle::poll_action)
      .function("pollEvent", &RobotHandle::poll_event)
      .function("pollTimeout", &RobotHandle::poll_timeout);
  class_<SafetyHandle, base<ClientPort>>("CockpitSafetyCore")
      .constructor<double>()
      .function("handleMessage", &SafetyHandle::message)
      .function("handleSessionLost", &SafetyHandle::session_lost)
      .function("handleTimeout", &SafetyHandle::timeout)
      .function("pollTimeout", &SafetyHandle::poll_timeout)
      .function("pollEvent", &SafetyHandle::poll_event)
      .function("command", &SafetyHandle::command)
      .function("watchdogMs", &SafetyHandle::watchdog_ms);
  function("cockpitClientTables", &client_tables);
}

}  // namespace tether::cockpit::bindings
