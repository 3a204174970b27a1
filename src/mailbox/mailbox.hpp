// The hosted mailbox core: one mailbox (agent-bus-and-swarm.md, opening section and § Delivery
// semantics; the API, limits, error codes and retention are in docs/mailbox.md). Sans-IO, driven
// by the one contract (src/common/drive.hpp): HTTP requests, persistence results, reader sockets
// and the clock come in; responses, pushes and records to write go out as actions.
//
// Why this shape. One core holds one mailbox's state in memory, bounded by the limits in
// limits.hpp (at most kMaxRecords message records and kMaxStoredBytes of text), and emits every
// change as one Persist action of record puts and deletes that the host applies in a single
// transaction; at start-up the host hands the stored records back (load_record, then loaded)
// and the core is what it was. That is how the room relay hydrates, and it fits both hosts
// exactly: the edge runs one SQLite-backed Durable Object per mailbox, which is one core, and the
// Deno host loads a core per mailbox it is asked about. Keeping the state in memory (rather
// than having the core ask the host to query storage) keeps every decision synchronous and in
// C++: a send is checked against the pairing, the flood bound, the idempotency index and the
// quotas without a round trip, and the same inputs always give the same outputs.
//
// Durability: a response leaves only after the writes that precede it were reported durable
// (handle_persisted), so "stored" always means on disk and a restart loses nothing that was
// acknowledged. A failed write stops the core (storage_failed for everything held and after,
// and an Event telling the host to rebuild the core from storage, which still holds exactly
// what was acknowledged). Persists still queued are withdrawn; a host that answers persists
// asynchronously must not apply one it already polled from the failed core.
//
// Randomness: every request carries kEntropyBytes of the host's cryptographic randomness; the
// core takes mailbox ids, keys, pair ids and codes from it and never reads a random source.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "common/bytes.hpp"
#include "common/drive.hpp"
#include "mailbox/errors.hpp"
#include "mailbox/limits.hpp"
#include "mailbox/records.hpp"
#include "mailbox/request.hpp"

namespace tether::mailbox {

using RequestId = std::uint64_t;  // chosen by the host, echoed in the Respond that answers it
using ReaderId = std::uint64_t;   // chosen by the core

struct Put {
  std::string key;
  std::string value;
};

// Apply atomically, then call handle_persisted(token, ok).
struct Persist {
  std::uint64_t token = 0;
  std::vector<Put> puts;
  std::vector<std::string> deletes;
};

// The HTTP answer to one request: status and JSON body (and Retry-After when retry_after_ms>=0).
struct Respond {
  RequestId request = 0;
  int status = 200;
  std::string body;
  TimeMs retry_after_ms = -1;
};

// The stream request was accepted: upgrade it and send this reader's pushes on the socket.
struct AcceptReader {
  RequestId request = 0;
  ReaderId reader = 0;
};

// One text frame for a connected reader.
struct Push {
  ReaderId reader = 0;
  std::string text;
};

struct CloseReader {
  ReaderId reader = 0;
  int code = 1000;
  std::string reason;
};

using Action = std::variant<Persist, Respond, AcceptReader, Push, CloseReader>;

struct Event {
  enum class Kind {
    record_skipped,  // a stored record could not be read; it stays on disk, untouched
    storage_failed,  // a Persist failed: rebuild this core from storage
  };
  Kind kind = Kind::record_skipped;
  std::string key;
  std::string detail;
};

struct ChangeSet;  // the records one input changes (mailbox.cpp)

class Mailbox {
 public:
  // --- start-up: every stored record of this mailbox, in any order, then loaded(now) ---------
  // False when the record was skipped (an Event says why).
  bool load_record(std::string_view key, std::string_view value);
  void loaded(TimeMs now);

  // --- inputs ----------------------------------------------------------------------------------
  // One HTTP request. `entropy` must hold kEntropyBytes of cryptographic randomness.
  void handle_request(RequestId request, std::string_view method, std::string_view target,
                      std::string_view authorization, ByteView body, ByteView entropy, TimeMs now);
  void handle_persisted(std::uint64_t token, bool ok, TimeMs now);
  void handle_reader_closed(ReaderId reader, TimeMs now);
  // A reader socket that outlived the core (a Durable Object waking from hibernation): it gets
  // pushes again from now on.
  ReaderId restore_reader(TimeMs now);
  void handle_timeout(TimeMs now);

