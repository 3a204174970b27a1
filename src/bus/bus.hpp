// The agent message bus as a sans-IO state machine (agent-bus-and-swarm.md § Delivery semantics,
// § Connection race this prevents, § Local state and CLI boundaries, § Untrusted wire input).
//
// It owns: connection <-> stream identity binding, per-peer ordered queues, the history ring,
// ack / command_response correlation, and both sides of confirmed handoffs. It never touches a
// transport or a clock. It is driven by the one contract (common/drive.hpp): the caller feeds
// connection events, received text and now_ms through handle_*, then polls
//
//   while (auto t = bus.poll_transmit())
//     bus.handle_transmit_result(t->token, transport.send(t->conn, *t->text), now);
//   while (auto e = bus.poll_event()) ...            delivered messages, refusals, handoffs, receipts
//   if (auto t = bus.poll_timeout()) ...             call handle_timeout(now) then
//
// Sends are offered one at a time (poll_transmit returns nothing while one awaits its result) so a
// rejected send stops that peer's flush exactly where it failed: only what the transport accepted
// leaves the backlog, and the rest stays in order.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bus/envelope.hpp"
#include "bus/errors.hpp"
#include "bus/limits.hpp"
#include "bus/scan.hpp"
#include "bus/seen.hpp"
#include "common/drive.hpp"
#include "common/result.hpp"
#include "common/rng.hpp"

