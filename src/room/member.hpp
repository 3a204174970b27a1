// The room member: a peer's membership in one room of the room relay (the room-relay spec, "The
// relay": hello, the welcome's members, member notices; "WebRTC signaling": signals routed by
// origin). What the explicit relay transport (web/peer/relay-transport.js) and the WebRTC
// transport (web/peer/webrtc-transport.js) both run under their socket: it builds the hello,
// reads welcome / member / signal / reject / eject, keeps the roster, routes signals, and decides
// when to dial again (capped exponential backoff with jitter from a seeded generator; a refused
// hello stops it).
//
// In lanes mode (the explicit relay transport, agent-bus-and-swarm spec § Protocol: "an explicit
// transport carries the same room envelopes through a relay") the core also owns the lanes: each
// envelope rides a signal tagged {k:'tether-env', text}, a peer's lane is open while both of us
// are members and the link is up, and a member that joins again under a known origin (a
// restarted peer) has its lane closed and reopened. Other signals are counted and ignored there.
//
// Sans-IO, driven like every core (common/drive.hpp): the host owns the socket and a timer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/drive.hpp"
#include "common/rng.hpp"
#include "room/json_scan.hpp"
#include "room/read_ack.hpp"

namespace tether::room {

// A peer id is a room origin; bounded like a bus envelope's streamId (agent-bus-notes: 128).
constexpr std::size_t kMaxPeerIdBytes = 128;
// The tag that keeps the explicit transport's envelopes apart from WebRTC signaling.
constexpr std::string_view kEnvelopeSignalKind = "tether-env";
// One message a lane carries: the bound a data channel gives one message (sctp maxMessageSize).
constexpr std::size_t kDefaultLaneMessageBytes = 256 * 1024;
// One relay frame (the loopback and host relays accept 1 MiB).
constexpr std::size_t kDefaultLinkFrameBytes = 1024 * 1024;
// Above this many bytes queued on the socket, a lane send is refused: the caller keeps it.
constexpr std::size_t kDefaultLinkBufferedBytes = 4 * 1024 * 1024;
constexpr TimeMs kDefaultReconnectMinMs = 250;
constexpr TimeMs kDefaultReconnectMaxMs = 10'000;
// Bounds on the options themselves (what the transports accept).
constexpr std::size_t kMaxLaneMessageBytes = 1u << 20;
constexpr std::size_t kMinLinkFrameBytes = 64;
constexpr std::size_t kMaxLinkFrameBytes = 1u << 26;
constexpr std::size_t kMaxLinkBufferedBytes = 1u << 30;
constexpr TimeMs kMaxReconnectMinMs = 600'000;
constexpr TimeMs kMaxReconnectMaxMs = 3'600'000;
// The backoff doubles at most this many times before it is capped anyway.
constexpr int kMaxBackoffDoublings = 20;
// A server message the member reads: larger ones are ignored unread.
constexpr std::size_t kMaxServerMessageBytes = 8u << 20;

struct RoomMemberOptions {
  std::string room;
  std::string origin;  // our id in the room
  // Our writer as the relay knows it (what authenticated the socket: a ticket's `w`), or empty
  // when the caller does not know it. An eject names a writer, and under `ejection: 'writer'` the
  // relay sends it to every member (docs/rooms.md § Policy and the tripwire): only one naming
  // this writer is ours.
  std::string writer;
  double policy_version = 1;
  bool lanes = false;
  std::size_t max_message_bytes = kDefaultLaneMessageBytes;
  std::size_t max_frame_bytes = kDefaultLinkFrameBytes;
  std::size_t max_buffered_bytes = kDefaultLinkBufferedBytes;
  TimeMs reconnect_min_ms = kDefaultReconnectMinMs;
  TimeMs reconnect_max_ms = kDefaultReconnectMaxMs;
  std::uint64_t seed = 0;
};

// Options from JSON text ({room, selfId, writer, policyVersion, lanes, maxMessageBytes, maxFrameBytes,
// maxBufferedBytes, reconnectMinMs, reconnectMaxMs, seed}), or the message naming what to fix.
struct ParsedMemberOptions {
  RoomMemberOptions options;
  std::string error;
};
ParsedMemberOptions parse_member_options(std::string_view json);

// The hello a member sends (the room-relay spec, "The relay"): also what an adapter replays.
std::string hello_text(std::string_view room, std::string_view origin, double policy_version,
                       std::optional<double> schema_version = std::nullopt,
                       std::optional<double> seq = std::nullopt);

struct MemberAction {
  enum class Kind : std::uint8_t {
    dial,      // open a socket to the relay (attempt: 1 for the first, counting up until a welcome)
    transmit,  // send text on the open socket
    hang_up,   // close the socket
  };
  Kind kind = Kind::dial;
  std::string text;
  int attempt = 0;
};

struct MemberEvent {
  enum class Kind : std::uint8_t {
    joined,      // a welcome: members = everyone else; reconnect = not the first
    member,      // origin joined (again = a known origin: a restarted peer displaced its old link)
    left,        // origin's member notice said gone
    roster,      // the roster changed: members
    lane_open,   // lanes: the lane to origin is open
    lane_close,  // lanes: the lane to origin closed (it may reopen)
    text,        // lanes: one envelope text from origin
    signal,      // not lanes: a signal from origin; text = its data as JSON
    down,        // the link to the relay was lost after a welcome
    refused,     // the relay rejected our hello (fatal: no more dialing) or ejected us (or,
                 // with no writer option, some writer it could not tell from us: `writer` says)
  };
  Kind kind = Kind::joined;
  std::string origin;
  std::string text;
  std::vector<std::string> members;
  bool reconnect = false;
  bool again = false;
  bool fatal = false;
  std::string reason;    // refused: the relay's reason
  std::string writer;    // refused by an eject: the writer it named
  double expected = -1;  // refused: what the relay expected (reject), or -1
};

// Why a lane send was not accepted (the caller still owns the message).
enum class LaneSend : std::uint8_t {
  accepted,
  not_open,
  too_big,
  backpressure,
  frame_too_big,
  not_utf8
};

// Names of the kinds, as the bindings and the fixtures spell them (kind index order).
constexpr int kMemberActionKinds = 3;
constexpr int kMemberEventKinds = 10;
constexpr int kLaneSendKinds = 6;
const char* member_action_name(MemberAction::Kind k);
const char* member_event_name(MemberEvent::Kind k);
const char* lane_send_name(LaneSend s);

struct MemberStats {
  // ignored: signals that were not ours to read, and ejects that named another writer.
  std::uint64_t reconnects = 0, sent = 0, received = 0, refused = 0, ignored = 0, read_acks = 0;
};

class RoomMember {
 public:
  explicit RoomMember(RoomMemberOptions options);
  const RoomMemberOptions& options() const { return opt_; }

