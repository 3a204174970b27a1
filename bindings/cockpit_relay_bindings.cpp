// Embind surface of the cockpit relay (src/cockpit/relay.hpp), for the hosts that run it: the
// edge Worker and Node/Deno (wasm/module.cmake). The clients are bound apart
// (cockpit_clients_bindings.cpp) so the edge module carries none of them. Marshalling only
// (DESIGN.md rule 4); the core is driven by the one contract (src/common/drive.hpp) through
// web/glue/driver.js.
//
// Shaped like the wire bindings, for the same reason (bench/README.md: an Embind call costs far
// more than a small frame's work): bytes go in through a staging buffer whose address JS learns
// from reserve(); an action comes out as a record of doubles at a fixed address, and pollAction()
// returns its kind's number, or -1 when there is none. Bytes an action carries stay alive until
// the next poll that carries other bytes (cockpit_port.hpp). Strings an action carries rarely
// (a close reason, a channel id) come from actionText().
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <memory>
#include <string>

#include "cockpit/relay.hpp"
#include "cockpit_port.hpp"
#include "staging.hpp"

namespace tether::cockpit::bindings {
namespace {

using emscripten::val;

using tether::bindings::address_of;
using tether::bindings::Staging;

// --- the relay ----------------------------------------------------------------------------------

enum RelayRecord : std::size_t {
  kRelayKind,
  kRelaySession,
  kRelayStream,
  kRelayBytes,  // serial, address, length
  kRelayBytesAt,
  kRelayBytesLen,
  kRelaySendOrder,
  kRelayDelivery,  // wire::Delivery, named by wireDeliveryNames()
  kRelayEnd,       // StreamEnd, named by cockpitStreamEnds()
  kRelayCode,      // wire::ErrorCode index into wireErrorCodes(), or -1
  kRelayGen,       // persist_lease_gen: the generation
  kRelayCall,      // sfu_call, sfu_cancel: the call's token
  kRelayOp,        // sfu_call: SfuOp, named by cockpitSfuOps()
  kRelayRecordSize
};

class RelayHandle {
 public:
  // `auth_text` is the auth file's contents, or "" for none. `sfu` says an SFU is configured,
  // `turn` that it has a TURN key. `wall_clock_ms` and `lease_gen_floor` seed the lease
  // generations; `buffered_amount` says the host reports WebSocket writes done by bufferedAmount
  // (RelayConfig).
  RelayHandle(const std::string& auth_text, bool sfu, bool turn, double wall_clock_ms,
              double lease_gen_floor, bool buffered_amount) {
    RelayConfig c;
    c.sfu = sfu;
    c.wall_clock_ms = wall_clock_ms > 0 ? std::int64_t(wall_clock_ms) : 0;
    c.lease_gen_floor = lease_gen_floor > 0 ? std::uint64_t(lease_gen_floor) : 0;
    c.websocket_buffered_amount = buffered_amount;
    c.rtc.turn = turn;
    if (!auth_text.empty()) {
      auto t = AuthTable::parse(ByteView(std::string_view(auth_text)));
      if (t)
        c.auth = std::move(t.value());
      else
        error_ = t.error();
    }
    relay_ = std::make_unique<CockpitRelay>(std::move(c));
  }

  std::string error() const { return error_; }
  double reserve(std::size_t n) { return staging_.reserve(n); }
  double record() const { return address_of(record_); }

  double session_open(const std::string& role, const std::string& lane, double now) {
    return double(relay_->handle_session_open(
        role == "robot" ? Role::robot : Role::viewer,
        lane == "websocket" ? Lane::websocket : Lane::webtransport, TimeMs(now)));
  }
  void session_closed(double s, double now) {
    relay_->handle_session_closed(SessionId(s), TimeMs(now));
  }
  void control_data(double s, std::size_t n, double now) {
    relay_->handle_control_data(SessionId(s), staging_.get(n), TimeMs(now));
  }
  void datagram(double s, std::size_t n, double now) {
    relay_->handle_datagram(SessionId(s), staging_.get(n), TimeMs(now));
  }
  double incoming_open(double s, double now) {
    return double(relay_->handle_incoming_open(SessionId(s), TimeMs(now)));
  }
  void incoming_data(double st, std::size_t n, double now) {
    relay_->handle_incoming_data(StreamId(st), staging_.get(n), TimeMs(now));
  }
  void incoming_end(double st, double now) {
    relay_->handle_incoming_end(StreamId(st), TimeMs(now));
  }
  void ws_message(double s, std::size_t n, double now) {
    relay_->handle_ws_message(SessionId(s), staging_.get(n), TimeMs(now));
  }
  void stream_opened(double st, double now) {
    relay_->handle_stream_opened(StreamId(st), TimeMs(now));
  }
  void write_done(double st, double now) { relay_->handle_write_done(StreamId(st), TimeMs(now)); }
  void writes_done(double st, double count, double now) {
    relay_->handle_writes_done(StreamId(st), count > 0 ? std::size_t(count) : 0, TimeMs(now));
  }
  void stream_failed(double st, double now) {
    relay_->handle_stream_failed(StreamId(st), TimeMs(now));
  }
  // The staged bytes are the JSON text of the Realtime client's result.
  void sfu_result(double call, std::size_t n, double now) {
    relay_->handle_sfu_result(std::uint64_t(call), staging_.get(n), TimeMs(now));
  }
  void timeout(double now) { relay_->handle_timeout(TimeMs(now)); }
  double poll_timeout() const { return timeout_value(relay_->poll_timeout()); }