namespace tether::bus {

using ConnId = std::string;  // the transport's id for one connection (a room origin)

struct BusConfig {
  Identity self;
  std::uint64_t seed = 1;
  // We store handoffs: `handoff-v1` is added to our announce skills and handoffs are delivered.
  bool accept_handoffs = false;
  // Our announce payload (an object); sent to each connection when it opens. Null: none.
  Json announce = nullptr;
  // The transport's connection ids are the peers' stream ids, kept unique by something the peers
  // do not control (the room relay's origins: both tether transports). Then a connection may only
  // carry envelopes from its own stream, from the first message on (§ Untrusted wire input).
  // Off: a connection is bound to the stream its first envelope names.
  bool conn_is_stream = false;
  // The id the transport knows us by, when it is not our stream id (a VDO.Ninja UUID). A peer that
  // has not learned our stream id yet may address its first announce to it (agent-bus-notes.md);
  // an announce so addressed is taken as addressed to us. Nothing else is.
  std::optional<std::string> transport_id;
  // The host keeps every text it passes to handle_text until the events that text made are
  // polled, and reads a live message from it (Event::spans) instead of from a copy: a message
  // event the one-pass scanner made then carries no envelope (a JavaScript host slices its own
  // string instead of decoding one the core wrote). Off: every message event has its envelope.
  bool message_spans_only = false;
};

// An envelope's sender as views, whichever parse produced it.
struct IdentityView {
  std::string_view stream_id, role, name, instance_id;
  bool operator==(const Identity& o) const {
    return stream_id == o.stream_id && role == o.role && name == o.name &&
           instance_id == o.instance_id;
  }
  Identity owned() const {
    return Identity{std::string(stream_id), std::string(role), std::string(name),
                    std::string(instance_id)};
  }
};

// One text shared by every transmit that carries it (a broadcast to every peer is written once).
using SharedText = std::shared_ptr<const std::string>;

struct Transmit {
  std::uint32_t token = 0;
  ConnId conn;
  SharedText text;
};

enum class SendStatus { sent, queued };

struct Sent {
  Envelope envelope;
  SharedText text;
};

// Incoming handoff dedup key: sender stream id, sender instance id, message id.
struct HandoffKey {
  std::string stream_id;
  std::string instance_id;
  std::string message_id;
  bool operator<(const HandoffKey& o) const {
    return std::tie(stream_id, instance_id, message_id) <
           std::tie(o.stream_id, o.instance_id, o.message_id);
  }
  bool operator==(const HandoffKey& o) const {
    return stream_id == o.stream_id && instance_id == o.instance_id && message_id == o.message_id;
  }
};
// The key as JSON text `["stream","instance","id"]`: unambiguous whatever the strings hold.
std::string handoff_key_text(const HandoffKey& k);
std::optional<HandoffKey> parse_handoff_key(std::string_view text);

struct OutgoingHandoff {
  std::string id;
  std::string to;
  std::int64_t expires_at = 0;
  std::uint32_t attempts = 0;
  std::optional<std::int64_t> next_attempt_ms;  // none while the peer lacks handoff-v1
  Envelope envelope;
  SharedText text;
};

enum class EventKind {
  message,
  rejected,
  handoff,
  handoff_stored,
  handoff_expired,
  confirmation,
  peer
};

struct Event {
  EventKind kind = EventKind::message;
  ConnId conn;                       // message, rejected, handoff, peer
  std::optional<Envelope> envelope;  // message, handoff, confirmation, handoff_stored/expired
  bool replayed = false;             // message
  BusError error;                    // rejected
  std::string key;                   // handoff: the dedup key text
  std::string message_id;            // confirmation, handoff_stored/expired
  std::string peer_stream;           // confirmation: who confirmed; handoff_*: the recipient
  MessageType for_type = MessageType::chat;  // confirmation: the confirmed message's type
  std::optional<OutgoingHandoff> handoff;    // handoff_stored/expired
  // message, live: the payload's JSON text as received when the one-pass scanner took the
  // envelope (bus/scan.hpp) and the bus kept it as a DOM (a type it reads), so it can be handed
  // on without writing envelope->payload again; empty otherwise (a payload kept as text is in
  // envelope->payload_text). Its values are the payload's.
  std::string payload_text;
  // message, live: the one-pass scanner took the envelope (ParseInfo::scanned), so the received
  // text, read by JSON.parse in canonical key order, is this envelope.
  bool as_scanned = false;
  // message, live and scanned: the tag the host passed with the text, and where the envelope's
  // parts lie in that text (UTF-16 spans) with the payload's tokens (bus/scan.hpp). With
  // BusConfig::message_spans_only the event has no `envelope`: these are how it is read.
  std::uint64_t text_tag = 0;
  std::optional<ScannedEnvelope> spans;  // its string views are dangling: read the spans only
  Tape tape;
};

struct PeerInfo {
  ConnId conn;
  std::optional<std::string> stream_id;
  std::optional<Identity> identity;
  bool open = false;
  std::size_t queued = 0;
  Json announce = nullptr;
  bool handoff = false;
};

// Payload checks shared by both sides and by the sidecar's inbox tools.
struct HandoffPayload {
  std::string request;
  std::int64_t expires_at = 0;
};
Result<HandoffPayload, BusError> check_handoff(const Envelope& e);
// The stored-receipt payload a receiver sends: {messageId, senderInstanceId, forType, receipt}.
Json handoff_receipt_payload(const Envelope& handoff);

struct Receipt {
  enum class Kind { ack, command_response, handoff_stored } kind = Kind::ack;
  bool ok = true;
};
// The id of the message a confirmation reports on: an ack's `messageId`; a command_response's
// `requestId` (agent-bus-notes.md), or, in a record from before tether wrote requestId, its
// `messageId`. nullopt when there is none.
std::optional<std::string> confirmed_id(const Envelope& e);
// The command_response payload answering command `request_id` with `outcome` (see Bus::respond).
Result<Json, BusError> command_response_payload(std::string_view request_id, const Json& outcome);
// Does `e` report on request `request_id` that we sent to `peer`? For handoffs, the receipt must
// also name the original sender instance when one is given.
std::optional<Receipt> match_receipt(
    const Envelope& e, std::string_view request_id, std::string_view peer,
    std::optional<std::string_view> sender_instance = std::nullopt);

class Bus {
 public:
  explicit Bus(BusConfig config);

  const Identity& self() const { return config_.self; }

