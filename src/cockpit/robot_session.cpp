#include "cockpit/robot_session.hpp"

#include <algorithm>
#include <utility>

#include "wire/limits.hpp"
#include "wire/manifest.hpp"

namespace tether::cockpit {

using wire::MessageType;

std::string_view robot_action_kind_name(RobotActionKind k) {
  switch (k) {
    case RobotActionKind::connect: return "connect";
    case RobotActionKind::send_stream: return "send_stream";
    case RobotActionKind::send_datagram: return "send_datagram";
    case RobotActionKind::close: return "close";
    case RobotActionKind::rtc_open: return "rtc_open";
    case RobotActionKind::rtc_accept: return "rtc_accept";
  }
  return "close";
}

std::string_view robot_event_kind_name(RobotEventKind k) {
  switch (k) {
    case RobotEventKind::link: return "link";
    case RobotEventKind::error: return "error";
    case RobotEventKind::subs: return "subs";
    case RobotEventKind::publish: return "publish";
    case RobotEventKind::command: return "command";
    case RobotEventKind::drop: return "drop";
    case RobotEventKind::rtc: return "rtc";
  }
  return "drop";
}

std::string_view send_result_name(SendResult r) {
  switch (r) {
    case SendResult::sent: return "sent";
    case SendResult::not_welcomed: return "not_welcomed";
    case SendResult::not_wanted: return "not_wanted";
    case SendResult::undeclared: return "undeclared";
    case SendResult::invalid: return "invalid";
  }
  return "invalid";
}

std::string_view robot_setup_error_name(RobotSetupError e) {
  switch (e) {
    case RobotSetupError::invalid_config: return "invalidConfig";
    case RobotSetupError::invalid_manifest: return "invalidManifest";
    case RobotSetupError::manifest_unsupported: return "manifestUnsupported";
    case RobotSetupError::invalid_hello: return "invalidHello";
  }
  return "invalidConfig";
}

Result<RobotConfig, std::string> robot_config_from_json(const Json& c) {
  if (!c.is_object())
    return err(
        std::string("a robot config is an object {id, name?, model?, manifest, token?, "
                    "watchdogMs?, trackTimeoutMs?}"));
  RobotConfig rc;
  for (auto it = c.begin(); it != c.end(); ++it) {
    const std::string& key = it.key();
    const Json& v = it.value();
    auto text = [&](std::string& into) -> std::optional<std::string> {
      if (!v.is_string()) return "the robot config's " + key + " must be a string";
      into = v.get<std::string>();
      return std::nullopt;
    };
    std::optional<std::string> problem;
    if (key == "id")
      problem = text(rc.id);
    else if (key == "name")
      problem = text(rc.name);
    else if (key == "model")
      problem = text(rc.model);
    else if (key == "token") {
      std::string t;
      problem = text(t);
      rc.token = std::move(t);
    } else if (key == "manifest") {
      rc.manifest = v;
    } else if (key == "watchdogMs") {
      auto w = json_integer(v, kMinWatchdogMs, kMaxWatchdogMs);
      if (!w)
        problem = "the robot config's watchdogMs must be an integer from " +
                  std::to_string(kMinWatchdogMs) + " to " + std::to_string(kMaxWatchdogMs);
      else
        rc.watchdog_ms = *w;
    } else if (key == "trackTimeoutMs") {
      auto w = json_integer(v, kMinTrackTimeoutMs, kMaxTrackTimeoutMs);
      if (!w)
        problem =
            "the robot config's trackTimeoutMs (the SFU's collection window) must be an "
            "integer from " +
            std::to_string(kMinTrackTimeoutMs) + " to " + std::to_string(kMaxTrackTimeoutMs);
      else
        rc.track_timeout_ms = *w;
    } else {
      problem = "the robot config has an unknown key " + key +
                " (id, name, model, manifest, token, watchdogMs, trackTimeoutMs)";
    }
    if (problem) return err(std::move(*problem));
  }
  return rc;
}

Result<RobotSession, RobotSetupProblem> RobotSession::create(RobotConfig config) {
  auto problem = [](RobotSetupError kind, std::string message) {
    return err(RobotSetupProblem{kind, std::move(message)});
  };
  auto manifest = wire::validate_manifest(config.manifest);
  if (!manifest) {
    const auto& e = manifest.error().front();
    if (e.code == wire::ManifestErrorCode::unsupported_version)
      return problem(RobotSetupError::manifest_unsupported,
                     "manifestUnsupported: this SDK reads manifest version " +
                         std::to_string(wire::kManifestVersion) +
                         "; write the manifest as version 1 or update the SDK");
    return problem(RobotSetupError::invalid_manifest,
                   "the manifest is invalid at " +
                       (e.path.empty() ? std::string("the top") : e.path) + ": " + e.message +
                       " (" + std::string(wire::manifest_error_name(e.code)) + ")");
  }
  Json hello = Json::object();
  hello["t"] = "hello";
  hello["v"] = wire::kProtocolVersion;
  hello["role"] = "robot";
  if (config.token) hello["token"] = *config.token;
  hello["robot"] = Json::object();
  hello["robot"]["id"] = config.id;
  hello["robot"]["name"] = config.name;
  hello["robot"]["model"] = config.model;
  hello["manifest"] = manifest.value();
  auto m = wire::validate_message(hello, wire::Sender::robot);
  if (!m)
    return problem(RobotSetupError::invalid_hello,
                   "the robot's hello is invalid: " + m.error().detail +
                       " (an id is 1 to 128 characters, a name and a model at most 256, a token "
                       "at most 4096)");
  if (auto code = wire::check_hello(m.value(), wire::Role::robot))
    return problem(RobotSetupError::invalid_hello, "the robot's hello would be refused with " +
                                                       std::string(wire::error_name(*code)) + ": " +
                                                       std::string(wire::error_info(*code).fix));
  std::string text = wire::encode_message(m.value());
  if (text.size() > wire::kMaxControlBytes)
    return problem(RobotSetupError::invalid_hello, "the hello is over 64 KiB (" +
                                                       std::to_string(text.size()) +
                                                       " bytes): the manifest is too large");
  Json normal = std::move(manifest.value());
  return RobotSession(std::move(config), std::move(normal), std::move(text));
}

RobotSession::RobotSession(RobotConfig config, Json manifest, std::string hello)
    : config_(std::move(config)),
      manifest_(std::move(manifest)),
      hello_(std::move(hello)),
      safety_(config_.watchdog_ms) {
  for (const Json& c : manifest_["channels"]) {
    if (c["dir"] == "rx")
      rx_[c["ch"].get<std::string>()] =
          c["delivery"] == "reliable" ? wire::Delivery::reliable : wire::Delivery::latest;
    if (c["dir"] == "rx" && c["encoding"] == kTrackEncoding)
      tracks_.insert(c["ch"].get<std::string>());
  }
}

// --- the link -----------------------------------------------------------------------------------

void RobotSession::link_event(const char* state, Json extra) {
  Json body = Json::object();
  body["state"] = state;
  for (auto it = extra.begin(); it != extra.end(); ++it) body[it.key()] = it.value();
  events_.push(RobotEvent{RobotEventKind::link, std::move(body), {}});
}

void RobotSession::drop(std::string reason, std::string detail) {
  Json b = Json::object();
  b["reason"] = std::move(reason);
  b["detail"] = std::move(detail);
  events_.push(RobotEvent{RobotEventKind::drop, std::move(b), {}});
}

void RobotSession::close(std::string reason) {
  actions_.push(RobotAction{RobotActionKind::close, {}, std::move(reason)});
}

void RobotSession::handle_start(TimeMs) {
  if (link_ != Link::idle) return;
  link_ = Link::connecting;
  Json extra = Json::object();
  extra["attempt"] = attempt_;
  link_event("connecting", std::move(extra));
  actions_.push(RobotAction{RobotActionKind::connect, {}, {}});
}

void RobotSession::handle_connected(Lane lane, TimeMs now) {
  if (link_ != Link::connecting) return;
  link_ = Link::open;
  lane_.reset(lane);
  welcomed_ = false;
  ws_read_ = ws_read_at_pong_ = 0;
  rtt_ms_.reset();
  rtt_in_ping_ = rtt_refused_ = false;
  last_error_.reset();
  carrier_ = wire::DataStreamDecoder{};
  carrier_ended_ = false;
  subs_n_ = 0;
  wanted_.clear();
  link_event("open");
  hello_frame_ = lane_.control_data_frame(hello_, now);
  actions_.push(RobotAction{RobotActionKind::send_stream, hello_frame_, {}});
  // A WebSocket is reliable: one hello is enough. On WebTransport the welcome is a datagram.
  if (lane == Lane::webtransport) hello_resend_ = now + kHelloResendMs;
  hello_deadline_ = now + kHelloTimeoutMs;
}

void RobotSession::handle_disconnected(std::string_view detail, TimeMs now) {
  if (link_ != Link::connecting && link_ != Link::open) return;
  const bool was_open = link_ == Link::open;
  welcomed_ = false;
  hello_resend_.reset();
  hello_deadline_.reset();
  ping_at_.reset();
  wanted_.clear();
  rtc_.reset();
  safety_.handle_session_lost(now);
  drain_safety();
  if (last_error_ && wire::error_info(*last_error_).final_for_client) {
    // Reconnecting with the same identity, token and manifest cannot succeed.
    link_ = Link::stopped;
    Json extra = Json::object();
    extra["code"] = std::string(wire::error_name(*last_error_));
    extra["detail"] = std::string(wire::error_info(*last_error_).fix);
    link_event("stopped", std::move(extra));
    return;
  }
  link_ = Link::idle;
  if (was_open) attempt_ = 0;
  ++attempt_;
  reconnect_at_ = now + kRobotReconnectMs;
  Json extra = Json::object();
  extra["attempt"] = attempt_;
  extra["delayMs"] = kRobotReconnectMs;
  extra["detail"] = host_text(detail);
  link_event("reconnecting", std::move(extra));
}

void RobotSession::handle_stop(TimeMs now) {
  if (link_ == Link::stopped) return;
  const bool connected = link_ == Link::open || link_ == Link::connecting;
  link_ = Link::stopped;
  welcomed_ = false;
  hello_resend_.reset();
  hello_deadline_.reset();
  ping_at_.reset();
  reconnect_at_.reset();
  rtc_.reset();
  safety_.handle_session_lost(now);
  drain_safety();
  if (connected) close("the robot is leaving");
  link_event("stopped");
}

Timeout RobotSession::poll_timeout() const {
  return earliest(
      earliest(earliest(hello_resend_, hello_deadline_), earliest(ping_at_, reconnect_at_)),
      earliest(safety_.poll_timeout(), rtc_.poll_timeout()));
}

void RobotSession::handle_timeout(TimeMs now) {
  if (reconnect_at_ && now >= *reconnect_at_) {
    reconnect_at_.reset();
    handle_start(now);
  }
  if (hello_deadline_ && now >= *hello_deadline_) {
    hello_deadline_.reset();
    hello_resend_.reset();
    close("no welcome from the relay within 10 s");
  }
  if (hello_resend_ && now >= *hello_resend_) {
    actions_.push(RobotAction{RobotActionKind::send_stream, hello_frame_, {}});
    hello_resend_ = now + kHelloResendMs;
  }
  if (ping_at_ && now >= *ping_at_) {
    Json p = Json::object();
    p["t"] = "ping";
    p["n"] = ping_n_++;
    p["ts"] = double(now) / 1000.0;
    if (lane_.lane() == Lane::websocket) p["read"] = ws_read_at_pong_;
    // The relay reports it among the fleet's link figures (docs/cockpit-protocol.md § Fleet link
    // quality). A relay from before the field refuses the ping (invalid_control): from then on
    // this connection's pings go without it (see the error case).
    rtt_in_ping_ = rtt_ms_ && !rtt_refused_;
    if (rtt_in_ping_) p["rttMs"] = *rtt_ms_;
    if (auto text = client_message(p, wire::Sender::robot))
      actions_.push(RobotAction{RobotActionKind::send_datagram, lane_.datagram(*text, now), {}});
    last_ping_ms_ = now;
    // A datagram may be lost, so WebTransport pings keep time; on a WebSocket a ping waits for the
    // previous pong, which makes it an acknowledgement the edge relay paces its writes by.
    if (lane_.lane() == Lane::websocket)
      ping_at_.reset();
    else
      ping_at_ = now + kRobotPingIntervalMs;
  }
  safety_.handle_timeout(now);
  drain_safety();
  if (rtc_.due(now)) rtc_open(now);
}

// --- what the relay says ------------------------------------------------------------------------

void RobotSession::handle_datagram(ByteView bytes, TimeMs now) {
  if (link_ != Link::open) return;
  auto m = wire::parse_message(bytes, wire::Sender::relay);
  if (!m) {
    drop(std::string(wire::drop_reason_name(m.error().reason)), m.error().detail);
    return;
  }
  on_message(m.value(), now);
}

void RobotSession::handle_carrier_data(ByteView chunk, TimeMs now) {
  if (link_ != Link::open || carrier_.failed() || carrier_ended_) return;
  auto e = carrier_.feed(chunk, [&](const wire::DataFrame& f) { on_frame(f, now); });
  // A corrupt carrier fails the session (workaround 3): reconnecting re-baselines it.
  if (e) {
    drop(std::string(wire::frame_error_name(*e)), std::string(wire::frame_error_text(*e)));
    close("carrier: " + std::string(wire::frame_error_name(*e)));
  }
}

void RobotSession::handle_carrier_end(TimeMs) {
  if (link_ != Link::open || carrier_.failed() || carrier_ended_) return;
  // An early end or a reset fails the session as corrupt framing does (workaround 3): the carrier
  // carries the subs snapshots, so a robot that kept its session would go deaf.
  drop("carrier_ended", "the relay's carrier stream ended or was reset");
  carrier_ended_ = true;
  close("carrier ended: reconnecting to re-register");
}

void RobotSession::handle_ws_message(ByteView frame, TimeMs now) {
  ws_read_ += frame.size;
  if (link_ != Link::open) return;
  auto f = wire::decode_data_frame(frame);
  if (!f) {
    // One WebSocket message is one frame: a corrupt one is dropped alone.
    drop(std::string(wire::frame_error_name(f.error())),
         std::string(wire::frame_error_text(f.error())));
    return;
  }
  on_frame(f.value(), now);
}

void RobotSession::on_frame(const wire::DataFrame& f, TimeMs now) {
  if (f.header.ch == wire::kControlChannel) {
    auto m = wire::parse_message(f.payload, wire::Sender::relay);
    if (!m) {
      drop(std::string(wire::drop_reason_name(m.error().reason)), m.error().detail);
      return;
    }
    on_message(m.value(), now);
    return;
  }
  if (!welcomed_) return;
  // A viewer's published value (the relay sends only declared publishable tx channels).
  RobotEvent e{RobotEventKind::publish, Json::object(), f.payload.to_bytes()};
  e.body["ch"] = f.header.ch;
  e.body["seq"] = f.header.seq;
  e.body["ts"] = f.header.ts;
  e.body["delivery"] = std::string(wire::delivery_name(f.header.delivery));
  if (f.header.meta) {
    e.body["meta"] = *f.header.meta;
    auto id = f.header.meta->find("id");
    if (id != f.header.meta->end() && id->is_string()) e.body["id"] = *id;
  }
  events_.push(std::move(e));
}

void RobotSession::on_message(const wire::Message& m, TimeMs now) {
  switch (m.type) {
    case MessageType::welcome:
      if (welcomed_) return;
      welcomed_ = true;
      hello_resend_.reset();
      hello_deadline_.reset();
      attempt_ = 0;
      ping_at_ = now + kRobotPingIntervalMs;
      link_event("welcomed");
      return;
    case MessageType::error: {
      const std::string code = m.body["code"].get<std::string>();
      last_error_ = wire::error_code_from_name(code);
      Json b = Json::object();
      b["code"] = code;
      b["message"] = m.body["message"];
      if (last_error_) b["fix"] = std::string(wire::error_info(*last_error_).fix);
      events_.push(RobotEvent{RobotEventKind::error, std::move(b), {}});
      if (welcomed_ && rtt_in_ping_ && !rtt_refused_ &&
          last_error_ == wire::ErrorCode::invalid_control) {
        // Most likely the ping's rttMs, refused by an older relay: ping without it, at once on a
        // WebSocket, where the next ping waits for a pong that is not coming.
        rtt_refused_ = true;
        if (lane_.lane() == Lane::websocket && !ping_at_) ping_at_ = now;
      }
      if (!welcomed_) {
        // The relay refused this hello: stop resending; it closes on a terminal code, and this
        // side closes on any other, so the next attempt starts clean.
        hello_resend_.reset();
        hello_deadline_.reset();
        if (last_error_ && !wire::is_terminal(*last_error_))
          close("the relay refused the hello: " + code);
      }
      on_rtc_message(m, now);
      return;
    }
    case MessageType::subs: {
      // A stale or reordered snapshot is ignored (v7 notes: n is monotonic per registration).
      const std::uint64_t n = m.body["n"].get<std::uint64_t>();
      if (n <= subs_n_) return;
      subs_n_ = n;
      wanted_.clear();
      for (const Json& c : m.body["chs"]) wanted_.insert(c.get<std::string>());
      Json b = Json::object();
      b["chs"] = m.body["chs"];
      b["n"] = n;
      events_.push(RobotEvent{RobotEventKind::subs, std::move(b), {}});
      return;
    }
    case MessageType::teleop_start:
    case MessageType::teleop_stop:
    case MessageType::twist:
    case MessageType::stop:
      safety_.handle_message(m, now);
      drain_safety();
      return;
    case MessageType::pong:
      ws_read_at_pong_ = ws_read_;
      // The newest ping's answer: its round trip (an older one's, overtaken, says nothing new).
      if (m.body["n"].get<std::uint64_t>() + 1 == ping_n_ && now >= last_ping_ms_)
        rtt_ms_ = now - last_ping_ms_;
      if (lane_.lane() == Lane::websocket && welcomed_ && !ping_at_ &&
          m.body["n"].get<std::uint64_t>() + 1 == ping_n_)
        ping_at_ = std::max(now, last_ping_ms_ + kRobotPingIntervalMs);
      return;
    case MessageType::rtc_ice:
    case MessageType::rtc_answer: on_rtc_message(m, now); return;
    default: return;
  }
}

void RobotSession::drain_safety() {
  while (auto e = safety_.poll_event()) {
    Json b = Json::object();
    b["vx"] = e->command.vx;
    b["vy"] = e->command.vy;
    b["wz"] = e->command.wz;
    b["cause"] = std::string(safety_cause_name(e->cause));
    b["active"] = e->active;
    b["floor"] = e->floor;
    events_.push(RobotEvent{RobotEventKind::command, std::move(b), {}});
  }
}

// --- the robot's sends --------------------------------------------------------------------------

SendResult RobotSession::send(const std::string& ch, ByteView payload,
                              const std::optional<Json>& meta, double ts, TimeMs) {
  auto it = rx_.find(ch);
  if (it == rx_.end()) return SendResult::undeclared;
  if (!welcomed_) return SendResult::not_welcomed;
  if (!wanted_.count(ch)) return SendResult::not_wanted;
  wire::FrameHeader h;
  h.ch = ch;
  h.seq = seq_[ch] + 1;
  h.ts = ts;
  h.delivery = it->second;
  h.meta = meta;
  Bytes frame;
  if (wire::append_data_frame(frame, h, payload)) return SendResult::invalid;
  seq_[ch] = h.seq;
  actions_.push(RobotAction{RobotActionKind::send_stream, std::move(frame), {}});
  return SendResult::sent;
}

bool RobotSession::send_control(const Json& message, TimeMs now) {
  if (link_ != Link::open) return false;
  auto text = client_message(message, wire::Sender::robot);
  if (!text) return false;
  actions_.push(
      RobotAction{RobotActionKind::send_stream, lane_.control_data_frame(*text, now), {}});
  return true;
}

bool RobotSession::ack(const std::string& ch, const std::string& id, TimeMs now) {
  Json m = Json::object();
  m["t"] = "pub_ack";
  m["ch"] = ch;
  m["id"] = id;
  return send_control(m, now);
}

bool RobotSession::nack(const std::string& ch, const std::string& id, const std::string& code,
                        const std::string& message, TimeMs now) {
  Json m = Json::object();
  m["t"] = "pub_nack";
  m["ch"] = ch;
  m["id"] = id;
  if (!code.empty()) m["code"] = code;
  if (!message.empty()) m["message"] = message;
  return send_control(m, now);
}

}  // namespace tether::cockpit
