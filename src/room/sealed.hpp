// The sealed channel: end-to-end encryption of the explicit relay transport's envelopes with a
// room secret shared out of band (docs/agent-bus.md § Encrypted relay transport; the
// agent-bus-and-swarm spec's "explicit transport through an independent encrypted relay").
//
// This core owns every protocol decision: the sealed frame's layout (version, kind, key id, sender
// session, receiver epoch, counter, ciphertext and tag), the HKDF inputs, the nonce, the
// additional authenticated data (the frame header, the room, the sender and the recipient), the
// epoch handshake, the order frames leave and are delivered in, and the replay rule. It never
// encrypts: the host runs the cipher (WebCrypto in every runtime) on exactly what an action hands
// it and passes the result back, the way every core takes a decision the host carries out
// (common/drive.hpp). Results may come back in any order; frames still leave, and texts are still
// delivered, in the order they went in.
//
// Keys: key id = HKDF-SHA256(secret, salt "tether/sealed/v1", info "key-id")[0..8); a sender's
// session key = HKDF-SHA256(secret, salt = its 16-byte session, info = "tether/sealed/v1 key" ||
// room || sender) as an AES-256-GCM key. A session is random per transport instance, so a
// restarted sender never reuses a (key, nonce) pair; the nonce is four zero bytes and the 64-bit
// counter, big-endian.
//
// Receiver epochs: a channel's session is also its epoch as a receiver, so a restart changes
// both. Every text frame binds the epoch of its recipient (in the header, so inside the AAD), and
// a receiver takes only texts bound to its own epoch ("fresh"): everything a relay recorded
// before the receiver restarted is refused as wrong-epoch, whatever the receiver forgot. A sender
// learns a peer's epoch from a fresh frame of that peer (one bound to the sender's own epoch),
// through a handshake of two hello kinds: `hello` asks for an answer, `answer` does not. A
// channel greets a peer (greet(), when the lane opens) with a hello bound to the epoch it last
// knew, or to none; a hello is always answered, and any authenticated frame that is not fresh is
// answered once per sender session (a hello when the answerer does not know that session yet, so
// the exchange completes both ways, else an answer). Until a fresh frame of a peer arrived, seal()
// to it is refused (no-epoch): a relay that withholds the handshake stops the traffic, it never
// lets it through unbound.
//
// Replay rule, per sender, for fresh frames: a frame authenticates, then its counter must be above
// every counter seen from that session, or inside the last kSealedReplayWindow counters and
// unseen; one seen before is a replay, an unseen older one a reorder (the relay keeps a sender's
// order, so a reorder is somebody's doing), one below the window stale. When a fresh frame of a
// new session of a sender authenticates, the sender's previous sessions are retired and their
// frames refused. A frame that is not fresh never makes its session the sender's current one.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/bytes.hpp"

