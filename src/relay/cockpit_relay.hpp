// The cockpit relay core (cockpit-wire-protocol.md, all of it; cockpit-wire-v7-notes.md): robot and
// viewer sessions, subscriptions, the teleop lease, latest and reliable delivery, publishing, auth
// and the counters of /api/stats. Sans-IO (DESIGN.md rule 1): the host feeds session events in,
// with now_ms, and carries out the actions that come back. Nothing here touches a socket or clock.
//
// The host (web/host/ on Deno, the edge Worker) owns transports only. Per leg (§ Transport per
// leg): a robot's data and @control frames arrive on one-shot bidirectional streams the relay never
// writes on (workarounds 1 and 3), the relay answers the robot with datagrams and writes on one
// relay-opened carrier; a viewer sends on one bidirectional control stream and its publishes on
// one-shot bidirectional streams, and receives frames on relay-opened unidirectional streams. Over
// a WebSocket every action's bytes are one message, and stream actions only order them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/bytes.hpp"
#include "common/json.hpp"
#include "common/result.hpp"
#include "relay/cockpit_auth.hpp"
#include "wire/errors.hpp"
#include "wire/frame.hpp"
#include "wire/limits.hpp"
#include "wire/messages.hpp"
#include "wire/stream_decoder.hpp"

namespace tether::relay {

// --- bounds (spec values first, then the ones this project sets where the spec is silent) ------
// § Delivery modes and workaround 12: LATEST_STALE_MS, and the periodic reap.
constexpr std::int64_t kLatestStaleMs = 500;
constexpr std::int64_t kReapIntervalMs = 500;
// § Delivery modes: the reliable queue per viewer and channel.
constexpr std::size_t kReliableMaxFrames = 64;
constexpr std::size_t kReliableMaxBytes = 16u * 1024 * 1024;
// Reliable frames handed to the transport before the first completes; writes complete in order.
constexpr std::size_t kReliableWritesInFlight = 8;
// Publishing (v7 notes § Publishing); the spec names the errors, this project sets the numbers.
constexpr std::size_t kMaxPendingPublishes = 8;     // unanswered publishes per viewer
constexpr std::int64_t kPublishTimeoutMs = 5000;    // robot's answer deadline
constexpr double kPublishRatePerSecond = 20;        // token bucket refill per viewer
constexpr double kPublishBurst = 20;                // token bucket size
// The carrier is a control dependency (workaround 3): a host whose carrier write backlog passes
// this reports carrier_failed.
constexpr std::size_t kMaxCarrierBacklogBytes = 32u * 1024 * 1024;
// Error text in a reply datagram to a robot, so the datagram stays under Chromium's 1211 bytes.
constexpr std::size_t kMaxDatagramErrorTextBytes = 900;
// Sessions and streams one relay holds; past these a newcomer is refused before allocation.
constexpr std::size_t kMaxSessions = 4096;
constexpr std::size_t kMaxIncomingStreamsPerSession = 256;
constexpr std::size_t kMaxSubsPerViewer = wire::kMaxManifestChannels;
// The encoding of a WebRTC track channel (§ WebRTC video).
constexpr char kTrackEncoding[] = "video.webrtc.v1";

using SessionId = std::uint64_t;
using StreamId = std::uint64_t;  // relay-assigned; incoming and outgoing share one space

enum class Role { robot, viewer };
// The transport of a session. Only the bytes of replies differ: a WebTransport viewer gets
// length-prefixed control frames and a robot raw datagrams; over a WebSocket both are @control
// data frames (v7 notes § Endpoints).
enum class Lane { webtransport, websocket };

// Why the relay ends a viewer stream (§ Delivery modes, workaround 12).
enum class StreamEnd {
  expired,   // routine end of life of a latest stream (counted as expired)
  aborted,   // a backpressure reset of a write-wedged latest stream (counted as aborted)
  closing,   // the subscription or the session ended
};

enum class ActionKind {
  send_datagram,  // robot reply (raw JSON on WebTransport)
  write_control,  // viewer control-stream message (framed for the lane)
  open_carrier,   // the one relay-opened unidirectional stream of a robot session
  write_carrier,  // one data frame on the carrier
  open_stream,    // a relay-to-viewer unidirectional stream; the host reports stream_opened
  write_stream,   // one frame; the host reports write_done when the write completes (writes on
                  // one stream complete in order)
  reset_stream,
  finish_stream,
  close_session,  // after flushing what was queued before it
};
std::string_view action_kind_name(ActionKind k);

struct CockpitAction {
  ActionKind kind;
  SessionId session = 0;
  StreamId stream = 0;
  std::shared_ptr<const Bytes> bytes;  // shared between the viewers of one frame
  // open_stream: the channel, its mode and a sendOrder that decreases with every stream opened
  // (workaround 7).
  std::string ch;
  wire::Delivery delivery = wire::Delivery::latest;
  std::int64_t send_order = 0;
  StreamEnd end = StreamEnd::closing;  // reset_stream
  // close_session: the error sent just before (absent for a plain close) and a reason for logs
  // and the WebTransport close.
  std::optional<wire::ErrorCode> code;
  std::string reason;
};

// Per robot and channel (§ Workaround 12 for expired and aborted).
struct ChannelCounters {
  std::uint64_t sent = 0;     // frames whose bytes were handed to a viewer stream write
  std::uint64_t dropped = 0;  // frames a viewer never got: superseded, stale by seq, overflow
  std::uint64_t expired = 0;  // latest streams reset at routine end of life
  std::uint64_t aborted = 0;  // latest streams reset under backpressure
};

// Hooks for a WebRTC SFU broker (Cloudflare Realtime comes later). Without one, a robot that
// declares a track channel is refused with rtc_unavailable (§ WebRTC video).
class Sfu {
 public:
  virtual ~Sfu() = default;
  virtual bool available() const = 0;
};

struct RelayConfig {
  std::optional<AuthTable> auth;  // absent: no auth file, tokens are ignored
  const Sfu* sfu = nullptr;       // not owned
};

class CockpitRelay {
 public:
  explicit CockpitRelay(RelayConfig config);
  ~CockpitRelay();
  CockpitRelay(const CockpitRelay&) = delete;
  CockpitRelay& operator=(const CockpitRelay&) = delete;

