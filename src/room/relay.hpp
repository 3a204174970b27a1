// The room relay core (the room-relay spec, all sections): room-scoped sequencing, the journal,
// per-path register retention, admission evidence (ranges and the settled vector), the tri-state
// welcome, membership, presence, signal routing, tripwire policy with both ejection scopes, the
// per-writer token bucket, durability gates, hydrate and unload.
//
// Sans-IO, driven like every core (common/drive.hpp): connections are ids, time comes in as
// now_ms, the instance nonce's randomness from a seed. A client message comes in as JSON text;
// what to send, close, persist or ask leaves through poll_action(), what the application should
// learn (the createRelay observers) through poll_event().
//
// A policy the host decides (canWrite, validate, canBump, a path ACL rule's allow) is a question
// action (ask_*) whose verdict comes back through handle_policy_verdict(token, allow). The
// envelope waits for it, and so does everything its connection sends after it (per-connection
// FIFO), so an answer given at once from inside the host's perform is indistinguishable from the
// reference relay's synchronous call. Other connections are not held up.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/drive.hpp"
#include "room/envelope.hpp"
#include "room/json_scan.hpp"
#include "room/ranges.hpp"
#include "room/registers.hpp"

namespace tether::room {

using ConnId = std::uint32_t;

// pathPrefixAcl, natively: `'*'` matches one segment; the rule's allow(ctx, room) is asked as an
// ask_acl question once per member and rule, and remembered (a policy is pure by contract).
struct AclRule {
  std::vector<std::string> prefix;  // String(seg) per segment; "*" is the wildcard
};

struct RoomRelayOptions {
  double policy_version = 0;
  double journal_limit = 1000;
  double max_ops_per_envelope = 1024;
  double max_envelopes_per_second = 0;  // 0: no token bucket
  bool eject_connection = false;        // ejection: 'connection' (default 'writer')
  bool durable = false;                 // onCommit configured: every commit waits for a verdict
  bool has_policy = false;              // any policy object at all (checkEnvelope runs)
  bool has_can_write = false;
  // The host's canWrite allows every op below the room root (its own rules ask about the root
  // alone: web/edge/policy.js with no rules), so only a root op is asked about; the rest pass
  // without a question, and without the envelope parking to wait for one.
  bool can_write_root_only = false;
  bool has_validate = false;
  bool has_can_bump = false;
  bool verify_citations = false;
  bool native_acl = false;
  std::vector<AclRule> acl;
  std::uint64_t seed = 0;  // for instance nonces
  // Our extension (docs/rooms.md § The slow-reader rule), off (0) in the drop-in: every welcome
  // advertises `readAck` with this interval, and a client's {"t":"read","room","bytes"} becomes
  // a `read` action for the host's admission (room/read_ack.hpp). Off, a `read` message is what
  // it is to the reference: an envelope message without an envelope.
  double read_ack_bytes = 0;
};

// What the host must do, in order (poll_action). Texts are shared: one broadcast frame is one
// string whatever the audience, and the bindings hand out views of it.
using SharedText = std::shared_ptr<const std::string>;

struct RoomAction {
  enum class Kind : std::uint8_t {
    send,           // text to conn
    close,          // close conn's socket (the relay ejected or displaced it)
    commit,         // onCommit(room, env = text); answer handle_commit_result(token, verdict)
    ask_can_write,  // policy.canWrite(ctx of conn, path = text, room, {seq})
    ask_validate,   // policy.validate(op = text, ctx of conn, room, {seq})
    ask_can_bump,   // policy.canBump(ctx of conn, path = text, epoch, room, {seq})
    ask_acl,        // rule `rule`'s allow(ctx of conn, room), asked once per member and rule
    read,           // conn's reader acknowledged `seq` bytes (read_ack_bytes on): tell admission
  };
  Kind kind = Kind::send;
  ConnId conn = 0;
  SharedText text;
  SharedText room;            // the room's name: commit and every ask_*
  std::uint64_t room_id = 0;  // commit and ask_*: this room's incarnation, never reused in a relay
  std::uint64_t token = 0;    // commit ticket, or the question's token for handle_policy_verdict
  double seq = 0;             // ask_*: the room's seq before this envelope (PolicyRoomInfo);
                              // read: the acknowledged count
  double epoch = 0;           // ask_can_bump; commit: the room's instance serial (a generation)
  std::uint32_t rule = 0;     // ask_acl
  // send: a presence update, which a slow reader may lose (a later one repairs it); the edge's
  // slow-reader rule drops these first (room/admission.hpp).
  bool ephemeral = false;
};
// Kind names indexed by the value of RoomAction::Kind (the bindings export them).
extern const char* const kRoomActionKindNames[8];

// What the application learns (poll_event): the createRelay observers.
struct RoomEvent {
  enum class Kind : std::uint8_t {
    join,               // onJoin(room, ctx of conn, origin = text)
    reject,             // onReject(room, ctx of conn, reason, expected)
    drop,               // onDrop(room, env = text, reason)
    violation,          // onViolation(room, violation JSON = text)
    durability_failed,  // onDurabilityFailed(room, env = text, cause of commit `token`)
  };
  Kind kind = Kind::join;
  ConnId conn = 0;
  SharedText room;
  std::string text;
  const char* reason = "";  // reject and drop: one of kRoomReasonNames
  double expected = 0;      // reject; NaN when absent
  std::uint64_t token = 0;  // durability_failed: the commit ticket that failed
};
extern const char* const kRoomEventKindNames[5];
// Every reason a reject or a drop names, with "" at 0 (the bindings send reasons as indices).
extern const char* const kRoomReasonNames[8];

enum class ReceiveError {
  none,
  unparseable,
  not_an_object,
  bad_type,
  bad_room,
  bad_hello,
  unknown_connection,
  other_room,
  backlog_full
};
const char* receive_error_name(ReceiveError e);
// What went wrong and what to do about it, for the caller's error value.
const char* receive_error_message(ReceiveError e);

struct RoomInfo {
  double seq = 0;
  std::string instance;
  std::size_t members = 0;
  std::size_t journal = 0;
  bool stalled = false;
};

// A journal envelope ({...env, seq}) as the client message that wrote it ({"t":"env","room",
// "env"} without the seq, members in their order), for an adapter that replays its journal into
// a fresh relay. Empty when `seq_env_json` is not a JSON object.
std::string replay_message(std::string_view room, std::string_view seq_env_json);

class RoomRelay {
 public:
  explicit RoomRelay(RoomRelayOptions options);
  ~RoomRelay();
  RoomRelay(const RoomRelay&) = delete;
  RoomRelay& operator=(const RoomRelay&) = delete;

