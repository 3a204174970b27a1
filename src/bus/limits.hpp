// Every bound of the agent message bus as a named constant (agent-bus-and-swarm.md § Delivery
// semantics, § Local state and CLI boundaries, § Simple one-to-one transfer; agent-bus-notes.md
// § The envelope). Each is enforced before anything is allocated for the input it bounds.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tether::bus {

// --- the envelope (agent-bus-notes.md § The envelope) -------------------------------------------
// Lengths are in UTF-16 code units, as JavaScript's `string.length` counts them, so a JS peer
// and we agree on every boundary case.
constexpr std::size_t kMaxIdChars = 128;
constexpr std::size_t kMaxTypeChars = 64;
constexpr std::size_t kMaxStreamIdChars = 128;
constexpr std::size_t kMaxRoleChars = 64;
constexpr std::size_t kMaxNameChars = 256;
constexpr std::size_t kMaxInstanceIdChars = 128;
constexpr std::size_t kMaxToChars = 128;
constexpr std::size_t kMaxTopicChars = 256;
// One envelope's JSON text. 256 KiB is the common SCTP message limit the spec names (§ Why the
// manifest is paged); nothing larger could cross a data channel anyway, so it is refused before
// the JSON parser sees it. The one exception is a file_chunk (kMaxFileChunkEnvelopeBytes below).
constexpr std::size_t kMaxEnvelopeBytes = 256 * 1024;
constexpr int kEnvelopeVersion = 1;
// Our ids: 12 random bytes, base64url (16 characters), like the public implementation.
constexpr std::size_t kIdRandomBytes = 12;

// --- per-peer ordered queues (§ Delivery semantics) -------------------------------------------
// The backlog is in memory; beyond these a send fails with queue_full instead of silently
// dropping older messages (the caller still owns the message and can store it durably).
constexpr std::size_t kMaxQueuedPerPeer = 1000;
constexpr std::size_t kMaxQueuedBytesPerPeer = 8 * 1024 * 1024;
constexpr std::size_t kMaxQueuedPeers = 256;

// --- history (§ Delivery semantics) -----------------------------------------------------------
constexpr std::size_t kHistoryCapacity = 500;
constexpr std::int64_t kHistoryMaxRequest = 200;
constexpr std::int64_t kHistoryDefaultRequest = 50;
// A history_replay (one per replayed message, agent-bus-notes.md) is only accepted from a peer we
// asked, within this window of asking, and no more of them than the count we asked for.
constexpr std::int64_t kHistoryReplyWindowMs = 60'000;
// Delivered (sender, id) pairs remembered so a replay does not deliver a message twice.
constexpr std::size_t kSeenCapacity = 4096;

// --- confirmations (§ Delivery semantics) ------------------------------------------------------
// Direct messages we sent, remembered for ack / command_response correlation.
constexpr std::size_t kConfirmationCapacity = 4096;

// --- handoffs (§ Local state and CLI boundaries) ------------------------------------------------
constexpr std::size_t kHandoffMaxRequestBytes = 32'000;  // UTF-8 bytes of the JSON string encoding
constexpr std::int64_t kHandoffMaxTtlMs = 24LL * 60 * 60 * 1000;
constexpr std::int64_t kHandoffRetryInitialMs = 2'000;
constexpr std::int64_t kHandoffRetryMaxMs = 60'000;
constexpr std::size_t kMaxPendingHandoffs = 1024;
// Incoming handoffs delivered to the app but not yet confirmed stored.
constexpr std::size_t kMaxUnconfirmedHandoffs = 1024;
// Stored handoff keys kept in memory to re-ack retries without redelivery (the sidecar persists
// its own records; this covers one run).
constexpr std::size_t kMaxRememberedHandoffs = 65'536;
constexpr const char* kHandoffCapability = "handoff-v1";

