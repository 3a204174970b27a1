// The cockpit relay core (cockpit-wire-protocol.md, all of it; cockpit-wire-v7-notes.md): robot and
// viewer sessions, subscriptions, the teleop lease, latest and reliable delivery, publishing, auth
// and the counters of /api/stats. Sans-IO and driven by the one contract (src/common/drive.hpp):
// the host feeds transport events in with now_ms, carries out what poll_action() hands it, and
// calls handle_timeout at poll_timeout(). Nothing here touches a socket or a clock.
//
// The relay object composes four components, as quinn-proto's Connection composes its parts
// (docs/cockpit-protocol.md § The relay's structure): session.hpp (the session table, hello,
// registration, watching, subs snapshots, the carrier), lease.hpp (teleop), delivery.hpp (latest
// and reliable streams) and publish.hpp (viewer -> robot values). This file owns what joins them:
// the transport ingress (incoming streams, the control stream, datagrams, WebSocket messages),
// dispatch by message type, releasing a session across every component, and time.
//
// Per leg (§ Transport per leg): a robot's data and @control frames arrive on one-shot
// bidirectional streams the relay never writes on (workarounds 1 and 3), the relay answers the
// robot with datagrams and writes on one relay-opened carrier; a viewer sends on one bidirectional
// control stream and its publishes on one-shot streams, and receives frames on relay-opened
// unidirectional streams. Over a WebSocket every action's bytes are one message, and stream
// actions only order them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "cockpit/auth.hpp"
#include "cockpit/delivery.hpp"
#include "cockpit/fleet.hpp"
#include "cockpit/lease.hpp"
#include "cockpit/outbox.hpp"
#include "cockpit/publish.hpp"
#include "cockpit/rtc.hpp"
#include "cockpit/session.hpp"
#include "cockpit/types.hpp"
#include "common/bytes.hpp"
#include "common/drive.hpp"
#include "common/json.hpp"
#include "wire/stream_decoder.hpp"

namespace tether::cockpit {

// One-shot streams a session may have open at once; past this the host resets a new one.
constexpr std::size_t kMaxIncomingStreamsPerSession = 256;
// A WebSocket offers no liveness of its own (a dead peer can keep TCP open for minutes), so a
// WebSocket session the relay hears nothing from for this long is closed, which releases its
// teleop lease; clients ping every second or two. WebTransport sessions have QUIC's idle timeout.
// The relay looks for silent sessions once, when the one heard least recently would reach the
// bound (not on a cadence): a relay with WebSockets open keeps no timer nearer than its real
// deadlines, so the edge's long ones (the TURN refresh and retries) still ride its alarm.
constexpr TimeMs kWebSocketLivenessMs = 10'000;
// The edge's slow-reader rule. Where the host cannot see what a WebSocket buffers (workerd has no
// bufferedAmount), the relay counts the bytes it hands each socket and notes where each pong
// ended. A client's ping carries `read`, the bytes it had read when it read its last pong: the
// relay counts them as acknowledged only when `read` is exactly where one of its newest pongs
// ended, which a client knows only by reading up to it. Once a client has sent `read`, a ping
// without it (or with a wrong one) acknowledges nothing, so a client that pings without reading
// gets no more room. A client that never sends `read` (the v7 wire has no such field) is trusted
// as before: each ping acknowledges up to the newest pong. A stream
// opens, and a write is done, only while fewer than this many bytes are unacknowledged;
// meanwhile latest frames are superseded in place and reliable ones queue up to their caps, then
// the viewer is disconnected, exactly as a full socket does where bufferedAmount exists. A reader
// that stops reading and pinging is closed by the liveness rule.
constexpr std::size_t kWebSocketAckWindowBytes = 4u * 1024 * 1024;

struct RelayConfig {
  std::optional<AuthTable> auth;  // absent: no auth file, tokens are ignored
  // An SFU is configured (--rtc-file): the relay brokers WebRTC video (rtc.hpp). Without one, a
  // robot that declares a track channel is refused with rtc_unavailable (§ WebRTC video).
  bool sfu = false;
  // The wall-clock time (ms since the Unix epoch) at now_ms == 0, as the host read it when it made
  // the relay; 0 for none. Seeds the teleop lease generations (lease.hpp).
  std::int64_t wall_clock_ms = 0;
  // The newest lease generation a previous relay of this deployment persisted (persist_lease_gen),
  // or 0.
  std::uint64_t lease_gen_floor = 0;
  // The host reports a WebSocket stream open and a write done only once the socket buffers at most
  // kWebSocketHighWaterBytes (Deno, browsers: bufferedAmount). False where no such signal exists
  // (workerd): the relay then paces WebSocket writes by the reads pings confirm
  // (kWebSocketAckWindowBytes).
  bool websocket_buffered_amount = true;
  RtcConfig rtc;  // with `sfu`: whether a TURN key is configured
};

class CockpitRelay {
 public:
  explicit CockpitRelay(RelayConfig config);
  CockpitRelay(const CockpitRelay&) = delete;
  CockpitRelay& operator=(const CockpitRelay&) = delete;

