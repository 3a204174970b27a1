// The room client core (the room-relay spec, "The envelope", "Persistence", "Writes the
// relay refuses without ejecting anyone"): what a peer runs against the room relay. A hybrid
// logical clock; an envelope builder that cites the live siblings at each path and carries their
// epoch; the unacknowledged tail, resent after every welcome; the drop reasons; hydration from
// welcome snapshots and deltas; and a last-writer-wins fold of the registers into one JSON value.
//
// Sans-IO like the relay and driven the same way (common/drive.hpp): server messages come in as
// JSON text with now_ms; the client messages to send leave through poll_transmit() as JSON text,
// and refused writes through poll_event(). The fold is this client's policy (the relay never
// folds): per path, the live sibling with the highest (epoch, hlc, origin) wins, and winners apply
// in (hlc, origin) order, so a newer write at an ancestor replaces an older subtree and a newer
// leaf lands inside it.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/drive.hpp"
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
  // and its client message for poll_transmit. False (nothing queued) when `ops_json` is not an
  // array of ops or the client has not been welcomed yet (no generation to write in).
  bool write(std::string_view ops_json, TimeMs now_ms);
  // One server message. What to send in answer (the tail after a welcome, a fresh hello after a
  // refusal) is queued for poll_transmit.
  void handle_message(std::string_view server_json, TimeMs now_ms);

  std::optional<std::string> poll_transmit() { return transmits_.poll(); }
  std::optional<RefusedWrite> poll_event() { return events_.poll(); }
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

  Hlc tick(TimeMs now_ms);
  void observe(const Hlc& remote, TimeMs now_ms);
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
  PollQueue<std::string> transmits_;
  PollQueue<RefusedWrite> events_;
};

}  // namespace tether::room
