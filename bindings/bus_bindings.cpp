// Embind surface of the bus core. Marshalling only (DESIGN.md rule 4): JSON text and bytes in,
// JSON text (shaped by src/bus/json_out.cpp) and typed-memory views out; every decision is made
// by src/bus. The JS wrapper with the public API is web/glue/bus.js.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bus/bus.hpp"
#include "bus/equal.hpp"
#include "bus/json_out.hpp"
#include "bus/scan.hpp"
#include "bus/shares.hpp"
#include "bus/transfer.hpp"
#include "bus/typed_payload.hpp"
#include "js_integer.hpp"

namespace tether::bus::bindings {
namespace {

using emscripten::val;

std::string text(const Json& j) {
  std::string out;
  append_json(out, j, JsonNumbers::js_double);
  return out;
}

Json parse(const std::string& s) {
  JsonParse p = parse_json(ByteView(std::string_view(s)));
  return p.ok() ? std::move(p.value) : Json(nullptr);
}

std::string sent_text(const Result<Sent, BusError>& r) {
  if (!r) return text(error_json(r.error()));
  return text(
      Json{{"ok", true}, {"id", r->envelope.id}, {"envelope", envelope_to_json(r->envelope)}});
}

std::optional<std::string> opt(const std::string& s, bool present) {
  if (!present) return std::nullopt;
  return s;
}

std::string bad_type(const std::string& type) {
  return text(error_json(
      bus_error(BusErrorCode::unknown_type, "type", "\"" + type + "\" is not a bus message type")));
}

// Received text crosses as bytes: JS encodes it straight into this staging buffer
// (TextEncoder.encodeInto into HEAPU8) and then makes one call with numbers only. What comes back
// is a record of doubles at a fixed address (layout: busRecordLayout()), read by JS through one
// Float64Array: a transmit, an event, or the spans of an envelope the scanner accepted (where each
// part lies in the caller's own text, so JS slices its string instead of decoding one the core
// wrote; bench/README.md § bus). Embind's std::string arguments and results cost a malloc and a
// JS UTF-8 loop each. One inbox serves every caller (JS is single-threaded and every call consumes
// the staged bytes before it returns); each BusCore has its own record, and so has the inbox's
// parse, so a loopback that delivers to another bus in the middle of a drain overwrites nothing.
double address_of(const void* p) {
  return double(reinterpret_cast<std::uintptr_t>(p));
}

enum Slot : std::size_t {
  // Written after every call into a BusCore: what the host may poll.
  kStatus,   // bit 0: a transmit may be waiting; bit 1: events are waiting; bit 2: an event
             // waits in this record already (the host clears the bit when it has read it);
             // bit 3: the text just passed without the time needs it (pass it again with now)
  kTimeout,  // poll_timeout(), or -1 for none
  // A transmit (pollTransmit).
  kTxToken,
  kTxConn,
  kTxSerial,  // changes only when the text does (a broadcast's one text for every peer)
  kTxAt,
  kTxLen,
  // An event (pollEvent), or a parse (busInboxScanSpans: kind -1).
  kEvKind,
  kEvConn,
  kEvFlags,  // bit 0 replayed; bit 1 the envelope is read from the caller's text (the spans below);
  // bits 2-5: its from, to, topic, payload keys are those of the last such event (Repeats)
  kEvTag,
  kEvType,
  kEvTs,
  kIdBegin,
  kIdEnd,
  kStreamBegin,
  kStreamEnd,
  kRoleBegin,
  kRoleEnd,
  kNameBegin,
  kNameEnd,
  kInstanceBegin,
  kInstanceEnd,
  kToBegin,  // -1: null
  kToEnd,
  kTopicBegin,  // -1: null
  kTopicEnd,
  kPayloadBegin,  // -1: no payload (null)
  kPayloadEnd,
  kTapeAt,     // the payload's tokens (bus/scan.hpp: kind, begin, end), as uint32 words
  kTapeWords,  // 0: no tape, JSON.parse the payload's span
  kJsonAt,     // an event without spans: its JSON text
  kJsonLen,
  kRecordSize
};

constexpr int kBitTransmit = 1, kBitEvents = 2, kBitEventInRecord = 4, kBitNeedsTime = 8;
constexpr int kFlagReplayed = 1, kFlagSpans = 2, kFlagSameFrom = 4, kFlagSameTo = 8,
              kFlagSameTopic = 16, kFlagSameKeys = 32;

void put_spans(double* r, const ScannedEnvelope& v, const Tape& tape) {
  r[kEvType] = double(int(v.type));
  r[kEvTs] = v.ts;
  const auto put = [&](std::size_t at, Span s) {
    r[at] = s.begin;
    r[at + 1] = s.end;
  };
  const auto put_opt = [&](std::size_t at, const std::optional<Span>& s) {
    if (s)
      put(at, *s);
    else
      r[at] = r[at + 1] = -1;
  };
  put(kIdBegin, v.id_span);
  put(kStreamBegin, v.stream_id_span);
  put(kRoleBegin, v.role_span);
  put(kNameBegin, v.name_span);
  put(kInstanceBegin, v.instance_id_span);
  put_opt(kToBegin, v.to_span);
  put_opt(kTopicBegin, v.topic_span);
  if (v.payload.empty())
    r[kPayloadBegin] = r[kPayloadEnd] = -1;
  else
    put(kPayloadBegin, v.payload_span);
  r[kTapeAt] = address_of(tape.data());
  r[kTapeWords] = double(tape.size());
}

// What JS may keep from the last message event it read through spans, so that a sender that says
// the same again costs it no new strings: the four `from` strings, `to`, `topic` and the payload's
// keys (a fresh key string also costs V8 a string-table lookup on every store; bench/README.md
// § bus, round 4). Kept here as the bytes they were sliced from, and compared with the next
// event's bytes; a flag bit says "reuse yours". Only the event the current call just made can be
// compared (its views point into the staged text); for any other, JS slices afresh what it has and
// the kept bytes are forgotten. The events go to the record in the order JS reads them (one at a
// time: the status bit), so what is kept here is always what JS holds.
class Repeats {
 public:
  // The flag bits for spans event `v` whose text is `text`, the staged bytes it was scanned from.
  int note(const ScannedEnvelope& v, const Tape& tape, ByteView text) {
    int flags = 0;
    if (same(from_, v.from_text)) flags |= kFlagSameFrom;
    if (v.to && same(to_, *v.to)) flags |= kFlagSameTo;
    if (v.topic && same(topic_, *v.topic)) flags |= kFlagSameTopic;
    if (!tape.empty()) {
      // JS keeps the keys of every payload it walks, in token order; unknown here when one is
      // escaped (JS parses it) or when UTF-16 spans are not byte offsets (non-ASCII payload).
      if (key_bytes(v, tape, text, scratch_)) {
        if (same(keys_, scratch_)) flags |= kFlagSameKeys;
      } else {
        keys_.reset();
      }
    }
    return flags;
  }
  // A spans event whose text is no longer staged: JS slices what it carries and keeps that.
  void forget(const ScannedEnvelope& v, const Tape& tape) {
    from_.reset();
    if (v.to) to_.reset();
    if (v.topic) topic_.reset();
    if (!tape.empty()) keys_.reset();
  }

