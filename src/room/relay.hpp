// The room relay core (the room-relay spec, all sections): room-scoped sequencing, the
// journal, per-path register retention, admission evidence (ranges and the settled vector), the
// tri-state welcome, membership, presence, signal routing, tripwire policy with both ejection
// scopes, the per-writer token bucket, durability gates, hydrate and unload.
//
// Sans-IO (docs/design.md rule 1): connections are ids, time comes in as now_ms, the instance nonce's
// randomness from a seed. Input is a client message as JSON text; output is a list of actions
// (send this text to these connections, close that one, call this observer) that the caller
// drains after each call. JS policy callbacks are reached through PolicyHooks only when the
// options say one is configured.
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

#include "room/envelope.hpp"
#include "room/json_scan.hpp"
#include "room/registers.hpp"

namespace tether::room {

using ConnId = std::uint32_t;

// pathPrefixAcl, natively: `'*'` matches one segment; the rule's allow(ctx, room) is asked through
// PolicyHooks::acl_allow once per member and remembered (a policy is pure by contract).
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
  bool has_validate = false;
  bool has_can_bump = false;
  bool verify_citations = false;
  bool native_acl = false;
  std::vector<AclRule> acl;
  std::uint64_t seed = 0;  // for instance nonces
};

// The JS policy seam. Arguments are JSON text the caller turns into values when it needs them.
class PolicyHooks {
 public:
  virtual ~PolicyHooks() = default;
  virtual bool can_write(ConnId conn, std::string_view path_json, const std::string& room, double seq) = 0;
  virtual bool validate(ConnId conn, std::string_view op_json, const std::string& room, double seq) = 0;
  virtual bool can_bump(ConnId conn, std::string_view path_json, double epoch, const std::string& room,
                        double seq) = 0;
  virtual bool acl_allow(ConnId conn, std::size_t rule, const std::string& room) = 0;
};

// One thing the caller must do, in order.
struct RoomAction {
  enum class Kind : std::uint8_t {
    send,               // text[text] to conn
    close,              // close conn's socket
    commit,             // call onCommit(room, env=text[text]); then answer commit_result(ticket)
    drop,               // onDrop(room, current env, reason)
    violation,          // onViolation(room, text[text] = violation JSON)
    reject,             // onReject(room, conn's ctx, reason, expected)
    join,               // onJoin(room, conn's ctx, origin = text[text])
    durability_failed,  // onDurabilityFailed(room, env = text[text], cause of ticket)
  };
  Kind kind;
  ConnId conn = 0;
  std::uint32_t text = 0;    // index into RoomRelay::texts()
  std::uint32_t room = 0;    // index into texts(): the room name as a plain string
  std::uint64_t ticket = 0;  // commit and durability_failed
  const char* reason = "";   // drop and reject
  double expected = 0;       // reject; NaN when absent
};

enum class ReceiveError { none, unparseable, not_an_object, bad_type, bad_room, bad_hello, unknown_connection, other_room };
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

class RoomRelay {
 public:
  explicit RoomRelay(RoomRelayOptions options, PolicyHooks* hooks = nullptr);
  ~RoomRelay();
  RoomRelay(const RoomRelay&) = delete;
  RoomRelay& operator=(const RoomRelay&) = delete;

  // Connections. `writer` is the authenticated principal (ctx.writer). A non-empty `only_room`
  // binds the connection to that room (an adapter whose ticket names one room): a message naming
  // any other room is refused as other_room before it can join, read or write anything.
  ConnId connect(std::string writer, std::string only_room = std::string());
  void disconnect(ConnId conn);

  // One client message as JSON text. Actions accumulate until clear_actions().
  ReceiveError receive(ConnId conn, std::string_view text, double now_ms);

  // The verdict on a commit's durability (RoomAction::commit): ok releases what waits on it in order,
  // pending keeps it held, failed stalls the room once it reaches the head.
  enum class Verdict { ok, pending, failed };
  void commit_result(std::uint64_t ticket, Verdict v);

  std::optional<RoomInfo> room(const std::string& name) const;
  // Snapshot JSON text (RoomSnapshot). Returns false when refused or malformed.
  bool hydrate(const std::string& name, std::string_view snapshot_json, double now_ms);
  bool unload(const std::string& name, bool discard);

  // The state handed to onCommit, read live: {"seq","instance","wm","ranges","settled","schemaVersion"}
  // and the register checkpoint (RegisterCheckpoint[]), as JSON text.
  std::string state_json(const std::string& name) const;
  std::string checkpoint_json(const std::string& name) const;

  const std::vector<RoomAction>& actions() const { return actions_; }
  // A deque, so a text's bytes stay where they are until clear_actions() (bindings hand out views).
  const std::deque<std::string>& texts() const { return texts_; }
  void clear_actions();

  // Measurement: retained registers and the bytes they hold, across rooms.
  std::size_t register_count() const;
  std::size_t register_bytes() const;

 private:
  struct Room;
  struct Member;
  struct Connection;
  struct Release;

  Room& room_of(const std::string& name, double now_ms);
  std::string mint_instance(double now_ms);
  void maybe_evict(const std::string& name);
  std::uint32_t text(std::string s);
  std::uint32_t room_text(Room& room);
  void send(ConnId conn, std::uint32_t t);
  void broadcast(Room& room, std::uint32_t t, std::uint32_t except = 0xffffffffu);
  void remove_member(Room& room, std::uint32_t member);
  void drop_presence(Room& room, std::uint32_t member);
  void drop_member(Room& room, std::uint32_t member);
  void eject(Room& room, std::uint32_t member, const std::string& writer, const char* reason,
             const std::string& detail, const std::string* path_json);
  bool over_rate(Room& room, const std::string& writer, double now_ms);
  void hello(ConnId conn, Connection& c, std::uint32_t msg, const std::string& name, double now_ms);
  void envelope(ConnId conn, Connection& c, std::uint32_t member, Room& room, std::uint32_t env,
                const std::string& name, double now_ms);
  std::string seq_envelope(std::uint32_t env, double seq) const;
  void submit(Room& room, std::unique_ptr<Release> entry);
  void drain(Room& room);
  void run(Room& room, Release& entry);
  std::string welcome_text(Room& room, std::uint32_t member, const std::string& head_and_body);
  OriginId intern(Room& room, const std::string& origin);
  void append_wm(std::string& out, const Room& room) const;
  void append_ranges(std::string& out, const Room& room) const;
  void append_settled(std::string& out, const Room& room) const;
  bool acl_can_write(ConnId conn, Member& m, const OpView& op, const std::string& room);

  RoomRelayOptions opt_;
  PolicyHooks* hooks_;
  std::unordered_map<std::string, std::unique_ptr<Room>> rooms_;
  std::unordered_map<ConnId, Connection> conns_;
  // By member id. A member leaves the table when its connection disconnects and it is no longer
  // in its room; release entries that still name it find nothing and skip it.
  std::unordered_map<std::uint32_t, Member> members_;
  std::uint32_t next_member_ = 0;
  const Member* find_member(std::uint32_t id) const;
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
  std::uint64_t next_ticket_ = 1;
  std::uint64_t rng_;
  std::uint64_t instance_counter_ = 0;
  std::vector<RoomAction> actions_;
  std::deque<std::string> texts_;
  EnvelopeView scratch_;
  JsonScan scan_;  // the message being handled
  std::string room_scratch_;
  std::vector<std::vector<OriginId>> cite_ids_;
};

}  // namespace tether::room
