// The policy check of one envelope (the room-relay spec, "Trust: OpPolicy and the tripwire"), as
// the reference exports it (checkEnvelope): the envelope's writer must be the connection's
// (writer-mismatch), then, when there is a policy, each op in order is put to canWrite and then to
// validate, and the first refusal is the violation (can-write or validate, at that op's path).
//
// Sans-IO (common/drive.hpp): the policy functions are the host's, so each is a question the host
// answers with handle_verdict; nothing calls out mid-call. The relay runs the same rule inside its
// envelope pipeline; this is the standalone form tether/relay exports.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "room/json_scan.hpp"

namespace tether::room {

class EnvelopeCheck {
 public:
  struct Question {
    enum class Kind : std::uint8_t { can_write, validate };
    Kind kind;
    std::size_t op;  // the op's index in env.ops
  };
  // `env_json`: the envelope as JSON text; `writer_json`: the connection's writer as JSON text
  // (empty when it has none); which policy functions exist.
  EnvelopeCheck(std::string_view env_json, std::string_view writer_json, bool has_policy,
                bool can_write, bool validate);

  // The next question, or none once decided.
  std::optional<Question> poll_question() const;
  void handle_verdict(bool allow);

  bool done() const { return done_; }
  // Set once done: "" when clean, else the violation's reason.
  const std::string& reason() const { return reason_; }
  // The op whose path the violation names (can-write, validate).
  std::size_t op() const { return op_; }
  // The envelope is not one (not JSON, or its ops are not an array when a policy must read them).
  bool unreadable() const { return unreadable_; }

 private:
  void advance();
  JsonScan scan_;
  bool can_write_ = false;
  bool validate_ = false;
  std::size_t ops_ = 0;
  std::size_t op_ = 0;
  bool asking_validate_ = false;
  bool done_ = false;
  bool unreadable_ = false;
  std::string reason_;
};

}  // namespace tether::room
