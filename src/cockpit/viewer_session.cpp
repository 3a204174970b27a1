#include "cockpit/viewer_session.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/utf8.hpp"
#include "wire/errors.hpp"
#include "wire/frame.hpp"
#include "wire/limits.hpp"
#include "wire/manifest.hpp"
#include "wire/messages.hpp"

namespace tether::cockpit {

using wire::ErrorCode;
using wire::MessageType;

std::string_view viewer_action_kind_name(ViewerActionKind k) {
  switch (k) {
    case ViewerActionKind::connect: return "connect";
    case ViewerActionKind::send_control: return "send_control";
    case ViewerActionKind::send_datagram: return "send_datagram";
    case ViewerActionKind::send_stream: return "send_stream";
    case ViewerActionKind::close: return "close";
    case ViewerActionKind::rtc_open: return "rtc_open";
    case ViewerActionKind::rtc_accept: return "rtc_accept";
    case ViewerActionKind::rtc_answer: return "rtc_answer";
  }
  return "close";
}

std::string_view viewer_event_kind_name(ViewerEventKind k) {
  switch (k) {
    case ViewerEventKind::state: return "state";
    case ViewerEventKind::robots: return "robots";
    case ViewerEventKind::manifest: return "manifest";
    case ViewerEventKind::message: return "message";
    case ViewerEventKind::drop: return "drop";
  }
  return "drop";
}

std::string_view teleop_lease_name(TeleopLease t) {
  switch (t) {
    case TeleopLease::idle: return "idle";
    case TeleopLease::requesting: return "requesting";
    case TeleopLease::held: return "held";
    case TeleopLease::refused: return "refused";
  }
  return "idle";
}

std::string_view publish_result_name(PublishResult r) {
  switch (r) {
    case PublishResult::sent: return "sent";
    case PublishResult::not_connected: return "not_connected";
    case PublishResult::no_watch: return "no_watch";
    case PublishResult::invalid: return "invalid";
  }
  return "invalid";
}

ViewerSession::ViewerSession(std::optional<std::string> token) : token_(std::move(token)) {}

// --- output -------------------------------------------------------------------------------------

void ViewerSession::push(ViewerEventKind kind, const Json& body) {
  events_.push(ViewerEvent{kind, to_json(body)});
}

std::optional<ViewerEvent> ViewerSession::poll_event() {
  if (auto e = events_.poll()) return e;
  if (!dirty_) return std::nullopt;
  dirty_ = false;
  static constexpr const char* kLinkNames[] = {"idle", "connecting", "open", "reconnecting",
                                               "closed"};
  Json link = Json::object();
  link["state"] = kLinkNames[static_cast<int>(link_)];
  if (link_ == Link::connecting || link_ == Link::reconnecting) link["attempt"] = attempt_;
  if (link_ == Link::reconnecting) link["delayMs"] = delay_ms_;
  if (link_ == Link::stopped && final_) link["code"] = std::string(wire::error_name(*final_));
  if (!detail_.empty()) link["detail"] = detail_;
  Json s = Json::object();
  s["link"] = std::move(link);
  s["welcomed"] = welcomed_;
  s["robotId"] = robot_id_.empty() ? Json(nullptr) : Json(robot_id_);
  s["teleop"] = std::string(teleop_lease_name(teleop_));
  s["rttMs"] = rtt_ms_ ? Json(*rtt_ms_) : Json(nullptr);
  s["lastError"] = last_error_;
  s["drops"] = drops_;
  s["stale"] = stale_;
  if (rtc_.has_ice()) s["rtc"] = rtc_state();
  return ViewerEvent{ViewerEventKind::state, to_json(s)};
}

Timeout ViewerSession::poll_timeout() const {
  return earliest(earliest(earliest(ping_at_, reconnect_at_), twist_at_), rtc_timeout_at());
}

void ViewerSession::drop(std::string reason, std::string detail) {
  ++drops_;
  Json d = Json::object();
  d["reason"] = std::move(reason);
  d["detail"] = std::move(detail);
  push(ViewerEventKind::drop, d);
  changed();
}

void ViewerSession::control(const Json& message, TimeMs now) {
  if (link_ != Link::open) return;
  if (auto text = client_message(message, wire::Sender::viewer))
    actions_.push(
        ViewerAction{ViewerActionKind::send_control, lane_.control_message(*text, now), {}});
}

void ViewerSession::datagram(const Json& message, TimeMs now) {
  if (link_ != Link::open) return;
  if (auto text = client_message(message, wire::Sender::viewer))
    actions_.push(ViewerAction{ViewerActionKind::send_datagram, lane_.datagram(*text, now), {}});
}

// --- the link -----------------------------------------------------------------------------------

void ViewerSession::handle_start(TimeMs) {
  if (link_ != Link::idle && link_ != Link::reconnecting) return;
  link_ = Link::connecting;
  reconnect_at_.reset();
  actions_.push(ViewerAction{ViewerActionKind::connect, {}, {}});
  changed();
}

void ViewerSession::handle_connected(Lane lane, TimeMs now) {
  if (link_ != Link::connecting) return;
  link_ = Link::open;
  attempt_ = 0;
  detail_.clear();
  lane_.reset(lane);
  control_ = wire::ControlStreamDecoder{};
  welcomed_ = false;
  ws_read_ = ws_read_at_pong_ = 0;
  final_.reset();
  Json hello = Json::object();
  hello["t"] = "hello";
  hello["v"] = wire::kProtocolVersion;
  hello["role"] = "viewer";
  if (token_) hello["token"] = *token_;
  control(hello, now);
  changed();
}

void ViewerSession::lease_lost() {
  teleop_ = TeleopLease::idle;
  command_ = TwistCommand{};
  twist_at_.reset();
}

void ViewerSession::handle_disconnected(std::string_view detail, TimeMs now) {
  if (link_ != Link::connecting && link_ != Link::open) return;
  // A new session starts from nothing: subscriptions and the lease died with the old one.
  welcomed_ = false;
  watched_ = false;
  subscribed_.clear();
  newest_.clear();
  lease_lost();
  ping_at_.reset();
  pings_.clear();
  // Before the final-error stop too: a stopped viewer retries no WebRTC connection either.
  rtc_reset();
  if (final_) {
    // The relay said why no retry can succeed (auth_failed is terminal on both sides): stop, and
    // tell the operator what to fix instead of reconnecting forever.
    link_ = Link::stopped;
    reconnect_at_.reset();
    detail_ = std::string(wire::error_info(*final_).fix);
    changed();
    return;
  }
  link_ = Link::reconnecting;
  detail_ = host_text(detail);
  delay_ms_ = kViewerBackoffMs[std::min<std::size_t>(attempt_, kViewerBackoffMs.size() - 1)];
  ++attempt_;
  reconnect_at_ = now + delay_ms_;
  changed();
}

void ViewerSession::handle_stop(TimeMs) {
  if (link_ == Link::stopped) return;
  const bool connected = link_ == Link::open || link_ == Link::connecting;
  link_ = Link::stopped;
  welcomed_ = false;
  subscribed_.clear();
  lease_lost();
  ping_at_.reset();
  reconnect_at_.reset();
  rtc_reset();
  if (connected) actions_.push(ViewerAction{ViewerActionKind::close, {}, "the viewer is leaving"});
  changed();
}

void ViewerSession::handle_timeout(TimeMs now) {
  if (reconnect_at_ && now >= *reconnect_at_) handle_start(now);
  if (ping_at_ && now >= *ping_at_) ping(now);
  if (twist_at_ && now >= *twist_at_) twist(now);
  rtc_timeout(now);
}

void ViewerSession::ping(TimeMs now) {
  const std::uint64_t n = ++ping_n_;
  pings_[n] = now;
  while (pings_.size() > kMaxPingsInFlight) pings_.erase(pings_.begin());
  Json p = Json::object();
  p["t"] = "ping";
  p["n"] = n;
  p["ts"] = double(now) / 1000.0;
  if (lane_.lane() == Lane::websocket) p["read"] = ws_read_at_pong_;
  control(p, now);
  last_ping_ms_ = now;
  // On a WebSocket the next ping waits for this one's pong (see kViewerWsPingIntervalMs).
  if (lane_.lane() == Lane::websocket)
    ping_at_.reset();
  else
    ping_at_ = now + kViewerPingIntervalMs;
}

// --- what the relay says ------------------------------------------------------------------------

void ViewerSession::handle_control_data(ByteView chunk, TimeMs now) {
  if (link_ != Link::open || lane_.lane() != Lane::webtransport || control_.failed()) return;
  auto e = control_.feed(chunk, [&](ByteView text) {
    auto m = wire::parse_message(text, wire::Sender::relay);
    if (!m)
      drop(std::string(wire::drop_reason_name(m.error().reason)), m.error().detail);
    else
      on_message(m.value(), std::string(text.as_chars()), now);
  });
  if (e) {
    drop(std::string(wire::frame_error_name(*e)), std::string(wire::frame_error_text(*e)));
    actions_.push(
        ViewerAction{ViewerActionKind::close,
                     {},
                     "corrupt control stream: " + std::string(wire::frame_error_name(*e))});
  }
}

bool ViewerSession::handle_ws_message(ByteView frame, TimeMs now) {
  ws_read_ += frame.size;
  auto f = wire::decode_data_frame(frame);
  if (!f) {
    if (link_ == Link::open)
      drop(std::string(wire::frame_error_name(f.error())),
           std::string(wire::frame_error_text(f.error())));
    return true;
  }
  if (f->header.ch != wire::kControlChannel) return false;
  if (link_ != Link::open) return true;
  auto m = wire::parse_message(f->payload, wire::Sender::relay);
  if (!m)
    drop(std::string(wire::drop_reason_name(m.error().reason)), m.error().detail);
  else
    on_message(m.value(), std::string(f->payload.as_chars()), now);
  return true;
}

void ViewerSession::on_message(const wire::Message& m, const std::string& text, TimeMs now) {
  const Json& b = m.body;
  switch (m.type) {
    case MessageType::welcome:
      welcomed_ = true;
      ping(now);  // at once, then every kViewerPingIntervalMs
      if (fleet_link_) send_fleet_link(now);
      if (!robot_id_.empty()) {
        Json w = Json::object();
        w["t"] = "watch";
        w["robotId"] = robot_id_;
        control(w, now);
      }
      changed();
      break;
    case MessageType::robots: {
      Json r = Json::object();
      r["robots"] = b["robots"];
      push(ViewerEventKind::robots, r);
      // A watch that found no robot (unknown_robot: a viewer back before its robot after a relay
      // restart) is not remembered by the relay; once the robot is listed, watch it again.
      if (welcomed_ && !robot_id_.empty() && !watched_) {
        for (const Json& robot : b["robots"]) {
          if (robot["id"] == robot_id_) {
            Json w = Json::object();
            w["t"] = "watch";
            w["robotId"] = robot_id_;
            control(w, now);
            break;
          }
        }
      }
      break;
    }
    case MessageType::manifest: {
      if (b["robotId"] != robot_id_) return;
      manifest_ = b.contains("manifest") ? b["manifest"] : Json(nullptr);
      watched_ = true;  // the relay answered the watch
      bool unsupported = false;
      if (manifest_.is_object()) {
        // The relay sends normal forms; one of a version this cockpit does not read is reported
        // under the spec's name, never laid out.
        auto v = wire::validate_manifest(manifest_);
        if (!v) {
          unsupported = v.error().front().code == wire::ManifestErrorCode::unsupported_version;
          if (!unsupported)
            drop("invalid_manifest", v.error().front().path + ": " + v.error().front().message);
          manifest_ = Json(nullptr);
        } else {
          manifest_ = std::move(v.value());
        }
      }
      tx_.clear();
      rx_.clear();
      newest_.clear();
      tracks_.clear();
      if (manifest_.is_object()) {
        for (const Json& c : manifest_["channels"]) {
          const std::string ch = c["ch"].get<std::string>();
          const auto mode =
              c["delivery"] == "reliable" ? wire::Delivery::reliable : wire::Delivery::latest;
          if (c["dir"] == "tx")
            tx_[ch] = mode;
          else
            rx_[ch] = mode;
          if (rx_.count(ch) && c.contains("encoding") && c["encoding"] == kTrackEncoding)
            tracks_.insert(ch);
        }
      }
      subscribed_.clear();
      sync_subs(now);
      rtc_want(now);
      Json e = Json::object();
      e["robotId"] = robot_id_;
      e["manifest"] = manifest_;
      if (unsupported) e["error"] = "manifestUnsupported";
      push(ViewerEventKind::manifest, e);
      break;
    }
    case MessageType::teleop_started:
      if (teleop_ == TeleopLease::requesting) teleop_ = TeleopLease::held;
      changed();
      break;
    case MessageType::teleop_stop:
      lease_lost();
      changed();
      break;
    case MessageType::pong: {
      ws_read_at_pong_ = ws_read_;
      const std::uint64_t n = b["n"].get<std::uint64_t>();
      auto it = pings_.find(n);
      if (it != pings_.end()) {
        rtt_ms_ = now - it->second;
        pings_.erase(it);
        changed();
      }
      // The newest ping is answered: on a WebSocket the next one may go.
      if (lane_.lane() == Lane::websocket && n == ping_n_ && welcomed_ && !ping_at_)
        ping_at_ = std::max(now, last_ping_ms_ + kViewerWsPingIntervalMs);
      break;
    }
    case MessageType::error: {
      const std::string code = b["code"].get<std::string>();
      Json e = Json::object();
      e["code"] = code;
      e["message"] = b["message"];
      if (auto c = wire::error_code_from_name(code)) {
        e["fix"] = std::string(wire::error_info(*c).fix);
        if (wire::error_info(*c).final_for_client) final_ = *c;
        if (*c == ErrorCode::teleop_held && teleop_ == TeleopLease::requesting)
          teleop_ = TeleopLease::refused;
        if (*c == ErrorCode::robot_disconnected || *c == ErrorCode::unknown_robot)
          subscribed_.clear();
        if (*c == ErrorCode::unknown_robot) watched_ = false;
      }
      e["at"] = now;
      last_error_ = std::move(e);
      changed();
      on_rtc_message(m, now);
      break;
    }
    case MessageType::rtc_ice:
    case MessageType::rtc_offer:
    case MessageType::rtc_answer: on_rtc_message(m, now); break;
    default: break;
  }
  events_.push(ViewerEvent{ViewerEventKind::message, text});
}

// --- the operator -------------------------------------------------------------------------------

void ViewerSession::fleet_link(bool on, TimeMs now) {
  if (on == fleet_link_) return;
  fleet_link_ = on;
  if (welcomed_) send_fleet_link(now);
}

void ViewerSession::send_fleet_link(TimeMs now) {
  Json m = Json::object();
  m["t"] = "fleet";
  m["link"] = fleet_link_;
  control(m, now);
}

bool ViewerSession::watch(const std::string& robot_id, TimeMs now) {
  // A robot id the relay could never list (v7 notes: ids are 1..128 characters of UTF-8).
  if (robot_id.empty() || robot_id.size() > 4 * wire::kMaxIdChars ||
      !is_valid_utf8(ByteView(std::string_view(robot_id))) ||
      utf8_code_points(robot_id) > wire::kMaxIdChars)
    return false;
  if (robot_id != robot_id_) {
    watched_ = false;
    manifest_ = Json(nullptr);
    tx_.clear();
    rx_.clear();
    newest_.clear();
    tracks_.clear();
    rtc_tracks_.clear();  // the old robot's pulls: offers for them are answered, not shown
    lease_lost();         // the relay gives the lease up when a viewer watches another robot
  }
  robot_id_ = robot_id;
  subscribed_.clear();
  if (welcomed_) {
    Json w = Json::object();
    w["t"] = "watch";
    w["robotId"] = robot_id;
    control(w, now);
  }
  changed();
  return true;
}

bool ViewerSession::handle_frame(std::string_view ch, std::int64_t seq, TimeMs) {
  const std::string key(ch);
  if (!subscribed_.count(key)) return false;  // in flight past an unsub, or not ours
  auto it = rx_.find(key);
  if (it == rx_.end()) return false;
  if (it->second == wire::Delivery::reliable) return true;
  auto [nit, fresh] = newest_.try_emplace(key, seq);
  if (!fresh) {
    if (seq <= nit->second) {
      ++stale_;
      changed();
      return false;
    }
    nit->second = seq;
  }
  return true;
}

void ViewerSession::want(const std::vector<std::string>& channels, TimeMs now) {
  wanted_.clear();
  for (const auto& ch : channels) {
    if (std::find(wanted_.begin(), wanted_.end(), ch) == wanted_.end()) wanted_.push_back(ch);
  }
  sync_subs(now);
  rtc_want(now);
  if (rtc_.has_ice()) changed();  // the wanted track channels are part of the rtc state
}

void ViewerSession::sync_subs(TimeMs now) {
  if (!welcomed_ || !manifest_.is_object()) return;
  for (const auto& ch : wanted_) {
    if (rx_.count(ch) && !subscribed_.count(ch)) {
      Json m = Json::object();
      m["t"] = "sub";
      m["ch"] = ch;
      control(m, now);
      subscribed_.insert(ch);
    }
  }
  for (auto it = subscribed_.begin(); it != subscribed_.end();) {
    if (std::find(wanted_.begin(), wanted_.end(), *it) == wanted_.end()) {
      Json m = Json::object();
      m["t"] = "unsub";
      m["ch"] = *it;
      control(m, now);
      it = subscribed_.erase(it);
    } else {
      ++it;
    }
  }
}

void ViewerSession::teleop_start(TimeMs now) {
  teleop_ = TeleopLease::requesting;
  Json m = Json::object();
  m["t"] = "teleop_start";
  control(m, now);
  changed();
}

void ViewerSession::teleop_stop(TimeMs now) {
  if (teleop_ == TeleopLease::held || teleop_ == TeleopLease::requesting) {
    Json m = Json::object();
    m["t"] = "teleop_stop";
    control(m, now);
  }
  lease_lost();
  changed();
}

void ViewerSession::twist(TimeMs now) {
  twist_at_.reset();
  if (teleop_ != TeleopLease::held || link_ != Link::open) return;
  Json m = Json::object();
  m["t"] = "twist";
  m["vx"] = command_.vx;
  m["vy"] = command_.vy;
  m["wz"] = command_.wz;
  m["seq"] = ++teleop_seq_;
  m["ts"] = double(now) / 1000.0;
  datagram(m, now);
  if (command_.moving()) twist_at_ = now + kTwistResendMs;
}

bool ViewerSession::drive(double vx, double vy, double wz, TimeMs now) {
  if (teleop_ != TeleopLease::held) return false;
  // A twist carries finite numbers only (wire schema): anything else is no command.
  if (!std::isfinite(vx) || !std::isfinite(vy) || !std::isfinite(wz)) return false;
  const TwistCommand next{vx, vy, wz};
  if (next == command_) return true;  // unchanged: the resend timer carries it
  command_ = next;
  twist(now);
  return true;
}

void ViewerSession::estop(TimeMs now) {
  command_ = TwistCommand{};
  twist_at_.reset();
  Json m = Json::object();
  m["t"] = "stop";
  m["seq"] = ++teleop_seq_;
  m["ts"] = double(now) / 1000.0;
  datagram(m, now);
}

PublishResult ViewerSession::publish(const std::string& ch, ByteView payload, const std::string& id,
                                     TimeMs now) {
  if (link_ != Link::open || !welcomed_) return PublishResult::not_connected;
  if (robot_id_.empty()) return PublishResult::no_watch;
  if (id.empty() || id.size() > wire::kMaxIdChars || wire::is_reserved_channel(ch) ||
      !is_valid_utf8(ByteView(std::string_view(id))))
    return PublishResult::invalid;
  wire::FrameHeader h;
  h.ch = ch;
  h.seq = publish_seq_[ch] + 1;
  h.ts = double(now) / 1000.0;
  auto it = tx_.find(ch);
  h.delivery = it == tx_.end() ? wire::Delivery::reliable : it->second;
  h.meta = Json::object();
  (*h.meta)["id"] = id;
  Bytes frame;
  if (wire::append_data_frame(frame, h, payload)) return PublishResult::invalid;
  publish_seq_[ch] = h.seq;
  actions_.push(ViewerAction{ViewerActionKind::send_stream, std::move(frame), {}});
  return PublishResult::sent;
}

}  // namespace tether::cockpit