  // --- connection events from the transport ---
  //
  // Reachability (§ Delivery semantics, § Compatibility: the room's signaling stays
  // authoritative). A connection is sent to only while the transport reports it open AND the room
  // roster lists it AND it is not held:
  //  - A roster that omits a connection forgets its stream binding at once, even while the
  //    transport still reports the channel open: a closed tab's channel can take ~15 s to die,
  //    and whatever the transport accepts into it meanwhile is lost. Directs to it queue.
  //  - A roster that lists such a connection again, its channel open all along, holds it: the
  //    channel is unproven (it may be the dead one) until it carries a message (receive() wakes
  //    it as connection_open would: announce, backlog flush, handoff retries, a peer event) or
  //    the transport reports a fresh connection_open (a restarted peer negotiates anew).
  //  - connection_open lists and un-holds it (rosters lag channels); connection_closed un-holds.
  // A roster never marks a connection open: that is the transport's word alone.
  void handle_connection_open(const ConnId& conn, TimeMs now_ms);
  void handle_connection_closed(const ConnId& conn, TimeMs now_ms);
  // Every connection in the room now; ones missing are forgotten (their stream may rebind).
  void handle_roster(const std::vector<ConnId>& conns, TimeMs now_ms);
  // Our own signaling came back after a blip. Peers whose rosters dropped us meanwhile hold our
  // channel until it carries something, so every reachable connection gets our announce now
  // (with the backlog flush, handoff retries and peer event of connection_open); held and
  // unlisted ones do not (they are woken by their own traffic). O(connections), once per blip.
  void handle_signaling_restored(TimeMs now_ms);
  // One control-lane message. Refusals become `rejected` events; nothing is torn down. A message
  // on a held connection wakes it first (even a refused one: the channel carried it). `text_tag`
  // is the host's name for this text, carried by the message event it makes (Event::text_tag).
  void handle_text(const ConnId& conn, ByteView text, TimeMs now_ms, std::uint64_t text_tag = 0);
  // handle_text for a host that pays to read its clock (the WASM glue: a Date.now() per message,
  // bench/README.md § bus, round 4): false, having changed nothing, when this text needs the time
  // (a held connection wakes, or a type whose handling reads it: reads_time), and the host calls
  // handle_text with it; true when the text was handled, which no time could have changed.
  bool handle_text_untimed(const ConnId& conn, ByteView text, std::uint64_t text_tag = 0);
  // The types whose handling reads now_ms: the announce we answer with (ts), history requests and
  // replays (replays' window, the replies' ts), handoffs (expiry), pings (the pong's ts). Kept by
  // hand, so two checks hold it to the handlers: tests/native/bus/test_bus_untimed.cpp per type,
  // and tests/fuzz/fuzz_bus_session.cpp, a timed and an untimed-first bus fed the same hostile
  // session, which must send and report the same after every step.
  static bool reads_time(MessageType t);
  // What the transport did with the transmit `token` (true: accepted; only an explicit refusal
  // is false, agent-bus-and-swarm.md § Compatibility).
  void handle_transmit_result(std::uint32_t token, bool accepted, TimeMs now_ms);

  // --- sending ---
  Result<Sent, BusError> send(const std::string& to, MessageType type, Json payload,
                              std::optional<std::string> topic, std::int64_t now_ms);
  Result<Sent, BusError> broadcast(MessageType type, Json payload, std::optional<std::string> topic,
                                   std::int64_t now_ms);
  Result<Sent, BusError> request_history(const std::string& to, const Json& count,
                                         std::int64_t now_ms);
  Result<Sent, BusError> ack(const Envelope& received, const Json& extra, std::int64_t now_ms);
  // Answers a command: command_response {requestId: command.id, ok: true, result} when `outcome`
  // is {result?} (a missing result is null), {requestId, ok: false, error} when it is {error:
  // "text"}. Anything else is refused (bad_payload), so every answer has the public shape.
  Result<Sent, BusError> respond(const Envelope& command, const Json& outcome, std::int64_t now_ms);
  // A direct message of ours that left through another path (the agent's durable disk outbox,
  // which keeps ids stable across restarts): kept in history and remembered for ack correlation
  // as if send() had sent it. Refused unless it is ours, direct, and not transient.
  std::optional<BusError> note_sent(const Envelope& e);
  // Replaces our announce payload and broadcasts it to every open connection.
  Result<Sent, BusError> set_announce(Json announce, std::int64_t now_ms);

