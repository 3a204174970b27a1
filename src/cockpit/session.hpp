// The relay's session component (cockpit-wire-protocol.md § Sessions and messages; v7 notes
// § Viewer session): the table of robot and viewer sessions, hello and welcome, auth, robot
// registration with its manifest and carrier (workaround 3), the robots list, watching, the subs
// snapshots, and failing a session. Lease, delivery and publish keep their own state and reach
// sessions through this table; relay.hpp composes them.
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

#include "cockpit/auth.hpp"
#include "cockpit/link.hpp"
#include "cockpit/outbox.hpp"
#include "cockpit/types.hpp"
#include "common/ack_marks.hpp"
#include "common/drive.hpp"
#include "common/json.hpp"
#include "wire/messages.hpp"
#include "wire/stream_decoder.hpp"

namespace tether::cockpit {

// Pong ends remembered per WebSocket session for matching `read` (clients keep one ping in
// flight on a WebSocket, so one would do; a few allow for a pong answered while one is queued).
constexpr std::size_t kWebSocketPongMarks = 8;

// Sessions one relay holds; past this a newcomer is refused before allocation.
constexpr std::size_t kMaxSessions = 4096;
// The carrier is a control dependency (workaround 3): a carrier whose unfinished writes pass
// this fails its robot session with carrier_failed.
constexpr std::size_t kMaxCarrierBacklogBytes = 32u * 1024 * 1024;

// A manifest channel as the relay needs it.
struct ChannelInfo {
  wire::Delivery delivery = wire::Delivery::latest;
  bool tx = false;
  bool publish = false;
  bool track = false;
  std::optional<std::string> required_scope;
};

struct Session {
  Endpoint ep;
  bool welcomed = false;
  // Failed: sent its error, and is closed and released when the current input settles. Nothing
  // more is read from it.
  bool closing = false;
  wire::ControlStreamDecoder control;
  std::optional<std::string> token;
  const TokenGrant* grant = nullptr;
  std::set<StreamId> incoming;  // its open one-shot streams
  std::string robot_id;         // robot: the id it registered
  std::string watching;         // viewer: the robot it watches
  // A fleet split over objects (fleet.hpp): the viewer's hello, kept for a handoff ticket, and
  // whether this session arrived with a ticket (`quiet`: its welcome was sent by another object).
  Json hello;
  bool ticketed = false;
  bool quiet = false;
  // Viewer: it asked for the relay's link figures in `robots` (`fleet {link: true}`, link.hpp).
  bool fleet_link = false;
  // WebSocket sessions: when the relay last heard from it (kWebSocketLivenessMs), and where the
  // host cannot see the socket's buffer, the bytes handed to it, those a ping's `read` confirmed,
  // where the newest pongs ended (a `read` counts only when it names one of these exactly), and
  // the completions waiting for room (kWebSocketAckWindowBytes).
  TimeMs heard_ms = 0;
  std::uint64_t ws_queued = 0;
  std::uint64_t ws_acked = 0;
  AckMarks<std::uint64_t, kWebSocketPongMarks> ws_pong_marks;  // where its newest pongs ended
  bool ws_counts_reads = false;                                // it has sent a ping with `read`
  std::deque<std::pair<bool, StreamId>> ws_deferred;           // (opened, stream)
};

// The one relay-opened stream of a robot session (workaround 3).
struct Carrier {
  StreamId stream = 0;
  std::uint64_t seq = 0;              // @control frames numbered on the carrier
  std::deque<std::size_t> in_flight;  // sizes of the writes not yet done, in order
  std::size_t backlog = 0;
};

struct Robot {
  SessionId session = 0;
  Json identity;  // {id, name, model}
  Json manifest;  // normal form
  std::map<std::string, ChannelInfo> channels;
  Carrier carrier;
  std::uint64_t subs_n = 0;
  std::vector<std::string> snapshot;
  RobotLink link;  // what the relay hears from it (link.hpp)
};

// A session to close once the input settles.
struct Failure {
  SessionId session;
  std::optional<wire::ErrorCode> code;
  std::string reason;
};

class Sessions {
 public:
  Sessions(std::optional<AuthTable> auth, bool sfu) : auth_(std::move(auth)), sfu_(sfu) {}

