// Admission limits of a room endpoint (the room-relay spec, "Trust": the adapter must limit
// connection attempts, concurrent connections, payload sizes and incoming messages before any
// parsing, and keep principal-level budgets and abuse cooldowns across reconnects). Every check
// here runs before the relay core reads a byte of a frame. One Admission serves a whole host (the
// Durable Object, the Deno process); rooms are scopes inside it.
//
// Sans-IO and driven like every core (common/drive.hpp). A principal's saved budget is I/O: the
// core asks for it (load_budget) the first time it needs it and tells the host what to keep
// (save_budget); the verdict on a connection attempt is an event, delivered once the budget is
// known. What answers what is docs/rooms.md § Limits (its table); the close codes are CloseCode.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/ack_marks.hpp"
#include "common/drive.hpp"

namespace tether::room {

// How a refused frame or socket is closed (WebSocket close codes; docs/rooms.md § Limits).
enum class CloseCode : std::uint16_t {
  none = 0,
  binary = 1003,       // a binary frame: the room protocol is JSON text
  invalid = 1007,      // a frame the relay core could not read
  ejected = 1008,      // the room policy's tripwire
  too_big = 1009,      // a frame larger than max_frame_bytes
  storage = 1011,      // the room's storage failed; reconnect and resend
  rate = 4008,         // this connection sent more than its message rate
  budget = 4009,       // the principal spent its budget across all its connections
  slow_reader = 4010,  // more than max_buffered_bytes queued for one reader
};

// The defaults (docs/rooms.md § Limits).
constexpr double kDefaultMaxFrameBytes = 256 * 1024;
constexpr double kDefaultConnectionMessagesPerSecond = 50;
constexpr double kDefaultConnectionBurst = 200;
constexpr double kDefaultPrincipalMessagesPerSecond = 100;
constexpr double kDefaultPrincipalBurst = 1000;
constexpr double kDefaultCooldownMs = 30'000;
constexpr double kDefaultMaxConnectionsPerRoom = 256;
constexpr double kDefaultMaxBufferedBytes = 4 * 1024 * 1024;
// The slow-reader rule where the runtime cannot say what a socket holds (workerd has no
// bufferedAmount): the relay models the socket's queue, assuming the reader drains at least this
// many bytes a second, and answers as if that model were the socket's bufferedAmount.
constexpr double kDefaultReaderBytesPerSecond = 1024 * 1024;
// Ephemeral frames (presence updates) may fill a reader's queue only this far, so the rest stays
// for the frames that carry the room (echoes, welcomes, membership): presence goes first.
constexpr double kEphemeralQueueShare = 0.5;
// Read acknowledgements (room/read_ack.hpp): a reader acknowledges every this share of
// max_buffered_bytes (at least kMinReadAckBytes), so a reader that reads keeps at most about this
// much unacknowledged and the rest of the bound is slack for frames in flight.
constexpr double kReadAckShare = 0.25;
// The marks (ends of acknowledgeable frames) kept per socket, oldest dropped first. A socket held
// to its acknowledgements never has more than 1 / kReadAckShare + 1 outstanding.
constexpr std::size_t kMaxReadAckMarks = 8;
// Read acknowledgements are required of every reader by default (docs/rooms.md § The slow-reader
// rule, which says why): a socket whose runtime cannot count what its reader has not taken is
// held to what it acknowledged from its first frame, so one that never acknowledges is closed
// with 4010 once it has been handed max_buffered_bytes. Off, such a socket keeps bufferedAmount
// where the runtime has it and the pace model (reader_bytes_per_second) where it has not.
constexpr bool kDefaultRequireReadAck = true;
constexpr std::string_view kRequireReadAckName = "requireReadAck";
// HTTP answers to a refused connection attempt, and how long to wait before the next.
constexpr int kStatusRoomFull = 503;
constexpr int kStatusCoolingDown = 429;
constexpr int kRoomFullRetryAfterSeconds = 10;

struct AdmissionLimits {
  double max_frame_bytes = kDefaultMaxFrameBytes;  // UTF-8 bytes of one frame
  double connection_messages_per_second = kDefaultConnectionMessagesPerSecond;
  double connection_burst = kDefaultConnectionBurst;
  double principal_messages_per_second = kDefaultPrincipalMessagesPerSecond;
  double principal_burst = kDefaultPrincipalBurst;
  double cooldown_ms = kDefaultCooldownMs;
  double max_connections_per_room = kDefaultMaxConnectionsPerRoom;
  double max_buffered_bytes = kDefaultMaxBufferedBytes;
  double reader_bytes_per_second = kDefaultReaderBytesPerSecond;
  // The deployment switch (kRequireReadAckName in configuration, a boolean).
  bool require_read_ack = kDefaultRequireReadAck;
};
constexpr std::size_t kAdmissionLimitCount = 9;
// The numeric limit names as configuration spells them (ROOM_LIMITS, --limits), in
// AdmissionLimits order; the switch beside them is kRequireReadAckName.
extern const char* const kAdmissionLimitNames[kAdmissionLimitCount];
double limit_value(const AdmissionLimits& l, std::size_t i);

// A partial configuration (a JSON object of limit name -> positive number, and requireReadAck ->
// true or false) over the defaults, or the message that names what to fix.
struct ParsedLimits {
  AdmissionLimits limits;
  std::string error;  // empty when ok
};
ParsedLimits parse_admission_limits(std::string_view json);

// A token bucket (rate per second, holding at most `burst`); state is plain numbers.
struct TokenBucket {
  double tokens = 0;
  double at = 0;  // ms of the last refill
  void refill(double rate, double burst, double now_ms);
  bool take(double rate, double burst, double now_ms);
};

// What a principal's budget persists as (the host stores it as it likes; JSON here).
struct BudgetState {
  double tokens = 0;
  double at = 0;
  double cooldown_until = 0;
};
std::string budget_json(const BudgetState& s);
std::optional<BudgetState> parse_budget(std::string_view json);

// What the relay knows of one socket's read acknowledgements (room/read_ack.hpp), kept by a host
// whose sockets outlive its memory (a Durable Object's hibernation) and handed back when the
// socket resumes, so the woken host counts on where the reader does.
struct ReadState {
  double sent = 0;            // UTF-8 bytes handed to the socket since its first frame
  double acked = 0;           // the last mark the reader acknowledged
  bool claimed = false;       // the reader acknowledges (its first `read` came)
  std::vector<double> marks;  // outstanding marks, oldest first, in (acked, sent]
};
// {"sent":n,"acked":n,"claimed":b,"marks":[n,...]}: at most some 200 bytes.
std::string read_state_json(const ReadState& s);
// nullopt unless it is exactly that shape with consistent counts (at most kMaxReadAckMarks marks,
// ascending, each past `acked` and at most `sent`).
std::optional<ReadState> parse_read_state(std::string_view json);

// What the host knows of a socket it opens.
struct OpenedSocket {
  // The socket's `buffered` (handle_send) counts every byte its reader has not taken, not only
  // what waits inside the runtime (an HTTP member's undelivered queue): the best evidence there
  // is, so acknowledgements are not required of it.
  bool buffered_is_exact = false;
  // It survived a hibernation of the host, which counted it before.
  bool resumed = false;
  // Its read_state_json as the host kept it before the hibernation; empty when none was kept.
  std::string_view read_state;
};

struct AdmissionAction {
  enum class Kind : std::uint8_t {
    load_budget,  // the saved budget of (scope, writer): answer handle_budget
    save_budget,  // keep `state` (budget_json) for (scope, writer)
  };
  Kind kind = Kind::load_budget;
  std::string scope;
  std::string writer;
  std::string state;
};

// The verdict on a connection attempt: status 0 admits; else the HTTP status, the message that
// says why, and the Retry-After seconds.
struct AttemptVerdict {
  std::uint64_t token = 0;
  int status = 0;
  std::string message;
  int retry_after_s = 0;
};

// The verdict on one frame: pass, ask for its exact size, or close the socket.
struct FrameVerdict {
  enum class Kind : std::uint8_t { pass, measure, close };
  Kind kind = Kind::pass;
  CloseCode code = CloseCode::none;
  std::string reason;  // at most a close frame's 123 bytes
};

// The verdict on one outgoing frame (the slow-reader rule, docs/rooms.md § Limits).
struct SendVerdict {
  enum class Kind : std::uint8_t { send, drop, close };
  Kind kind = Kind::send;
  CloseCode code = CloseCode::none;
  std::string reason;
};

class Admission {
 public:
  explicit Admission(AdmissionLimits limits = {});
  const AdmissionLimits& limits() const { return limits_; }

