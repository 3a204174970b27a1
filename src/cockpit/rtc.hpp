// The relay's WebRTC brokering component (cockpit-wire-protocol.md § WebRTC video; v7 notes
// § WebRTC video; docs/cockpit-protocol.md § WebRTC video says it all in our words). The relay
// brokers one SFU session per peer through the SFU's HTTPS API (Cloudflare Realtime, or the local
// SFU serving the same subset, web/sfu/) and never touches media:
//
//  - rtc_ice right after welcome, and to everyone again after each TURN credential refresh
//    (minted for kTurnTtlSeconds, refreshed at half of it: hourly);
//  - a robot's one offer (sendonly transceivers, `tracks`: which mid carries which channel) made
//    into an SFU session whose tracks are published under their channel ids, answered by
//    rtc_answer on the carrier;
//  - a viewer's one recvonly offer made into an SFU session, answered by rtc_answer;
//  - every pull of a track channel a viewer subscribes to as a relay-sent rtc_offer {sdp, tracks,
//    robotId}, which the viewer answers with rtc_answer (renegotiate);
//  - rtc_stalled {ch}: that track's pulls are closed, the track is declared again and pulled onto
//    its viewers anew;
//  - a failed SFU call: the non-terminal rtc_failed to its peer and a retry with backoff;
//    rtc_session_gone when the peer's SFU session no longer exists (or can no longer be trusted),
//    after which the peer sends a new rtc_offer.
//
// Sans-IO: every SFU call is an `sfu_call` action with a token; the host executes it with the
// Realtime client (web/sfu/client.js) and hands the client's result back through
// handle_sfu_result(token, result). A call still unanswered at its deadline is cancelled
// (`sfu_cancel`) and counts as a failure. Each peer has at most one call in flight, so the SFU sees
// one change at a time per session; what each peer should have (its pulls) is reconciled from
// what it has whenever its call completes.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "cockpit/outbox.hpp"
#include "cockpit/session.hpp"
#include "cockpit/types.hpp"
#include "common/bytes.hpp"
#include "common/drive.hpp"
#include "common/json.hpp"
#include "wire/messages.hpp"

namespace tether::cockpit {

// TURN credentials are minted for this long and refreshed at half of it, hourly (§ WebRTC video).
constexpr std::int64_t kTurnTtlSeconds = 2 * 3600;
constexpr TimeMs kTurnRefreshMs = kTurnTtlSeconds * 1000 / 2;
// A failed SFU call is retried after these delays, one step further per consecutive failure of
// the same peer; the last one repeats (our choice).
constexpr std::array<TimeMs, 7> kRtcRetryMs = {500, 1000, 2000, 4000, 8000, 16000, 30000};
// An SFU call unanswered after this is cancelled and retried like any failed call.
constexpr TimeMs kSfuCallTimeoutMs = 15'000;
// Pulls one viewer SFU session takes over its life. Every pull adds a transceiver to the viewer's
// peer connection (a closed one is never reused), so past this the relay retires the session with
// rtc_session_gone and the viewer starts a fresh one (our choice).
constexpr std::size_t kMaxPullsPerRtcSession = 32;
// One SFU call's result as the host hands it back (the Realtime client reads at most 1 MiB of an
// answer; its JSON text is written again, so allow twice that).
constexpr std::size_t kMaxSfuResultBytes = 2u * 1024 * 1024;
// An id the SFU makes (a session id, a mid) is at most this long, or the answer is refused.
constexpr std::size_t kMaxSfuIdBytes = 256;
// How much of an SFU's error description is quoted to a peer.
constexpr std::size_t kMaxSfuErrorQuoteBytes = 512;

struct RtcConfig {
  bool turn = false;  // a TURN key is configured: mint credentials; otherwise iceServers is []
};

class Rtc {
 public:
  // Absent: no SFU is configured, and the component does nothing.
  explicit Rtc(std::optional<RtcConfig> config);
  bool enabled() const { return enabled_; }

  // --- sessions ---
  // A viewer was welcomed or a robot registered (its carrier is open): it gets rtc_ice now, or
  // as soon as TURN credentials are minted.
  void welcomed(const Session& s, Sessions& sessions, Outbox& out, TimeMs now);
  // The session is being released: its call is cancelled; a robot's tracks leave its viewers.
  void left(SessionId id, Sessions& sessions, Outbox& out, TimeMs now);
  // What a viewer wants now: the robot it watches ("" for none) and the track channels of it that
  // it subscribes to. Pulls follow.
  void viewer_wants(SessionId viewer, const std::string& robot_id, std::set<std::string> tracks,
                    Sessions& sessions, Outbox& out, TimeMs now);
  // The viewers whose wants name `robot_id`.
  std::vector<SessionId> viewers_of(const std::string& robot_id) const;

