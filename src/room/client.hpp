// The room client core (the room-relay spec, "The envelope", "Persistence", "Writes the
// relay refuses without ejecting anyone"): what a peer runs against the room relay. A hybrid
// logical clock; an envelope builder that cites the live siblings at each path and carries their
// epoch; the unacknowledged tail, resent after every welcome; the drop reasons; hydration from
// welcome snapshots and deltas; and a last-writer-wins fold of the registers into one JSON value.
//
// Sans-IO like the relay and driven the same way (common/drive.hpp): server messages come in as
// JSON text with now_ms; the client messages to send leave through poll_transmit() as JSON text,
// and what the relay refused (a write, our hello, or us) through poll_event(). The clock observes every stamp the client learns of:
// live envelopes, a welcome's delta and snapshot (siblings and watermarks) and a seeded outbox, so
// a late joiner whose wall clock lags never writes below a write it has seen (its write would
// lose every fold to the older one). The fold is this client's policy (the relay never
// folds): per path, the live sibling with the highest (epoch, hlc, origin) wins, and winners apply
// in (hlc, origin) order, so a newer write at an ancestor replaces an older subtree and a newer
// leaf lands inside it.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/drive.hpp"
#include "common/json.hpp"
#include "room/envelope.hpp"
#include "room/read_ack.hpp"

namespace tether::room {

struct RoomClientOptions {
  std::string room;
  std::string origin;  // this replica (one per tab or device)
  std::string writer;  // the authenticated principal
  double policy_version = 0;
  // The data shape this client writes (spec: "Persistence"). The hello carries it (a relay whose
  // room is newer rejects it as `schema`); an envelope carries it only where it cuts nothing
  // another wrote: a migration (RoomClient::migrate), or the first write into a room nobody has
  // written. Every other envelope carries the room's own schema, so an ordinary write can never
  // become a migration that drops the document (docs/rooms.md § Migrations).
  double schema_version = 0;
};

// Why write() or migrate() queued nothing (docs/rooms.md § Migrations). The transient ones
// (not_welcomed, migrating) pass with the next welcome; the others name something to change.
enum class WriteRefusal : std::uint8_t {
  none,
  not_welcomed,     // before the first welcome, and after a reject or an eject until the next
  migrating,        // a migration of ours is in flight: the next welcome opens its generation
  bad_ops,          // not a non-empty array of {kind: set|delete|clear, path: [...]}
  needs_migration,  // the room holds an older schema than ours: migrate() it first
  outdated,         // the room holds a newer schema than ours: this client is out of date
  no_migration,     // migrate() on a room already at our schema (or newer)
  migration_root,   // a migration replaces the document: it must set the root path []
};
const char* write_refusal_name(WriteRefusal r);

// What write() and migrate() did: true when the envelope was queued for poll_transmit.
struct WriteOutcome {
  WriteRefusal refusal = WriteRefusal::none;
  explicit operator bool() const { return refusal == WriteRefusal::none; }
};

// What the relay refused, as poll_event() reports it (docs/rooms.md § The room client):
//   refused:  a write ('generation', 'schema', 'order'): not in the room. The values are in the
//             envelope; whether to write them again is the person's call (spec);
//   rejected: our hello ('proto', 'policy-version', 'schema', 'unauthorized'); `expected` is what
//             the relay runs, or -1. The client is not welcomed until a hello is accepted;
//   ejected:  us, for a policy violation of our writer (`reason`); the relay closes the socket;
//   lost:     the relay came back with the room in a new generation that no migration cut
//             (`room-lost`: it restarted without storage), so the document we held is gone from
//             the room and from this client; `envelope` holds it (the folded value, JSON), for
//             the application to write again if it should be kept.
struct RoomClientEvent {
  enum class Kind : std::uint8_t { refused, rejected, ejected, lost };
  Kind kind = Kind::refused;
  std::string reason;
  std::string envelope;  // refused: the OpEnvelope JSON; lost: the document we held (JSON)
  double expected = -1;  // rejected: what the relay expected, or -1
};
const char* room_client_event_name(RoomClientEvent::Kind k);

class RoomClient {
 public:
  explicit RoomClient(RoomClientOptions options);