  // After poll_transmit/handle_transmit_result ran: what became of a message sent in this call.
  // nullopt: a transient or broadcast the transport did not accept (or an unknown id).
  std::optional<SendStatus> outcome(const std::string& id) const;
  // The same as the send API reports it: sent or queued, and for a transient message (never
  // queued, § Delivery semantics) that the transport did not take, not_accepted.
  Result<SendStatus, BusError> send_result(const std::string& id, bool transient) const;
  // Broadcast results of the last broadcast (connections that accepted / rejected it).
  const std::vector<ConnId>& last_broadcast_accepted() const { return bcast_ok_; }
  const std::vector<ConnId>& last_broadcast_rejected() const { return bcast_no_; }

  // --- handoffs ---
  Result<OutgoingHandoff, BusError> handoff(const std::string& to, std::string request,
                                            std::int64_t expires_at, std::int64_t now_ms);
  Result<OutgoingHandoff, BusError> resume_handoff(const Envelope& original, std::int64_t now_ms);
  bool cancel_handoff(const std::string& id);
  std::vector<OutgoingHandoff> pending_handoffs() const;
  Result<Sent, BusError> confirm_handoff(std::string_view key_text, std::int64_t now_ms);
  void remember_handoff(const HandoffKey& key);

  // --- time ---
  // Handoff retries and expiry. Harmless before the deadline.
  void handle_timeout(TimeMs now_ms);
  // The earliest handoff retry or expiry, or none. Cheap: kept up to date as handoffs change.
  Timeout poll_timeout() const;

  // --- output, one item per poll ---
  // Nothing while a transmit awaits its handle_transmit_result: its result decides what follows.
  std::optional<Transmit> poll_transmit();
  std::optional<Event> poll_event() { return events_.poll(); }
  // The same event read in place, then dropped: the WASM binding's poll, which copies what it
  // needs into its record (an Event moved out costs its whole size for the fields left empty).
  Event* peek_event() { return events_.front(); }
  void pop_event() { events_.pop(); }
  // Hands a message event's tape back once it was read, so the next scan records into memory that
  // is already there (a host that keeps one tape aside swaps it for the event's, then returns the
  // other one here): a steady stream of messages then allocates no tape.
  void recycle_tape(Tape&& t) {
    if (t.capacity() > tape_scratch_.capacity()) tape_scratch_.swap(t);
  }
  // Cheap hints for a host that pays per call into the core (the WASM glue): false means
  // poll_transmit() (resp. poll_event()) would return nothing now.
  bool may_transmit() const { return !in_flight_ && (!immediate_.empty() || !ready_.empty()); }
  bool has_events() const { return !events_.empty(); }

  // --- inspection ---
  // Would a direct to `id` go out now? `id` is a stream id, or the id of a connection not yet
  // bound to a stream (as PeerInfo names a peer: stream_id, else conn). Two lookups, no scan; for a
  // driver's per-flush check (the sidecar's disk outbox) where peers() would cost the room size.
  bool is_open(const std::string& id) const;
  std::vector<PeerInfo> peers() const;
  std::optional<PeerInfo> peer(const ConnId& conn) const;
  std::size_t queued(const std::string& stream_id) const;
  std::size_t queued_total() const { return queued_total_; }
  // Our ring, oldest first: the last `count` entries a replay to `for_stream` would include
  // (every entry when for_stream is empty).
  std::vector<Envelope> history(std::size_t count, const std::string& for_stream) const;
  // 200 at most; invalid or non-positive counts mean 50.
  static std::size_t history_count(const Json& requested);

 private:
  struct Queued {
    std::string id;
    MessageType type;
    SharedText text;
  };
  struct Stream {
    std::string id;
    std::optional<ConnId> conn;
    std::optional<Identity> identity;
    Json announce = nullptr;
    bool handoff_capable = false;
    std::deque<Queued> queue;
    std::size_t queued_bytes = 0;
    bool flush_wanted = false;
    bool in_flight = false;
    bool in_ready = false;  // listed in ready_
    std::optional<std::int64_t> history_asked_ms;
    std::size_t history_left = 0;  // replays still accepted for our last request
  };
  // One transport connection; see "Reachability" above.
  struct Conn {
    bool transport_open = false;  // the transport reported open and no close since
    bool listed = true;           // no roster omitted it since it was listed or opened
    bool held = false;            // re-listed with its channel open all along: unproven
    std::optional<std::string> stream;
    bool reachable() const { return transport_open && listed && !held; }
  };
  enum class TxKind { immediate, queue_head, transient, broadcast, handoff };
  struct Pending {
    TxKind kind;
    ConnId conn;
    SharedText text;
    std::string id;
    std::string stream;  // queue_head: whose queue
  };
  struct SentDirect {
    std::string to;
    MessageType type;
  };