 private:
  // Compares with the kept bytes; keeps the new ones when they differ (JS slices those).
  static bool same(std::optional<std::string>& kept, std::string_view now) {
    if (kept && equal_bytes(*kept, now)) return true;
    if (kept)
      kept->assign(now);
    else
      kept.emplace(now);
    return false;
  }
  // Every key of the payload, each followed by a NUL (never raw in a key), in token order.
  static bool key_bytes(const ScannedEnvelope& v, const Tape& t, ByteView text, std::string& out) {
    if (v.payload.size() != std::size_t(v.payload_span.end - v.payload_span.begin)) return false;
    const auto* bytes = reinterpret_cast<const char*>(text.data);
    const std::size_t shift = std::size_t(v.payload.data() - bytes) - v.payload_span.begin;
    out.clear();
    for (std::size_t i = 0; i + 2 < t.size(); i += 3) {
      const TapeKind k = TapeKind(t[i]);
      if (k == TapeKind::key_escaped) return false;
      if (k != TapeKind::key) continue;
      out.append(bytes + t[i + 1] + shift, t[i + 2] - t[i + 1]);
      out += '\0';
    }
    return true;
  }

  std::optional<std::string> from_, to_, topic_, keys_;
  std::string scratch_;
};

class Inbox {
 public:
  // The staging buffer's address once it holds at least n bytes; it moves only here.
  double reserve(std::size_t n) {
    if (n > bytes_.size()) bytes_.resize(n);
    return address_of(bytes_.data());
  }
  ByteView staged(std::size_t n) const {
    return ByteView(bytes_.data(), std::min(n, bytes_.size()));
  }
  double outbox() const { return address_of(outbox_); }
  double record() const { return address_of(record_); }
  // The scanner's verdict on the staged bytes: true with the spans in the record (read them
  // against the text that was staged), or false: call parse for the DOM path's result.
  bool scan_spans(std::size_t n) {
    auto s = scan_envelope(staged(n), &tape_);
    if (!s) return false;
    double* r = record_;
    r[kEvKind] = -1;
    r[kEvFlags] = kFlagSpans;
    put_spans(r, *s, tape_);
    return true;
  }
  // Parses the staged bytes; the result text ({ok:true, envelope} or a BusError) is at the outbox.
  void parse(std::size_t n) {
    const ByteView in = staged(n);
    out_.clear();
    if (auto s = scan_envelope(in)) {
      append_scanned_result(out_, *s);  // one pass, payload text verbatim
    } else {
      auto e = parse_envelope_dom(in);  // every refusal, and the shapes the scanner leaves
      if (!e)
        append_json(out_, error_json(e.error()), JsonNumbers::js_double);
      else
        append_json(out_, Json{{"ok", true}, {"envelope", envelope_to_json(e.value())}},
                    JsonNumbers::js_double);
    }
    outbox_[0] = address_of(out_.data());
    outbox_[1] = double(out_.size());
  }