  // Connections. `writer` is the authenticated principal (ctx.writer). A non-empty `only_room`
  // binds the connection to that room (an adapter whose ticket names one room): a message naming
  // any other room is refused as other_room before it can join, read or write anything.
  //
  // `replay`: the host's own journal replay (docs/rooms.md § Durability at the edge), not a
  // client. What it sends was accepted once, when it was written, so it is not judged again: its
  // hello and envelopes skip the proto and policyVersion pins (the envelopes carry the version
  // they were written under, which an operator may since have bumped), the op limit, the token
  // bucket and every policy question. What keeps the room consistent still applies (shape,
  // writer, generation, duplicate, order, schema), so a store that disagrees with itself is
  // still caught.
  ConnId connect(std::string writer, std::string only_room = std::string(), bool replay = false);
  // A number the host keeps with a connection (0 until set, and for an unknown one), so a host
  // that maps connections to its own ids needs no table of its own (the bindings keep the
  // admission core's id here).
  void set_host_tag(ConnId conn, std::uint64_t tag);
  std::uint64_t host_tag(ConnId conn) const;
  // The socket is gone. Queued behind an envelope that still waits for a verdict, like any
  // message of the connection.
  void handle_disconnect(ConnId conn);

  // One client message as JSON text. An error value means the message changed nothing (and was
  // not queued); the adapter closes the connection (room-host.js answers 1007).
  ReceiveError handle_message(ConnId conn, std::string_view text, TimeMs now_ms);

  // The verdict on a commit's durability (RoomAction::commit): ok releases what waits on it in
  // order, pending keeps it held, failed stalls the room once it reaches the head.
  enum class Verdict { ok, pending, failed };
  void handle_commit_result(std::uint64_t token, Verdict v);
  // The answer to an ask_* question. An unknown or stale token is ignored.
  void handle_policy_verdict(std::uint64_t token, bool allow, TimeMs now_ms);

  // The next action, in order. Work a verdict released (the messages a connection sent while it
  // waited) runs here, one message at a time, once everything before it has been polled: an
  // action that reads live state (commit's onCommit) sees the room as of its own envelope.
  std::optional<RoomAction> poll_action();
  std::optional<RoomEvent> poll_event() { return events_.poll(); }
  // The relay has no timers: the token bucket refills from the now_ms of each message.
  Timeout poll_timeout() const { return std::nullopt; }
  // True when poll_action() has an action ready without running released work; the bindings
  // batch actions up to such a point, never past a commit or a question.
  bool action_ready() const { return !actions_.empty(); }
  bool event_ready() const { return !events_.empty(); }

  std::optional<RoomInfo> room(const std::string& name) const;
  // Snapshot JSON text (RoomSnapshot). Returns false when refused or malformed.
  bool hydrate(const std::string& name, std::string_view snapshot_json, TimeMs now_ms);
  bool unload(const std::string& name, bool discard);

  // The state handed to onCommit, read live:
  // {"seq","instance","wm","ranges","settled","schemaVersion"} and the register checkpoint
  // (RegisterCheckpoint[]), as JSON text.
  std::string state_json(const std::string& name) const;
  std::string checkpoint_json(const std::string& name) const;