  // A connection attempt for `writer` in `scope` (the room). The verdict comes out of poll_event
  // with the returned token, at once when the writer's budget is known, else once the host
  // answered load_budget.
  std::uint64_t handle_attempt(std::string_view scope, std::string_view writer, TimeMs now_ms);
  // The host's answer to load_budget (nullopt: nothing saved).
  void handle_budget(std::string_view scope, std::string_view writer,
                     std::optional<BudgetState> saved, TimeMs now_ms);
  // One incoming frame: text or binary, its length in UTF-16 code units (text) or bytes
  // (binary), and its UTF-8 size when known (-1 otherwise). The core asks for the exact size
  // (measure) only when the length alone cannot decide. A close verdict is final: the host
  // closes the socket with code and reason and calls handle_closed.
  FrameVerdict handle_frame(std::uint64_t conn, bool binary, double length, double utf8_bytes,
                            TimeMs now_ms);
  void handle_closed(std::uint64_t conn, TimeMs now_ms);
  // A socket was accepted (after an admitted attempt, or a socket that survived a hibernation).
  // Returns its id for handle_frame, handle_send, handle_read, read_state and handle_closed.
  // A resumed socket whose read state came back counts on from it exactly. One whose state was
  // lost (or does not parse) was counted by an earlier incarnation of the host, so its reader's
  // count and ours no longer agree: its acknowledgements are ignored, and where acknowledgements
  // are required it is taken to hold max_buffered_bytes (presence is dropped, its next other
  // frame closes it with 4010 and it reconnects); otherwise it keeps the pace model.
  std::uint64_t handle_opened(std::string_view scope, std::string_view writer, TimeMs now_ms,
                              const OpenedSocket& how = {});
  // One frame about to be sent to `conn`: `bytes` its UTF-8 size, `ephemeral` for a presence
  // update (its loss costs nothing a later one does not repair), `buffered` what the socket
  // holds unsent, or -1 when the runtime cannot say (workerd). What the socket holds is taken
  // from the evidence there is (docs/rooms.md § The slow-reader rule): a socket that acknowledges
  // what it reads, or any socket when require_read_ack is on (but one whose `buffered` is exact),
  // holds what it has not acknowledged (or `buffered`, if larger); otherwise `buffered`; where
  // neither exists, the core's pace model of the queue. Presence is dropped
  // once the queue would pass kEphemeralQueueShare of max_buffered_bytes; any other frame that
  // would pass max_buffered_bytes closes the socket with 4010 (final: the host closes and calls
  // handle_closed). A socket that holds nothing takes any frame, whatever its size (one welcome
  // may be larger than the bound). A sent frame joins the count and the model. It queues no action and no
  // event, whatever the verdict: hosts call it once per recipient without draining.
  SendVerdict handle_send(std::uint64_t conn, double bytes, bool ephemeral, double buffered,
                          TimeMs now_ms);
  // The reader of `conn` acknowledged `bytes` (a `read` message, room/read_ack.hpp). From the
  // first one on, the socket is held to its acknowledgements. Credited only when `bytes` is a
  // mark this socket was handed (exactly where a frame crossing a multiple of read_ack_bytes()
  // ended) or 0 (the claim); anything else credits nothing. True when credited.
  bool handle_read(std::uint64_t conn, double bytes);
  // The interval readers acknowledge at, which the relay advertises in its welcome.
  double read_ack_bytes() const;
  // What a host that outlives its memory keeps for `conn` (read_state_json), to hand back through
  // OpenedSocket::read_state when the socket resumes. It changes with every frame sent and every
  // acknowledgement credited; empty for an unknown socket or one whose count was lost.
  std::string read_state(std::uint64_t conn) const;
  // Presence updates dropped for slow readers (stats and tests).
  std::uint64_t dropped_ephemeral() const { return dropped_ephemeral_; }