 private:
  Bytes bytes_;
  Tape tape_;
  std::string out_;
  double outbox_[2] = {0, 0};
  double record_[kRecordSize] = {};
};

Inbox& inbox() {
  static Inbox box;
  return box;
}

// The bus on the one drive contract (common/drive.hpp): handle_* in, then pollTransmit /
// pollEvent / the timeout from the record. Connections are numbered here (conn), so a received
// message crosses with numbers only; JS keeps the names it registered.
class BusCore {
 public:
  // "" when the bus exists, else a BusError as JSON text.
  std::string init(const std::string& options) {
    auto c = config_from_json(parse(options));
    if (!c) return text(error_json(c.error()));
    c->message_spans_only = true;  // JS holds every text it passes until its events are read
    bus_ = std::make_unique<Bus>(std::move(c.value()));
    settle();
    return "";
  }
  double record_address() const { return address_of(record_); }
  double self_address() const { return address_of(this); }
  // The number of connection `name`, registered once.
  std::uint32_t conn(const std::string& name) {
    auto [it, fresh] = numbers_.emplace(name, std::uint32_t(names_.size()));
    if (fresh) names_.push_back(name);
    return it->second;
  }

  void open(std::uint32_t c, double now) {
    if (c < names_.size()) bus_->handle_connection_open(names_[c], TimeMs(now));
    settle();
  }
  void closed(std::uint32_t c, double now) {
    if (c < names_.size()) bus_->handle_connection_closed(names_[c], TimeMs(now));
    settle();
  }
  // The connection numbers now in the room, as a JSON array.
  void roster(const std::string& numbers_json, double now) {
    std::vector<ConnId> v;
    Json j = parse(numbers_json);
    if (j.is_array())
      for (const auto& n : j)
        if (auto i = json_integer(n, 0, std::int64_t(names_.size()) - 1))
          v.push_back(names_[std::size_t(*i)]);
    bus_->handle_roster(v, TimeMs(now));
    settle();
  }
  void signaling_restored(double now) {
    bus_->handle_signaling_restored(TimeMs(now));
    settle();
  }
  // The message is the inbox's first `len` staged bytes; `tag` is the host's name for its text.
  // The first event it made is already in the record when the record's slot was free
  // (kBitEventInRecord), so an ordinary message costs this one call. `now` NaN: the host has not
  // read its clock; when the text needs the time nothing is done and the status says
  // kBitNeedsTime (Bus::handle_text_untimed), and the host passes the same text again with it.
  void receive(std::uint32_t c, double len, double now, double tag) {
    if (c < names_.size()) {
      last_conn_ = c;
      const ByteView text = inbox().staged(std::size_t(len));
      if (now != now) {  // NaN
        if (!bus_->handle_text_untimed(names_[c], text, std::uint64_t(tag))) {
          settle();
          record_[kStatus] = double(int(record_[kStatus]) | kBitNeedsTime);
          return;
        }
      } else {
        bus_->handle_text(names_[c], text, TimeMs(now), std::uint64_t(tag));
      }
    }
    if (!(int(record_[kStatus]) & kBitEventInRecord))
      if (Event* e = bus_->peek_event()) {
        // An event of this text (not one left from an earlier text): its views are still good.
        const bool staged = e->spans && e->text_tag == std::uint64_t(tag) && c < names_.size();
        put_event(*e, staged ? inbox().staged(std::size_t(len)) : ByteView());
        bus_->pop_event();
        status_bits_ = kBitEventInRecord;
      }
    settle();
  }
  void transmit_result(double token, bool accepted, double now) {
    bus_->handle_transmit_result(std::uint32_t(token), accepted, TimeMs(now));
    settle();
  }
  void timeout(double now) {
    bus_->handle_timeout(TimeMs(now));
    settle();
  }
  // 1 with a transmit in the record, 0 when there is none.
  int poll_transmit() {
    auto t = bus_->poll_transmit();
    int out = 0;
    if (t) {
      double* r = record_;
      r[kTxToken] = t->token;
      r[kTxConn] = conn(t->conn);
      if (t->text != tx_text_) {
        tx_text_ = t->text;
        ++tx_serial_;
      }
      r[kTxSerial] = double(tx_serial_);
      r[kTxAt] = address_of(tx_text_->data());
      r[kTxLen] = double(tx_text_->size());
      out = 1;
    }
    settle();
    return out;
  }
  // The next event's kind (busEventKinds()) with its fields in the record, or -1.
  int poll_event() {
    int out = -1;
    if (Event* e = bus_->peek_event()) {
      out = put_event(*e, ByteView());
      bus_->pop_event();
    }
    settle();
    return out;
  }

