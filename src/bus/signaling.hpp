// The signaling negotiation between two peers (agent-bus-and-swarm spec § WebRTC layers,
// § Surviving a network drop): who offers, which connection generation a message belongs to,
// renegotiation, glare, rebuilding a failed path and asking again when nobody answered. What the
// WebRTC transport (web/peer/webrtc-transport.js) runs between the room (signals routed by origin,
// the room-relay spec "WebRTC signaling") and its RTCPeerConnections; JS keeps only the
// connections, their data channels and a timer.
//
// The rules:
//  - Glare: only the peer with the lower id offers. The other asks it to ({k:'renegotiate'}), so
//    two offers never cross; an offer from the higher id is refused.
//  - Generations: every offer carries one (our instance, a counter); an answer or candidate of
//    another generation is ignored, so a rebuild never mixes with the connection it replaces.
//  - Candidates that arrive before the remote description wait (bounded) until it is set.
//  - A connection that does not open within open_timeout_ms is negotiated again; a renegotiate
//    that no offer answered within the same time is sent again.
//  - A welcome looks at every member afresh: a healthy connection is kept, anything else (and
//    every rebuild asked for while signaling was down) is negotiated again. A member that joins
//    later initiates itself (its welcome lists us), so a working connection is never replaced
//    mid-transfer from both sides.
//
// Sans-IO, driven like every core (common/drive.hpp). Signal data is JSON text both ways.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/drive.hpp"
#include "common/rng.hpp"

namespace tether::bus {

constexpr TimeMs kSignalingOpenTimeoutMs = 10'000;
constexpr std::size_t kMaxSignalingPeerIdBytes = 128;  // a room origin, bounded like a streamId
constexpr std::size_t kMaxGenerationBytes = 64;
constexpr std::size_t kMaxSessionDescriptionBytes = 48 * 1024;  // as the cockpit's kMaxSdpBytes
constexpr std::size_t kMaxCandidateBytes = 4096;
constexpr std::size_t kMaxPendingCandidates = 64;  // per connection, before its remote description
constexpr std::size_t kMaxSignalDataBytes = 64 * 1024;  // one signal's data, before parsing
constexpr std::size_t kInstanceChars = 8;               // base 36, from the seeded generator

// The connection every negotiation builds (agent-bus-and-swarm spec § WebRTC layers): two
// negotiated data channels, so both ends create them and no ondatachannel race exists.
constexpr int kControlChannelId = 0;  // ordered, JSON envelopes
constexpr std::string_view kControlChannelLabel = "control";
constexpr int kBinaryChannelId = 1;  // ordered, raw chunk frames
constexpr std::string_view kBinaryChannelLabel = "x-bin";
// Every implementation must accept a message this large (RFC 8841); larger only once the
// association says so.
constexpr std::size_t kDefaultChannelMessageBytes = 65'536;
// A send is refused above this much queued data: the caller keeps the message.
constexpr std::size_t kControlBufferLimit = 8u << 20;
constexpr std::size_t kBinaryBufferLimit = 16u << 20;
// The binary lane's low-water mark: below it, more may be sent.
constexpr std::size_t kBinaryLowWater = 1u << 20;
// The room link under WebRTC redials sooner than the explicit transport's: a data path may be
// waiting on it.
constexpr TimeMs kSignalingReconnectMinMs = 100;
constexpr TimeMs kSignalingReconnectMaxMs = 5'000;

struct SignalingOptions {
  std::string self_id;
  std::uint64_t seed = 0;
  TimeMs open_timeout_ms = kSignalingOpenTimeoutMs;
};

// One ICE candidate as RTCIceCandidateInit carries it.
struct Candidate {
  std::string candidate;
  std::optional<std::string> sdp_mid;
  std::optional<double> sdp_mline_index;
};

struct SignalingAction {
  enum class Kind : std::uint8_t {
    create,     // a new RTCPeerConnection to peer for generation gen, with both negotiated channels
    offer,      // createOffer + setLocalDescription: answer handle_description (or handle_failed)
    answer,     // setRemoteDescription(offer = text) + createAnswer + setLocalDescription: likewise
    accept,     // setRemoteDescription(answer = text): answer handle_remote_set (or handle_failed)
    candidate,  // addIceCandidate(candidate); its failure needs no answer
    close,      // close that generation's channels and connection
    signal,     // send `text` (JSON) to peer through the room
  };
  Kind kind = Kind::create;
  std::string peer;
  std::string gen;
  bool offerer = false;  // create
  std::string text;      // answer/accept: the SDP; signal: the data JSON
  Candidate candidate;   // candidate
};

struct SignalingEvent {
  enum class Kind : std::uint8_t {
    open,            // both channels to peer are open
    close,           // the connection to peer closed (it may be rebuilt)
    roster,          // the room's other members: roster
    reconnect,       // signaling came back after an outage
    signaling_down,  // the room link is down: nothing can be negotiated until the next welcome
  };
  Kind kind = Kind::open;
  std::string peer;
  std::vector<std::string> roster;
};

// Names of the kinds, as the bindings and the fixtures spell them (kind index order).
constexpr int kSignalingActionKinds = 7;
constexpr int kSignalingEventKinds = 5;
const char* signaling_action_name(SignalingAction::Kind k);
const char* signaling_event_name(SignalingEvent::Kind k);

struct SignalingStats {
  std::uint64_t offers = 0, answers = 0, rebuilds = 0, signaling_reconnects = 0,
                refused_signals = 0;
};

class Signaling {
 public:
  explicit Signaling(SignalingOptions options);
  const std::string& instance() const { return instance_; }