  std::string new_id();
  Envelope make_envelope(MessageType type, std::optional<std::string> to,
                         std::optional<std::string> topic, Json payload, std::int64_t now_ms);
  Stream& stream_for(const std::string& id);
  Result<Sent, BusError> send_direct(Envelope e, std::int64_t now_ms);
  void start_flush(Stream& s);
  void reject(const ConnId& conn, BusError e);
  // The checks every received envelope passes before the bus acts on it (identity binding,
  // addressing); nullptr after a refusal event.
  Stream* admit(const ConnId& conn, const IdentityView& from, MessageType type,
                std::optional<std::string_view> to, TimeMs now_ms);
  // admit() for a scanned envelope, with a shortcut for the common case: the same sender on the
  // same connection as the last message admitted, nothing about connections or streams changed
  // since (every such change drops admitted_), so every check admit() makes but the addressing
  // would pass again and change nothing.
  Stream* admit_scanned(const ConnId& conn, const ScannedEnvelope& v, TimeMs now_ms);
  void forget_admitted() { admitted_.stream = nullptr; }
  // handle_text's body; without now_ms, false (nothing done) when it would read it.
  bool receive_text(const ConnId& conn, ByteView text, std::optional<TimeMs> now_ms,
                    std::uint64_t text_tag);
  void on_envelope(const ConnId& conn, Stream& s, Envelope e, TimeMs now_ms, Event ev,
                   ByteView text);
  void opened(const ConnId& conn, const Conn& c, std::int64_t now_ms);
  void unbind(const ConnId& conn, Conn& c);
  void peer_event(const ConnId& conn);
  // History keeps each message as its text (no envelope copy), with what a replay's filter reads;
  // a replay parses the entries it sends. The ring's slots keep their buffers, so recording a
  // message is one copy of its text and, once the ring is warm, no allocation.
  void record_history(MessageType type, std::string_view from, std::optional<std::string_view> to,
                      std::string_view text);
  void record_history(const Envelope& e, const SharedText& text);
  // The scanned ack or command_response `v` names, by its payload's tape (tape_scratch_), a message
  // of ours that something waits on (on_confirmation's lookups): true, or false when it surely does
  // not (no such id, no id, not an object), so its payload needs no DOM; nullopt when the tape cannot
  // tell (an escape, non-ASCII text, no tape): then the DOM decides.
  std::optional<bool> may_confirm(const ScannedEnvelope& v, ByteView text) const;
  void remember_seen(std::string_view stream, std::string_view id);
  bool seen(const Envelope& e) const;
  void handoffs_changed() { deadline_dirty_ = true; }
  void remember_sent_direct(const Envelope& e);
  void on_history_request(Stream& s, const Envelope& e, std::int64_t now_ms);
  void on_history_replay(const ConnId& conn, Stream& s, const Envelope& e, std::int64_t now_ms);
  void on_ping(const ConnId& conn, const Envelope& e, std::int64_t now_ms);
  void on_confirmation(const Envelope& e);
  void on_announce(Stream& s, const Envelope& e);
  void on_skill_update(Stream& s, const Envelope& e, std::int64_t now_ms);
  void on_handoff(const ConnId& conn, const Envelope& e, std::int64_t now_ms);
  void attempt_handoff(OutgoingHandoff& h, std::int64_t now_ms);
  void retry_handoffs_to(const std::string& stream, std::int64_t now_ms);
  void purge_unconfirmed(std::int64_t now_ms);
  bool stream_open(const Stream& s) const;
  PeerInfo info_for(const ConnId& conn, const Conn& c) const;
  Json announce_payload() const;

