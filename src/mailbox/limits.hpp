// Every bound of the hosted mailbox as a named constant (agent-bus-and-swarm.md, opening section
// and § Delivery semantics: "the separate hosted mailbox retains text for seven days"; the API and
// its limits are documented in docs/mailbox.md). Each bound is checked before anything is
// allocated for the input it limits; hosts read them from mailboxLimits(), never as literals.
#pragma once
#include <cstddef>
#include <cstdint>

#include "common/drive.hpp"

namespace tether::mailbox {

// --- identifiers and keys: made from random bytes the host supplies with every request --------
// The core never reads a random source (DESIGN.md rule 1); the host hands it kEntropyBytes of
// cryptographic randomness per request and the core takes what that request needs.
constexpr std::size_t kMailboxIdBytes = 16;  // 128 bits: a mailbox id is unguessable
constexpr std::size_t kKeyBytes = 32;        // owner and sender keys, 256 bits
constexpr std::size_t kPairIdBytes = 8;      // names a pairing inside one mailbox; not a secret
constexpr std::size_t kCodeBytes = 16;       // a pairing code, 128 bits, single use
// The most any one request consumes (create: the id and the owner key).
constexpr std::size_t kEntropyBytes = kMailboxIdBytes + kKeyBytes;
static_assert(kEntropyBytes >= kPairIdBytes + kKeyBytes, "pairing needs an id and a key");

// --- one HTTP request ------------------------------------------------------------------------
// A body holds at most one message: its text JSON-escaped (\u00XX is six bytes per byte of
// text, the worst case) plus the id and a little structure.
constexpr std::size_t kMaxTextBytes = 64 * 1024;  // UTF-8 bytes of one message's text
constexpr std::size_t kMaxRequestBytes = 6 * kMaxTextBytes + 4096;
constexpr std::size_t kMaxTargetBytes = 2048;  // path and query
constexpr std::size_t kMaxAuthorizationBytes = 256;
constexpr std::size_t kMaxMessageIdBytes = 128;  // a sender's idempotency id
constexpr std::size_t kMaxNameBytes = 128;       // a sender's display name

// --- one mailbox ------------------------------------------------------------------------------
// Messages whose text is still held (stored or delivered, not yet read or expired).
constexpr std::size_t kMaxStoredMessages = 1000;
constexpr std::size_t kMaxStoredBytes = 8 * 1024 * 1024;  // their text, in UTF-8 bytes
// Every message record, with or without text. A record whose text is gone (read, or past
// retention) stays so the sender can still see its status and a resend stays a duplicate; when
// the mailbox holds this many, the oldest such record is forgotten first.
constexpr std::size_t kMaxRecords = 4096;

// --- retention --------------------------------------------------------------------------------
constexpr TimeMs kDayMs = 24LL * 60 * 60 * 1000;
// Text is deleted seven days after it was stored, by the service itself (handle_timeout).
constexpr TimeMs kRetentionMs = 7 * kDayMs;
// The status record (no text) is kept this much longer, then deleted too.
constexpr TimeMs kStatusRetentionMs = 7 * kDayMs;

// --- listing, acks, readers -------------------------------------------------------------------
constexpr std::size_t kMaxListCount = 100;          // messages per GET .../messages page
constexpr std::size_t kMaxListBytes = 1024 * 1024;  // their text per page (one always fits)
constexpr std::size_t kMaxAckBatch = 256;           // seqs per POST .../ack
constexpr std::size_t kMaxReaders = 8;              // connected push readers per mailbox

// --- pairing ------------------------------------------------------------------------------------
constexpr std::size_t kMaxPairs = 64;         // active and pending pairings together
constexpr std::size_t kMaxPendingPairs = 16;  // pair requests waiting for the owner
constexpr std::size_t kMaxOpenCodes = 16;     // pairing codes issued and not yet used
constexpr std::size_t kMaxRevokedPairs = 64;  // revoked pairings remembered (for a clear error)
constexpr TimeMs kCodeTtlMs = kDayMs;         // a pairing code must be used within a day
constexpr TimeMs kPendingPairTtlMs = kDayMs;  // an unanswered pair request lapses after a day
constexpr TimeMs kRevokedRetentionMs = 7 * kDayMs;

// --- flood bound, per sender ---------------------------------------------------------------------
// A token bucket per pairing: a burst of kFloodBurst sends, then one per kFloodRefillMs.
constexpr std::uint32_t kFloodBurst = 30;
constexpr TimeMs kFloodRefillMs = 1000;

// --- responses waiting for their writes
// ------------------------------------------------------------ A response leaves only after the
// writes before it are durable; a host that stops answering persists gets `busy` once this many
// responses wait.
constexpr std::size_t kMaxHeldOutputs = 1024;

// The persistence records' format version.
constexpr int kRecordVersion = 1;

}  // namespace tether::mailbox
