// One file's swarm at one peer: manifest assembly, bitfields, the picker and the request
// scheduler, and answering other peers (agent-bus-and-swarm.md § Swarm transfer through
// § Surviving a network drop). Sans-IO, on the one drive contract (common/drive.hpp): inputs come
// in through handle_* with now_ms, what to do comes out of poll_action (send this message, serve
// that chunk, rebuild that connection), and poll_timeout says when handle_timeout is next due.
// Its peers are numbers and its messages payloads; the envelopes, the peers' names, the lock and
// the part file are the host's (web/peer/swarm-glue.js), which drives one Swarm per file.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "common/drive.hpp"
#include "common/rng.hpp"
#include "swarm/bitfield.hpp"
#include "swarm/limits.hpp"
#include "swarm/messages.hpp"
#include "swarm/picker.hpp"

namespace tether::swarm {

using PeerId = std::uint32_t;

struct PeerCaps {
  bool binary_lane = true;                             // the peer's x-bin channel is open
  std::size_t max_message_size = kMinSctpMessageSize;  // negotiated SCTP limit on this connection
};

struct SwarmConfig {
  std::uint64_t seed = 1;
  std::uint32_t window_per_peer = kDefaultWindowPerPeer;
  std::uint32_t window_total = kDefaultWindowTotal;  // across all peers of this download
  TieBreak ties = TieBreak::random;
  bool binary_lane = true;    // we can send and receive raw chunk frames
  bool startup_reply = true;  // § Startup (off only to measure what it saves)
  std::int64_t announce_interval_ms = kAnnounceIntervalMs;
};

// --- actions ---------------------------------------------------------------------------------
// A control message; `to` empty means broadcast to every peer in the room.
struct SendControl {
  std::optional<PeerId> to;
  std::string type;
  std::string payload;  // compact JSON
};
// A swarm_request. The glue sends it, then reports the transport's verdict with on_send_result:
// only an accepted request is outstanding (§ Surviving a network drop).
struct SendRequest {
  PeerId to = 0;
  std::uint32_t index = 0;
  std::uint64_t token = 0;
  std::string payload;
};
// Read chunk `index` and send it to `to`: a binary frame (encode_chunk_frame) when `binary`, else
// a swarm_chunk message.
struct ServeChunk {
  PeerId to = 0;
  std::uint32_t index = 0;
  bool binary = false;
};
// The manifest verified against the offer's digest: the glue may now open the part file, run the
// resume pass, and call begin_download.
struct ManifestReady {};
// Tear down and rebuild the connection to this peer; call remove_peer/add_peer as it happens.
struct RebuildPeer {
  PeerId peer = 0;
};
struct Completed {};  // every chunk verified: flush, rename the part file into place
struct Failed {
  std::string code;              // manifest_digest_mismatch
  std::string detail;            // what happened and what to do
  std::optional<PeerId> blamed;  // the peer whose pages did not add up to the digest
};
using Action = std::variant<SendControl, SendRequest, ServeChunk, ManifestReady, RebuildPeer,
                            Completed, Failed>;

enum class ChunkOutcome {
  stored,      // verified: write it at chunk_offset(index); a swarm_have went out
  duplicate,   // we already hold it (a late answer to a re-planned request): drop it
  bad_hash,    // failed verification: dropped, the chunk is planned again
  unexpected,  // not a chunk of this file, or no manifest yet: dropped
};

struct SwarmStats {
  std::uint64_t requests_sent = 0;      // accepted by the transport
  std::uint64_t requests_rejected = 0;  // refused by the transport (never outstanding)
  std::uint64_t timeouts = 0;
  std::uint64_t misses_charged = 0;
  std::uint64_t rebuilds = 0;
  std::uint64_t abandoned_on_reconnect = 0;
  std::uint64_t chunks_stored = 0;
  std::uint64_t chunks_bad = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t startup_replies = 0;
  std::uint64_t requests_refused_too_large = 0;  // a chunk that would not fit the peer's limit
  // Assemblies from several sources that missed the digest: started over from one source alone.
  std::uint64_t manifest_restarts = 0;
};

class Swarm {
 public:
  // We hold the whole file: `hashes` in chunk order.
  static Result<Swarm, Refusal> seed(const Offer& offer, std::vector<ChunkHash> hashes,
                                     const SwarmConfig& config);
  // Somebody asked to fetch an offered file: only now is a manifest allocated. An inline offer is
  // ready at once (ManifestReady); a paged one requests pages from `offered_by`.
  static Result<Swarm, Refusal> fetch(const Offer& offer, PeerId offered_by,
                                      const SwarmConfig& config, std::int64_t now_ms);

