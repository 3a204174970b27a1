// The HTTP form of the explicit relay transport (docs/agent-bus.md § HTTP relay transport; the
// agent-bus-and-swarm spec's encrypted relay transport: "POST to send, a stream or long-poll to
// receive" where a WebSocket cannot open). An HTTP member is one room connection whose frames
// travel in HTTP requests instead of WebSocket messages: the relay core sees it as any other
// connection (a virtual socket the host hands the room endpoint), so the same hello, roster,
// signals and sealed frames flow, and the relay sees only ciphertext and routing.
//
// Two cores, both sans-IO on the drive contract (common/drive.hpp):
//  - HttpMembers, in the relay host: the member sessions (an unguessable token per member, bound
//    to its room), the send order (each POST names a sequence number, so a retried POST is
//    delivered once), the receive queue behind a cursor (a long-poll acknowledges everything up to
//    its cursor and gets what follows, or waits up to kHttpPollWaitMs; a lost response is fetched
//    again with the same cursor), idle expiry, the per-room and per-host member bounds and every
//    error. The host only routes /rooms/<name>/http/<op>, verifies the ticket of an `open` and
//    moves bytes.
//  - HttpLink, in the peer: the client side of the same protocol. It numbers sends (one POST in
//    flight, so the relay receives them in order), keeps the cursor, retries a failed request the
//    same way (kHttpMaxRetries, kHttpRetryMs apart), and reads the receive responses. The host runs
//    fetch on exactly the requests it hands out.
//
// Wire: open `POST .../http/open?ticket=T` -> 200 {"session","pollWaitMs","idleMs","maxBodyBytes"};
// send `POST .../http/send?session=S&seq=N` with one frame as the body -> 200 {"seq":N};
// receive `GET .../http/recv?session=S&cursor=N` -> 200 {"cursor":M,"frames":[...]} (and
// "closed":{"code","reason"} once the relay closed the member: the session is then gone);
// close `POST .../http/close?session=S` -> 200 {}. An error is a status and the text body
// `<code>: <what to do>` (http_error_name).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/bytes.hpp"
#include "common/drive.hpp"

