#include "cockpit/client_rtc.hpp"

namespace tether::cockpit {

std::optional<Json> ClientRtc::open(TimeMs now) {
  if (pc_ != Pc::none || !has_ice_) return std::nullopt;
  if (opened_at_ && now < *opened_at_ + kRtcReopenMs) {
    reopen_at_ = *opened_at_ + kRtcReopenMs;
    return std::nullopt;
  }
  reopen_at_.reset();
  opened_at_ = now;
  pc_ = Pc::opening;
  Json args = Json::object();
  args["iceServers"] = ice_;
  return args;
}

bool ClientRtc::offered() {
  if (pc_ != Pc::opening) return false;
  pc_ = Pc::offered;
  return true;
}

bool ClientRtc::answered() {
  if (pc_ != Pc::offered) return false;
  pc_ = Pc::ready;
  return true;
}

void ClientRtc::reset() {
  ice_ = Json::array();
  has_ice_ = false;
  pc_ = Pc::none;
  opened_at_.reset();
  reopen_at_.reset();
}

const char* ClientRtc::pc_name(Pc pc) {
  switch (pc) {
    case Pc::none: return "none";
    case Pc::opening: return "opening";
    case Pc::offered: return "offered";
    case Pc::ready: return "ready";
  }
  return "none";
}

}  // namespace tether::cockpit
