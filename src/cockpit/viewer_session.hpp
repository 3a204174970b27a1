// The cockpit viewer's session with a relay (cockpit-wire-v7-notes.md § Message set, § Teleop,
// § Publishing; cockpit-wire-protocol.md § Sessions and messages): hello and welcome, the robots
// list, watching a robot and its manifest, keeping exactly the wanted channels subscribed, the
// teleop lease and the viewer's half of the safety chain (twists resent well inside the robot's
// watchdog while a command stands, nothing once the lease is gone), publishing, round-trip time
// from pings, and when to reconnect. Sans-IO and driven by the one contract (src/common/drive.hpp).
//
// Channel frames' bytes do not pass through here (a camera frame costs no extra copy): the host
// decodes them with the wire core and asks handle_frame whether the application gets each one, so
// a latest channel's frames that finish out of order still leave only the newest by seq
// (v7 notes § Delivery reminders). handle_ws_message says which WebSocket messages are frames.
#pragma once
#include <array>
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
#include "wire/errors.hpp"
#include "wire/stream_decoder.hpp"

namespace tether::cockpit {

constexpr TimeMs kViewerPingIntervalMs = 2000;
// On a WebSocket a ping waits for the previous pong, so each ping acknowledges everything the relay
// sent before that pong: a relay that cannot see what its socket buffers (the edge) paces its
// writes by it (relay.hpp, kWebSocketAckWindowBytes). Pings come this often there, which sets the
// pace's granularity.
constexpr TimeMs kViewerWsPingIntervalMs = 250;
constexpr std::size_t kMaxPingsInFlight = 8;  // older unanswered pings are forgotten
// While a twist command stands it is resent this often, well inside the robot's watchdog
// (kDefaultWatchdogMs), so a lost page stops the robot by silence rather than by a message that
// might never arrive.
constexpr TimeMs kTwistResendMs = 50;
// Reconnect delays by attempt; the last one repeats.
constexpr std::array<TimeMs, 6> kViewerBackoffMs = {250, 500, 1000, 2000, 4000, 8000};
// A WebRTC track whose media stops this long after it flowed is shown stalled (our choice).
constexpr TimeMs kRtcStallMs = 2000;

enum class ViewerActionKind {
  connect,        // open a transport to the relay's /viewer (or /ws/viewer); report the outcome
  send_control,   // WebTransport: on the control stream; WebSocket: one message
  send_datagram,  // WebTransport: one datagram (teleop); WebSocket: one message
  send_stream,    // WebTransport: on a fresh one-shot bidirectional stream (a publish);
                  // WebSocket: one message
  close,          // close the transport; it reports handle_disconnected as any loss does
  // WebRTC video (§ WebRTC video), when a wanted channel is a video.webrtc.v1 track; `json`
  // holds the arguments:
  rtc_open,    // {iceServers}: make a fresh recvonly peer connection (closing any old one) and
               // hand its offer to handle_rtc_offer
  rtc_accept,  // {sdp}: apply the relay's answer to that offer
  rtc_answer,  // {sdp, tracks: [{mid, ch}], robotId, current}: apply the relay's offer and hand
               // the answer to handle_rtc_answer; `tracks` (of the watched robot, else none)
               // says which mid carries which channel
};
constexpr std::size_t kViewerActionKindCount = 8;
std::string_view viewer_action_kind_name(ViewerActionKind k);

struct ViewerAction {
  ViewerActionKind kind;
  Bytes bytes;
  std::string reason;     // close
  std::string json = {};  // rtc_open, rtc_accept, rtc_answer: the arguments
};

enum class ViewerEventKind {
  state,     // {link: {state, attempt?, delayMs?, detail?}, welcomed, robotId, teleop, rttMs,
             //  lastError, drops, rtc?}: after any change, at most once per input. rtc (once the
             //  relay sent rtc_ice): {pc, tracks: {ch: {state, mid?}}} for the wanted track
             //  channels, state waiting|connecting|live|stalled|failed
  robots,    // {robots: [{id, name, model, link?}]}: `link` (the relay's figures for the robot:
             // {state, silentMs, fps, bytesPerS, rttMs?}) once fleet_link(true) was asked
  manifest,  // {robotId, manifest}: manifest null while the robot is away, or when its version is
             // one this cockpit does not read (then error: "manifestUnsupported")
  message,   // every valid relay message, as the relay sent it (pub_ack, pub_nack, error, ...)
  drop,      // relay bytes that were refused: {reason, detail}
};
constexpr std::size_t kViewerEventKindCount = 5;
std::string_view viewer_event_kind_name(ViewerEventKind k);

struct ViewerEvent {
  ViewerEventKind kind;
  std::string json;
};

enum class TeleopLease { idle, requesting, held, refused };
std::string_view teleop_lease_name(TeleopLease t);

enum class PublishResult { sent, not_connected, no_watch, invalid };
std::string_view publish_result_name(PublishResult r);

class ViewerSession {
 public:
  explicit ViewerSession(std::optional<std::string> token);

