// Every bound of the swarm transfer (agent-bus-and-swarm.md § Swarm transfer, § Untrusted wire
// input), named once and enforced before allocation by the code beside it.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tether::swarm {

// § Untrusted wire input: "a swarm may describe at most 1,000,000 chunks".
constexpr std::uint32_t kMaxChunks = 1'000'000;
// § Why the manifest is paged: pages of at most 256 hashes.
constexpr std::uint32_t kMaxPageHashes = 256;
// Lists this short travel inline in the offer. Equal to a page, so an inline offer is never
// larger than a manifest page (about 17 KB), well under the smallest SCTP limit. A longer inline
// list from another peer is accepted (up to kMaxChunks, the public implementation's bound),
// checked, and kept as the paged offer it authenticates.
constexpr std::uint32_t kMaxInlineHashes = 256;
// Pages one swarm_manifest_request may ask for. 16 pages of 256 hashes answer with 16 messages.
constexpr std::uint32_t kMaxPagesPerRequest = 16;
// Manifest pages we keep requested at once while assembling.
constexpr std::uint32_t kManifestPagesInFlight = 8;
// A manifest page not answered within this long is asked again, of the next open offerer when
// there is one (the public implementation retries lost page requests after 2 s, moving round its
// sources): a source that stays connected but does not answer must not hold the fetch.
constexpr std::int64_t kManifestPageTimeoutMs = 2'000;
constexpr std::size_t kFileIdHexLength = 64;
constexpr std::size_t kHashHexLength = 64;
// Names and MIME types in UTF-16 code units, as JavaScript's `string.length` counts them: the
// public implementation offers names up to 1,024 and MIME types up to 256 (agent-bus-notes.md
// § Sizes the public implementation sends). A saved file's name is the glue's to shorten.
constexpr std::size_t kMaxFileNameChars = 1024;
constexpr std::size_t kMaxMimeTypeChars = 256;
// Chunk sizes from 1 KiB to 16 MiB, the public implementation's range: it refuses smaller ones,
// so we never offer them, and it may offer up to 16 MiB, which we accept (a chunk that cannot
// cross a peer's negotiated message limit only makes that peer unusable for the file; see
// PeerCaps). The spec measured 64 KB to 192 KB within 2% of each other.
constexpr std::uint32_t kMinChunkSize = 1024;
constexpr std::uint32_t kMaxChunkSize = 16u << 20;
// § What was measured: "the 64 KB default". 64,000 and not 65,536, as the public implementation
// chooses: a chunk plus its 40-byte binary frame header must fit the 65,536-byte message every
// WebRTC implementation takes (kMinSctpMessageSize), or a peer at that limit is unusable for the
// file (PeerCaps), and 65,536 + 40 does not.
constexpr std::uint32_t kDefaultChunkSize = 64'000;
// File sizes are JSON numbers: at most Number.MAX_SAFE_INTEGER, and chunk count bounds them far
// below that (kMaxChunks * kMaxChunkSize).

// --- message size: § What was measured ("the negotiated SCTP limit is used as a safety check") ---
// Every WebRTC implementation must accept 65,536-byte messages (RFC 8841 default); Chromium
// negotiates 262,144 (TOOLCHAIN.md).
constexpr std::size_t kMinSctpMessageSize = 65'536;
// Room the agent-bus envelope around a payload may take at most. The envelope bounds its strings
// (agent-bus-notes.md: id 128, type 64, streamId 128, role 64, name 256, instanceId 128, to 128,
// topic 256 characters = 1,152); JSON-escaping a character takes at most 6 bytes (\uXXXX), so
// 6,912 bytes of strings plus about 120 bytes of keys and the timestamp. 8 KiB covers it.
constexpr std::size_t kEnvelopeOverheadMax = 8 * 1024;
// The binary-lane chunk frame header: magic, version, type, fileId, index (agent-bus-notes.md).
constexpr std::size_t kChunkFrameHeaderBytes = 40;