  // The room: a welcome (signaling is up) with everyone else; a later change of the roster; the
  // room link lost.
  void handle_welcome(const std::vector<std::string>& members, TimeMs now_ms);
  void handle_roster(const std::vector<std::string>& members, TimeMs now_ms);
  void handle_signaling_down(TimeMs now_ms);
  // One signal from `from`: its data as JSON text.
  void handle_signal(std::string_view from, std::string_view data_json, TimeMs now_ms);

  // Results of actions and events of the connections, each naming its generation (anything of an
  // older generation is ignored).
  void handle_description(std::string_view peer, std::string_view gen, std::string_view sdp,
                          TimeMs now_ms);
  void handle_remote_set(std::string_view peer, std::string_view gen, TimeMs now_ms);
  void handle_failed(std::string_view peer, std::string_view gen, TimeMs now_ms);
  void handle_local_candidate(std::string_view peer, std::string_view gen, const Candidate& c,
                              TimeMs now_ms);
  void handle_channels_open(std::string_view peer, std::string_view gen, TimeMs now_ms);
  void handle_channel_closed(std::string_view peer, std::string_view gen, TimeMs now_ms);
  // RTCPeerConnection.connectionState; "failed" and "closed" end the connection.
  void handle_connection_state(std::string_view peer, std::string_view gen, std::string_view state,
                               TimeMs now_ms);
  void handle_timeout(TimeMs now_ms);
  // Tear down and negotiate again (held while signaling is down).
  void rebuild(std::string_view peer, TimeMs now_ms);
  void handle_close();

  std::optional<SignalingAction> poll_action() { return actions_.poll(); }
  std::optional<SignalingEvent> poll_event() { return events_.poll(); }
  Timeout poll_timeout() const;

  bool is_open(std::string_view peer) const;
  bool signaling_up() const { return signaling_up_; }
  const std::vector<std::string>& roster() const { return roster_; }
  std::size_t peers() const { return peers_.size(); }
  const SignalingStats& stats() const { return stats_; }

 private:
  struct Peer {
    std::string gen;
    bool offerer = false;
    bool open = false;
    bool remote_set = false;
    bool accepting = false;     // an accept (the answer) is in flight
    bool failed_state = false;  // connectionState failed or closed
    std::vector<Candidate> pending;
    Timeout open_deadline;
  };

  bool we_offer(std::string_view peer) const { return options_.self_id < peer; }
  bool in_roster(std::string_view peer) const;
  bool healthy(std::string_view peer) const;
  Peer* current(std::string_view peer, std::string_view gen);
  Peer& make_connection(const std::string& peer, std::string gen, bool offerer, TimeMs now_ms);
  void teardown(const std::string& peer);
  void offer(const std::string& peer, TimeMs now_ms);
  void answer(const std::string& peer, std::string gen, std::string sdp, TimeMs now_ms);
  void connect(const std::string& peer, TimeMs now_ms);
  void request_rebuild(const std::string& peer, TimeMs now_ms);
  void flush_pending(const std::string& peer, Peer& p);
  void signal(const std::string& peer, std::string data_json);
  void set_roster(const std::vector<std::string>& members);
  SignalingAction& action(SignalingAction::Kind kind, const std::string& peer,
                          const std::string& gen);

  SignalingOptions options_;
  SeededRng rng_;
  std::string instance_;
  std::uint64_t gen_counter_ = 0;
  std::map<std::string, Peer> peers_;
  std::vector<std::string> roster_;
  std::vector<std::string> pending_rebuilds_;  // asked for while signaling was down
  std::map<std::string, TimeMs> ask_again_;    // renegotiates nobody has answered yet
  bool signaling_up_ = false;
  bool ever_welcomed_ = false;
  bool closed_ = false;
  SignalingStats stats_;
  PollQueue<SignalingAction> actions_;
  PollQueue<SignalingEvent> events_;
};

// Candidate <-> the signal's `c` object ({candidate, sdpMid, sdpMLineIndex}).
std::string candidate_json(const Candidate& c);

}  // namespace tether::bus
