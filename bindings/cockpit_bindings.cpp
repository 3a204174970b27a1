// Embind surface of the cockpit core (src/cockpit/): the relay, and its clients. Marshalling only
// (DESIGN.md rule 4). Every core is driven by the one contract (src/common/drive.hpp); the JS
// wrappers in web/glue/ hand them to web/glue/driver.js.
//
// Shaped like the wire bindings, for the same reason (bench/README.md: an Embind call costs far
// more than a small frame's work): bytes go in through a staging buffer whose address JS learns
// from reserve(); an action comes out as a record of doubles at a fixed address (layout:
// cockpit*RecordLayout()), and pollAction() returns its kind's number, or -1 when there is none.
// Bytes an action carries stay alive until the next poll that carries other bytes; their serial
// number changes only then, so JS copies one frame fanned out to many viewers once. Strings an
// action carries rarely (a close reason, a channel id) come from actionText().
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cockpit/relay.hpp"
#include "staging.hpp"

namespace tether::cockpit::bindings {
namespace {

using emscripten::val;

using tether::bindings::address_of;
using tether::bindings::Staging;

double timeout_value(Timeout t) { return t ? double(*t) : -1.0; }

// The bytes of the action just polled, kept alive and numbered.
class HeldBytes {
 public:
  // Writes [serial, address, length] at `at`; serial 0 for none.
  void hold(const SharedBytes& bytes, double* at) {
    if (!bytes) {
      at[0] = at[1] = at[2] = 0;
      return;
    }
    if (bytes != held_) {
      held_ = bytes;
      ++serial_;
    }
    at[0] = double(serial_);
    at[1] = address_of(held_->data());
    at[2] = double(held_->size());
  }

 private:
  SharedBytes held_;
  std::uint64_t serial_ = 0;
};

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
  kRelayRecordSize
};

class RelayHandle {
 public:
  // `auth_text` is the auth file's contents, or "" for none. `sfu` says an SFU is configured.
  RelayHandle(const std::string& auth_text, bool sfu) {
    RelayConfig c;
    c.sfu = sfu;
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
  void stream_failed(double st, double now) {
    relay_->handle_stream_failed(StreamId(st), TimeMs(now));
  }
  void timeout(double now) { relay_->handle_timeout(TimeMs(now)); }
  double poll_timeout() const { return timeout_value(relay_->poll_timeout()); }

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
    text_ = a->kind == ActionKind::open_stream ? std::move(a->ch) : std::move(a->reason);
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

val names_of(std::size_t n, std::string_view (*name)(int)) {
  val list = val::array();
  for (std::size_t i = 0; i < n; ++i) list.set(i, std::string(name(int(i))));
  return list;
}

val relay_action_kinds() {
  return names_of(kActionKindCount,
                  [](int i) { return action_kind_name(static_cast<ActionKind>(i)); });
}
val stream_ends() {
  return names_of(kStreamEndCount,
                  [](int i) { return stream_end_name(static_cast<StreamEnd>(i)); });
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
  return o;
}

}  // namespace

EMSCRIPTEN_BINDINGS(tether_cockpit) {
  using namespace emscripten;
  class_<RelayHandle>("CockpitRelayCore")
      .constructor<std::string, bool>()
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
      .function("handleStreamFailed", &RelayHandle::stream_failed)
      .function("handleTimeout", &RelayHandle::timeout)
      .function("pollTimeout", &RelayHandle::poll_timeout)
      .function("pollAction", &RelayHandle::poll_action)
      .function("actionText", &RelayHandle::action_text)
      .function("stats", &RelayHandle::stats)
      .function("sessionCount", &RelayHandle::session_count);
  function("cockpitRelayLimits", &relay_limits);
  function("cockpitRelayActionKinds", &relay_action_kinds);
  function("cockpitRelayRecordLayout", &relay_record_layout);
  function("cockpitStreamEnds", &stream_ends);
}

}  // namespace tether::cockpit::bindings