// Indexes one swarm_have may carry: the public implementation sends and accepts up to 4,096
// (agent-bus-notes.md § Swarm messages). 4,096 seven-digit indexes are about 33 KB of payload,
// inside the smallest message limit.
constexpr std::size_t kMaxHaveIndexes = 4096;
// Chunks stored within this window are announced in one swarm_have of at most kHaveBatchMax
// indexes (agent-bus-notes.md: "Prefer batched indexes"): the control lane then carries one
// message per batch to every peer instead of one per chunk, which on loopback is CPU that the
// data lane needs (bench/peer.bench.mjs). Peers learn of a chunk at most this much later.
constexpr std::int64_t kHaveBatchMs = 50;
constexpr std::size_t kHaveBatchMax = 64;

// --- scheduler: § Losing a chunk on a healthy link, § Surviving a network drop ---
// Throughput was identical at 4, 16 and 48 outstanding requests per peer (§ What was measured).
constexpr std::uint32_t kDefaultWindowPerPeer = 16;
// Outstanding requests across all of a download's peers. On one machine's loopback the
// downloader's own receive path is what its peers share: 16 per peer to three peers (3 MiB in
// flight) made path stalls inside Chromium and 9-15 request timeouts per downloader, where 4 or 8
// per peer made none and a slightly higher aggregate (bench/peer.bench.mjs, web/peer/README.md
// § Measured here). One peer still gets the whole 16, which measured best for 1 -> 1.
constexpr std::uint32_t kDefaultWindowTotal = 16;
constexpr std::int64_t kTimeoutFloorMs = 3'000;
constexpr std::int64_t kTimeoutCeilingMs = 15'000;  // also the timeout for a peer not yet timed
// Consecutive misses, with nothing delivered in between, before a connection rebuild.
constexpr std::uint32_t kMissesBeforeRebuild = 3;
// After our own transport reconnects, rebuilds wait this long: the transport replays its own
// view intent first, and rebuilding underneath that races it (§ Surviving a network drop).
constexpr std::int64_t kRebuildGraceMs = 5'000;
// How often a peer re-broadcasts its bitfield; the startup reply makes the first one not matter.
constexpr std::int64_t kAnnounceIntervalMs = 5'000;
constexpr std::uint32_t kMaxPeersPerFile = 256;

// --- resume: § Concurrent downloads of the same file ---
constexpr std::int64_t kStaleLockMs = 5 * 60 * 1000;
// A lock is refreshed this often while its download runs: well inside kStaleLockMs, so a live
// download is never taken for a dead one.
constexpr std::int64_t kLockRefreshMs = 60'000;
// Reading, judging and writing the lock is tried this often: a second try sees what the winner of
// a race to create it wrote; a third would only repeat the second.
constexpr std::uint32_t kLockAttempts = 2;

// --- a peer's set of files: what the host of its swarms holds (exported to web/peer) ---
// Offers remembered, one per file id: a room cannot make us hold more than this many.
constexpr std::size_t kMaxKnownOffers = 1024;
// How long fetch() waits for somebody to offer the file, unless the caller says otherwise.
constexpr std::int64_t kDefaultOfferWaitMs = 30'000;
// Verified chunks waiting for the host's storage to write them. While this many wait, no new
// requests go out (64 MiB at the default chunk size): a slow disk slows the download rather than
// filling memory (Swarm::hold_requests).
constexpr std::uint32_t kMaxUnwrittenChunks = 1024;
// Serves queued for one peer. A request repeated while its chunk is still queued is served once;
// beyond this many the rest are dropped and their requesters time out and ask again (a peer's
// own window is kDefaultWindowPerPeer).
constexpr std::size_t kMaxPendingServesPerPeer = 64;
// Serving pauses while this much is queued on a peer's binary lane and resumes on its drain.
// Bytes queued there are latency for every request behind them: at 4 MiB a seeder serving three
// downloaders on a starved machine answered later than kTimeoutFloorMs, and every timeout is a
// chunk sent twice. The spec's SDK bounds its send buffer at a 1 MB high-water mark (§ What was
// measured); so do we, the lane's own low-water mark.
constexpr std::size_t kServeHighWaterBytes = 1u << 20;
// Written chunks a download keeps in memory for serving, newest first: other downloaders ask for
// chunks we announced, and a disk read queues behind every write still waiting (serving peers
// waited up to 0.5 s per read in a 1 -> 3 bench). Released when the download completes.
constexpr std::size_t kRecentServeBytes = 16u << 20;
// Refused messages kept, newest last, for a host to show (the count goes on).
constexpr std::size_t kMaxRefusalsKept = 64;

}  // namespace tether::swarm