  // --- session events ---------------------------------------------------------------------------
  // A transport session arrived on /robot or /viewer (or the WebSocket twins). Returns 0 when the
  // relay is full (the host closes the transport).
  SessionId open_session(Role role, Lane lane, std::int64_t now_ms);
  // The transport ended, for whatever reason. Releases everything the session held.
  void session_closed(SessionId s, std::int64_t now_ms);
  // Bytes on the viewer's control stream (length-prefixed JSON), in any chunking.
  void control_data(SessionId s, ByteView chunk, std::int64_t now_ms);
  // One datagram (raw JSON).
  void datagram(SessionId s, ByteView bytes, std::int64_t now_ms);
  // A peer-opened one-shot stream carrying one data frame: robot channel data or an @control
  // frame, a viewer's publish. Returns 0 when the session may not open more (the host resets that
  // stream). Once the frame is in, or the stream's framing fails, a reset_stream action for it
  // tells the host to stop reading (STOP_SENDING).
  StreamId incoming_open(SessionId s, std::int64_t now_ms);
  void incoming_data(StreamId st, ByteView chunk, std::int64_t now_ms);
  // FIN or RESET of an incoming stream; a frame cut short is dropped (workaround 12).
  void incoming_end(StreamId st, std::int64_t now_ms);
  // One WebSocket message: exactly one data frame, @control for control messages.
  void ws_message(SessionId s, ByteView frame, std::int64_t now_ms);
  // Outgoing viewer streams: the host's createUnidirectionalStream resolved, a write completed,
  // or the stream failed (STOP_SENDING, creation error).
  void stream_opened(StreamId st, std::int64_t now_ms);
  void write_done(StreamId st, std::int64_t now_ms);
  void stream_failed(StreamId st, std::int64_t now_ms);
  // A carrier write failed, the carrier's backlog passed kMaxCarrierBacklogBytes, or its creation
  // failed: the robot session fails (workaround 3).
  void carrier_failed(SessionId s, std::int64_t now_ms);
  // Time passes: reaps stale latest streams, times out publishes. Call every kReapIntervalMs.
  void tick(std::int64_t now_ms);

  // --- output -----------------------------------------------------------------------------------
  // Actions in the order they must be carried out. Taking them empties the queue.
  std::vector<CockpitAction> take_actions();
  bool has_actions() const;

  // --- introspection ----------------------------------------------------------------------------
  // GET /api/stats: {robots: [{id, name, model, viewers, channels: {ch: counters}}], viewers,
  // sessions, dropped: {invalid messages by reason}}.
  Json stats() const;
  std::size_t session_count() const;
  std::optional<ChannelCounters> counters(const std::string& robot_id, const std::string& ch) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tether::relay