// --- the simple one-to-one transfer (§ Simple one-to-one transfer) ---------------------------
constexpr std::uint64_t kFileMaxBytes = 256ULL * 1024 * 1024;
constexpr std::uint64_t kFileBrowserMaxBytes = 64ULL * 1024 * 1024;
constexpr std::size_t kFileReceiverMaxIncomplete = 16;
constexpr std::uint64_t kFileReceiverMaxPromisedBytes = 512ULL * 1024 * 1024;
// A base64 chunk of 64 KiB is ~85 KiB of envelope: comfortably below kMaxEnvelopeBytes.
constexpr std::uint32_t kFileDefaultChunkSize = 64 * 1024;
// Chunk sizes from 1 KiB to 1 MiB, the public implementation's range (agent-bus-notes.md § Sizes):
// it refuses smaller ones, so we never send them, and it may send up to 1 MiB, which we accept.
constexpr std::uint32_t kFileMinChunkSize = 1024;
constexpr std::uint32_t kFileMaxChunkSize = 1024 * 1024;
// Room an envelope takes around a file_chunk's data: its bounded strings (agent-bus-notes.md:
// 1,152 characters, at most 6 bytes each escaped), the keys, numbers and transfer id. 16 KiB
// covers it with room to spare.
constexpr std::size_t kFileChunkEnvelopeOverhead = 16 * 1024;
// A file_chunk envelope carrying the largest chunk: base64 of 1 MiB is 1,398,104 characters. The
// only envelope allowed past kMaxEnvelopeBytes, and still refused before parsing above this.
constexpr std::size_t kMaxFileChunkEnvelopeBytes =
    4 * ((std::size_t(kFileMaxChunkSize) + 2) / 3) + kFileChunkEnvelopeOverhead;
// Room our own file_chunk envelope takes around its data, at worst: every header string we may
// send at its bound (id, type, from's four, to, transferId: 970 UTF-16 units), each escaped at up
// to 6 bytes, plus keys and numbers. 8 KiB covers it.
constexpr std::size_t kFileChunkSendOverhead = 8 * 1024;
constexpr std::size_t kMaxTransferIdChars = 128;
constexpr std::size_t kMaxFileNameChars = 1024;
constexpr std::size_t kMaxMimeTypeChars = 256;
// A file_ack {ok: false, error} names its transfer; one we cannot name (absent, not a string,
// empty) is acked under this id, as the public implementation does; an over-long one is cut.
constexpr const char* kUnnamedTransferId = "invalid";
// Error text in a file_ack or command_response we send is cut to this many bytes.
constexpr std::size_t kMaxErrorTextBytes = 2048;

// --- shared folders (agent-bus-notes.md: the shares, list-files and get-file commands) ---------
// Command names and arguments as the public implementation sends them: names match trimmed and
// case-insensitively, `share` and `path` are trimmed strings.
constexpr std::size_t kMaxCommandNameChars = 64;
constexpr std::size_t kMaxShareNameChars = 64;
constexpr std::size_t kMaxSharePathChars = 4096;
// One list-files answer names at most 200 entries of a folder, as the public implementation caps
// it (list_files_result says `truncated` past that). The owner's own walk of a whole share
// (`tether agent share ls`) stops at 10,000 entries and 32 folders down, so a huge or looping
// tree ends in a bounded answer with `truncated` rather than exhausting the host.
constexpr std::size_t kShareLevelMaxEntries = 200;
constexpr std::size_t kShareListMaxEntries = 10000;
constexpr std::size_t kShareListMaxDepth = 32;

// --- payloads written as words (typed_payload.hpp) ----------------------------------------------
// A command's args and an answer's result sit two levels inside the envelope (the envelope, its
// payload), whose whole text nests at most kMaxJsonDepth (64, common/json.hpp) deep: deeper ones
// could never be sent, so they are refused when the payload is built.
constexpr std::size_t kMaxPayloadValueDepth = 62;

}  // namespace tether::bus
