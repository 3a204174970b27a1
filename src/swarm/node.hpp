// A peer's set of swarmed files: every file it offers or fetches, one Swarm session each, and the
// decisions around them that are about the peer rather than one transfer (agent-bus-and-swarm.md
// § Swarm transfer through § Concurrent downloads of the same file; envelope shapes from
// agent-bus-notes.md § The envelope).
//
//  - The agent-bus envelopes its sessions' messages travel in: built here, and on the way in
//    checked against the connection they came over (§ Untrusted wire input: a connection is bound
//    to the identity it was opened with).
//  - The offers the room made: one per file id, bounded; a second, different offer under a known
//    id is refused; which offerer to ask for the manifest, and which next when it leaves, leaves
//    pages unanswered (kManifestPageTimeoutMs) or after a digest mismatch.
//  - Manifest pages from anyone but the peers asked are refused and counted.
//  - Serves queued per peer: a repeated request is served once, and the queue is bounded.
//  - The resume pass over the part file (resume.hpp), one read at a time, and the final check of
//    the whole file's digest.
//  - Disk backpressure, the lock refresh timer and the wait for an offer.
//
// Sans-IO, on the one drive contract (common/drive.hpp). Peers are the transport's names; files
// are their ids. The host (web/peer/swarm-glue.js) moves bytes between the data channels, the
// storage folder and this core, and answers each action with the matching handle_* input.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "bus/envelope.hpp"
#include "common/drive.hpp"
#include "common/rng.hpp"
#include "swarm/resume.hpp"
#include "swarm/session.hpp"

namespace tether::swarm {

struct NodeConfig {
  bus::Identity self;  // instance_id empty: one is made from the seed
  std::uint64_t seed = 1;
  SwarmConfig swarm;  // every file's session starts from this (its seed is drawn per file)
};

// --- actions: what the host does, then reports back -----------------------------------------------
// Send `text` (an envelope) on the control lane to `peer`. A non-zero token asks for
// handle_send_result(token, accepted).
struct NodeSend {
  std::string peer;
  std::string text;
  std::uint64_t token = 0;
};
// Read `length` bytes at `offset` of the file and send them to `peer`: a binary frame when
// `binary` and the lane takes it, else chunk_envelope. Then handle_serve_done, whatever happened.
struct NodeServe {
  std::string peer;
  FileId file{};
  std::uint32_t index = 0;
  bool binary = false;
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
};
// The manifest verified: open the part file, then handle_part_opened with its current size.
struct NodeOpenPart {
  FileId file{};
};
// § Resume: read this chunk of the part file, hash it, handle_resume_chunk.
struct NodeResumeRead {
  FileId file{};
  std::uint32_t index = 0;
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
};
// Every chunk verified: wait for the writes, flush, hash the whole part file, handle_file_digest.
struct NodeVerifyFile {
  FileId file{};
};
// The file's digest is the offer's: move the part file into place, then handle_file_saved.
struct NodeSaveFile {
  FileId file{};
};
// Rewrite the download's lock file so nobody takes it for stale (kLockRefreshMs).
struct NodeRefreshLock {
  FileId file{};
};
// Tear down and rebuild the connection to `peer`.
struct NodeRebuild {
  std::string peer;
};
// The transfer is over and gone from the node: release the lock, report `message`.
struct NodeFileFailed {
  FileId file{};
  std::string code;
  std::string message;  // what happened and what to do
};
using NodeAction = std::variant<NodeSend, NodeServe, NodeOpenPart, NodeResumeRead, NodeVerifyFile,
                                NodeSaveFile, NodeRefreshLock, NodeRebuild, NodeFileFailed>;

// --- events: what the application learns ----------------------------------------------------------
struct OfferReady {  // a want_offer may go on: fetch(file) will find it
  FileId file{};
};
struct OfferMissing {  // nobody offered the file within the wait
  FileId file{};
  std::string message;
};
struct DownloadStarted {  // the resume pass is over
  FileId file{};
  std::uint32_t resumed = 0;
};
struct FileComplete {  // verified and saved; now offered to the room
  FileId file{};
};
using NodeEvent = std::variant<OfferReady, OfferMissing, DownloadStarted, FileComplete>;

// What arrived on the control lane that the host must act on: chunk bytes to hash (the base64
// path), handed back with handle_chunk_digest / handle_chunk.
struct ArrivedChunk {
  FileId file{};
  std::uint32_t index = 0;
  Bytes data;
};
// A binary-lane frame for one of our files: its chunk is frame[offset, offset + length).
struct ArrivedFrame {
  FileId file{};
  std::uint32_t index = 0;
  std::size_t offset = 0;
  std::size_t length = 0;
};

struct NodeRefusal {
  std::string peer;
  std::string code;
  std::string detail;
};
struct NodeStats {
  std::vector<NodeRefusal> refused;  // the first kMaxRefusalsKept
  std::uint64_t refused_count = 0;
  std::uint64_t forged_identity = 0;
  std::uint64_t ignored_frames = 0;
  std::uint64_t bad_chunks = 0;
  std::uint64_t manifest_failures = 0;
  std::uint64_t control_received = 0;
  std::uint64_t send_rejected = 0;
  std::uint64_t serves_dropped = 0;
  std::uint64_t serves_deduplicated = 0;
  std::uint64_t unsolicited_pages = 0;
};

enum class FileRole { seed, fetch };
enum class FileState { seeding, manifest, resuming, downloading, verifying, saving, complete };
std::string_view file_state_name(FileState s);

// What a remembered offer holds: the canonical payload and who vouched for it, in arrival order.
struct KnownOffer {
  Offer offer;
  std::string payload;  // canonical JSON: a second offer is "the same" when its text is
  std::vector<std::string> offerers;
};

class SwarmNode {
 public:
  explicit SwarmNode(NodeConfig config);