namespace tether::room {

// Version 2 added the kind and the receiver epoch; version 1 frames are refused (unknown-version).
constexpr std::uint8_t kSealedVersion = 2;
constexpr std::size_t kSealedKeyIdBytes = 8;
constexpr std::size_t kSealedSessionBytes = 16;
// A receiver's epoch is its session (random per start, from the host); all zero = not known.
constexpr std::size_t kSealedEpochBytes = kSealedSessionBytes;
constexpr std::size_t kSealedCounterBytes = 8;
// version | kind | key id | session | receiver epoch | counter
constexpr std::size_t kSealedHeaderBytes =
    1 + 1 + kSealedKeyIdBytes + kSealedSessionBytes + kSealedEpochBytes + kSealedCounterBytes;
// Where each header field starts.
constexpr std::size_t kSealedKindAt = 1;
constexpr std::size_t kSealedKeyIdAt = 2;
constexpr std::size_t kSealedSessionAt = kSealedKeyIdAt + kSealedKeyIdBytes;
constexpr std::size_t kSealedEpochAt = kSealedSessionAt + kSealedSessionBytes;
constexpr std::size_t kSealedCounterAt = kSealedEpochAt + kSealedEpochBytes;
constexpr std::size_t kSealedTagBytes = 16;  // AES-GCM's full 128-bit tag
constexpr std::size_t kSealedNonceBytes = 12;
constexpr std::size_t kSealedKeyBits = 256;
constexpr std::size_t kSealedOverheadBytes = kSealedHeaderBytes + kSealedTagBytes;
// The room secret: at least 128 bits of it (a passphrase is fine, HKDF takes any length).
constexpr std::size_t kMinSealedSecretBytes = 16;
constexpr std::size_t kMaxSealedSecretBytes = 4096;
// Counters start at 1; a session that reaches this stops sealing (a new transport is a new one).
constexpr std::uint64_t kMaxSealedCounter = (std::uint64_t(1) << 48) - 1;
// How far below the highest counter seen an unseen frame is told apart as a reorder.
constexpr std::uint64_t kSealedReplayWindow = 64;
// Retired sessions remembered per sender within one epoch of ours; older ones are forgotten
// (docs/agent-bus.md: only a sender restarted more often than this while we ran, all recorded,
// could have an old session of this epoch replayed).
constexpr std::size_t kMaxRetiredSessions = 8;
// Sessions of one sender kept at once: its current one, and others not fresh yet (being
// authenticated, or seen only in frames bound to no epoch or another); past it the oldest idle one
// is forgotten.
constexpr std::size_t kMaxSessionsPerSender = 4;
// Senders the channel keeps state for; a new one beyond it is refused (busy).
constexpr std::size_t kMaxSealedSenders = 4096;
// Frames in flight through the host's cipher, each way, in count and plaintext bytes.
constexpr std::size_t kMaxSealedPending = 1024;
constexpr std::size_t kMaxSealedPendingBytes = 16u << 20;
// The sealed frame travels as standard base64 text inside the lane's signal.
constexpr std::string_view kSealedHkdfHash = "SHA-256";
constexpr std::string_view kSealedCipher = "AES-GCM";
constexpr std::string_view kSealedKeyIdSalt = "tether/sealed/v1";
constexpr std::string_view kSealedKeyIdInfo = "key-id";
constexpr std::string_view kSealedKeyInfo = "tether/sealed/v1 key";

// Why a frame was refused, or a seal not accepted (a value, never an exception).
enum class SealedError : std::uint8_t {
  none,
  malformed,        // not base64, or shorter than a header and a tag
  unknown_version,  // a version byte this build does not read
  wrong_secret,     // the key id is not ours: the sender holds another room secret
  tampered,         // the tag did not verify: bytes changed on the way (or a forged frame)
  replay,           // this counter of this session was delivered before
  reorder,          // older than one delivered, not seen: frames were reordered
  stale,            // below the replay window, or of a retired session
  too_big,          // over the lane's message bound
  busy,             // too many frames in flight, senders or sessions
  unsealed,         // a plaintext envelope reached an encrypted transport
  not_ready,        // seal before the keys are derived
  exhausted,        // the session's counter ran out
  crypto,           // the host's cipher failed on our own frame
  wrong_epoch,      // a text bound to another epoch of ours (sealed before we restarted: a replay)
  no_epoch,         // seal to a peer whose epoch we do not know yet (the handshake is not done)
};
constexpr int kSealedErrorKinds = 16;

// What a frame is; inside the header, so inside the AAD.
enum class SealedKind : std::uint8_t {
  text = 0,    // an envelope's text, bound to the recipient's epoch
  hello = 1,   // the handshake: carries our session (our epoch); the recipient answers
  answer = 2,  // the handshake's answer: carries our session, asks for nothing
};
constexpr int kSealedKinds = 3;
const char* sealed_kind_name(SealedKind k);
const char* sealed_error_name(SealedError e);
// What went wrong and what to do, for an error's message.
const char* sealed_error_fix(SealedError e);

// The largest plaintext that fits a lane message of `lane_bytes` once sealed and base64'd.
std::size_t sealed_max_plaintext(std::size_t lane_bytes);
// Empty when a secret of `size` bytes is acceptable, else what to fix.
std::string sealed_secret_error(std::size_t size);

// The pieces of a sealed frame (the header decoded; body = ciphertext and tag).
struct SealedHeader {
  std::uint8_t version = 0;
  SealedKind kind = SealedKind::text;
  std::array<std::uint8_t, kSealedKeyIdBytes> key_id{};
  std::array<std::uint8_t, kSealedSessionBytes> session{};
  std::array<std::uint8_t, kSealedEpochBytes> epoch{};  // the recipient's, as the sender knew it
  std::uint64_t counter = 0;
};
struct ParsedSealedFrame {
  SealedError error = SealedError::none;
  SealedHeader header;
  Bytes header_bytes;
  Bytes body;
};
// Decodes a frame's text (base64). Checks layout, version and kind only (a hello or answer carries
// no plaintext); the key id and the epoch are the channel's.
ParsedSealedFrame parse_sealed_frame(std::string_view text, std::size_t max_text_bytes);
Bytes sealed_header_bytes(const SealedHeader& h);
std::string sealed_frame_text(ByteView header_bytes, ByteView body);
Bytes sealed_nonce(std::uint64_t counter);
// header | u16 len | room | u16 len | from | u16 len | to (lengths big-endian)
Bytes sealed_aad(ByteView header_bytes, std::string_view room, std::string_view from,
                 std::string_view to);
// The HKDF info of a sender's session key.
Bytes sealed_key_info(std::string_view room, std::string_view sender);

struct SealedOptions {
  std::string room;
  std::string self;                                         // our origin in the room
  std::array<std::uint8_t, kSealedSessionBytes> session{};  // random, from the host; our epoch
  std::size_t max_lane_bytes = 256 * 1024;
};

struct SealedAction {
  enum class Kind : std::uint8_t {
    derive_key_id,  // HKDF(secret, salt, info) to kSealedKeyIdBytes bytes -> handle_key_id
    derive_key,     // HKDF(secret, salt, info) to an AES-256-GCM key held as `slot` -> handle_key
    release_key,    // forget the key held as `slot`
    encrypt,        // AES-GCM(key slot, nonce, aad) of data -> handle_encrypted(job)
    decrypt,        // AES-GCM open(key slot, nonce, aad) of data -> handle_decrypted(job)
    transmit,       // send `text` (a sealed frame of `frame`'s kind) to `peer` on the lane
  };
  Kind kind = Kind::derive_key;
  SealedKind frame = SealedKind::text;  // transmit: what the frame is
  std::uint32_t slot = 0;
  std::uint32_t job = 0;
  Bytes salt, info, nonce, aad, data;
  std::string peer, text;
};
constexpr int kSealedActionKinds = 6;
const char* sealed_action_name(SealedAction::Kind k);

struct SealedEvent {
  enum class Kind : std::uint8_t {
    ready,    // our key id and session key are derived: seal() accepts
    text,     // a text from `peer`, authenticated and in order
    refused,  // a frame from `peer` (or our own seal, peer = to) was refused: error
    linked,   // a fresh frame of `peer` arrived: we know its epoch, seal(peer) accepts
  };
  Kind kind = Kind::ready;
  std::string peer;
  std::string text;
  SealedError error = SealedError::none;
  std::uint64_t counter = 0;
};
constexpr int kSealedEventKinds = 4;
const char* sealed_event_name(SealedEvent::Kind k);

struct SealedStats {
  std::uint64_t sealed = 0, opened = 0, refused = 0;
  std::uint64_t hellos_sent = 0, hellos_opened = 0;  // both handshake kinds
};

class SealedChannel {
 public:
  explicit SealedChannel(SealedOptions options);