  bool is_open(const std::string& id) const { return bus_->is_open(id); }
  std::string send(const std::string& to, const std::string& type, const std::string& payload,
                   const std::string& topic, bool has_topic, double now) {
    auto t = message_type_from_name(type);
    if (!t) return bad_type(type);
    return settled(
        sent_text(bus_->send(to, *t, parse(payload), opt(topic, has_topic), std::int64_t(now))));
  }
  std::string broadcast(const std::string& type, const std::string& payload,
                        const std::string& topic, bool has_topic, double now) {
    auto t = message_type_from_name(type);
    if (!t) return bad_type(type);
    return settled(
        sent_text(bus_->broadcast(*t, parse(payload), opt(topic, has_topic), std::int64_t(now))));
  }
  std::string request_history(const std::string& to, const std::string& count, double now) {
    return settled(sent_text(bus_->request_history(to, parse(count), std::int64_t(now))));
  }
  std::string reply(bool command, const std::string& envelope, const std::string& extra,
                    double now) {
    auto e = parse_envelope(ByteView(std::string_view(envelope)));
    if (!e) return text(error_json(e.error()));
    return settled(sent_text(command ? bus_->respond(e.value(), parse(extra), std::int64_t(now))
                                     : bus_->ack(e.value(), parse(extra), std::int64_t(now))));
  }
  std::string set_announce(const std::string& announce, double now) {
    return settled(sent_text(bus_->set_announce(parse(announce), std::int64_t(now))));
  }
  std::string outcome(const std::string& id) {
    auto o = bus_->outcome(id);
    if (!o) return "";
    return *o == SendStatus::sent ? "sent" : "queued";
  }
  std::string send_result(const std::string& id, bool transient) {
    auto r = bus_->send_result(id, transient);
    if (!r) return text(error_json(r.error()));
    return r.value() == SendStatus::sent ? R"({"ok":true,"status":"sent"})"
                                         : R"({"ok":true,"status":"queued"})";
  }
  std::string conn_name(std::uint32_t c) const {
    return c < names_.size() ? names_[c] : std::string();
  }
  std::string last_broadcast() {
    return text(Json{{"sentTo", bus_->last_broadcast_accepted()},
                     {"rejectedBy", bus_->last_broadcast_rejected()}});
  }
  std::string handoff(const std::string& to, const std::string& request, double expires_at,
                      double now) {
    auto h = bus_->handoff(to, request, ::tether::bindings::saturating_int64(expires_at),
                           std::int64_t(now));
    if (!h) return settled(text(error_json(h.error())));
    return settled(text(Json{{"ok", true}, {"handoff", outgoing_handoff_json(h.value())}}));
  }
  std::string resume_handoff(const std::string& envelope, double now) {
    auto e = parse_envelope(ByteView(std::string_view(envelope)));
    if (!e) return text(error_json(e.error()));
    auto h = bus_->resume_handoff(e.value(), std::int64_t(now));
    if (!h) return settled(text(error_json(h.error())));
    return settled(text(Json{{"ok", true}, {"handoff", outgoing_handoff_json(h.value())}}));
  }
  std::string note_sent(const std::string& envelope) {
    auto e = parse_envelope(ByteView(std::string_view(envelope)));
    if (!e) return text(error_json(e.error()));
    if (auto bad = bus_->note_sent(e.value())) return text(error_json(*bad));
    return R"({"ok":true})";
  }
  bool cancel_handoff(const std::string& id) {
    const bool r = bus_->cancel_handoff(id);
    settle();
    return r;
  }
  std::string pending_handoffs() {
    Json a = Json::array();
    for (const auto& h : bus_->pending_handoffs()) a.push_back(outgoing_handoff_json(h));
    return text(a);
  }
  std::string confirm_handoff(const std::string& key, double now) {
    return settled(sent_text(bus_->confirm_handoff(key, std::int64_t(now))));
  }
  bool remember_handoff(const std::string& key) {
    auto k = parse_handoff_key(key);
    if (!k) return false;
    bus_->remember_handoff(*k);
    return true;
  }
  std::string peers() {
    Json a = Json::array();
    for (const auto& p : bus_->peers()) a.push_back(peer_json(p));
    return text(a);
  }
  double queued(const std::string& stream) {
    return double(stream.empty() ? bus_->queued_total() : bus_->queued(stream));
  }
  std::string history(double count, const std::string& for_stream) {
    Json a = Json::array();
    for (const auto& e :
         bus_->history(count < 0 ? kHistoryCapacity : std::size_t(count), for_stream))
      a.push_back(envelope_to_json(e));
    return text(a);
  }