  std::optional<AdmissionAction> poll_action() { return actions_.poll(); }
  std::optional<AttemptVerdict> poll_event() { return events_.poll(); }
  Timeout poll_timeout() const { return std::nullopt; }  // buckets refill from each input's now_ms

  // Live connections in a scope (for stats and tests).
  std::size_t connections(std::string_view scope) const;

 private:
  struct Principal {
    TokenBucket bucket;
    double cooldown_until = 0;
    std::size_t conns = 0;
    bool loaded = false;  // the host answered load_budget
    bool used = false;    // a frame was counted against it
  };
  struct Conn {
    std::string scope;
    std::string writer;
    TokenBucket bucket;
    double queued = 0;  // the modelled unsent bytes (when the runtime cannot say)
    double queued_at = 0;
    double sent = 0;            // UTF-8 bytes handed to the socket
    double acked = 0;           // the last mark the reader acknowledged
    bool counts_reads = false;  // it acknowledges: held to sent - acked
    bool exact = false;         // OpenedSocket::buffered_is_exact
    bool blind = false;         // resumed without its read state: acknowledgements are ignored
    AckMarks<double, kMaxReadAckMarks> marks;  // outstanding marks, oldest first
  };
  struct Attempt {
    std::uint64_t token;
    std::string scope;
    std::string writer;
  };
  static std::string key(std::string_view scope, std::string_view writer);
  Principal& principal(std::string_view scope, std::string_view writer, TimeMs now_ms);
  void decide(const Attempt& a, TimeMs now_ms);
  void save(std::string_view scope, std::string_view writer, const Principal& p);

  AdmissionLimits limits_;
  std::unordered_map<std::string, Principal> principals_;  // scope \0 writer
  std::unordered_map<std::string, std::size_t> scope_conns_;
  std::unordered_map<std::uint64_t, Conn> conns_;
  std::unordered_map<std::string, std::vector<Attempt>> waiting_;  // attempts awaiting a budget
  std::uint64_t next_token_ = 1;
  std::uint64_t dropped_ephemeral_ = 0;
  PollQueue<AdmissionAction> actions_;
  PollQueue<AttemptVerdict> events_;
};

}  // namespace tether::room