  // The first derivations go out.
  void handle_start();
  void handle_key_id(ByteView key_id);
  void handle_key(std::uint32_t slot, bool ok);
  void handle_encrypted(std::uint32_t job, bool ok, ByteView ciphertext);
  void handle_decrypted(std::uint32_t job, bool ok, ByteView plaintext);

  // One text to `to`: accepted (a transmit follows once the host encrypted it) or why not
  // (no_epoch until a fresh frame of `to` arrived: greet it first).
  SealedError seal(std::string_view to, std::string_view text);
  // The lane to `peer` opened (again): it may be a restarted peer, so its epoch is in doubt until
  // a fresh frame of it arrives (seal refuses no_epoch meanwhile); a hello goes to it, bound to
  // the epoch we last knew (or none), and its answer links us (the linked event).
  SealedError greet(std::string_view peer);
  // Whether seal(peer) would find its epoch (the handshake with it is done).
  bool linked(std::string_view peer) const;
  // One lane text from `from` (the relay's routing says who).
  void open(std::string_view from, std::string_view text);

  std::optional<SealedAction> poll_action();
  std::optional<SealedEvent> poll_event();
  bool has_output() const { return !actions_.empty() || !events_.empty(); }

  bool ready() const { return key_id_.has_value() && own_key_ready_; }
  std::size_t max_plaintext() const { return max_plaintext_; }
  const SealedStats& stats() const { return stats_; }
  const SealedOptions& options() const { return opt_; }

