// A cockpit client's WebRTC peer connection as its session core sees it (cockpit-wire-protocol.md
// § WebRTC video): the ICE servers the relay handed over (rtc_ice), and where the one peer
// connection stands: none, opening (the host is making it and its offer), offered (rtc_offer is
// out), ready (the relay's rtc_answer is applied). The viewer session and the robot session each
// hold one; the host holds the RTCPeerConnection itself and reports back.
//
// A connection that is lost (rtc_session_gone, or the host reports it failed) is opened afresh,
// at most once per kRtcReopenMs, so a peer whose connections keep failing does not spin.
#pragma once
#include <optional>
#include <string>

#include "common/drive.hpp"
#include "common/json.hpp"

namespace tether::cockpit {

constexpr TimeMs kRtcReopenMs = 2000;

class ClientRtc {
 public:
  enum class Pc { none, opening, offered, ready };

  // The relay's rtc_ice: the set a new peer connection uses.
  void on_ice(const Json& servers) {
    ice_ = servers;
    has_ice_ = true;
  }
  bool has_ice() const { return has_ice_; }
  const Json& ice() const { return ice_; }
  Pc pc() const { return pc_; }

  // A peer connection should exist: the rtc_open arguments ({iceServers}) when the host should
  // make one now; nothing when one exists, no ICE set came yet, or a reopen waits for its slot.
  std::optional<Json> open(TimeMs now);
  // The host handed over its offer (false unless one was asked for).
  bool offered();
  // The relay answered the offer (false unless one is out).
  bool answered();
  // The connection is gone or failed: a new one is opened by the next open().
  void lost() { pc_ = Pc::none; }
  // The relay session ended: its ICE set and connection go with it.
  void reset();

  // When a delayed reopen is due.
  Timeout poll_timeout() const { return reopen_at_; }
  bool due(TimeMs now) const { return reopen_at_ && now >= *reopen_at_; }

  static const char* pc_name(Pc pc);

 private:
  Json ice_ = Json::array();
  bool has_ice_ = false;
  Pc pc_ = Pc::none;
  std::optional<TimeMs> opened_at_;
  Timeout reopen_at_;
};

}  // namespace tether::cockpit
