// What one mailbox keeps, and the records it is stored as (docs/mailbox.md § Storage). The core
// is the only writer and reader of these records: hosts store (key, value) text pairs and hand
// them back at start-up, never looking inside. Keys sort in a useful order: "msg/" keys by seq.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "common/result.hpp"
#include "mailbox/limits.hpp"
#include "mailbox/request.hpp"

namespace tether::mailbox {

struct Meta {
  std::string id;          // the mailbox id
  std::string owner_hash;  // SHA-256 of the owner key, hex; the key itself is never stored
  TimeMs created = 0;
  std::int64_t next_seq = 1;  // kept so seqs never repeat, even after every message is gone
};

enum class PairState { pending, active, revoked };
std::string_view pair_state_name(PairState s);

struct Pairing {
  std::string pair;      // kPairIdBytes as hex
  std::string name;      // the sender's display name
  std::string key_hash;  // SHA-256 of the sender key, hex
  PairState state = PairState::pending;
  TimeMs created = 0;
  TimeMs changed = 0;  // accepted or revoked at
};

struct Code {
  std::string hash;  // SHA-256 of the code, hex
  TimeMs expires = 0;
};

struct Message {
  std::int64_t seq = 0;
  std::string pair;                 // who sent it
  std::string sender_name;          // the pairing's name when it was sent
  std::string id;                   // the sender's idempotency id
  std::string text_hash;            // SHA-256 of the text, hex: a resend is compared against it
  std::optional<std::string> text;  // gone once read or past retention
  Status status = Status::stored;
  TimeMs stored = 0;
  TimeMs delivered = -1;
  TimeMs read = -1;

  TimeMs text_expires() const { return stored + kRetentionMs; }
  TimeMs record_expires() const { return stored + kRetentionMs + kStatusRetentionMs; }
};

std::string meta_key();
std::string pair_key(std::string_view pair);
std::string code_key(std::string_view hash);
std::string message_key(std::int64_t seq);

std::string encode_record(const Meta& m);
std::string encode_record(const Pairing& p);
std::string encode_record(const Code& c);
std::string encode_record(const Message& m);

using Record = std::variant<Meta, Pairing, Code, Message>;
// A stored record back, checked as strictly as a request: the wrong version, a field out of its
// bounds or a key that does not match the content is refused with the reason.
Result<Record, std::string> decode_record(std::string_view key, std::string_view value);

}  // namespace tether::mailbox