 private:
  using Session = std::array<std::uint8_t, kSealedSessionBytes>;
  struct SessionState {
    Session session{};
    std::uint32_t slot = 0;
    bool key_ready = false;
    bool key_failed = false;
    bool answered = false;      // a frame of it not bound to our epoch was answered
    std::uint64_t highest = 0;  // highest counter delivered
    std::uint64_t window = 0;   // bit i: highest - i was delivered
  };
  struct Sender {
    std::string id;
    std::optional<SessionState> current;  // the one a fresh frame proved live; its session is the
                                          // epoch we bind texts to this peer to
    std::vector<SessionState> trying;     // not fresh (yet)
    std::deque<Session> retired;
    bool linked = false;  // current is known live since the lane last opened (greet)
  };
  struct OutJob {
    std::uint32_t job = 0;
    SealedKind kind = SealedKind::text;
    std::string to;
    std::uint64_t counter = 0;
    Bytes header;
    Bytes plaintext;  // until handed to the host
    bool issued = false;
    bool done = false;
    bool ok = false;
    Bytes body;
  };
  struct InJob {
    std::uint32_t job = 0;
    SealedKind kind = SealedKind::text;
    std::string from;
    Session session{};
    Session epoch{};
    std::uint64_t counter = 0;
    std::uint32_t slot = 0;
    std::size_t bytes = 0;
    Bytes nonce, aad, body;  // until handed to the host
    bool issued = false;
    bool done = false;
    bool ok = false;
    SealedError error = SealedError::none;  // refused before (or instead of) decrypting
    std::string text;
  };

  Sender* sender(std::string_view id, bool create);
  const Sender* find_sender(std::string_view id) const;
  // Seals one frame of `kind` to `to` bound to `epoch` (plaintext `text`): none, or busy when too
  // many are in flight, or exhausted when the counter ran out.
  SealedError enqueue(SealedKind kind, std::string_view to, const Session& epoch,
                      std::string_view text);
  bool make_room_for_session(Sender& s);
  SessionState* find_session(Sender& s, const Session& session);
  void issue_out();
  void issue_in(std::uint32_t slot);
  void flush_out();
  void flush_in();
  void deliver(InJob& j);
  void drop_trying(const InJob& j);
  void refuse(std::string_view peer, SealedError e, std::uint64_t counter = 0);
  SealedAction& action(SealedAction::Kind k);
  std::uint32_t new_slot() { return next_slot_++; }

  SealedOptions opt_;
  std::size_t max_plaintext_ = 0;
  std::optional<std::array<std::uint8_t, kSealedKeyIdBytes>> key_id_;
  bool started_ = false;
  bool own_key_ready_ = false;
  bool own_key_failed_ = false;
  std::uint64_t counter_ = 0;
  std::uint32_t next_out_job_ = 1;  // job ids are consecutive within each queue
  std::uint32_t next_in_job_ = 1;
  std::uint32_t next_slot_ = 1;  // 0 is our own session key
  std::deque<OutJob> out_;
  std::size_t out_bytes_ = 0;
  std::deque<InJob> in_;
  std::size_t in_bytes_ = 0;
  std::unordered_map<std::string, Sender> senders_;
  SealedStats stats_;
  std::deque<SealedAction> actions_;
  std::deque<SealedEvent> events_;
};

}  // namespace tether::room
