// The viewer session's WebRTC video (cockpit-wire-protocol.md § WebRTC video): one recvonly peer
// connection per viewer session, opened once the relay sent its ICE servers and a wanted channel
// is a video.webrtc.v1 track; the relay's answer applied; every relay offer (a pull) answered,
// its tracks shown only when they are the watched robot's (a viewer that switched robots answers
// but ignores them); a fresh connection after rtc_session_gone or a failure; and per track what
// its media does, from the host's reports: connecting, live, stalled, failed. The host (the
// cockpit's video panel, web/cockpit/src/panels/video-rtc.js) holds the peer connection.
#include <algorithm>

#include "cockpit/viewer_session.hpp"
#include "wire/errors.hpp"
#include "wire/messages.hpp"

namespace tether::cockpit {

using wire::ErrorCode;
using wire::MessageType;

void ViewerSession::rtc_want(TimeMs now) {
  if (!welcomed_ || link_ != Link::open || !rtc_.has_ice()) return;
  const bool wants_video = std::any_of(wanted_.begin(), wanted_.end(),
                                       [&](const std::string& ch) { return tracks_.count(ch); });
  if (!wants_video) return;
  if (auto args = rtc_.open(now)) {
    actions_.push(ViewerAction{ViewerActionKind::rtc_open, {}, {}, to_json(*args)});
    changed();
  }
}

void ViewerSession::rtc_reset() {
  rtc_.reset();
  rtc_tracks_.clear();
  answer_owed_.reset();
}

void ViewerSession::on_rtc_message(const wire::Message& m, TimeMs now) {
  const Json& b = m.body;
  switch (m.type) {
    case MessageType::rtc_ice:
      rtc_.on_ice(b["iceServers"]);
      changed();
      rtc_want(now);
      return;
    case MessageType::rtc_answer: {
      if (!rtc_.answered()) {
        drop("rtc_answer_unexpected", "an rtc_answer came with no rtc_offer of this viewer out");
        return;
      }
      Json args = Json::object();
      args["sdp"] = b["sdp"];
      actions_.push(ViewerAction{ViewerActionKind::rtc_accept, {}, {}, to_json(args)});
      changed();
      return;
    }
    case MessageType::rtc_offer: {
      // A pull. One for an older peer connection (made before a restart) cannot be applied.
      if (rtc_.pc() != ClientRtc::Pc::ready) {
        drop("rtc_offer_unexpected",
             "a relay rtc_offer came before this viewer's connection was up");
        return;
      }
      const std::string robot =
          b.contains("robotId") ? b["robotId"].get<std::string>() : std::string();
      const bool current = !robot.empty() && robot == robot_id_;
      Json tracks = Json::array();
      if (current && b.contains("tracks")) {
        for (const Json& t : b["tracks"]) {
          const std::string ch = t["ch"].get<std::string>();
          RtcTrack& rt = rtc_tracks_[ch];
          rt = RtcTrack{};
          rt.mid = t["mid"].get<std::string>();
          tracks.push_back(t);
        }
      }
      Json args = Json::object();
      args["sdp"] = b["sdp"];
      args["tracks"] = std::move(tracks);
      args["robotId"] = robot;
      args["current"] = current;
      answer_owed_ = robot;
      actions_.push(ViewerAction{ViewerActionKind::rtc_answer, {}, {}, to_json(args)});
      changed();
      return;
    }
    case MessageType::error: {
      if (!rtc_.has_ice()) return;
      const std::string code = b["code"].get<std::string>();
      if (code == wire::error_name(ErrorCode::rtc_session_gone)) {
        // The relay's SFU session for this viewer is gone: a fresh connection, a new offer.
        rtc_.lost();
        rtc_tracks_.clear();
        answer_owed_.reset();
        changed();
        rtc_want(now);
      } else if (code == wire::error_name(ErrorCode::rtc_failed)) {
        // Tracks not showing video yet show the failure until video comes (the relay retries).
        for (auto& [ch, t] : rtc_tracks_)
          if (!t.media_at || t.stalled) t.failed = true;
        for (const std::string& ch : wanted_)
          if (tracks_.count(ch) && !rtc_tracks_.count(ch)) rtc_tracks_[ch].failed = true;
        changed();
      }
      return;
    }
    default: return;
  }
}

bool ViewerSession::handle_rtc_offer(const std::string& sdp, TimeMs now) {
  if (rtc_.pc() != ClientRtc::Pc::opening || link_ != Link::open) return false;
  Json m = Json::object();
  m["t"] = "rtc_offer";
  m["sdp"] = sdp;
  auto text = client_message(m, wire::Sender::viewer);
  if (!text) return false;  // an SDP over MAX_SDP_LEN, or not UTF-8
  rtc_.offered();
  actions_.push(
      ViewerAction{ViewerActionKind::send_control, lane_.control_message(*text, now), {}});
  changed();
  return true;
}

bool ViewerSession::handle_rtc_answer(const std::string& sdp, TimeMs now) {
  if (!answer_owed_ || link_ != Link::open) return false;
  Json m = Json::object();
  m["t"] = "rtc_answer";
  m["sdp"] = sdp;
  if (!answer_owed_->empty()) m["robotId"] = *answer_owed_;
  auto text = client_message(m, wire::Sender::viewer);
  if (!text) return false;
  answer_owed_.reset();
  actions_.push(
      ViewerAction{ViewerActionKind::send_control, lane_.control_message(*text, now), {}});
  return true;
}

void ViewerSession::handle_rtc_state(const std::string& state, TimeMs now) {
  if (state != "failed" || rtc_.pc() == ClientRtc::Pc::none) return;
  rtc_.lost();
  rtc_tracks_.clear();
  answer_owed_.reset();
  changed();
  rtc_want(now);
}

void ViewerSession::handle_rtc_media(const std::string& ch, std::uint64_t frames, TimeMs now) {
  auto it = rtc_tracks_.find(ch);
  if (it == rtc_tracks_.end() || it->second.mid.empty() || frames == 0) return;
  RtcTrack& t = it->second;
  const bool was_live = t.media_at && !t.stalled && !t.failed;
  t.media_at = now;
  t.stalled = false;
  t.failed = false;
  if (!was_live) changed();
}

Timeout ViewerSession::rtc_timeout_at() const {
  Timeout t = rtc_.poll_timeout();
  for (const auto& [ch, rt] : rtc_tracks_)
    if (rt.media_at && !rt.stalled) t = earliest(t, *rt.media_at + kRtcStallMs);
  return t;
}

void ViewerSession::rtc_timeout(TimeMs now) {
  if (rtc_.due(now)) rtc_want(now);
  for (auto& [ch, t] : rtc_tracks_) {
    if (t.media_at && !t.stalled && now >= *t.media_at + kRtcStallMs) {
      t.stalled = true;
      changed();
    }
  }
}

Json ViewerSession::rtc_state() const {
  Json tracks = Json::object();
  for (const std::string& ch : wanted_) {
    if (!tracks_.count(ch)) continue;
    Json o = Json::object();
    auto it = rtc_tracks_.find(ch);
    const RtcTrack* t = it == rtc_tracks_.end() ? nullptr : &it->second;
    const char* state = "waiting";
    if (t && t->failed)
      state = "failed";
    else if (t && t->stalled)
      state = "stalled";
    else if (t && t->media_at)
      state = "live";
    else if (t && !t->mid.empty())
      state = "connecting";
    o["state"] = state;
    if (t && !t->mid.empty()) o["mid"] = t->mid;
    tracks[ch] = std::move(o);
  }
  Json r = Json::object();
  r["pc"] = ClientRtc::pc_name(rtc_.pc());
  r["tracks"] = std::move(tracks);
  return r;
}

}  // namespace tether::cockpit
