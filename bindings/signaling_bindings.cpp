// Embind surface of the signaling negotiation (src/bus/signaling.hpp). Marshalling only
// (docs/design.md rule 4): inputs as strings and numbers, actions and events as small objects.
// The public API is web/glue/signaling.js, driven by web/glue/driver.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <string>
#include <vector>

#include "bus/signaling.hpp"

namespace tether::bus::bindings {
namespace {

using emscripten::val;

std::vector<std::string> strings(const val& list) {
  std::vector<std::string> out;
  const unsigned n = list["length"].as<unsigned>();
  out.reserve(n);
  for (unsigned i = 0; i < n; ++i) {
    val v = list[i];
    if (v.isString()) out.push_back(v.as<std::string>());
  }
  return out;
}

Candidate candidate(const std::string& c, const val& mid, const val& index) {
  Candidate out;
  out.candidate = c;
  if (mid.isString()) out.sdp_mid = mid.as<std::string>();
  if (index.isNumber()) out.sdp_mline_index = index.as<double>();
  return out;
}

class SignalingCore {
 public:
  SignalingCore(const std::string& self_id, double seed, double open_timeout_ms)
      : s_(SignalingOptions{self_id, static_cast<std::uint64_t>(seed),
                            std::isfinite(open_timeout_ms) && open_timeout_ms > 0
                                ? static_cast<TimeMs>(open_timeout_ms)
                                : kSignalingOpenTimeoutMs}) {}
  void welcome(const val& members, double now) { s_.handle_welcome(strings(members), t(now)); }
  void roster(const val& members, double now) { s_.handle_roster(strings(members), t(now)); }
  void signaling_down(double now) { s_.handle_signaling_down(t(now)); }
  void signal(const std::string& from, const std::string& data, double now) {
    s_.handle_signal(from, data, t(now));
  }
  void description(const std::string& peer, const std::string& gen, const std::string& sdp,
                   double now) {
    s_.handle_description(peer, gen, sdp, t(now));
  }
  void remote_set(const std::string& peer, const std::string& gen, double now) {
    s_.handle_remote_set(peer, gen, t(now));
  }
  void failed(const std::string& peer, const std::string& gen, double now) {
    s_.handle_failed(peer, gen, t(now));
  }
  void local_candidate(const std::string& peer, const std::string& gen, const std::string& c,
                       val mid, val index, double now) {
    s_.handle_local_candidate(peer, gen, candidate(c, mid, index), t(now));
  }
  void channels_open(const std::string& peer, const std::string& gen, double now) {
    s_.handle_channels_open(peer, gen, t(now));
  }
  void channel_closed(const std::string& peer, const std::string& gen, double now) {
    s_.handle_channel_closed(peer, gen, t(now));
  }
  void connection_state(const std::string& peer, const std::string& gen, const std::string& state,
                        double now) {
    s_.handle_connection_state(peer, gen, state, t(now));
  }
  void timeout(double now) { s_.handle_timeout(t(now)); }
  void rebuild(const std::string& peer, double now) { s_.rebuild(peer, t(now)); }
  void close() { s_.handle_close(); }