  // --- the link ---
  void handle_start(TimeMs now);
  void handle_connected(Lane lane, TimeMs now);
  void handle_disconnected(std::string_view detail, TimeMs now);
  // WebTransport: bytes on the control stream.
  void handle_control_data(ByteView chunk, TimeMs now);
  // WebSocket: one message. True when it was the session's (an @control frame, or bytes that are
  // no frame); false when it is a channel frame for the application.
  bool handle_ws_message(ByteView frame, TimeMs now);
  // A channel frame the host decoded (from a stream, or a WebSocket message handle_ws_message
  // declined): true when the application should get it. Only subscribed rx channels of the watched
  // robot pass; on a latest channel a frame whose seq is not above the newest already passed is
  // stale (counted in the state's `stale`). Reliable channels arrive in order (the relay orders
  // them).
  bool handle_frame(std::string_view ch, std::int64_t seq, TimeMs now);
  void handle_timeout(TimeMs now);
  // The operator leaves: close, and never reconnect.
  void handle_stop(TimeMs now);
  // Whether the session gave up for good: the relay's last error is one reconnecting with the same
  // token cannot fix (auth_failed, version_mismatch, ...). The state's link then says `closed`
  // with that code and what to do.
  bool stopped() const { return link_ == Link::stopped; }

  // --- the operator ---
  // False (nothing changes) for an id no relay could list.
  bool watch(const std::string& robot_id, TimeMs now);
  // Whether the application shows the fleet: the relay then adds its link figures to every
  // `robots` entry and pushes them as they change (docs/cockpit-protocol.md § Fleet link
  // quality). Asked again after every reconnect.
  void fleet_link(bool on, TimeMs now);
  // The channels the visible panels need; the session sends the sub/unsub difference.
  void want(const std::vector<std::string>& channels, TimeMs now);
  void teleop_start(TimeMs now);
  void teleop_stop(TimeMs now);
  // The command to drive with while the lease is held: sent now when it changed, then resent
  // every kTwistResendMs while it is not zero. False (nothing sent) without the lease.
  bool drive(double vx, double vy, double wz, TimeMs now);
  // An emergency stop: `stop` goes out whatever the lease, and the command is zero.
  void estop(TimeMs now);
  // A value on a tx channel of the watched robot, answered by pub_ack or pub_nack.
  PublishResult publish(const std::string& ch, ByteView payload, const std::string& id, TimeMs now);

  // --- WebRTC video (viewer_rtc.cpp) ---
  // The host's offer for an rtc_open; false (nothing sent) unless one was asked for.
  bool handle_rtc_offer(const std::string& sdp, TimeMs now);
  // The host's answer to the relay offer of the last rtc_answer action; false unless one is owed.
  bool handle_rtc_answer(const std::string& sdp, TimeMs now);
  // The peer connection's state as the host sees it; "failed" opens a fresh one.
  void handle_rtc_state(const std::string& state, TimeMs now);
  // Frames of a track channel decoded since the host's last report (it reports regularly while
  // it shows the track): the core decides live and stalled.
  void handle_rtc_media(const std::string& ch, std::uint64_t frames, TimeMs now);

