// The robot's session with a cockpit relay (cockpit-wire-protocol.md § Sessions and messages,
// § Transport per leg, workaround 3; v7 notes § Message set, § Teleop, § Publishing): the hello,
// resent on a fresh one-shot stream until the welcome datagram lands; the carrier, with its subs
// {chs, n} snapshots (a stale n is ignored) and the viewers' published values; which channels are
// wanted; the teleop safety chain; pings; and whether and when to reconnect. Sans-IO and driven by
// the one contract (src/common/drive.hpp): the host opens the transport the `connect` action asks
// for and reports what happens to it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cockpit/client_lane.hpp"
#include "cockpit/client_rtc.hpp"
#include "cockpit/teleop_safety.hpp"
#include "cockpit/types.hpp"
#include "common/bytes.hpp"
#include "common/drive.hpp"
#include "common/json.hpp"
#include "common/result.hpp"
#include "wire/errors.hpp"
#include "wire/frame.hpp"
#include "wire/stream_decoder.hpp"

namespace tether::cockpit {

// Workaround 3: the welcome is a lossy datagram, so the hello is resent this often until it lands.
constexpr TimeMs kHelloResendMs = 250;
// No welcome by then: the session is closed and retried.
constexpr TimeMs kHelloTimeoutMs = 10'000;
constexpr TimeMs kRobotPingIntervalMs = 1000;  // on a WebSocket, and at most once per pong there
                                               // (see kViewerWsPingIntervalMs)
// After a session ends the robot reconnects this much later, unless the relay's last error says
// reconnecting cannot succeed (wire::ErrorCodeInfo::final_for_client).
constexpr TimeMs kRobotReconnectMs = 1000;
// The SFU collects a track after this long without media (§ WebRTC video: 30 s, Cloudflare's
// window); a robot whose track resumes after about that long sends rtc_stalled. A local SFU
// with a shorter window is matched by RobotConfig::track_timeout_ms.
constexpr TimeMs kSfuTrackTimeoutMs = 30'000;
constexpr TimeMs kMinTrackTimeoutMs = 100;
constexpr TimeMs kMaxTrackTimeoutMs = 3'600'000;
// rtc_stalled goes out once a gap reaches the window less this margin (a tenth of it, at most
// 3 s): the SFU's clock and the robot's disagree by a packet's timing, and a needless re-pull
// costs a moment of video where a missed one costs the track (our choice).
TimeMs stall_threshold_ms(TimeMs track_timeout_ms);

struct RobotConfig {
  std::string id;
  std::string name;
  std::string model;
  Json manifest;                     // manifest v1, normalised when the session is made
  std::optional<std::string> token;  // when the relay has an auth file
  TimeMs watchdog_ms = kDefaultWatchdogMs;
  TimeMs track_timeout_ms = kSfuTrackTimeoutMs;  // the SFU's collection window
};

// A config as JSON: {id, name?, model?, manifest, token?, watchdogMs?, trackTimeoutMs?}, as
// JavaScript hands it over. Unknown keys and wrong types are refused, naming the key.
Result<RobotConfig, std::string> robot_config_from_json(const Json& config);

// Why a robot session could not be made. The SDK reports the kind by name: a manifest of a version
// this SDK does not read is `manifestUnsupported`, as the protocol names it (§ Manifest).
enum class RobotSetupError {
  invalid_config,
  invalid_manifest,
  manifest_unsupported,
  invalid_hello
};
constexpr std::size_t kRobotSetupErrorCount = 4;
// invalidConfig, invalidManifest, manifestUnsupported, invalidHello
std::string_view robot_setup_error_name(RobotSetupError e);

struct RobotSetupProblem {
  RobotSetupError kind;
  std::string message;  // names the field and what to do
};

enum class RobotActionKind {
  connect,        // open a transport to the relay's /robot (or /ws/robot); report the outcome
  send_stream,    // WebTransport: these bytes on a fresh one-shot bidirectional stream
                  // (workaround 1); WebSocket: one message
  send_datagram,  // WebTransport: one datagram; WebSocket: one message
  close,          // close the transport; it reports handle_disconnected as any loss does
  // WebRTC video (§ WebRTC video), for a manifest with video.webrtc.v1 channels; `json` holds
  // the arguments:
  rtc_open,    // {iceServers, chs}: make a fresh peer connection (closing any old one) with a
               // sendonly transceiver per channel, and hand its offer to handle_rtc_offer
  rtc_accept,  // {sdp}: apply the relay's answer to that offer
};
constexpr std::size_t kRobotActionKindCount = 6;
std::string_view robot_action_kind_name(RobotActionKind k);

struct RobotAction {
  RobotActionKind kind;
  Bytes bytes;
  std::string reason;     // close
  std::string json = {};  // rtc_open, rtc_accept: the arguments
};

enum class RobotEventKind {
  link,     // {state: connecting|open|welcomed|reconnecting|stopped, attempt?, delayMs?, detail?}
  error,    // an error from the relay: {code, message, fix}
  subs,     // the wanted channels changed: {chs, n}
  publish,  // a viewer's value on a tx channel: {ch, id, seq, ts, meta}, payload in `payload`
  command,  // the teleop command changed: {vx, vy, wz, cause, active, floor}
  drop,     // relay bytes that were refused: {reason, detail}
  rtc,      // the peer connection's standing changed: {pc: none|opening|offered|ready}
};
constexpr std::size_t kRobotEventKindCount = 7;
std::string_view robot_event_kind_name(RobotEventKind k);

struct RobotEvent {
  RobotEventKind kind;
  Json body;
  Bytes payload;  // publish
};

// Why send() did not send.
enum class SendResult { sent, not_welcomed, not_wanted, undeclared, invalid };
constexpr std::size_t kSendResultCount = 5;
std::string_view send_result_name(SendResult r);

class RobotSession {
 public:
  // Validates the identity and the manifest as the relay will; the error names the field.
  static Result<RobotSession, RobotSetupProblem> create(RobotConfig config);

