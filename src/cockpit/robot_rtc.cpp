// The robot session's WebRTC video (cockpit-wire-protocol.md § WebRTC video): one peer connection
// carrying a sendonly track per video.webrtc.v1 channel, offered to the relay once it sent its ICE
// servers, answered by the relay, opened afresh when the relay says its SFU session is gone or the
// host reports it failed; and rtc_stalled when a track's media resumes after about the SFU's
// collection window. The host (web/glue/cockpit-robot.js with web/sfu/camera.js, say) holds the
// peer connection and the media.
#include <algorithm>

#include "cockpit/robot_session.hpp"
#include "wire/limits.hpp"
#include "wire/messages.hpp"

namespace tether::cockpit {

using wire::ErrorCode;
using wire::MessageType;

TimeMs stall_threshold_ms(TimeMs track_timeout_ms) {
  return track_timeout_ms - std::min<TimeMs>(track_timeout_ms / 10, 3000);
}

void RobotSession::rtc_event() {
  Json b = Json::object();
  b["pc"] = ClientRtc::pc_name(rtc_.pc());
  events_.push(RobotEvent{RobotEventKind::rtc, std::move(b), {}});
}

void RobotSession::rtc_open(TimeMs now) {
  // rtc_ice rides the carrier, which the relay opens only once it registered the robot: no need
  // to wait for the welcome datagram.
  if (tracks_.empty() || link_ != Link::open) return;
  auto args = rtc_.open(now);
  if (!args) return;
  (*args)["chs"] = Json(std::vector<std::string>(tracks_.begin(), tracks_.end()));
  actions_.push(RobotAction{RobotActionKind::rtc_open, {}, {}, to_json(*args)});
  rtc_event();
}

void RobotSession::on_rtc_message(const wire::Message& m, TimeMs now) {
  switch (m.type) {
    case MessageType::rtc_ice:
      rtc_.on_ice(m.body["iceServers"]);
      rtc_open(now);
      return;
    case MessageType::rtc_answer: {
      if (!rtc_.answered()) {
        drop("rtc_answer_unexpected", "an rtc_answer came with no rtc_offer of this robot out");
        return;
      }
      Json args = Json::object();
      args["sdp"] = m.body["sdp"];
      actions_.push(RobotAction{RobotActionKind::rtc_accept, {}, {}, to_json(args)});
      rtc_event();
      return;
    }
    case MessageType::error:
      if (m.body["code"] == wire::error_name(ErrorCode::rtc_session_gone)) {
        // The relay's SFU session for this robot is gone: a fresh peer connection, a new offer.
        rtc_.lost();
        rtc_event();
        rtc_open(now);
      }
      return;
    default: return;
  }
}

bool RobotSession::handle_rtc_offer(const std::string& sdp, const Json& tracks, TimeMs now) {
  if (link_ != Link::open || !tracks.is_array() || tracks.empty()) return false;
  std::set<std::string> mids;
  std::set<std::string> chs;
  for (const Json& t : tracks) {
    if (!t.is_object() || !t.contains("ch") || !t["ch"].is_string() || !t.contains("mid") ||
        !t["mid"].is_string())
      return false;
    if (!tracks_.count(t["ch"].get<std::string>())) return false;
    if (!mids.insert(t["mid"].get<std::string>()).second) return false;
    if (!chs.insert(t["ch"].get<std::string>()).second) return false;
  }
  Json m = Json::object();
  m["t"] = "rtc_offer";
  m["sdp"] = sdp;
  m["tracks"] = tracks;
  // The wire core bounds the SDP (MAX_SDP_LEN) and the tracks (MAX_RTC_TRACKS) and their shape.
  if (rtc_.pc() != ClientRtc::Pc::opening || !client_message(m, wire::Sender::robot)) return false;
  if (!send_control(m, now)) return false;
  rtc_.offered();
  rtc_event();
  return true;
}

bool RobotSession::handle_media_resumed(const std::string& ch, TimeMs gap_ms, TimeMs now) {
  if (!welcomed_ || rtc_.pc() != ClientRtc::Pc::ready || !tracks_.count(ch)) return false;
  if (gap_ms < stall_threshold_ms(config_.track_timeout_ms)) return false;
  Json m = Json::object();
  m["t"] = "rtc_stalled";
  m["ch"] = ch;
  return send_control(m, now);
}

void RobotSession::handle_rtc_state(const std::string& state, TimeMs now) {
  if (state != "failed" || rtc_.pc() == ClientRtc::Pc::none) return;
  rtc_.lost();
  rtc_event();
  rtc_open(now);
}

}  // namespace tether::cockpit