  // The hello to send on every (re)connect: carries the last applied seq of this generation.
  std::string hello() const;
  // A new socket: its read count starts again (room/read_ack.hpp). Returns hello().
  std::string connect();
  // Builds one envelope from StoreOps (JSON array of {kind, path, next?, prev?}), stamps the
  // clock, fills cites and epoch from the registers, applies it locally, queues it in the tail
  // and its client message for poll_transmit. False (nothing queued) when `ops_json` is not an
  // array of ops or the client is not welcomed (before the first welcome, and after a reject or
  // an eject until the next one: no generation to write in), and where the room's schema is not
  // ours (WriteRefusal says which way, and what to do).
  WriteOutcome write(std::string_view ops_json, TimeMs now_ms);
  // The envelope that moves a room written at an older schema to ours: the ops (a `set` at the
  // root path [] among them, the whole document in the new shape) are stamped with our schema,
  // so the relay cuts a new generation with exactly them in it. Until the welcome into that
  // generation, write() refuses as `migrating` (a write in the old one would be refused as
  // `generation` after the cut).
  WriteOutcome migrate(std::string_view ops_json, TimeMs now_ms);
  // The schema the room holds, from the last welcome (-1 before the first one).
  double room_schema_version() const { return room_schema_; }
  // Seeds a new client with a persisted outbox: the client messages tail_messages() returned
  // before the process went away, oldest first. They are resent after the first welcome (the
  // relay answers what it already holds as 'duplicate', the acknowledgement), dropped loudly as
  // 'generation' when the room was cut meanwhile; the version counter continues after them and
  // the clock observes their stamps. Only before the first welcome and into an empty tail. An
  // empty string when seeded, else what is wrong (nothing is seeded then).
  std::string seed_tail(const std::vector<std::string>& messages, TimeMs now_ms);
  // One server message. What to send in answer (the tail after a welcome, a fresh hello after a
  // refusal, a read acknowledgement when the relay asked for them) is queued for poll_transmit.
  // `frame`: the text is the socket's frame byte for byte, so it counts towards what this socket
  // read; false (a message parsed and serialised again) stops acknowledgements on this socket.
  void handle_message(std::string_view server_json, TimeMs now_ms, bool frame = true);

  std::optional<std::string> poll_transmit() { return transmits_.poll(); }
  std::optional<RoomClientEvent> poll_event() { return events_.poll(); }
  Timeout poll_timeout() const { return std::nullopt; }

  // The unacknowledged tail as client messages, oldest first (what a welcome resends).
  std::vector<std::string> tail_messages() const;
  // The folded document.
  Json value() const;
  std::size_t unacked() const { return tail_.size(); }
  double seq() const { return seq_; }
  const std::string& instance() const { return instance_; }
  bool welcomed() const { return welcomed_; }

 private:
  struct Sibling {
    std::string origin;
    Hlc hlc;
    double epoch = 0;
    std::string kind;
    Json value;  // set only
  };
  struct Register {
    Json path;
    std::vector<Sibling> siblings;
    std::map<std::string, Hlc> water;
  };
  struct Pending {
    double version;
    std::string instance;
    std::string message;  // {"t":"env",...}
    Json env;
  };

  void apply(std::string_view server_json, TimeMs now_ms);
  static std::optional<Json> store_ops(std::string_view ops_json);
  WriteOutcome build(const Json& input, TimeMs now_ms, double schema, bool migration);
  bool in_registers(const Pending& p) const;
  Hlc tick(TimeMs now_ms);
  void observe(const Hlc& remote, TimeMs now_ms);
  void ingest(const Json& env);
  void observe_registers(const Json& registers, TimeMs now_ms);
  void refused(std::string reason, const Json& env);
  void raise_version(double admitted);
  void settle(const Json& settled);
  static std::string key_of(const Json& path);
  bool live(const Register& r, const Sibling& s) const;

  RoomClientOptions opt_;
  Hlc clock_;
  double version_ = 0;
  double seq_ = 0;
  std::string instance_;
  bool welcomed_ = false;
  double room_schema_ = -1;   // from the last welcome
  bool migrating_ = false;    // our migration is in flight: no write until the next welcome
  bool catching_up_ = false;  // a gap in the seqs sent a hello; envs wait for its welcome
  std::map<std::string, Register> registers_;
  std::vector<Pending> tail_;
  ReadCounter reads_;
  bool uncounted_ = false;  // a message that was not the socket's frame: no acknowledgements
  PollQueue<std::string> transmits_;
  PollQueue<RoomClientEvent> events_;
};

}  // namespace tether::room