  // A fleet split over objects (src/cockpit/fleet.hpp): `part` is whole, directory or robot.
  void set_fleet_part(const std::string& part, const std::string& home_robot) {
    relay_->set_fleet_part(part == "directory" ? FleetPart::directory
                           : part == "robot"   ? FleetPart::robot
                                               : FleetPart::whole,
                           home_robot);
  }
  void handoff(double s, std::size_t n, double now) {
    relay_->handle_handoff(SessionId(s), staging_.get(n), TimeMs(now));
  }
  void presence(double link, std::size_t n, double now) {
    relay_->handle_presence(std::uint64_t(link), staging_.get(n), TimeMs(now));
  }
  void fleet_robots(std::size_t n, double now) {
    relay_->handle_fleet_robots(staging_.get(n), TimeMs(now));
  }
  void directory_lost(double now) { relay_->handle_directory_lost(TimeMs(now)); }

  int poll_action() {
    auto a = relay_->poll_action();
    if (!a) return -1;
    double* r = record_;
    r[kRelaySession] = double(a->session);
    r[kRelayStream] = double(a->stream);
    held_.hold(a->bytes, r + kRelayBytes);
    r[kRelaySendOrder] = double(a->send_order);
    r[kRelayDelivery] = double(static_cast<int>(a->delivery));
    r[kRelayEnd] = double(static_cast<int>(a->end));
    r[kRelayCode] = a->code ? double(static_cast<int>(*a->code)) : -1.0;
    r[kRelayGen] = double(a->gen);
    r[kRelayCall] = double(a->call);
    r[kRelayOp] = double(static_cast<int>(a->op));
    text_ = a->kind == ActionKind::open_stream || a->kind == ActionKind::handoff ? std::move(a->ch)
            : a->kind == ActionKind::sfu_call ? std::move(a->sfu_session)
                                              : std::move(a->reason);
    r[kRelayKind] = double(static_cast<int>(a->kind));
    return static_cast<int>(a->kind);
  }
  std::string action_text() const { return text_; }

  std::string stats() const { return to_json(relay_->stats()); }
  double session_count() const { return double(relay_->session_count()); }