  // --- output ---
  std::optional<ViewerAction> poll_action() { return actions_.poll(); }
  std::optional<ViewerEvent> poll_event();
  Timeout poll_timeout() const;

  // --- state ---
  bool welcomed() const { return welcomed_; }
  // The lane of the current (or last) connection.
  Lane lane() const { return lane_.lane(); }
  TeleopLease teleop() const { return teleop_; }
  const std::string& robot_id() const { return robot_id_; }
  const std::set<std::string>& subscribed() const { return subscribed_; }

 private:
  enum class Link { idle, connecting, open, reconnecting, stopped };
  void on_message(const wire::Message& m, const std::string& text, TimeMs now);
  void sync_subs(TimeMs now);
  void control(const Json& message, TimeMs now);
  void datagram(const Json& message, TimeMs now);
  void twist(TimeMs now);
  void ping(TimeMs now);
  void send_fleet_link(TimeMs now);
  void lease_lost();
  void drop(std::string reason, std::string detail);
  void push(ViewerEventKind kind, const Json& body);
  void changed() { dirty_ = true; }
  // WebRTC (viewer_rtc.cpp).
  void on_rtc_message(const wire::Message& m, TimeMs now);
  void rtc_want(TimeMs now);
  void rtc_reset();
  void rtc_timeout(TimeMs now);
  Timeout rtc_timeout_at() const;
  Json rtc_state() const;

  std::optional<std::string> token_;
  ClientLane lane_;
  Link link_ = Link::idle;
  std::uint64_t attempt_ = 0;
  TimeMs delay_ms_ = 0;
  std::string detail_;
  bool welcomed_ = false;
  wire::ControlStreamDecoder control_;

  std::string robot_id_;
  bool fleet_link_ = false;  // the application shows the fleet (fleet_link)
  bool watched_ = false;     // the relay answered this connection's watch with a manifest message
  Json manifest_;            // null while none
  std::map<std::string, wire::Delivery> tx_;    // the watched robot's tx channels
  std::map<std::string, wire::Delivery> rx_;    // and rx channels
  std::map<std::string, std::int64_t> newest_;  // latest rx: the newest seq passed to the app
  std::uint64_t stale_ = 0;
  std::vector<std::string> wanted_;
  std::set<std::string> subscribed_;

  TeleopLease teleop_ = TeleopLease::idle;
  TwistCommand command_;
  std::uint64_t teleop_seq_ = 0;
  Timeout twist_at_;

  std::map<std::string, std::int64_t> publish_seq_;
  std::uint64_t ping_n_ = 0;
  std::map<std::uint64_t, TimeMs> pings_;  // n -> sent at
  // On a WebSocket: the bytes of every message read on this connection, and that count when the
  // last pong was read, which the next ping carries as `read` (relay.hpp, the slow-reader rule).
  std::uint64_t ws_read_ = 0;
  std::uint64_t ws_read_at_pong_ = 0;
  TimeMs last_ping_ms_ = 0;
  std::optional<TimeMs> rtt_ms_;
  Timeout ping_at_;
  Timeout reconnect_at_;
  Json last_error_;                       // null or {code, message, fix, at}
  std::optional<wire::ErrorCode> final_;  // this connection's last error, when no retry can fix it
  std::uint64_t drops_ = 0;

  // WebRTC video: the manifest's track channels, the peer connection, and per track channel of
  // the watched robot its mid and what its media does.
  struct RtcTrack {
    std::string mid;
    bool failed = false;
    std::optional<TimeMs> media_at;  // the last report with frames
    bool stalled = false;
  };
  std::set<std::string> tracks_;
  ClientRtc rtc_;
  std::map<std::string, RtcTrack> rtc_tracks_;
  std::optional<std::string> answer_owed_;  // the robotId of the relay offer being answered

  bool dirty_ = false;
  PollQueue<ViewerAction> actions_;
  PollQueue<ViewerEvent> events_;
};

}  // namespace tether::cockpit