namespace tether::room {

// The largest request body (one frame). The room's own frame bound still applies inside it.
constexpr std::size_t kMaxHttpBodyBytes = 1u << 20;
// The largest query string the core reads (session, seq, cursor; the host strips the ticket).
constexpr std::size_t kMaxHttpQueryBytes = 256;
// How long a receive waits for a frame before it answers with none.
constexpr TimeMs kHttpPollWaitMs = 25'000;
// A member with no request under way for this long is gone (its room connection is closed).
constexpr TimeMs kHttpIdleMs = 60'000;
// HTTP members per room, and in one host (a Durable Object or a Deno process) across rooms.
constexpr std::size_t kMaxHttpMembersPerRoom = 64;
constexpr std::size_t kMaxHttpMembers = 4096;
// Frames and bytes held for a member that has not fetched them; past it the member is closed as
// a slow reader would be (the room's maxBufferedBytes usually closes it first).
constexpr std::size_t kMaxHttpQueueFrames = 4096;
constexpr std::size_t kMaxHttpQueueBytes = 8u << 20;
// The most bytes of frames one receive response carries (at least one frame always goes).
constexpr std::size_t kMaxHttpPollBytes = 1u << 20;
// The session token: random bytes from the host, as lowercase hex.
constexpr std::size_t kHttpSessionBytes = 16;
// The relay's close code of a member that fell behind (the room endpoint's slow reader code).
constexpr int kHttpCloseSlow = 4010;
constexpr int kHttpCloseIdle = 4011;
// The relay's close code of a member whose ticket expired: a session lives no longer than the
// ticket it was opened with (or the latest one a call presented).
constexpr int kHttpCloseTicket = 4012;
// Client: consecutive failures (network, 502/503/504) retried before the link is closed.
constexpr int kHttpMaxRetries = 3;
constexpr TimeMs kHttpRetryMs = 500;
// Client: sends queued behind the one in flight, in bytes (send() refuses past it).
constexpr std::size_t kMaxHttpLinkQueueBytes = 4u << 20;

enum class HttpError : std::uint8_t {
  none,
  bad_request,      // 400: a query or body the protocol does not read
  bad_cursor,       // 400: a cursor past the last frame sent
  unknown_session,  // 404: no such session in this room (expired, closed, or the relay restarted)
  method,           // 405: the wrong method for the operation
  out_of_order,     // 409: a send's seq skipped one (the one before it never arrived)
  gone,             // 410: the frames after the cursor were dropped (the member fell behind)
  too_large,        // 413: a body over kMaxHttpBodyBytes
  room_full,        // 429: kMaxHttpMembersPerRoom HTTP members in this room
  host_full,        // 503: kMaxHttpMembers in this host
  ticket_expired,   // 401: the ticket this session stands for expired; the session is over
  wrong_writer,     // 403: the call's ticket names another writer than the session's
};
constexpr int kHttpErrorKinds = 12;
const char* http_error_name(HttpError e);
int http_error_status(HttpError e);
const char* http_error_fix(HttpError e);

// Which operation a path names (the host routes /rooms/<name>/http/<op>).
enum class HttpOp : std::uint8_t { open, send, recv, close, unknown };
HttpOp http_op(std::string_view name);

// The query fields the protocol reads, parsed strictly (hex session, decimal numbers, no
// duplicates); unknown keys are skipped so a host may leave its own (the ticket) in.
struct HttpQuery {
  HttpError error = HttpError::none;
  std::string session;
  std::optional<std::uint64_t> seq, cursor;
};
HttpQuery parse_http_query(std::string_view query);

struct HttpAction {
  enum class Kind : std::uint8_t {
    respond,  // answer request `req` with status, JSON or text body (text when status != 200)
    attach,   // open the room connection of `session` in `room` for the open `req` (its identity)
    deliver,  // one frame from `session` to its room connection
    detach,   // the session is gone: close its room connection (code, reason say why)
  };
  Kind kind = Kind::respond;
  std::uint32_t req = 0;
  int status = 200;
  std::string body;
  std::string session, room, text;
  int code = 0;
};
constexpr int kHttpActionKinds = 4;
const char* http_action_name(HttpAction::Kind k);

struct HttpMembersStats {
  std::uint64_t opened = 0, expired = 0, refused = 0, delivered = 0, queued = 0;
};

class HttpMembers {
 public:
  // An `open` whose ticket the host verified; `random` is kHttpSessionBytes from its CSPRNG. The
  // session is bound to the ticket's writer and lives until its expiry (`ticket_expires`, Unix
  // ms; 0: the host gave none), when it is closed (kHttpCloseTicket).
  void handle_open(std::uint32_t req, std::string_view room, ByteView random, TimeMs now,
                   std::string_view writer = {}, TimeMs ticket_expires = 0);
  // Any other operation of /rooms/<room>/http/<op>, with the writer and expiry of the ticket the
  // call carried when the host verified one: another writer's is refused (wrong_writer), a later
  // expiry extends the session, and a session past its expiry is closed (ticket_expired).
  void handle_request(std::uint32_t req, std::string_view method, std::string_view room,
                      std::string_view op, std::string_view query, ByteView body, TimeMs now,
                      std::string_view writer = {}, TimeMs ticket_expires = 0);
  // The relay sent a frame to the member's virtual socket, or closed it.
  void handle_outbound(std::string_view session, std::string_view text, TimeMs now);
  void handle_relay_close(std::string_view session, int code, std::string_view reason, TimeMs now);
  void handle_timeout(TimeMs now);

  std::optional<HttpAction> poll_action() { return actions_.poll(); }
  Timeout poll_timeout() const;

  // Bytes queued for a member and not yet acknowledged (its socket's bufferedAmount).
  std::size_t queued_bytes(std::string_view session) const;
  std::size_t members() const { return sessions_.size(); }
  std::size_t members_in(std::string_view room) const;
  const HttpMembersStats& stats() const { return stats_; }