  // --- outputs (drive contract) ------------------------------------------------------------------
  std::optional<Action> poll_action() { return actions_.poll(); }
  std::optional<Event> poll_event() { return events_.poll(); }
  // The next expiry: a text reaching seven days, a status record, a code or a pair request
  // lapsing. Absent when nothing will expire, or once the core has failed.
  Timeout poll_timeout() const;

  // --- observation -------------------------------------------------------------------------------
  bool exists() const { return meta_.has_value(); }
  std::string id() const { return meta_ ? meta_->id : std::string(); }
  bool failed() const { return failed_; }
  std::size_t stored_messages() const { return with_text_.size(); }
  std::size_t stored_bytes() const { return stored_bytes_; }
  std::size_t records() const { return messages_.size(); }
  std::size_t readers() const { return readers_.size(); }
  // Every record the core's state amounts to, by key: after each Persist is applied the host's
  // storage holds exactly this (the property tests and the fuzz harness check).
  std::map<std::string, std::string> snapshot() const;

 private:
  struct Bucket {
    std::uint32_t tokens = kFloodBurst;
    TimeMs last = -1;
  };

  void dispatch(RequestId request, ApiRequest& req, ByteView entropy);
  void create(RequestId request, ByteView entropy);
  void info(RequestId request);
  void issue_code(RequestId request, ByteView entropy);
  void pair(RequestId request, ApiRequest& req, ByteView entropy);
  void list_pairs(RequestId request);
  void accept_pair(RequestId request, const std::string& pair);
  void unpair(RequestId request, const std::string& pair);
  void send(RequestId request, const Pairing& from, ApiRequest& req);
  void list(RequestId request, const ApiRequest& req);
  void ack(RequestId request, const ApiRequest& req);
  void status(RequestId request, const Pairing& from, const std::string& id);
  void stream(RequestId request, const ApiRequest& req);

  // Owner and sender checks: the error to answer, or nullopt / the pairing.
  std::optional<ApiError> check_owner(const Credential& c) const;
  Result<const Pairing*, ApiError> check_sender(const Credential& c) const;
  std::optional<ApiError> take_flood_token(const std::string& pair);

  void expire(TimeMs now);
  void forget_message(std::map<std::int64_t, Message>::iterator it, ChangeSet& change);
  void forget_pair(const std::string& pair, ChangeSet& change);
  void drop_text(Message& m);
  void evict_revoked(ChangeSet& change);

  // Output, in order behind the writes before it.
  void commit(ChangeSet change);
  void hold(Action action);
  void respond(RequestId request, int status, std::string body, TimeMs retry_after_ms = -1);
  void respond_error(RequestId request, const ApiError& e);
  void release();
  void fail(std::string detail);

  std::string message_json(const Message& m) const;

  std::optional<Meta> meta_;
  std::map<std::int64_t, Message> messages_;  // by seq, which is also the order they were stored
  std::set<std::int64_t> with_text_;          // seqs still holding text: the next to expire first
  std::map<std::pair<std::string, std::string>, std::int64_t> by_sender_id_;  // (pair, id) -> seq
  std::size_t stored_bytes_ = 0;
  std::map<std::string, Pairing> pairs_;                      // by pair id
  std::unordered_map<std::string, std::string> pair_by_key_;  // sender key hash -> pair id
  std::map<std::string, Code> codes_;                         // by code hash
  std::unordered_map<std::string, Bucket> buckets_;           // flood bound, in memory only
  std::set<ReaderId> readers_;  // connected readers: every new message is pushed to each
  ReaderId next_reader_ = 1;
  TimeMs clock_ = 0;  // never goes back, so stored times follow seq order

  std::uint64_t next_token_ = 0;     // the last Persist token issued
  std::uint64_t acked_through_ = 0;  // every token up to this one was reported durable
  std::set<std::uint64_t> acked_early_;
  struct Held {
    std::uint64_t after = 0;
    Action action;
  };
  std::deque<Held> held_;
  bool failed_ = false;

  PollQueue<Action> actions_;
  PollQueue<Event> events_;
};

}  // namespace tether::mailbox
