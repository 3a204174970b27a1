// Embind surface of the cockpit relay core (src/relay/cockpit_relay.hpp). Marshalling only
// (DESIGN.md rule 4): input bytes go through a staging buffer in WASM memory; actions come back as
// plain objects whose bytes are typed-memory views into buffers the relay keeps alive until the
// next takeActions(). One frame fanned out to many viewers is one buffer, so the glue copies it
// out once. The JS wrapper is web/glue/cockpit-relay.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <map>
#include <string>
#include <vector>

#include "relay/cockpit_relay.hpp"

namespace tether::relay::bindings {
namespace {

using emscripten::val;

std::string end_name(StreamEnd e) {
  switch (e) {
    case StreamEnd::expired: return "expired";
    case StreamEnd::aborted: return "aborted";
    case StreamEnd::closing: return "closing";
  }
  return "closing";
}

class RelayHandle {
 public:
  // `auth_text` is the auth file's contents, or "" for none. `sfu` says an SFU is configured.
  RelayHandle(const std::string& auth_text, bool sfu) : sfu_(sfu) {
    RelayConfig c;
    if (!auth_text.empty()) {
      auto t = AuthTable::parse(ByteView(std::string_view(auth_text)));
      if (t) c.auth = std::move(t.value());
      else error_ = t.error();
    }
    c.sfu = sfu_.available() ? &sfu_ : nullptr;
    relay_ = std::make_unique<CockpitRelay>(std::move(c));
  }

  std::string error() const { return error_; }

  val input(std::size_t n) {
    staging_.resize(n);
    return val(emscripten::typed_memory_view(n, staging_.data()));
  }
  ByteView staged(std::size_t n) const {
    return ByteView(staging_.data(), std::min(n, staging_.size()));
  }

  double open_session(const std::string& role, const std::string& lane, double now) {
    return double(relay_->open_session(role == "robot" ? Role::robot : Role::viewer,
                                       lane == "websocket" ? Lane::websocket : Lane::webtransport,
                                       std::int64_t(now)));
  }
  void session_closed(double s, double now) { relay_->session_closed(SessionId(s), std::int64_t(now)); }
  void control_data(double s, std::size_t n, double now) {
    relay_->control_data(SessionId(s), staged(n), std::int64_t(now));
  }
  void datagram(double s, std::size_t n, double now) {
    relay_->datagram(SessionId(s), staged(n), std::int64_t(now));
  }
  double incoming_open(double s, double now) {
    return double(relay_->incoming_open(SessionId(s), std::int64_t(now)));
  }
  void incoming_data(double st, std::size_t n, double now) {
    relay_->incoming_data(StreamId(st), staged(n), std::int64_t(now));
  }
  void incoming_end(double st, double now) { relay_->incoming_end(StreamId(st), std::int64_t(now)); }
  void ws_message(double s, std::size_t n, double now) {
    relay_->ws_message(SessionId(s), staged(n), std::int64_t(now));
  }
  void stream_opened(double st, double now) { relay_->stream_opened(StreamId(st), std::int64_t(now)); }
  void write_done(double st, double now) { relay_->write_done(StreamId(st), std::int64_t(now)); }
  void stream_failed(double st, double now) { relay_->stream_failed(StreamId(st), std::int64_t(now)); }
  void carrier_failed(double s, double now) { relay_->carrier_failed(SessionId(s), std::int64_t(now)); }
  void tick(double now) { relay_->tick(std::int64_t(now)); }

  // The pending actions, in order. Each one's `buf` indexes buffer(i); -1 when it has no bytes.
  val take_actions() {
    held_.clear();
    std::map<const Bytes*, int> index;
    val out = val::array();
    int i = 0;
    for (CockpitAction& a : relay_->take_actions()) {
      val o = val::object();
      o.set("kind", std::string(action_kind_name(a.kind)));
      o.set("session", double(a.session));
      o.set("stream", double(a.stream));
      int buf = -1;
      if (a.bytes) {
        auto [it, fresh] = index.emplace(a.bytes.get(), int(held_.size()));
        if (fresh) held_.push_back(a.bytes);
        buf = it->second;
      }
      o.set("buf", buf);
      switch (a.kind) {
        case ActionKind::open_stream:
          o.set("ch", a.ch);
          o.set("delivery", std::string(wire::delivery_name(a.delivery)));
          o.set("sendOrder", double(a.send_order));
          break;
        case ActionKind::reset_stream: o.set("end", end_name(a.end)); break;
        case ActionKind::close_session:
          o.set("code", a.code ? val(std::string(wire::error_name(*a.code))) : val::null());
          o.set("reason", a.reason);
          break;
        default: break;
      }
      out.set(i++, o);
    }
    return out;
  }
  val buffer(int i) const {
    if (i < 0 || std::size_t(i) >= held_.size()) return val::null();
    const Bytes& b = *held_[std::size_t(i)];
    return val(emscripten::typed_memory_view(b.size(), b.data()));
  }

  std::string stats() const { return to_json(relay_->stats()); }
  double session_count() const { return double(relay_->session_count()); }

 private:
  class FlagSfu : public Sfu {
   public:
    explicit FlagSfu(bool on) : on_(on) {}
    bool available() const override { return on_; }

   private:
    bool on_;
  };
  FlagSfu sfu_;
  std::unique_ptr<CockpitRelay> relay_;
  std::string error_;
  Bytes staging_;
  std::vector<std::shared_ptr<const Bytes>> held_;
};

val cockpit_limits() {
  val o = val::object();
  o.set("latestStaleMs", double(kLatestStaleMs));
  o.set("reapIntervalMs", double(kReapIntervalMs));
  o.set("reliableMaxFrames", double(kReliableMaxFrames));
  o.set("reliableMaxBytes", double(kReliableMaxBytes));
  o.set("maxPendingPublishes", double(kMaxPendingPublishes));
  o.set("publishTimeoutMs", double(kPublishTimeoutMs));
  o.set("maxCarrierBacklogBytes", double(kMaxCarrierBacklogBytes));
  return o;
}

}  // namespace

EMSCRIPTEN_BINDINGS(tether_cockpit_relay) {
  using namespace emscripten;
  class_<RelayHandle>("CockpitRelayCore")
      .constructor<std::string, bool>()
      .function("error", &RelayHandle::error)
      .function("input", &RelayHandle::input)
      .function("openSession", &RelayHandle::open_session)
      .function("sessionClosed", &RelayHandle::session_closed)
      .function("controlData", &RelayHandle::control_data)
      .function("datagram", &RelayHandle::datagram)
      .function("incomingOpen", &RelayHandle::incoming_open)
      .function("incomingData", &RelayHandle::incoming_data)
      .function("incomingEnd", &RelayHandle::incoming_end)
      .function("wsMessage", &RelayHandle::ws_message)
      .function("streamOpened", &RelayHandle::stream_opened)
      .function("writeDone", &RelayHandle::write_done)
      .function("streamFailed", &RelayHandle::stream_failed)
      .function("carrierFailed", &RelayHandle::carrier_failed)
      .function("tick", &RelayHandle::tick)
      .function("takeActions", &RelayHandle::take_actions)
      .function("buffer", &RelayHandle::buffer)
      .function("stats", &RelayHandle::stats)
      .function("sessionCount", &RelayHandle::session_count);
  function("cockpitLimits", &cockpit_limits);
}

}  // namespace tether::relay::bindings