 private:
  // What the host may poll, after every call.
  void settle() {
    double* r = record_;
    const int kept = int(r[kStatus]) & kBitEventInRecord;
    r[kStatus] =
        double((bus_->may_transmit() ? kBitTransmit : 0) | (bus_->has_events() ? kBitEvents : 0) |
               (status_bits_ ? status_bits_ : kept));
    status_bits_ = 0;
    const Timeout t = bus_->poll_timeout();
    r[kTimeout] = t ? double(*t) : -1.0;
  }
  std::string settled(std::string s) {
    settle();
    return s;
  }

  // `staged`: the bytes e's views point into, or empty when they are gone (see Repeats).
  int put_event(Event& e, ByteView staged) {
    double* r = record_;
    r[kEvKind] = double(int(e.kind));
    // Mostly the connection the text just came by: one comparison instead of a hash lookup.
    const bool last = last_conn_ < names_.size() && equal_bytes(names_[last_conn_], e.conn);
    r[kEvConn] = e.conn.empty() ? -1 : double(last ? last_conn_ : conn(e.conn));
    r[kEvTag] = double(e.text_tag);
    int flags = e.replayed ? kFlagReplayed : 0;
    if (e.spans) {
      flags |= kFlagSpans;
      if (staged.data)
        flags |= repeats_.note(*e.spans, e.tape, staged);
      else
        repeats_.forget(*e.spans, e.tape);
      // The tape stays readable here until the next event; the one held before goes back to the
      // bus for its next scan.
      held_tape_.swap(e.tape);
      bus_->recycle_tape(std::move(e.tape));
      put_spans(r, *e.spans, held_tape_);
    } else {
      event_json_.clear();
      append_event_json(event_json_, e, *bus_);
      r[kJsonAt] = address_of(event_json_.data());
      r[kJsonLen] = double(event_json_.size());
    }
    r[kEvFlags] = flags;
    return int(e.kind);
  }

  std::unique_ptr<Bus> bus_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> numbers_;
  SharedText tx_text_;
  std::uint64_t tx_serial_ = 0;
  Tape held_tape_;
  std::uint32_t last_conn_ = 0;
  std::string event_json_;
  Repeats repeats_;
  int status_bits_ = 0;
  double record_[kRecordSize] = {};
};

// Names and numbers JS reads once: the record's slots, the event kinds, the message types and
// the tape's token kinds, in the core's own order.
val record_layout() {
  val o = val::object();
  static const char* kSlots[] = {
      "status",    "timeout",    "txToken",  "txConn",        "txSerial",    "txAt",
      "txLen",     "evKind",     "evConn",   "evFlags",       "evTag",       "evType",
      "evTs",      "idBegin",    "idEnd",    "streamBegin",   "streamEnd",   "roleBegin",
      "roleEnd",   "nameBegin",  "nameEnd",  "instanceBegin", "instanceEnd", "toBegin",
      "toEnd",     "topicBegin", "topicEnd", "payloadBegin",  "payloadEnd",  "tapeAt",
      "tapeWords", "jsonAt",     "jsonLen"};
  static_assert(sizeof(kSlots) / sizeof(kSlots[0]) == kRecordSize, "a name per slot");
  for (std::size_t i = 0; i < kRecordSize; ++i) o.set(kSlots[i], double(i));
  o.set("size", double(kRecordSize));
  o.set("bitTransmit", kBitTransmit);
  o.set("bitEvents", kBitEvents);
  o.set("bitEventInRecord", kBitEventInRecord);
  o.set("bitNeedsTime", kBitNeedsTime);
  o.set("flagReplayed", kFlagReplayed);
  o.set("flagSpans", kFlagSpans);
  o.set("flagSameFrom", kFlagSameFrom);
  o.set("flagSameTo", kFlagSameTo);
  o.set("flagSameTopic", kFlagSameTopic);
  o.set("flagSameKeys", kFlagSameKeys);
  return o;
}

val names_table() {
  val o = val::object();
  val kinds = val::array();
  static const char* kKinds[] = {"message",        "rejected",     "handoff", "handoffStored",
                                 "handoffExpired", "confirmation", "peer"};
  for (int i = 0; i < 7; ++i) kinds.set(i, std::string(kKinds[i]));
  o.set("eventKinds", kinds);
  val types = val::array();
  for (int i = 0; i < kMessageTypeCount; ++i)
    types.set(i, std::string(message_type_name(MessageType(i))));
  o.set("messageTypes", types);
  val tape = val::object();
  static const char* kTape[] = {"objectBegin", "objectEnd",  "arrayBegin", "arrayEnd",
                                "key",         "keyEscaped", "string",     "stringEscaped",
                                "number",      "true",       "false",      "null"};
  for (int i = 0; i < 12; ++i) tape.set(kTape[i], i);
  o.set("tapeKinds", tape);
  return o;
}

// The one-to-one transfer: a sender plan over staged file bytes.
class FilePlan {
 public:
  val input(std::size_t n) {
    if (n > kFileMaxBytes) return val::null();
    bytes_.resize(n);
    return val(emscripten::typed_memory_view(n, bytes_.data()));
  }
  std::string plan(const std::string& name, const std::string& mime, const std::string& kind,
                   double chunk_size, const std::string& transfer_id, double seed) {
    auto p = plan_file_send(ByteView(bytes_), name, mime, kind, std::uint32_t(chunk_size),
                            transfer_id, std::uint64_t(seed));
    if (!p) return text(error_json(p.error()));
    offer_ = p->offer;
    return text(Json{{"ok", true},
                     {"offer", file_offer_json(offer_)},
                     {"complete", file_complete_payload(offer_)}});
  }
  std::string chunk(std::uint32_t index) {
    return text(file_chunk_payload(offer_, ByteView(bytes_), index));
  }