  val poll_action() {
    auto a = s_.poll_action();
    if (!a) return val::null();
    val o = val::object();
    o.set("kind", std::string(signaling_action_name(a->kind)));
    o.set("peer", a->peer);
    switch (a->kind) {
      case SignalingAction::Kind::create:
        o.set("gen", a->gen);
        o.set("offerer", a->offerer);
        break;
      case SignalingAction::Kind::answer:
      case SignalingAction::Kind::accept:
        o.set("gen", a->gen);
        o.set("sdp", a->text);
        break;
      case SignalingAction::Kind::candidate: {
        o.set("gen", a->gen);
        val c = val::object();
        c.set("candidate", a->candidate.candidate);
        c.set("sdpMid", a->candidate.sdp_mid ? val(*a->candidate.sdp_mid) : val::null());
        c.set("sdpMLineIndex",
              a->candidate.sdp_mline_index ? val(*a->candidate.sdp_mline_index) : val::null());
        o.set("candidate", c);
        break;
      }
      case SignalingAction::Kind::signal: o.set("data", a->text); break;
      default: o.set("gen", a->gen); break;
    }
    return o;
  }
  val poll_event() {
    auto e = s_.poll_event();
    if (!e) return val::null();
    val o = val::object();
    o.set("kind", std::string(signaling_event_name(e->kind)));
    if (e->kind == SignalingEvent::Kind::roster) {
      val a = val::array();
      for (const auto& p : e->roster) a.call<void>("push", p);
      o.set("roster", a);
    } else if (e->kind == SignalingEvent::Kind::open || e->kind == SignalingEvent::Kind::close) {
      o.set("peer", e->peer);
    }
    return o;
  }
  val poll_timeout() const {
    Timeout at = s_.poll_timeout();
    return at ? val(static_cast<double>(*at)) : val::null();
  }
  bool is_open(const std::string& peer) const { return s_.is_open(peer); }
  bool signaling_up() const { return s_.signaling_up(); }
  std::string instance() const { return s_.instance(); }
  val stats() const {
    const SignalingStats& st = s_.stats();
    val o = val::object();
    o.set("offers", static_cast<double>(st.offers));
    o.set("answers", static_cast<double>(st.answers));
    o.set("rebuilds", static_cast<double>(st.rebuilds));
    o.set("signalingReconnects", static_cast<double>(st.signaling_reconnects));
    o.set("refusedSignals", static_cast<double>(st.refused_signals));
    o.set("peers", static_cast<double>(s_.peers()));
    return o;
  }

 private:
  static TimeMs t(double now) { return static_cast<TimeMs>(now); }
  Signaling s_;
};

val signaling_limits() {
  val o = val::object();
  o.set("openTimeoutMs", static_cast<double>(kSignalingOpenTimeoutMs));
  o.set("maxPeerIdBytes", static_cast<double>(kMaxSignalingPeerIdBytes));
  o.set("maxGenerationBytes", static_cast<double>(kMaxGenerationBytes));
  o.set("maxSessionDescriptionBytes", static_cast<double>(kMaxSessionDescriptionBytes));
  o.set("maxCandidateBytes", static_cast<double>(kMaxCandidateBytes));
  o.set("maxPendingCandidates", static_cast<double>(kMaxPendingCandidates));
  o.set("controlChannelId", kControlChannelId);
  o.set("controlChannelLabel", std::string(kControlChannelLabel));
  o.set("binaryChannelId", kBinaryChannelId);
  o.set("binaryChannelLabel", std::string(kBinaryChannelLabel));
  o.set("defaultChannelMessageBytes", static_cast<double>(kDefaultChannelMessageBytes));
  o.set("controlBufferLimit", static_cast<double>(kControlBufferLimit));
  o.set("binaryBufferLimit", static_cast<double>(kBinaryBufferLimit));
  o.set("binaryLowWater", static_cast<double>(kBinaryLowWater));
  o.set("reconnectMinMs", static_cast<double>(kSignalingReconnectMinMs));
  o.set("reconnectMaxMs", static_cast<double>(kSignalingReconnectMaxMs));
  return o;
}

}  // namespace

EMSCRIPTEN_BINDINGS(tether_signaling) {
  emscripten::class_<SignalingCore>("SignalingCore")
      .constructor<const std::string&, double, double>()
      .function("welcome", &SignalingCore::welcome)
      .function("roster", &SignalingCore::roster)
      .function("signalingDown", &SignalingCore::signaling_down)
      .function("signal", &SignalingCore::signal)
      .function("description", &SignalingCore::description)
      .function("remoteSet", &SignalingCore::remote_set)
      .function("failed", &SignalingCore::failed)
      .function("localCandidate", &SignalingCore::local_candidate)
      .function("channelsOpen", &SignalingCore::channels_open)
      .function("channelClosed", &SignalingCore::channel_closed)
      .function("connectionState", &SignalingCore::connection_state)
      .function("timeout", &SignalingCore::timeout)
      .function("rebuild", &SignalingCore::rebuild)
      .function("close", &SignalingCore::close)
      .function("pollAction", &SignalingCore::poll_action)
      .function("pollEvent", &SignalingCore::poll_event)
      .function("pollTimeout", &SignalingCore::poll_timeout)
      .function("isOpen", &SignalingCore::is_open)
      .function("signalingUp", &SignalingCore::signaling_up)
      .function("instance", &SignalingCore::instance)
      .function("stats", &SignalingCore::stats);
  emscripten::function("signalingLimits", &signaling_limits);
}

}  // namespace tether::bus::bindings