  // Rooms held in memory (hydrated or created, not unloaded).
  std::size_t room_count() const { return rooms_.size(); }
  // Measurement: retained registers and the bytes they hold, across rooms.
  std::size_t register_count() const;
  std::size_t register_bytes() const;

 private:
  struct Room;
  struct Member;
  struct Connection;
  struct Release;
  struct Work;
  enum class Step { done, suspended };

  Room& room_of(const std::string& name, TimeMs now_ms);
  std::string mint_instance(TimeMs now_ms);
  void set_instance(Room& room, std::string instance);  // every assignment: a new instance_serial
  void maybe_evict(const std::string& name);
  void send(ConnId conn, const SharedText& t, bool ephemeral = false);
  void broadcast(Room& room, const SharedText& t, std::uint32_t except = 0xffffffffu,
                 bool ephemeral = false);
  void close_conn(ConnId conn);
  RoomEvent& event(RoomEvent::Kind kind, Room& room, ConnId conn = 0);
  void remove_member(Room& room, std::uint32_t member);
  void drop_presence(Room& room, std::uint32_t member);
  void drop_member(Room& room, std::uint32_t member);
  void eject(Room& room, std::uint32_t member, const std::string& writer, const char* reason,
             const std::string& detail, const std::string* path_json);
  bool over_rate(Room& room, const std::string& writer, TimeMs now_ms);
  ReceiveError check_message(const Connection& c, std::string_view text);
  void dispatch(ConnId conn, TimeMs now_ms);
  void disconnect_now(ConnId conn);
  void hello(ConnId conn, Connection& c, std::uint32_t msg, const std::string& name, TimeMs now_ms);
  void envelope(ConnId conn, Connection& c, std::uint32_t member, Room& room, std::uint32_t env,
                TimeMs now_ms);
  Step run_envelope(Work& w, TimeMs now_ms);
  void suspend(Work& w, std::string_view text);
  void finish_work(ConnId conn);
  bool run_released();
  std::optional<bool> answer_or_ask(Work& w, RoomAction::Kind kind, const Room& room,
                                    std::string_view text, double epoch = 0,
                                    std::uint32_t rule = 0);
  std::optional<bool> acl_can_write(Work& w, Member& m, const OpView& op, const Room& room);
  std::string seq_envelope(const JsonScan& scan, std::uint32_t env, double seq) const;
  void submit(Room& room, std::unique_ptr<Release> entry);
  void drain(Room& room);
  void run(Room& room, Release& entry);
  std::string welcome_text(Room& room, std::uint32_t member, const std::string& head_and_body);
  OriginId intern(Room& room, const std::string& origin);
  void append_wm(std::string& out, const Room& room) const;
  void append_ranges(std::string& out, const Room& room) const;
  void append_settled(std::string& out, const Room& room) const;
  const Member* find_member(std::uint32_t id) const;

  RoomRelayOptions opt_;
  std::unordered_map<std::string, std::unique_ptr<Room>> rooms_;
  std::unordered_map<ConnId, Connection> conns_;
  // By member id. A member leaves the table when its connection disconnects and it is no longer
  // in its room; release entries that still name it find nothing and skip it.
  std::unordered_map<std::uint32_t, Member> members_;
  std::uint32_t next_member_ = 0;
  ConnId next_conn_ = 1;
  std::uint64_t next_room_incarnation_ = 1;
  // Commit tickets awaiting a verdict: ticket -> (room incarnation, release entry id). Tickets
  // count up from 1 per relay, so they stay exact as JS numbers.
  struct PendingCommit {
    std::uint64_t incarnation;
    std::uint64_t entry;
  };
  std::unordered_map<std::uint64_t, PendingCommit> pending_;
  std::unordered_map<std::uint64_t, Room*> by_incarnation_;
  std::uint64_t next_token_ = 1;  // commit tickets and question tokens share one counter
  std::uint64_t rng_;
  std::uint64_t instance_counter_ = 0;
  std::uint64_t instance_serials_ = 0;  // Room::instance_serial's source
  PollQueue<RoomAction> actions_;
  PollQueue<RoomEvent> events_;
  // Questions awaiting a verdict: token -> the connection whose envelope asked.
  std::unordered_map<std::uint64_t, ConnId> asked_;
  // Connections whose backlog a verdict released, in the order they were released.
  std::deque<ConnId> released_;
  // Envelopes parked on a question, and spares (their buffers stay warm across envelopes).
  std::vector<std::unique_ptr<Work>> spare_work_;
  // The message being handled: its scan, validated envelope and cite ids. A question moves them
  // into a Work by swapping with a spare, so the hot path never copies them.
  JsonScan scan_;
  EnvelopeView scratch_;
  std::vector<std::vector<OriginId>> cite_ids_;
  std::string room_scratch_;
};

}  // namespace tether::room