 private:
  std::unique_ptr<CockpitRelay> relay_;
  std::string error_;
  Staging staging_;
  double record_[kRelayRecordSize] = {};
  HeldBytes held_;
  std::string text_;
};
val relay_action_kinds() {
  return names_of(kActionKindCount,
                  [](int i) { return action_kind_name(static_cast<ActionKind>(i)); });
}
val stream_ends() {
  return names_of(kStreamEndCount,
                  [](int i) { return stream_end_name(static_cast<StreamEnd>(i)); });
}
val sfu_ops() {
  return names_of(kSfuOpCount, [](int i) { return sfu_op_name(static_cast<SfuOp>(i)); });
}

val relay_record_layout() {
  val o = val::object();
  o.set("size", double(kRelayRecordSize));
  o.set("kind", double(kRelayKind));
  o.set("session", double(kRelaySession));
  o.set("stream", double(kRelayStream));
  o.set("bytes", double(kRelayBytes));
  o.set("bytesAt", double(kRelayBytesAt));
  o.set("bytesLen", double(kRelayBytesLen));
  o.set("sendOrder", double(kRelaySendOrder));
  o.set("delivery", double(kRelayDelivery));
  o.set("end", double(kRelayEnd));
  o.set("code", double(kRelayCode));
  o.set("gen", double(kRelayGen));
  o.set("call", double(kRelayCall));
  o.set("op", double(kRelayOp));
  return o;
}

val relay_limits() {
  val o = val::object();
  o.set("latestStaleMs", double(kLatestStaleMs));
  o.set("reliableMaxFrames", double(kReliableMaxFrames));
  o.set("reliableMaxBytes", double(kReliableMaxBytes));
  o.set("reliableWritesInFlight", double(kReliableWritesInFlight));
  o.set("maxLatestWritesInFlight", double(kMaxLatestWritesInFlight));
  o.set("maxPendingPublishes", double(kMaxPendingPublishes));
  o.set("publishTimeoutMs", double(kPublishTimeoutMs));
  o.set("publishRatePerSecond", kPublishRatePerSecond);
  o.set("publishBurst", kPublishBurst);
  o.set("maxCarrierBacklogBytes", double(kMaxCarrierBacklogBytes));
  o.set("maxSessions", double(kMaxSessions));
  o.set("maxIncomingStreamsPerSession", double(kMaxIncomingStreamsPerSession));
  o.set("maxSubsPerViewer", double(kMaxSubsPerViewer));
  o.set("webSocketHighWaterBytes", double(kWebSocketHighWaterBytes));
  o.set("webSocketAckWindowBytes", double(kWebSocketAckWindowBytes));
  o.set("webSocketLivenessMs", double(kWebSocketLivenessMs));
  o.set("leaseGensPerMs", double(kLeaseGensPerMs));
  o.set("turnTtlSeconds", double(kTurnTtlSeconds));
  o.set("turnRefreshMs", double(kTurnRefreshMs));
  o.set("sfuCallTimeoutMs", double(kSfuCallTimeoutMs));
  o.set("maxPullsPerRtcSession", double(kMaxPullsPerRtcSession));
  o.set("maxSfuResultBytes", double(kMaxSfuResultBytes));
  o.set("maxHandoffQueuedMessages", double(kMaxHandoffQueuedMessages));
  val retry = val::array();
  for (std::size_t i = 0; i < kRtcRetryMs.size(); ++i) retry.set(i, double(kRtcRetryMs[i]));
  o.set("rtcRetryMs", retry);
  return o;
}
}  // namespace

EMSCRIPTEN_BINDINGS(tether_cockpit_relay) {
  using namespace emscripten;
  class_<RelayHandle>("CockpitRelayCore")
      .constructor<std::string, bool, bool, double, double, bool>()
      .function("error", &RelayHandle::error)
      .function("reserve", &RelayHandle::reserve)
      .function("record", &RelayHandle::record)
      .function("handleSessionOpen", &RelayHandle::session_open)
      .function("handleSessionClosed", &RelayHandle::session_closed)
      .function("handleControlData", &RelayHandle::control_data)
      .function("handleDatagram", &RelayHandle::datagram)
      .function("handleIncomingOpen", &RelayHandle::incoming_open)
      .function("handleIncomingData", &RelayHandle::incoming_data)
      .function("handleIncomingEnd", &RelayHandle::incoming_end)
      .function("handleWsMessage", &RelayHandle::ws_message)
      .function("handleStreamOpened", &RelayHandle::stream_opened)
      .function("handleWriteDone", &RelayHandle::write_done)
      .function("handleWritesDone", &RelayHandle::writes_done)
      .function("handleStreamFailed", &RelayHandle::stream_failed)
      .function("handleSfuResult", &RelayHandle::sfu_result)
      .function("handleTimeout", &RelayHandle::timeout)
      .function("setFleetPart", &RelayHandle::set_fleet_part)
      .function("handleHandoff", &RelayHandle::handoff)
      .function("handlePresence", &RelayHandle::presence)
      .function("handleFleetRobots", &RelayHandle::fleet_robots)
      .function("handleDirectoryLost", &RelayHandle::directory_lost)
      .function("pollTimeout", &RelayHandle::poll_timeout)
      .function("pollAction", &RelayHandle::poll_action)
      .function("actionText", &RelayHandle::action_text)
      .function("stats", &RelayHandle::stats)
      .function("sessionCount", &RelayHandle::session_count);
  function("cockpitRelayLimits", &relay_limits);
  function("cockpitRelayActionKinds", &relay_action_kinds);
  function("cockpitRelayRecordLayout", &relay_record_layout);
  function("cockpitStreamEnds", &stream_ends);
  function("cockpitSfuOps", &sfu_ops);
}

}  // namespace tether::cockpit::bindings