  // --- inputs ---
  // Begin: ask for a transport.
  void handle_start(TimeMs now);
  // The transport the last `connect` asked for is up.
  void handle_connected(Lane lane, TimeMs now);
  // The transport failed to open, or ended, for whatever reason.
  void handle_disconnected(std::string_view detail, TimeMs now);
  // WebTransport: a datagram from the relay; bytes on the carrier (the one relay-opened stream).
  void handle_datagram(ByteView bytes, TimeMs now);
  void handle_carrier_data(ByteView chunk, TimeMs now);
  // The carrier ended (FIN) or was reset while the session was open. The carrier is a control
  // dependency (workaround 3): the session closes, so the robot reconnects and re-registers.
  void handle_carrier_end(TimeMs now);
  // WebSocket: one message, which is one data frame.
  void handle_ws_message(ByteView frame, TimeMs now);
  void handle_timeout(TimeMs now);
  // The robot is done: close and never reconnect.
  void handle_stop(TimeMs now);

  // --- the robot's own sends ---
  // One frame on an rx channel some viewer wants; seq is numbered per channel for the life of
  // this session object, ts (seconds) is the data's own time.
  SendResult send(const std::string& ch, ByteView payload, const std::optional<Json>& meta,
                  double ts, TimeMs now);
  // The answer to a published value (v7 notes § Publishing).
  bool ack(const std::string& ch, const std::string& id, TimeMs now);
  bool nack(const std::string& ch, const std::string& id, const std::string& code,
            const std::string& message, TimeMs now);

