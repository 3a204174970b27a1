// The room client core (the room-relay spec, "The envelope", "Persistence", "Writes the
// relay refuses without ejecting anyone"): what a peer runs against the room relay. A hybrid
// logical clock; an envelope builder that cites the live siblings at each path and carries their
// epoch; the unacknowledged tail, resent after every welcome; the drop reasons; hydration from
// welcome snapshots and deltas; and a last-writer-wins fold of the registers into one JSON value.
//
// Sans-IO like the relay: server messages come in as JSON text with now_ms, client messages go
// out as JSON text. The fold is this client's policy (the relay never folds): per path, the live
// sibling with the highest (epoch, hlc, origin) wins, and winners apply in (hlc, origin) order,
// so a newer write at an ancestor replaces an older subtree and a newer leaf lands inside it.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "room/envelope.hpp"

namespace tether::room {

struct RoomClientOptions {
  std::string room;
  std::string origin;  // this replica (one per tab or device)
  std::string writer;  // the authenticated principal
  double policy_version = 0;
  double schema_version = 0;
};

// A write the relay refused ('generation', 'schema', 'order'): not in the room. The values are
// in the envelope; whether to write them again is the person's call (spec).
struct RefusedWrite {
  std::string reason;
  std::string envelope;  // the OpEnvelope JSON
};

class RoomClient {
 public:
  explicit RoomClient(RoomClientOptions options);

  // The hello to send on every (re)connect: carries the last applied seq of this generation.
  std::string hello() const;
  // Builds one envelope from StoreOps (JSON array of {kind, path, next?, prev?}), stamps the
  // clock, fills cites and epoch from the registers, applies it locally, queues it in the tail
  // and returns the client message to send. nullopt when `ops_json` is not an array of ops or
  // the client has not been welcomed yet (no generation to write in).
  std::optional<std::string> write(std::string_view ops_json, double now_ms);
  // One server message. Returns the client messages to send in answer (the tail after a welcome,
  // a fresh hello after a refusal).
  std::vector<std::string> receive(std::string_view server_json, double now_ms);

  // The unacknowledged tail as client messages, oldest first (what a welcome resends).
  std::vector<std::string> tail_messages() const;
  // The folded document.
  Json value() const;
  std::size_t unacked() const { return tail_.size(); }
  double seq() const { return seq_; }
  const std::string& instance() const { return instance_; }
  const std::vector<RefusedWrite>& refused() const { return refused_; }
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

  Hlc tick(double now_ms);
  void observe(const Hlc& remote, double now_ms);
  void ingest(const Json& env);
  void settle(const Json& settled);
  static std::string key_of(const Json& path);
  bool live(const Register& r, const Sibling& s) const;

  RoomClientOptions opt_;
  Hlc clock_;
  double version_ = 0;
  double seq_ = 0;
  std::string instance_;
  bool welcomed_ = false;
  bool catching_up_ = false;  // a gap in the seqs sent a hello; envs wait for its welcome
  std::map<std::string, Register> registers_;
  std::vector<Pending> tail_;
  std::vector<RefusedWrite> refused_;
};

}  // namespace tether::room