 private:
  Bytes bytes_;
  FileOffer offer_;
};

class FileReceiverCore {
 public:
  FileReceiverCore(double max_file, double max_incomplete, double max_promised)
      : rx_(ReceiverLimits{std::uint64_t(max_file), std::size_t(max_incomplete),
                           std::uint64_t(max_promised)}) {}
  std::string offer(const std::string& from, const std::string& payload) {
    auto o = rx_.offer(from, parse(payload));
    if (!o) return text(error_json(o.error()));
    return text(Json{{"ok", true}, {"offer", file_offer_json(o.value())}});
  }
  // The result as JSON text; the chunk bytes stay readable through data() until the next call.
  std::string chunk(const std::string& from, const std::string& payload) {
    auto c = rx_.chunk(from, parse(payload));
    if (!c) return text(error_json(c.error()));
    last_ = std::move(c->data);
    return text(Json{
        {"ok", true}, {"transferId", c->transfer_id}, {"index", c->index}, {"offset", c->offset}});
  }
  val data() { return val(emscripten::typed_memory_view(last_.size(), last_.data())); }
  std::string complete(const std::string& from, const std::string& payload) {
    auto o = rx_.complete(from, parse(payload));
    if (!o) return text(error_json(o.error()));
    return text(Json{{"ok", true}, {"offer", file_offer_json(o.value())}});
  }
  bool abort(const std::string& id) { return rx_.abort(id); }
  double incomplete() const { return double(rx_.incomplete()); }
  double promised() const { return double(rx_.promised_bytes()); }