  // The resume pass found these chunks verified (resume.hpp); the download starts. A part file
  // that is already complete finishes at once (Completed).
  void handle_resume_done(const Bitfield& verified, TimeMs now_ms);

  void handle_peer_open(PeerId peer, const PeerCaps& caps, TimeMs now_ms);
  void handle_peer_closed(PeerId peer, TimeMs now_ms);
  // A parsed swarm message from `peer` for this file. `directed`: it was sent to us alone (the
  // envelope's `to`), as a startup reply is; replies are never answered, so the exchange ends.
  void handle_message(PeerId peer, const Message& m, bool directed, TimeMs now_ms);
  ChunkOutcome handle_chunk(PeerId peer, std::uint32_t index, ByteView data, TimeMs now_ms);
  // The same for a host that hashed the bytes itself: `length` and SHA-256 `digest` of the chunk it
  // holds. In the browser SubtleCrypto hashes natively, faster than the WASM hash
  // (bench/peer.bench.mjs); the verdict, the accounting and what follows stay here.
  ChunkOutcome handle_chunk_digest(PeerId peer, std::uint32_t index, std::size_t length,
                                   const Sha256Digest& digest, TimeMs now_ms);
  // Would a chunk of this index and length be hashed at all? No for a duplicate, a wrong length
  // or before the download began: the verdict then needs no digest (handle_chunk_digest with any).
  bool wants_chunk(std::uint32_t index, std::size_t length) const {
    return began_ && index < offer_.shape.total_chunks && !have_.test(index) &&
           length == offer_.shape.chunk_length(index);
  }
  void handle_send_result(std::uint64_t token, bool accepted, TimeMs now_ms);
  // Our own transport (signalling) is reconnecting / back.
  void handle_transport_down(TimeMs now_ms);
  void handle_transport_up(TimeMs now_ms);
  // The host's storage is behind: no new requests while held, planned again once released.
  void hold_requests(bool held, TimeMs now_ms);
  // After a manifest_digest_mismatch: assemble the manifest again, from `source`.
  void retry_manifest_from(PeerId source, TimeMs now_ms);
  std::optional<PeerId> manifest_source() const { return manifest_source_; }
  // A page asked for has gone unanswered for kManifestPageTimeoutMs while the assembly may move
  // between sources: the host may name another (switch_manifest_source), or the pages are asked
  // of the same source again at handle_timeout.
  bool manifest_stalled(TimeMs now_ms) const;
  // Asks the unanswered pages of `source` from now on, keeping the pages already in: any peer
  // asked during this assembly may still answer. Should they then miss the digest together, the
  // assembly starts over from one source alone, which is then blamed for a second miss.
  void switch_manifest_source(PeerId source, TimeMs now_ms);
  // Whether a manifest page from `peer` is one we asked for (anyone else's is unsolicited).
  bool takes_pages_from(PeerId peer) const;
  // Still assembling the manifest (a paged offer's pages are not all in).
  bool fetching_manifest() const { return phase_ == Phase::manifest; }
  // Timeouts, rebuilds, the periodic bitfield, and new requests.
  void handle_timeout(TimeMs now_ms);
  // When handle_timeout next has something to do, or none.
  Timeout poll_timeout() const;

  std::optional<Action> poll_action() { return actions_.poll(); }

  const FileId& file_id() const { return offer_.file_id; }
  const Offer& offer() const { return offer_; }
  const FileShape& shape() const { return offer_.shape; }
  bool manifest_ready() const { return manifest_ready_; }
  bool downloading() const { return began_; }
  bool complete() const { return have_.all() && manifest_ready_; }
  const Bitfield& have() const { return have_; }
  const std::vector<ChunkHash>& hashes() const { return hashes_; }
  std::uint64_t chunk_offset(std::uint32_t index) const {
    return std::uint64_t(index) * offer_.shape.chunk_size;
  }
  const SwarmStats& stats() const { return stats_; }
  std::uint32_t outstanding() const { return std::uint32_t(inflight_.size()); }
  // The timeout this peer's requests get now.
  std::int64_t timeout_for(PeerId peer) const;
  std::size_t memory_bytes() const;
  std::size_t peer_memory_bytes() const;  // per connected peer, for a peer holding a bitfield