  // --- inputs -----------------------------------------------------------------------------------
  // A transport session arrived on /robot or /viewer (or the WebSocket twins). Returns 0 when the
  // relay is full (the host closes the transport).
  SessionId handle_session_open(Role role, Lane lane, TimeMs now);
  // The transport ended, for whatever reason. Releases everything the session held.
  void handle_session_closed(SessionId s, TimeMs now);
  // Bytes on the viewer's control stream (length-prefixed JSON), in any chunking.
  void handle_control_data(SessionId s, ByteView chunk, TimeMs now);
  // One datagram (raw JSON).
  void handle_datagram(SessionId s, ByteView bytes, TimeMs now);
  // A peer-opened one-shot stream carrying one data frame: robot channel data or an @control
  // frame, a viewer's publish. Returns 0 when the session may not open more (the host resets that
  // stream). Once the frame is in, or the stream's framing fails, a reset_stream action for it
  // tells the host to stop reading (STOP_SENDING).
  StreamId handle_incoming_open(SessionId s, TimeMs now);
  void handle_incoming_data(StreamId st, ByteView chunk, TimeMs now);
  // FIN or RESET of an incoming stream; a frame cut short is dropped (workaround 12).
  void handle_incoming_end(StreamId st, TimeMs now);
  // One WebSocket message: exactly one data frame, @control for control messages.
  void handle_ws_message(SessionId s, ByteView frame, TimeMs now);
  // Outgoing streams: the host's createUnidirectionalStream resolved, a write completed, or the
  // stream failed (STOP_SENDING, creation error). A carrier that fails fails its robot session
  // with carrier_failed (workaround 3).
  void handle_stream_opened(StreamId st, TimeMs now);
  void handle_write_done(StreamId st, TimeMs now);
  // `count` writes of `st` completed (writes of one stream complete in order): the same as that
  // many handle_write_done calls, in one input, so a host reports every completion of a turn in
  // one crossing (bench/README.md § cockpit fan-out). Completions beyond the writes outstanding
  // on `st` are ignored, as a handle_write_done for a write never handed out is.
  void handle_writes_done(StreamId st, std::size_t count, TimeMs now);
  void handle_stream_failed(StreamId st, TimeMs now);
  // The result of an sfu_call action, as the Realtime client returned it (JSON text of
  // {ok, status, body?, errorCode?, errorDescription?}), named by the action's call token.
  void handle_sfu_result(std::uint64_t call, ByteView result, TimeMs now);
  // --- a fleet split over objects (fleet.hpp, docs/cockpit-fleet.md) -----------------------------
  // Which part of the fleet this relay serves, before any session opens; `home_robot` is the
  // robot of a robot part. A whole relay (the default) hands nothing off.
  void set_fleet_part(FleetPart part, std::string home_robot);
  // The ticket another object wrote (a handoff action), on the session that moved here: the first
  // thing such a session receives. A bad ticket closes the session.
  void handle_handoff(SessionId s, ByteView ticket, TimeMs now);
  // Directory: a robot object's presence report over link `link` (the bytes of its presence
  // action), or `null` when the link closed.
  void handle_presence(std::uint64_t link, ByteView report, TimeMs now);
  // Robot part: the directory's robots list (the bytes of its fleet_robots action).
  void handle_fleet_robots(ByteView robots_message, TimeMs now);
  // Robot part: the link to the directory closed (the directory restarted and forgot the fleet).
  // The robot session is closed, so the robot reconnects through the directory with its own
  // backoff and is listed again; its viewers stay.
  void handle_directory_lost(TimeMs now);

  // Time passes: reaps stale latest streams, times out publishes and SFU calls, retries them,
  // refreshes TURN credentials.
  void handle_timeout(TimeMs now);

  // --- output -----------------------------------------------------------------------------------
  // The next action, in the order they must be carried out.
  std::optional<CockpitAction> poll_action();
  // When handle_timeout is next wanted: the earliest reap, publish or liveness deadline.
  Timeout poll_timeout() const;

  // --- introspection ----------------------------------------------------------------------------
  // GET /api/stats: {version, robots: [{id, name, model, viewers, leaseHolder, subs,
  // channels: {ch: counters}, rtc}], viewers, sessions, dropped: {reason: n}, teleopDropped}.
  Json stats() const;
  std::size_t session_count() const { return sessions_.size(); }
  // Absent when the robot is not connected.
  std::optional<ChannelCounters> counters(const std::string& robot_id, const std::string& ch) const;