  // Starts dialing (the first dial action).
  void handle_start(TimeMs now_ms);
  // The socket of the latest dial opened: the hello goes out.
  void handle_link_open(TimeMs now_ms);
  // One text frame from the relay, byte for byte: it counts towards what this socket read, and
  // a relay that asked for read acknowledgements gets them (room/read_ack.hpp).
  void handle_link_message(std::string_view text, TimeMs now_ms);
  // The socket closed or could not be made: lanes close, and a dial is scheduled (poll_timeout).
  void handle_link_closed(TimeMs now_ms);
  void handle_timeout(TimeMs now_ms);
  // Leave for good: no more dialing; the socket is hung up.
  void handle_close();

  // Lanes: one envelope to `peer`, given the bytes already queued on the socket.
  LaneSend send_text(std::string_view peer, std::string_view text, double buffered_bytes);
  // Not lanes: a signal to `to` with `data_json` (one JSON value). False when the link is down.
  bool send_signal(std::string_view to, std::string_view data_json);

  std::optional<MemberAction> poll_action() { return actions_.poll(); }
  std::optional<MemberEvent> poll_event() { return events_.poll(); }
  Timeout poll_timeout() const { return redial_at_; }
  // True while an action or an event is waiting to be polled.
  bool has_output() const { return !actions_.empty() || !events_.empty(); }

  bool joined() const { return joined_; }
  bool closed() const { return closed_; }
  bool lane_open(std::string_view peer) const;
  const std::vector<std::string>& roster() const { return roster_; }
  const MemberStats& stats() const { return stats_; }

 private:
  void read_frame(std::string_view text);
  void welcome(std::uint32_t msg);
  void member(std::uint32_t msg);
  void signal(std::uint32_t msg);
  void refused(std::uint32_t msg, bool reject);
  void lost_link();
  void schedule(TimeMs now_ms);
  void dial();
  MemberEvent& event(MemberEvent::Kind kind, std::string origin = {});
  std::string signal_head(std::string_view to) const;
  void roster_event();
  bool in_roster(std::string_view p) const;

  RoomMemberOptions opt_;
  SeededRng rng_;
  JsonScan scan_;
  std::string scratch_;
  ReadCounter reads_;                // what the current socket read
  std::vector<std::string> roster_;  // everyone else in the room, in join order
  bool started_ = false;
  bool link_up_ = false;  // a socket is open
  bool dialing_ = false;  // a dial is out and has not closed
  bool joined_ = false;   // welcomed on the current socket
  bool ever_joined_ = false;
  bool fatal_ = false;
  bool closed_ = false;
  int attempt_ = 0;  // dials since the last welcome
  Timeout redial_at_;
  MemberStats stats_;
  PollQueue<MemberAction> actions_;
  PollQueue<MemberEvent> events_;
};

}  // namespace tether::room