  BusConfig config_;
  SeededRng rng_;
  std::map<ConnId, Conn> conns_;
  std::unordered_map<std::string, Stream> streams_;
  std::size_t queued_peers_ = 0;  // streams with a non-empty queue
  std::size_t queued_total_ = 0;
  // Streams whose queue head may be offered, in the order they became ready.
  std::deque<std::string> ready_;
  std::deque<Pending> immediate_;
  std::optional<std::pair<std::uint32_t, Pending>> in_flight_;
  std::uint32_t next_token_ = 1;
  // The drive contract's FIFO (common/drive.hpp's PollQueue), with its oldest event readable in
  // place (peek_event): a moved-out Event costs its whole size for the fields a message leaves empty.
  // A live message made while the queue is empty (the common case: one message in, one event out)
  // goes to a slot kept for it (emplace_live), so a steady stream builds and destroys no Event
  // (~600 bytes to initialise and tear down, bench/README.md § bus). That slot is always the front.
  class Events {
   public:
    void push(Event e) { items_.push_back(std::move(e)); }
    Event& emplace() { return items_.emplace_back(); }
    // An event whose writer sets only kind, conn, as_scanned, text_tag, spans and tape. The kept
    // slot differs from a default Event in no other field, because only this writes it, and a
    // poll moves those fields out (an Event's other fields stay as they were: default).
    Event& emplace_live() {
      if (has_live_ || !items_.empty()) return items_.emplace_back();
      has_live_ = true;
      return live_;
    }
    std::optional<Event> poll() {
      if (has_live_) {
        has_live_ = false;
        return std::optional<Event>(std::move(live_));
      }
      if (items_.empty()) return std::nullopt;
      std::optional<Event> out(std::move(items_.front()));
      items_.pop_front();
      return out;
    }
    Event* front() {
      if (has_live_) return &live_;
      return items_.empty() ? nullptr : &items_.front();
    }
    void pop() {
      if (has_live_)
        has_live_ = false;
      else if (!items_.empty())
        items_.pop_front();
    }
    bool empty() const { return !has_live_ && items_.empty(); }

   private:
    Event live_;
    bool has_live_ = false;
    std::deque<Event> items_;
  };
  Events events_;
  Tape tape_scratch_;
  // The last scanned envelope admit() let through: its connection, its `from` bytes and the stream
  // they are bound to (stream null: none). Streams are nodes of streams_, stable until erased, and
  // erasing one (unbind) drops this first.
  struct Admitted {
    std::string conn;
    std::string from_text;
    Stream* stream = nullptr;
    Admitted() = default;
    // A copied Bus has its own streams: the copy starts with nothing admitted. A move keeps the
    // nodes of streams_, so the pointer stays good.
    Admitted(const Admitted& o) : conn(o.conn), from_text(o.from_text) {}
    Admitted& operator=(const Admitted& o) {
      conn = o.conn;
      from_text = o.from_text;
      stream = nullptr;
      return *this;
    }
    Admitted(Admitted&&) = default;
    Admitted& operator=(Admitted&&) = default;
  } admitted_;

  struct HistoryEntry {
    std::string text;
    std::string from;
    bool has_to = false;  // a direct: `to` holds the recipient
    std::string to;
  };
  // A ring of up to kHistoryCapacity entries; history_head_ is the oldest once it is full.
  std::vector<HistoryEntry> history_;
  std::size_t history_head_ = 0;
  // Delivered (sender, id) pairs, the oldest forgotten past kSeenCapacity (bus/seen.hpp).
  SeenSet seen_{kSeenCapacity};
  std::deque<std::string> sent_order_;
  std::unordered_map<std::string, SentDirect> sent_;

  std::map<std::string, OutgoingHandoff> outgoing_;  // by message id
  mutable bool deadline_dirty_ = false;              // outgoing_ changed since deadline_
  mutable Timeout deadline_;
  std::map<HandoffKey, Envelope> unconfirmed_;  // delivered, awaiting confirm_handoff
  std::set<HandoffKey> stored_;
  std::deque<HandoffKey> stored_order_;

  // What this call's sends became (cleared at the start of each send/broadcast).
  std::unordered_map<std::string, SendStatus> outcomes_;
  std::vector<ConnId> bcast_ok_, bcast_no_;
};

// Every event now pending, in order: poll_event until none (for native hosts and tests).
inline std::vector<Event> drain_events(Bus& bus) {
  std::vector<Event> out;
  while (auto e = bus.poll_event()) out.push_back(std::move(*e));
  return out;
}

}  // namespace tether::bus