  // nullptr when the relay is full.
  Session* open(Role role, Lane lane);
  Session* find(SessionId id);
  const Session* find(SessionId id) const;
  std::size_t size() const { return sessions_.size(); }
  std::size_t viewers() const;
  // Removes a session; a registered robot's record goes with it.
  void erase(SessionId id);
  template <class Fn>
  void for_each(Fn&& fn) {
    for (auto& [id, s] : sessions_) fn(*s);
  }

  Robot* robot(const std::string& id);
  const std::map<std::string, Robot>& robots() const { return robots_; }
  // The robot a robot session registered, or the one a viewer watches (when it is connected).
  Robot* robot_of(const Session& s);

  // Sends `error` and, for a terminal code (or none, a plain close), ends the session.
  void fail(Session& s, std::optional<wire::ErrorCode> code, const std::string& message,
            Outbox& out);
  // Sends `error` (when there is a code) and marks the session closing, whatever the code; the
  // relay closes and releases it when the input settles.
  void end(Session& s, std::optional<wire::ErrorCode> code, const std::string& message,
           Outbox& out);
  std::vector<Failure> take_failed();

  // A hello on a session. Returns the robot when it registered just now (the relay re-baselines
  // its viewers, then announces it).
  Robot* hello(Session& s, const wire::Message& hello, Outbox& out, TimeMs now);

  // The checks every hello passes first: version, role, the robot id, the token. False when the
  // session failed.
  bool admit(Session& s, const wire::Message& hello, Outbox& out);

  // --- viewers ---
  // In a fleet split over objects the robots list is the directory's (`list`: identities), not
  // this object's own robots.
  void set_fleet_robots(Json list) { fleet_robots_ = std::move(list); }
  // `robots`, each entry with its `link` figures at `now` when `with_link` (for a viewer that
  // asked for them; only this object's own robots have figures, link.hpp).
  Json robots_message(bool with_link, TimeMs now);
  Json manifest_message(const std::string& robot_id) const;
  // `robots` to every welcomed viewer, with link figures to those that asked for them.
  void push_robots(Outbox& out, TimeMs now);
  void push_manifest(const std::string& robot_id, Outbox& out);
  void watch(Session& viewer, const std::string& robot_id);
  void unwatch(Session& viewer);
  std::size_t watcher_count(const std::string& robot_id) const;

  // --- robots ---
  // The channels some viewer wants, as a full subs snapshot (v7 notes: subs {chs, n}); sent
  // only when it changed, or always with `force` (a fresh registration re-baselines).
  void send_snapshot(Robot& r, std::vector<std::string> chs, bool force, Outbox& out, TimeMs now);
  // One @control message on the carrier (subs now; rtc_ice and rtc_answer with WebRTC).
  void carrier_message(Robot& r, const Json& message, Outbox& out, TimeMs now);
  // One frame on the carrier. Past kMaxCarrierBacklogBytes the robot session fails.
  void carrier_write(Robot& r, SharedBytes frame, Outbox& out);
  // A carrier write completed; false when `st` is no carrier.
  bool carrier_done(StreamId st);
  // Carrier writes of `st` handed out and not yet done (0 when `st` is no carrier).
  std::size_t carrier_writes_outstanding(StreamId st) const;
  // The session whose carrier `st` is, or 0.
  SessionId carrier_session(StreamId st) const;

 private:
  void register_robot(Session& s, Json identity, Json manifest,
                      std::map<std::string, ChannelInfo> channels, Outbox& out, TimeMs now);

  std::optional<AuthTable> auth_;
  bool sfu_;
  SessionId next_session_ = 0;
  std::unordered_map<SessionId, std::unique_ptr<Session>> sessions_;
  std::map<std::string, Robot> robots_;
  // Who watches, by robot id. Kept while the robot is away, so a robot that reconnects finds its
  // viewers.
  std::map<std::string, std::set<SessionId>> watchers_;
  std::unordered_map<StreamId, SessionId> carriers_;
  std::vector<Failure> failed_;
  std::optional<Json> fleet_robots_;
};

}  // namespace tether::cockpit