  // --- messages (validated by the wire core: SDP and track bounds already hold) ---
  void on_robot_offer(Session& s, const Robot& r, const wire::Message& m, Sessions& sessions,
                      Outbox& out, TimeMs now);
  void on_robot_stalled(Session& s, const wire::Message& m, Sessions& sessions, Outbox& out,
                        TimeMs now);
  void on_viewer_offer(Session& s, const wire::Message& m, Sessions& sessions, Outbox& out,
                       TimeMs now);
  void on_viewer_answer(Session& s, const wire::Message& m, Sessions& sessions, Outbox& out,
                        TimeMs now);

  // --- SFU calls: the host's result of an sfu_call, as the Realtime client gives it:
  // {ok: true, status, body} or {ok: false, status, errorCode, errorDescription, body?}. ---
  void handle_sfu_result(std::uint64_t call, ByteView result, Sessions& sessions, Outbox& out,
                         TimeMs now);

  // --- time: call deadlines, retries, the TURN refresh ---
  Timeout poll_timeout() const;
  void handle_timeout(TimeMs now, Sessions& sessions, Outbox& out);

  // --- /api/stats ---
  // Per robot: {framesOnTrack is the delivery's}, published tracks and their pulls.
  Json robot_stats(const std::string& robot_id) const;
  // {calls, failed, timedOut, sessionsGone, stalls, iceSets}.
  Json stats() const;
  // Inputs this component refused, by reason (merged into the relay's `dropped`).
  const std::map<std::string, std::uint64_t>& drops() const { return drops_; }

 private:
  struct Track {
    std::string ch;
    std::string mid;
    std::uint64_t generation = 0;  // bumps on every declaration; a pull is of one generation
    bool active = false;           // declared at the SFU and not stalled
    bool redeclare = false;        // stalled, or its declaration failed: to be declared again
  };
  struct Pull {
    std::string mid;        // on the viewer's session
    std::string robot_id;   // whose track
    std::string publisher;  // the robot's SFU session
    std::string ch;
    std::uint64_t generation = 0;
  };
  // A channel the SFU did not have when it was pulled (collected, say): not pulled again until
  // its publisher or generation changes.
  struct Missing {
    std::string publisher;
    std::uint64_t generation = 0;
  };
  struct Peer {
    SessionId id = 0;
    Role role = Role::viewer;
    std::uint64_t ice_version = 0;  // the ICE set it last got; 0 for none yet
    std::uint64_t epoch = 0;        // bumps when its SFU state starts over
    std::string offer;              // its offer, until the SFU took it
    std::string sfu;                // its SFU session id
    bool ready = false;             // viewer: offer answered; robot: tracks published
    std::uint64_t call = 0;         // the call in flight, 0 for none
    Timeout retry_at;
    std::size_t failures = 0;  // consecutive failed calls
    // robot
    std::string robot_id;  // robot: its own id; viewer: the robot it watches
    std::vector<Track> tracks;
    // viewer
    std::set<std::string> wanted;
    std::vector<Pull> pulls;
    bool awaiting_answer = false;  // a relay rtc_offer is out
    std::string answer;            // the viewer's answer, for renegotiate
    std::map<std::string, Missing> missing;
    std::size_t pulls_made = 0;
  };
  enum class Job {
    turn,
    robot_session,
    robot_publish,
    robot_declare,
    viewer_session,
    pull,
    renegotiate,
    close
  };
  struct Call {
    explicit Call(Job j) : job(j) {}
    Job job;
    SessionId peer = 0;
    std::uint64_t epoch = 0;
    TimeMs deadline = 0;
    std::vector<std::string> chs;            // robot_declare, pull
    std::vector<std::string> mids;           // close
    std::string robot_id;                    // pull
    std::string publisher;                   // pull
    std::vector<std::uint64_t> generations;  // pull, by chs
  };
  // One parsed result; `ok` false for any failure, including an answer this relay cannot use.
  struct Result {
    bool ok = false;
    int status = 0;
    Json body;
    std::string code;
    std::string description;
    bool unusable = false;  // no usable answer: not the client's shape, or not what was asked
  };
  enum class Failure { transient, gone, refused };