  const bus::Identity& identity() const { return self_; }

  // --- the transport ---
  void handle_peer_open(std::string_view peer, const PeerCaps& caps, TimeMs now_ms);
  void handle_peer_closed(std::string_view peer, TimeMs now_ms);
  // Our signalling came back after a drop: outstanding requests are abandoned and re-planned.
  void handle_reconnect(TimeMs now_ms);
  // An envelope's text from `peer`'s control lane. Anything not swarm_* is somebody else's and
  // ignored; a refusal is counted (stats) and the room lives on. A base64 chunk comes back for the
  // host to hash.
  std::optional<ArrivedChunk> handle_text(std::string_view peer, ByteView text, TimeMs now_ms);
  // A binary-lane frame, from its first kChunkFrameHeaderBytes (or more) and its whole length:
  // ours and for a file we hold, or nullopt (counted as ignored). The chunk's bytes stay where
  // they arrived.
  std::optional<ArrivedFrame> handle_frame(ByteView head, std::size_t frame_length);
  // Would this chunk be hashed at all? (No for a duplicate, a wrong length, an unknown file.)
  bool wants_chunk(const FileId& file, std::uint32_t index, std::size_t length) const;
  ChunkOutcome handle_chunk(std::string_view peer, const FileId& file, std::uint32_t index,
                            ByteView data, TimeMs now_ms);
  // `digest` nullopt only when wants_chunk said no.
  ChunkOutcome handle_chunk_digest(std::string_view peer, const FileId& file, std::uint32_t index,
                                   std::size_t length, const std::optional<Sha256Digest>& digest,
                                   TimeMs now_ms);
  // A stored chunk reached the disk.
  void handle_chunk_written(const FileId& file, std::uint32_t index, TimeMs now_ms);
  void handle_send_result(std::uint64_t token, bool accepted, TimeMs now_ms);
  // A NodeServe is finished (sent, refused or abandoned): its slot in the peer's queue is free.
  void handle_serve_done(std::string_view peer, const FileId& file, std::uint32_t index);
  // The swarm_chunk envelope (base64) carrying `data` as chunk `index` of `file` to `peer`.
  std::string chunk_envelope(std::string_view peer, const FileId& file, std::uint32_t index,
                             ByteView data, TimeMs now_ms);

  // --- files ---
  // Seeds a file we hold whole and offers it to the room.
  Result<std::monostate, Refusal> share(const Offer& offer, std::vector<ChunkHash> hashes,
                                        TimeMs now_ms);
  // Waits up to `wait_ms` for somebody to offer `file`: OfferReady (at once when known) or
  // OfferMissing.
  void want_offer(const FileId& file, std::int64_t wait_ms, TimeMs now_ms);
  const KnownOffer* known_offer(const FileId& file) const;
  const std::map<FileId, KnownOffer>& offers() const { return offers_; }
  // The part file's name for a download of an offered file into `destination`, or empty.
  std::string part_name(const FileId& file, std::string_view destination) const;
  // Starts downloading an offered file, its manifest from `from` when that peer offered it, else
  // from the first offerer. The host took the lock already. The error names what to do.
  Result<std::monostate, std::string> fetch(const FileId& file,
                                            const std::optional<std::string>& from, TimeMs now_ms);
  void handle_part_opened(const FileId& file, std::uint64_t size, TimeMs now_ms);
  void handle_resume_chunk(const FileId& file, std::uint32_t index, std::size_t length,
                           const std::optional<Sha256Digest>& digest, TimeMs now_ms);
  void handle_file_digest(const FileId& file, const Sha256Digest& digest, TimeMs now_ms);
  void handle_file_saved(const FileId& file, TimeMs now_ms);
  // The host gave up on the file (its storage failed, or it closed): forget it.
  void remove_file(const FileId& file);