 private:
  struct Incoming {
    SessionId session;
    wire::DataStreamDecoder robot;  // a robot's stream: any data frame
    ViewerStreamReader viewer;      // a viewer's stream: bounded before the payload is buffered
  };

  // dispatch
  void on_robot_message(Session& s, ByteView json, bool reply_invalid, TimeMs now);
  // `origin`: the one-shot stream it came on, 0 on a WebSocket.
  void on_robot_frame(Session& s, const wire::DataFrame& f, StreamId origin, TimeMs now);
  void on_viewer_message(Session& s, ByteView json, bool on_control, TimeMs now);
  void on_viewer_frame(Session& s, const wire::DataFrame& f, TimeMs now);
  void on_hello(Session& s, const wire::Message& hello, TimeMs now);
  void on_watch(Session& s, const std::string& robot_id, TimeMs now);
  // `fleet {link}`: the viewer asks for (or gives up) link figures in `robots` (link.hpp).
  void on_fleet(Session& s, bool link, TimeMs now);
  // At kLinkPushIntervalMs: `robots` with link figures to the viewers that asked, when changed.
  void push_links(TimeMs now);
  void on_sub(Session& s, const std::string& ch, TimeMs now);
  void on_unsub(Session& s, const std::string& ch, TimeMs now);
  // The watched, connected robot, or an error sent (no_watch, unknown_robot).
  Robot* watched(Session& s);
  // Leaves the watched robot: subscriptions, lease and watch (v7 notes § Viewer session).
  void unwatch(Session& s, TimeMs now);
  void update_snapshot(const std::string& robot_id, TimeMs now);
  // Tells the broker what a viewer now wants: its watched robot and the track channels of it
  // that it subscribes to.
  void update_rtc(Session& viewer, TimeMs now);
  // A rtc_* message on a relay without an SFU.
  void no_sfu(Session& s, bool reply, TimeMs now);

  // incoming streams
  void robot_stream_data(StreamId st, Incoming& in, Session& s, ByteView chunk, TimeMs now);
  void viewer_stream_data(StreamId st, Incoming& in, Session& s, ByteView chunk, TimeMs now);
  void stop_incoming(StreamId st);
  void incoming_failed(StreamId st, wire::FrameError e);
  // The robot session's stream `st` finished: reliable frames waiting on it may go.
  void incoming_done(Session& s, StreamId st);

  // WebSocket pacing without bufferedAmount (kWebSocketAckWindowBytes).
  enum class Completion { opened, written };
  bool paced(const Session& s) const;
  // A stream opened or a write completed; deferred while the socket's window is full.
  void complete(Completion c, StreamId st, TimeMs now);
  // Adds an action's bytes to what its WebSocket was handed (and records a pong's end there).
  void count_handed(const CockpitAction& a);
  // Counts the actions queued but not yet polled, so a window check sees every byte handed out
  // so far, including those of the completions just before it in the same input.
  void count_queued();
  void dispatch(Completion c, StreamId st, TimeMs now);
  void acknowledge(Session& s, const Json& read, TimeMs now);
  void pong(Session& s, Json ping);
  void sweep_liveness(TimeMs now);

  // The session moves to robot `t.robot_id`'s object (a handoff action); released at settle.
  void hand_off(Session& s, Ticket t);
  // Whether the fleet lists a robot, from wherever this part learns the list.
  bool fleet_has(const std::string& robot_id) const;
  void fleet_changed(TimeMs now);

  // Closes and releases the sessions that failed during this input.
  void settle(TimeMs now);
  void release(SessionId id, TimeMs now);
  void count_drop(std::string reason) { ++drops_[std::move(reason)]; }

  bool ws_buffered_amount_;
  Outbox out_;
  std::size_t counted_ = 0;  // the leading actions of out_ already counted (count_queued)
  Sessions sessions_;
  Lease lease_;
  Delivery delivery_;
  Publish publish_;
  Rtc rtc_;
  std::unordered_map<StreamId, Incoming> incoming_;
  std::map<std::string, std::uint64_t> drops_;  // invalid input by reason, for /api/stats
  std::size_t ws_sessions_ = 0;
  Timeout liveness_at_;
  Timeout link_at_;   // the next link push, while some viewer asks for link figures
  Json link_pushed_;  // the robots entries last pushed with links, as compared (push_links)
  FleetPart part_ = FleetPart::whole;
  std::string home_robot_;
  FleetTable fleet_;                 // directory: the fleet's robots
  std::set<std::string> fleet_ids_;  // robot part: the ids in the directory's list
  std::vector<SessionId> handed_;    // moved this input: released without a close
};

}  // namespace tether::cockpit