 private:
  FileReceiver rx_;
  Bytes last_;
};

std::string serialize_envelope_js(const std::string& s) {
  auto e = parse_envelope(ByteView(std::string_view(s)));
  if (!e) return text(error_json(e.error()));
  auto t = encode_envelope(e.value());
  if (!t) return text(error_json(t.error()));
  return text(Json{{"ok", true}, {"text", t.value()}});
}

bool is_transient_js(const std::string& type) {
  auto t = message_type_from_name(type);
  return t && is_transient(*t);
}

std::string match_receipt_js(const std::string& envelope, const std::string& request_id,
                             const std::string& peer, const std::string& instance,
                             bool has_instance) {
  auto e = parse_envelope(ByteView(std::string_view(envelope)));
  if (!e) return "null";
  auto r = match_receipt(e.value(), request_id, peer,
                         has_instance ? std::optional<std::string_view>(instance) : std::nullopt);
  if (!r) return "null";
  return text(receipt_json(*r, e.value(), request_id, peer));
}

// null (not a share command), {ok:true, command, share, path} or a BusError, for envelope text.
std::string parse_share_command_js(const std::string& envelope) {
  auto e = parse_envelope(ByteView(std::string_view(envelope)));
  if (!e) return text(error_json(e.error()));
  auto c = parse_share_command(e.value());
  if (!c) return "null";
  if (!c->ok()) return text(error_json(c->error()));
  return text(Json{{"ok", true},
                   {"command", std::string(share_command_name(c->value().kind))},
                   {"share", c->value().share},
                   {"path", c->value().path}});
}

// {ok:true, payload} (the command payload) or a BusError.
// share_path (bus/shares.hpp): a path inside a share as its owner reads it.
std::string share_path_js(const std::string& raw) {
  return share_path(raw);
}

bool valid_share_name_js(const std::string& name) {
  return valid_share_name(name);
}

// The list-files result (bus/shares.hpp list_files_result) from the host's reading of the folder,
// `entries_json` being [{name, dir, size}]; names that are not text were left out by the caller.
std::string list_files_result_js(const std::string& share, const std::string& path,
                                 const std::string& entries_json, double omitted) {
  // The host's reading crosses as JSON; anything else in it (a size that is not a count, a `dir`
  // that is not a boolean) reads as 0 or false, never as a trap: casts saturate (js_integer.hpp).
  const auto count = [](double v) {
    return std::uint64_t(std::max<std::int64_t>(0, ::tether::bindings::saturating_int64(v)));
  };
  const Json read = parse(entries_json);
  std::vector<ShareEntry> entries;
  for (const Json& e : read.is_array() ? read : Json::array()) {
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) continue;
    ShareEntry s;
    s.name = e["name"].get<std::string>();
    const auto dir = e.find("dir");
    s.dir = dir != e.end() && dir->is_boolean() && dir->get<bool>();
    if (auto sz = e.find("size"); sz != e.end() && sz->is_number())
      s.size = count(sz->get<double>());
    entries.push_back(std::move(s));
  }
  return text(list_files_result(share, path, std::move(entries), std::size_t(count(omitted))));
}

std::string direct_send_types_js() {
  Json names = Json::array();
  for (MessageType t : kDirectSendTypes) names.push_back(std::string(message_type_name(t)));
  return text(names);
}

std::string share_command_payload_js(const std::string& command, const std::string& share,
                                     const std::string& path) {
  ShareCommand c;
  if (command == share_command_name(ShareCommand::Kind::list_files))
    c.kind = ShareCommand::Kind::list_files;
  else if (command == share_command_name(ShareCommand::Kind::get_file))
    c.kind = ShareCommand::Kind::get_file;
  else if (command != share_command_name(ShareCommand::Kind::shares))
    return text(error_json(bus_error(BusErrorCode::bad_field, "command",
                                     "a share command is shares, list-files or get-file")));
  c.share = share;
  c.path = path;
  auto p = share_command_payload(c);
  if (!p) return text(error_json(p.error()));
  return text(Json{{"ok", true}, {"payload", p.value()}});
}

// {ok:true, payload} or {ok:false, code, count, bound, json?}: a typed_payload or
// command_response_from refusal, which web/agent/typed-payload.js words for its caller.
std::string words_payload_js(const Result<Json, WordsRefusal>& r) {
  if (r) return text(Json{{"ok", true}, {"payload", r.value()}});
  const WordsRefusal& e = r.error();
  Json j{{"ok", false},
         {"code", std::string(words_error_name(e.code))},
         {"count", e.count},
         {"bound", e.bound}};
  if (e.json != JsonError::none) j["json"] = json_error_name(e.json);
  if (e.code == WordsError::not_utf8) j["input"] = std::string(words_input_name(e.input));
  return text(j);
}

std::optional<std::string_view> opt_view(const std::string& s, bool present) {
  if (!present) return std::nullopt;
  return std::string_view(s);
}

// Text a caller typed crosses as its JSON text (JSON.stringify of the JS string): Embind's own
// std::string conversion merges a lone surrogate with the code unit after it, so `"hi \ud800"`
// would arrive as "hi U+10000" and be sent. Decoded here; nullopt when it holds a lone surrogate,
// which has no UTF-8 (the core's not_utf8).
std::optional<std::string> js_text(const std::string& json_text) {
  JsonParse p = parse_json(ByteView(std::string_view(json_text)));
  if (!p.ok() || !p.value.is_string()) return std::nullopt;
  return p.value.get<std::string>();
}

std::string not_utf8_js(WordsInput input) {
  WordsRefusal r{WordsError::not_utf8};
  r.input = input;
  return words_payload_js(err(r));
}

std::string typed_payload_js(const std::string& type, const std::string& text_json,
                             const std::string& args_json, bool has_args) {
  auto words = js_text(text_json);
  if (!words) return not_utf8_js(WordsInput::text);
  return words_payload_js(typed_payload(type, *words, opt_view(args_json, has_args)));
}

std::string command_response_js(const std::string& request_id_json, const std::string& result_json,
                                bool has_result, const std::string& error_json_text,
                                bool has_error) {
  auto id = js_text(request_id_json);
  auto error = has_error ? js_text(error_json_text) : std::optional<std::string>("");
  if (!id) return not_utf8_js(WordsInput::request_id);
  if (!error) return not_utf8_js(WordsInput::error_text);
  return words_payload_js(
      command_response_from(*id, opt_view(result_json, has_result), opt_view(*error, has_error)));
}

std::string file_ack_refusal_js(const std::string& payload, const std::string& error) {
  return text(file_ack_refusal(parse(payload), error));
}

// The file_ack for an offer the receiver verified ({ok:true, offer} from complete()).
std::string file_ack_received_js(const std::string& offer, const std::string& saved_path) {
  auto o = parse_file_offer(parse(offer), kFileMaxBytes);
  if (!o) return text(error_json(o.error()));
  return text(Json{{"ok", true}, {"payload", file_ack_received(o.value(), saved_path)}});
}

std::string limits_js() {
  return text(limits_json());
}

}  // namespace
}  // namespace tether::bus::bindings