  // --- WebRTC video (robot_rtc.cpp) ---
  // The host's offer for an rtc_open: its SDP and which mid carries which channel, [{mid, ch}].
  // False (nothing sent) unless an rtc_open asked for it and the relay would take it: at most
  // MAX_SDP_LEN, 1..MAX_RTC_TRACKS tracks of declared video.webrtc.v1 channels, none twice.
  bool handle_rtc_offer(const std::string& sdp, const Json& tracks, TimeMs now);
  // A track's media resumed after `gap_ms` without any: rtc_stalled goes out when the gap is
  // about the SFU's collection window (stall_threshold_ms). True when it went out.
  bool handle_media_resumed(const std::string& ch, TimeMs gap_ms, TimeMs now);
  // The peer connection's state as the host sees it; "failed" opens a fresh one.
  void handle_rtc_state(const std::string& state, TimeMs now);
  const ClientRtc& rtc() const { return rtc_; }

  // --- output ---
  std::optional<RobotAction> poll_action() { return actions_.poll(); }
  std::optional<RobotEvent> poll_event() { return events_.poll(); }
  Timeout poll_timeout() const;

  // --- state ---
  bool welcomed() const { return welcomed_; }
  // The lane of the current (or last) connection.
  Lane lane() const { return lane_.lane(); }
  bool wants(const std::string& ch) const { return wanted_.count(ch) > 0; }
  const std::set<std::string>& wanted() const { return wanted_; }
  std::uint64_t subs_n() const { return subs_n_; }
  const TeleopSafety& safety() const { return safety_; }
  const Json& manifest() const { return manifest_; }

 private:
  explicit RobotSession(RobotConfig config, Json manifest, std::string hello);
  void on_message(const wire::Message& m, TimeMs now);
  void on_frame(const wire::DataFrame& f, TimeMs now);
  void drain_safety();
  void link_event(const char* state, Json extra = Json::object());
  void drop(std::string reason, std::string detail);
  bool send_control(const Json& message, TimeMs now);
  void close(std::string reason);
  // WebRTC (robot_rtc.cpp): a relay rtc_* message, or an rtc error; opening when due.
  void on_rtc_message(const wire::Message& m, TimeMs now);
  void rtc_open(TimeMs now);
  void rtc_event();

  RobotConfig config_;
  Json manifest_;                             // normal form
  std::string hello_;                         // the validated hello text
  std::map<std::string, wire::Delivery> rx_;  // the manifest's rx channels
  TeleopSafety safety_;
  ClientLane lane_;

  enum class Link { idle, connecting, open, stopped } link_ = Link::idle;
  std::uint64_t attempt_ = 0;
  bool welcomed_ = false;
  Bytes hello_frame_;  // this connection's hello, resent as is
  Timeout hello_resend_;
  Timeout hello_deadline_;
  Timeout ping_at_;
  Timeout reconnect_at_;
  std::uint64_t ping_n_ = 0;
  TimeMs last_ping_ms_ = 0;
  // The round trip of the newest answered ping, reported in the next ping (`rttMs`); whether the
  // last ping carried it, and whether the relay refused it (an older relay) on this connection.
  std::optional<TimeMs> rtt_ms_;
  bool rtt_in_ping_ = false;
  bool rtt_refused_ = false;
  // On a WebSocket: the bytes read on this connection, and that count at the last pong, which
  // the next ping carries as `read` (relay.hpp, the slow-reader rule).
  std::uint64_t ws_read_ = 0;
  std::uint64_t ws_read_at_pong_ = 0;
  std::optional<wire::ErrorCode> last_error_;
  wire::DataStreamDecoder carrier_;
  bool carrier_ended_ = false;
  std::uint64_t subs_n_ = 0;
  std::set<std::string> wanted_;
  std::map<std::string, std::int64_t> seq_;  // per channel, across reconnects
  std::set<std::string> tracks_;             // the manifest's video.webrtc.v1 rx channels
  ClientRtc rtc_;

  PollQueue<RobotAction> actions_;
  PollQueue<RobotEvent> events_;
};

}  // namespace tether::cockpit