 private:
  struct Peer {
    PeerCaps caps;
    Bitfield has;
    bool usable = true;  // its lane can carry this file's chunks
    bool binary = false;
    bool down = false;  // being rebuilt
    std::uint32_t in_flight = 0;
    bool timed = false;
    double srtt = 0, rttvar = 0;
    std::uint32_t misses = 0;
    std::int64_t last_delivery_ms = INT64_MIN;
    std::int64_t blocked_until_ms = INT64_MIN;
    bool told_bitfield = false;
  };
  struct InFlight {
    PeerId peer = 0;
    std::uint64_t token = 0;
    bool accepted = false;
    std::int64_t since_ms = 0;
  };
  enum class Phase { manifest, ready, downloading };

  explicit Swarm(const Offer& offer, const SwarmConfig& config);
  // Forgets every manifest page received or asked for (the list is assembled again).
  void restart_manifest();
  void plan(std::int64_t now_ms);
  void release(std::uint32_t index);  // forget a request without charging anyone
  void abandon_peer(PeerId peer);
  void apply_bitfield(Peer& p, ByteView bits);  // a whole, validated wire bitfield
  Message announce_message() const;
  void send_bitfield_to(PeerId peer);
  void broadcast_bitfield(bool periodic);
  void on_manifest_page(PeerId peer, const ManifestPage& page, std::int64_t now_ms);
  void request_manifest_pages(std::int64_t now_ms);
  void serve_manifest(PeerId peer, const ManifestRequest& req);
  void serve_request(PeerId peer, const Request& req);
  void finish_manifest();
  void emit(Action a) { actions_.push(std::move(a)); }
  void flush_haves();
  bool rebuild_allowed(std::int64_t now_ms) const {
    return !transport_down_ && now_ms >= rebuild_hold_until_ms_;
  }

  Offer offer_;
  SwarmConfig config_;
  SeededRng rng_;
  Phase phase_ = Phase::manifest;
  bool manifest_ready_ = false;
  bool began_ = false;
  bool completed_emitted_ = false;
  std::vector<ChunkHash> hashes_;  // allocated by seed/fetch only
  // Manifest assembly (paged offers).
  std::vector<std::uint8_t> page_received_;
  std::vector<std::int64_t> page_requested_ms_;
  std::uint32_t pages_received_ = 0;
  std::vector<PeerId> page_source_;    // who supplied each received page
  std::vector<PeerId> asked_sources_;  // every peer asked for pages during this assembly
  bool single_source_ = false;         // after a mixed miss: one source at a time, no switching
  std::optional<PeerId> manifest_source_;
  Bitfield have_;
  Bitfield busy_;  // chunks with a request in flight
  Picker picker_;
  std::unordered_map<PeerId, Peer> peers_;
  std::vector<PeerId> peer_order_;  // connection order, for fair planning
  std::size_t plan_cursor_ = 0;
  std::unordered_map<std::uint32_t, InFlight> inflight_;  // by chunk index
  std::unordered_map<std::uint64_t, std::uint32_t> by_token_;
  std::uint64_t next_token_ = 1;
  bool transport_down_ = false;
  std::int64_t rebuild_hold_until_ms_ = INT64_MIN;
  std::int64_t next_announce_ms_ = INT64_MIN;
  std::vector<std::uint32_t> unannounced_;  // stored, not yet in a swarm_have (kHaveBatchMs)
  std::int64_t haves_due_ms_ = INT64_MAX;
  bool requests_held_ = false;
  PollQueue<Action> actions_;
  SwarmStats stats_;
};

// Every action now pending, in order (for native hosts and tests).
inline std::vector<Action> drain_actions(Swarm& s) {
  std::vector<Action> out;
  while (auto a = s.poll_action()) out.push_back(std::move(*a));
  return out;
}

// An offer for a file we hold: inline when the list is short, paged with a digest otherwise.
Result<Offer, Refusal> make_offer(const FileId& file_id, std::string name, std::string mime_type,
                                  const FileShape& shape, const std::vector<ChunkHash>& hashes);

}  // namespace tether::swarm