// The one hot input, also as a plain export (Module._tether_bus_text): an Embind method call goes
// through Embind's generic invoker (DYNAMIC_EXECUTION=0 forbids a generated one), which costs more
// than scanning a small envelope (bench/README.md § bus). Numbers only, as BusCore::receive takes
// them; `core` is BusCore.address().
extern "C" EMSCRIPTEN_KEEPALIVE void tether_bus_text(double core, std::uint32_t conn, double len,
                                                     double now, double tag) {
  reinterpret_cast<tether::bus::bindings::BusCore*>(std::uintptr_t(core))
      ->receive(conn, len, now, tag);
}

EMSCRIPTEN_BINDINGS(tether_bus) {
  using namespace emscripten;
  using namespace tether::bus::bindings;
  class_<BusCore>("BusCore")
      .constructor<>()
      .function("init", &BusCore::init)
      .function("record", &BusCore::record_address)
      .function("address", &BusCore::self_address)
      .function("conn", &BusCore::conn)
      .function("open", &BusCore::open)
      .function("closed", &BusCore::closed)
      .function("roster", &BusCore::roster)
      .function("signalingRestored", &BusCore::signaling_restored)
      .function("text", &BusCore::receive)
      .function("transmitResult", &BusCore::transmit_result)
      .function("timeout", &BusCore::timeout)
      .function("pollTransmit", &BusCore::poll_transmit)
      .function("pollEvent", &BusCore::poll_event)
      .function("isOpen", &BusCore::is_open)
      .function("send", &BusCore::send)
      .function("broadcast", &BusCore::broadcast)
      .function("requestHistory", &BusCore::request_history)
      .function("reply", &BusCore::reply)
      .function("setAnnounce", &BusCore::set_announce)
      .function("outcome", &BusCore::outcome)
      .function("lastBroadcast", &BusCore::last_broadcast)
      .function("sendResult", &BusCore::send_result)
      .function("connName", &BusCore::conn_name)
      .function("handoff", &BusCore::handoff)
      .function("resumeHandoff", &BusCore::resume_handoff)
      .function("noteSent", &BusCore::note_sent)
      .function("cancelHandoff", &BusCore::cancel_handoff)
      .function("pendingHandoffs", &BusCore::pending_handoffs)
      .function("confirmHandoff", &BusCore::confirm_handoff)
      .function("rememberHandoff", &BusCore::remember_handoff)
      .function("peers", &BusCore::peers)
      .function("queued", &BusCore::queued)
      .function("history", &BusCore::history);
  function("busFileChunkSizeFor", optional_override([](double max_message_bytes) {
             return tether::bus::file_chunk_size_for(max_message_bytes > 0 &&
                                                             std::isfinite(max_message_bytes)
                                                         ? std::uint64_t(max_message_bytes)
                                                         : 0);
           }));
  class_<FilePlan>("BusFilePlan")
      .constructor<>()
      .function("input", &FilePlan::input)
      .function("plan", &FilePlan::plan)
      .function("chunk", &FilePlan::chunk);
  class_<FileReceiverCore>("BusFileReceiver")
      .constructor<double, double, double>()
      .function("offer", &FileReceiverCore::offer)
      .function("chunk", &FileReceiverCore::chunk)
      .function("data", &FileReceiverCore::data)
      .function("complete", &FileReceiverCore::complete)
      .function("abort", &FileReceiverCore::abort)
      .function("incomplete", &FileReceiverCore::incomplete)
      .function("promised", &FileReceiverCore::promised);
  function(
      "busInboxReserve", +[](double n) { return inbox().reserve(std::size_t(n)); });
  function(
      "busInboxOutbox", +[]() { return inbox().outbox(); });
  function(
      "busInboxParse", +[](double n) { inbox().parse(std::size_t(n)); });
  function(
      "busInboxScanSpans", +[](double n) { return inbox().scan_spans(std::size_t(n)); });
  function(
      "busInboxRecord", +[]() { return inbox().record(); });
  function("busRecordLayout", &record_layout);
  function("busNames", &names_table);
  function("busSerializeEnvelope", &serialize_envelope_js);
  function("busIsTransient", &is_transient_js);
  function("busMatchReceipt", &match_receipt_js);
  function("busLimits", &limits_js);
  function("busParseShareCommand", &parse_share_command_js);
  function("busShareCommandPayload", &share_command_payload_js);
  function("busSharePath", &share_path_js);
  function("busValidShareName", &valid_share_name_js);
  function("busListFilesResult", &list_files_result_js);
  function("busDirectSendTypes", &direct_send_types_js);
  function("busTypedPayload", &typed_payload_js);
  function("busCommandResponse", &command_response_js);
  function("busFileAckRefusal", &file_ack_refusal_js);
  function("busFileAckReceived", &file_ack_received_js);
  function(
      "busEnvelopeVersion", +[]() { return tether::bus::kEnvelopeVersion; });
}