  Peer* peer(SessionId id);
  const Peer* peer(SessionId id) const;
  Peer* publisher(const std::string& robot_id);
  const Peer* publisher(const std::string& robot_id) const;
  const Track* available(const std::string& robot_id, const std::string& ch) const;

  // Sends to a peer: the control stream to a viewer, the carrier to a robot.
  void send(const Peer& p, const Json& message, Sessions& sessions, Outbox& out, TimeMs now);
  void send_error(const Peer& p, wire::ErrorCode code, const std::string& text, Sessions& sessions,
                  Outbox& out, TimeMs now);
  void send_ice(Peer& p, Sessions& sessions, Outbox& out, TimeMs now);
  void refuse(Session& s, const std::string& why, Outbox& out);

  void issue(Peer* p, Call call, SfuOp op, const std::string& sfu_session, const Json& body,
             Outbox& out, TimeMs now);
  void cancel(Peer& p, Outbox& out);
  void start_over(Peer& p, Outbox& out);
  void gone(Peer& p, const std::string& why, Sessions& sessions, Outbox& out, TimeMs now);
  void schedule_retry(Peer& p, TimeMs now);

  void advance(Peer& p, Sessions& sessions, Outbox& out, TimeMs now);
  void advance_robot(Peer& p, Outbox& out, TimeMs now);
  void advance_viewer(Peer& p, Sessions& sessions, Outbox& out, TimeMs now);
  void advance_watchers(const std::string& robot_id, Sessions& sessions, Outbox& out, TimeMs now);
  bool wanted_pull(const Peer& v, const Pull& pull) const;

  void mint(Outbox& out, TimeMs now);
  void on_turn(const Result& r, Sessions& sessions, Outbox& out, TimeMs now);
  void on_result(Peer& p, const Call& c, Result r, Sessions& sessions, Outbox& out, TimeMs now);
  void on_failure(Peer& p, const Call& c, const Result& r, Sessions& sessions, Outbox& out,
                  TimeMs now);
  // What a successful answer came to: all done, done but some tracks failed (a retry is
  // scheduled), or an answer this relay cannot use.
  enum class Outcome { clean, partial, unusable };
  Outcome on_robot_publish(Peer& p, const Result& r, Sessions& sessions, Outbox& out, TimeMs now);
  Outcome on_robot_declare(Peer& p, const Call& c, const Result& r, Sessions& sessions, Outbox& out,
                           TimeMs now);
  Outcome on_viewer_session(Peer& p, const Result& r, Sessions& sessions, Outbox& out, TimeMs now);
  Outcome on_pull(Peer& p, const Call& c, const Result& r, Sessions& sessions, Outbox& out,
                  TimeMs now);
  // Tracks the SFU refused in an answer otherwise taken (`failed` lists them): rtc_failed and a
  // retry after the backoff.
  Outcome tracks_refused(Peer& p, Job job, const std::string& failed, Sessions& sessions,
                         Outbox& out, TimeMs now);

  bool enabled_ = false;
  RtcConfig config_;
  std::unordered_map<SessionId, Peer> peers_;
  std::map<std::string, SessionId> publishers_;          // robot id -> its session
  std::map<std::string, std::set<SessionId>> watchers_;  // robot id -> viewers wanting it
  std::unordered_map<std::uint64_t, Call> calls_;        // by token
  std::uint64_t next_call_ = 0;
  std::set<std::pair<TimeMs, std::uint64_t>> call_deadlines_;  // (deadline, token)
  std::set<std::pair<TimeMs, SessionId>> retries_;             // (when, peer)

  // TURN: one set of ICE servers for every peer of this relay.
  Json ice_ = Json::array();
  std::uint64_t ice_version_ = 0;  // 0 while none is known
  std::uint64_t turn_call_ = 0;
  Timeout turn_refresh_at_;
  Timeout turn_retry_at_;
  std::size_t turn_failures_ = 0;

  struct Counters {
    std::uint64_t calls = 0, failed = 0, timed_out = 0, sessions_gone = 0, stalls = 0, ice_sets = 0;
  } counters_;
  std::map<std::string, std::uint64_t> drops_;
};

}  // namespace tether::cockpit