 private:
  struct Session {
    std::string token, room;
    std::string writer;             // the open's ticket's (empty: the host gave none)
    TimeMs ticket_expires = 0;      // 0: none
    std::uint64_t received = 0;     // the last send seq delivered
    std::uint64_t first = 1;        // position of queue.front()
    std::deque<std::string> queue;  // frames not acknowledged
    std::size_t queue_bytes = 0;
    std::optional<std::uint32_t> poll;  // a parked receive
    TimeMs poll_deadline = 0;
    TimeMs last_seen = 0;
    TimeMs deadline = 0;  // its entry in deadlines_ (poll end or expiry)
    bool closed = false;  // the relay closed it: the next receive says so
    int close_code = 0;
    std::string close_reason;
  };
  void refuse(std::uint32_t req, HttpError e);
  void respond(std::uint32_t req, int status, std::string body);
  // Answers a receive with what follows `cursor` (true), or false when there is nothing yet.
  bool answer_poll(Session& s, std::uint32_t req, bool final_if_empty);
  void forget(const std::string& token, int code, std::string_view reason, bool detach);
  Session* find(std::string_view token, std::string_view room);
  void set_deadline(Session& s, TimeMs at);

  std::unordered_map<std::string, Session> sessions_;
  std::map<std::string, std::size_t, std::less<>> per_room_;
  std::set<std::pair<TimeMs, std::string>> deadlines_;  // one per session: the next timeout is O(1)
  PollQueue<HttpAction> actions_;
  HttpMembersStats stats_;
};

// --- the client ---------------------------------------------------------------------------------

struct HttpLinkRequest {
  std::uint32_t req = 0;
  std::string method;  // GET or POST
  std::string op;      // open, send, recv, close: the host appends it to the room's /http/ URL
  std::string query;   // what follows '?', the host adds the ticket to an open's
  std::string body;
};

struct HttpLinkEvent {
  enum class Kind : std::uint8_t {
    open,     // the session exists: the link carries frames
    message,  // one frame from the relay
    closed,   // the link is down (code and reason say why); a new HttpLink reconnects
  };
  Kind kind = Kind::open;
  std::string text;
  int code = 0;
};
constexpr int kHttpLinkEventKinds = 3;
const char* http_link_event_name(HttpLinkEvent::Kind k);

class HttpLink {
 public:
  void handle_start(TimeMs now);
  // One frame to the relay: false when the link is not open or kMaxHttpLinkQueueBytes is queued.
  bool send(std::string_view text);
  // The answer to request `req`: status 0 when fetch failed (the network, an aborted request).
  void handle_response(std::uint32_t req, int status, std::string_view body, TimeMs now);
  void handle_timeout(TimeMs now);
  // Hang up: a close goes out when the session exists, then the link is closed.
  void close();

  std::optional<HttpLinkRequest> poll_action() { return actions_.poll(); }
  std::optional<HttpLinkEvent> poll_event() { return events_.poll(); }
  Timeout poll_timeout() const { return retry_at_; }

  bool is_open() const { return state_ == State::open; }
  std::size_t buffered_bytes() const { return queued_bytes_; }
  std::uint64_t cursor() const { return cursor_; }

 private:
  enum class State : std::uint8_t { idle, opening, open, closed };
  enum class Pending : std::uint8_t { open = 1, send = 2, recv = 4 };
  void issue_open();
  void issue_recv();
  void issue_send();
  void fail(int code, std::string reason);
  // A failure that may be retried: true when one is scheduled.
  bool retry(Pending which, TimeMs now);

  State state_ = State::idle;
  std::string session_;
  std::string frame_;  // the send in flight (kept for a retry)
  std::uint32_t next_req_ = 1;
  std::uint32_t open_req_ = 0, send_req_ = 0, recv_req_ = 0;
  std::uint64_t seq_ = 0;     // the seq of the send in flight (or the last one sent)
  std::uint64_t cursor_ = 0;  // the last frame received
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  bool send_in_flight_ = false;
  int failures_ = 0;
  Timeout retry_at_;
  std::uint8_t retrying_ = 0;  // Pending bits to issue again at retry_at_
  PollQueue<HttpLinkRequest> actions_;
  PollQueue<HttpLinkEvent> events_;
};

}  // namespace tether::room