  void handle_timeout(TimeMs now_ms);
  Timeout poll_timeout() const;
  std::optional<NodeAction> poll_action() { return actions_.poll(); }
  std::optional<NodeEvent> poll_event() { return events_.poll(); }

  // --- what the host shows ---
  struct FileView {
    FileRole role;
    FileState state;
    const Swarm& session;
    std::uint32_t resumed;
    const std::vector<std::uint32_t>& resumed_indexes;
  };
  std::optional<FileView> file(const FileId& id) const;
  const NodeStats& stats() const { return stats_; }

 private:
  struct File {
    FileRole role = FileRole::seed;
    FileState state = FileState::seeding;
    Swarm session;
    std::string offer_payload;    // canonical: the session keeps no inline hash list
    std::string manifest_source;  // fetch: the peer asked for manifest pages
    std::uint32_t unwritten = 0;
    bool held = false;
    std::uint64_t part_size = 0;
    std::optional<ResumeVerifier> resume;
    std::uint32_t resume_next = 0;
    std::uint32_t resumed = 0;
    std::vector<std::uint32_t> resumed_indexes;
    TimeMs lock_refresh_at = 0;
  };
  struct PendingServe {
    FileId file{};
    std::uint32_t index = 0;
  };
  struct PendingRequest {
    FileId file{};
    std::uint64_t token = 0;  // the session's
  };

  PeerId peer_number(std::string_view name);
  const std::string* peer_name(PeerId id) const;
  void refuse(std::string_view peer, std::string code, std::string detail);
  std::string envelope(std::string_view type, const std::string* to, std::string_view payload,
                       TimeMs now_ms);
  void send_control(const std::string* to, std::string_view type, std::string_view payload,
                    TimeMs now_ms, std::uint64_t token = 0);
  void on_offer(std::string_view peer, const Offer& offer, TimeMs now_ms);
  // Carries out what `id`'s session asked for; every session input is followed by this.
  void pump(const FileId& id, TimeMs now_ms);
  void on_session_failed(const FileId& id, File& f, const Failed& failed, TimeMs now_ms);
  void next_resume_read(const FileId& id, File& f, TimeMs now_ms);
  void fail_file(const FileId& id, std::string code, std::string message);
  void update_hold(const FileId& id, File& f, TimeMs now_ms);
  ChunkOutcome after_chunk(std::string_view peer, const FileId& file, File& f, std::uint32_t index,
                           ChunkOutcome o, TimeMs now_ms);
  void enqueue_serve(const std::string& peer, const FileId& id, const Swarm& s,
                     const ServeChunk& c);

  bus::Identity self_;
  SeededRng rng_;
  SwarmConfig swarm_config_;
  // An offerer of `id` other than `except` that is open now, the one after `except` first, if
  // any (manifest fallback).
  std::optional<std::string> open_offerer(const FileId& id, std::string_view except) const;
  std::uint64_t message_counter_ = 0;
  std::string id_prefix_;  // "<instance>.", cut to keep ids within the bound
  std::unordered_map<std::string, PeerId> peer_numbers_;
  std::vector<std::string> peer_names_;                       // by PeerId - 1
  std::vector<std::pair<std::string, PeerCaps>> open_peers_;  // connection order
  std::map<FileId, File> files_;
  std::map<FileId, KnownOffer> offers_;
  std::map<FileId, TimeMs> wants_;  // want_offer deadlines
  std::unordered_map<std::string, std::vector<PendingServe>> serves_;
  std::unordered_map<std::uint64_t, PendingRequest> requests_;
  std::uint64_t next_token_ = 1;
  PollQueue<NodeAction> actions_;
  PollQueue<NodeEvent> events_;
  NodeStats stats_;
};

}  // namespace tether::swarm
