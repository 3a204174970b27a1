// The bus state machine (see bus.hpp). Spec: agent-bus-and-swarm.md § Delivery semantics,
// § Connection race this prevents, § Local state and CLI boundaries, § Untrusted wire input.
#include "bus/bus.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "bus/equal.hpp"
#include "common/base64.hpp"
#include "common/utf8.hpp"

namespace tether::bus {

namespace {

std::string base64url(const std::uint8_t* p, std::size_t n) {
  std::string s = base64_encode(ByteView(p, n));
  for (char& c : s) {
    if (c == '+')
      c = '-';
    else if (c == '/')
      c = '_';
  }
  while (!s.empty() && s.back() == '=') s.pop_back();
  return s;
}

std::int64_t backoff_ms(std::uint32_t attempts) {
  std::int64_t d = kHandoffRetryInitialMs;
  for (std::uint32_t i = 1; i < attempts && d < kHandoffRetryMaxMs; ++i) d *= 2;
  return std::min(d, kHandoffRetryMaxMs);
}

std::optional<std::string> string_member(const Json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end()) return std::nullopt;
  auto s = json_string(*it);
  if (!s) return std::nullopt;
  return std::string(*s);
}

}  // namespace

// --- free functions ---------------------------------------------------------------------------

std::string handoff_key_text(const HandoffKey& k) {
  std::string out;
  append_json(out, Json::array({k.stream_id, k.instance_id, k.message_id}));
  return out;
}

std::optional<HandoffKey> parse_handoff_key(std::string_view text) {
  if (text.size() > 4 * (kMaxStreamIdChars + kMaxInstanceIdChars + kMaxIdChars) * 2)
    return std::nullopt;
  JsonParse p = parse_json(ByteView(text));
  if (!p.ok() || !p.value.is_array() || p.value.size() != 3) return std::nullopt;
  HandoffKey k;
  std::string* parts[3] = {&k.stream_id, &k.instance_id, &k.message_id};
  for (std::size_t i = 0; i < 3; ++i) {
    auto s = json_string(p.value[i]);
    if (!s || s->empty()) return std::nullopt;
    parts[i]->assign(s->data(), s->size());
  }
  return k;
}

Result<HandoffPayload, BusError> check_handoff(const Envelope& e) {
  if (e.type != MessageType::handoff)
    return err(bus_error(BusErrorCode::bad_field, "type", "a handoff has type \"handoff\""));
  if (!e.to)
    return err(bus_error(BusErrorCode::bad_field, "to",
                         "a handoff is direct: set `to` to the recipient's streamId"));
  if (e.topic)
    return err(bus_error(BusErrorCode::bad_field, "topic", "a handoff has a null topic"));
  Json scratch;
  const Json& p = e.payload_dom(scratch);
  if (!p.is_object() || p.size() != 2 || !p.contains("request") || !p.contains("expiresAt"))
    return err(bus_error(BusErrorCode::bad_payload, "payload",
                         "a handoff payload is exactly {request, expiresAt}"));
  auto request = json_string(p["request"]);
  if (!request || request->empty())
    return err(bus_error(BusErrorCode::bad_payload, "payload.request",
                         "payload.request must be non-empty text"));
  // A request built here (Bus::handoff) has not been through a parser: it must be text a
  // receiver can read.
  if (!is_valid_utf8(ByteView(*request)))
    return err(bus_error(BusErrorCode::bad_payload, "payload.request",
                         "payload.request is not valid UTF-8; send text"));
  const std::size_t bytes = json_string_bytes(*request);
  if (bytes > kHandoffMaxRequestBytes)
    return err(bus_error(BusErrorCode::handoff_too_large, "payload.request",
                         "the request is " + std::to_string(bytes) +
                             " bytes as a JSON string; the limit is " +
                             std::to_string(kHandoffMaxRequestBytes) +
                             " (share a file and hand off its name instead)"));
  auto exp = json_integer(p["expiresAt"], 0, kMaxSafeInteger);
  if (!exp)
    return err(bus_error(BusErrorCode::bad_payload, "payload.expiresAt",
                         "payload.expiresAt must be an integer Unix time in milliseconds"));
  if (double(*exp) <= e.ts || double(*exp) > e.ts + double(kHandoffMaxTtlMs))
    return err(
        bus_error(BusErrorCode::handoff_expiry, "payload.expiresAt",
                  "payload.expiresAt must be after the envelope's ts and at most 24 hours later"));
  return HandoffPayload{std::string(*request), *exp};
}

Json handoff_receipt_payload(const Envelope& h) {
  return Json{{"messageId", h.id},
              {"senderInstanceId", h.from.instance_id},
              {"forType", "handoff"},
              {"receipt", "stored"}};
}

std::optional<std::string> confirmed_id(const Envelope& e) {
  if (e.type != MessageType::ack && e.type != MessageType::command_response) return std::nullopt;
  Json scratch;
  const Json& p = e.payload_dom(scratch);
  if (e.type == MessageType::command_response && p.is_object() && p.contains("requestId"))
    return string_member(p, "requestId");
  return string_member(p, "messageId");
}

std::optional<Receipt> match_receipt(const Envelope& e, std::string_view request_id,
                                     std::string_view peer,
                                     std::optional<std::string_view> sender_instance) {
  if (e.type != MessageType::ack && e.type != MessageType::command_response) return std::nullopt;
  if (e.from.stream_id != peer) return std::nullopt;
  auto mid = confirmed_id(e);
  if (!mid || *mid != request_id) return std::nullopt;
  Json scratch;
  const Json& p = e.payload_dom(scratch);
  Receipt r;
  r.kind = e.type == MessageType::ack ? Receipt::Kind::ack : Receipt::Kind::command_response;
  if (auto f = string_member(p, "forType"); f && *f == "handoff") {
    if (sender_instance) {
      auto inst = string_member(p, "senderInstanceId");
      if (!inst || *inst != *sender_instance) return std::nullopt;
    }
    auto receipt = string_member(p, "receipt");
    if (receipt && *receipt == "stored") r.kind = Receipt::Kind::handoff_stored;
  }
  if (auto ok = p.find("ok"); ok != p.end() && ok->is_boolean() && !ok->get<bool>()) r.ok = false;
  if (auto er = p.find("error"); er != p.end() && !er->is_null()) r.ok = false;
  return r;
}

// --- the bus ----------------------------------------------------------------------------------

Bus::Bus(BusConfig config) : config_(std::move(config)), rng_(config_.seed) {}

std::string Bus::new_id() {
  std::uint8_t b[16];
  for (int half = 0; half < 2; ++half) {
    std::uint64_t v = rng_.next_u64();
    for (int i = 0; i < 8; ++i) b[half * 8 + i] = std::uint8_t(v >> (8 * i));
  }
  return base64url(b, kIdRandomBytes);
}

Envelope Bus::make_envelope(MessageType type, std::optional<std::string> to,
                            std::optional<std::string> topic, Json payload, std::int64_t now_ms) {
  Envelope e;
  e.id = new_id();
  e.type = type;
  e.from = config_.self;
  e.to = std::move(to);
  e.topic = std::move(topic);
  e.ts = double(now_ms);
  e.payload = std::move(payload);
  return e;
}

Bus::Stream& Bus::stream_for(const std::string& id) {
  auto it = streams_.find(id);
  if (it == streams_.end()) {
    it = streams_.emplace(id, Stream{}).first;
    it->second.id = id;
  }
  return it->second;
}

bool Bus::stream_open(const Stream& s) const {
  if (!s.conn) return false;
  auto c = conns_.find(*s.conn);
  return c != conns_.end() && c->second.reachable();
}

void Bus::start_flush(Stream& s) {
  if (s.queue.empty() || !stream_open(s)) return;
  s.flush_wanted = true;
  if (!s.in_ready && !s.in_flight) {
    s.in_ready = true;
    ready_.push_back(s.id);
  }
}

void Bus::reject(const ConnId& conn, BusError e) {
  Event& ev = events_.emplace();
  ev.kind = EventKind::rejected;
  ev.conn = conn;
  ev.error = std::move(e);
}

void Bus::peer_event(const ConnId& conn) {
  Event& ev = events_.emplace();
  ev.kind = EventKind::peer;
  ev.conn = conn;
}

Json Bus::announce_payload() const {
  Json a = config_.announce.is_object() ? config_.announce
                                        : Json{{"skills", Json::array()},
                                               {"status", "online"},
                                               {"version", "tether"},
                                               {"topics", Json::array()}};
  if (!a.contains("skills") || !a["skills"].is_array()) a["skills"] = Json::array();
  if (config_.accept_handoffs) {
    bool has = false;
    for (const auto& s : a["skills"])
      if (s.is_string() && s.get<std::string>() == kHandoffCapability) has = true;
    if (!has) a["skills"].push_back(kHandoffCapability);
  }
  return a;
}

// --- connection events ------------------------------------------------------------------------

// What a channel proven open gets (connection_open, a held channel's first message, our own
// signaling's return): our announce, its stream's backlog, the handoffs waiting for it, and a
// peer event (the sidecar flushes its disk outbox on it).
void Bus::opened(const ConnId& conn, const Conn& c, std::int64_t now_ms) {
  forget_admitted();  // it may bind a stream to this connection
  // Initial announcements go to the connection without a stream route: the remote stream id may
  // not be known yet (§ Compatibility).
  Envelope a =
      make_envelope(MessageType::announce, std::nullopt, std::nullopt, announce_payload(), now_ms);
  auto text = encode_envelope(a);
  if (text)
    immediate_.push_back(Pending{TxKind::immediate,
                                 conn,
                                 std::make_shared<const std::string>(std::move(text.value())),
                                 a.id,
                                 {}});
  if (c.stream) {
    auto it = streams_.find(*c.stream);
    if (it != streams_.end()) {
      if (!it->second.conn || !stream_open(it->second)) it->second.conn = conn;
      start_flush(it->second);
      retry_handoffs_to(it->first, now_ms);
    }
  }
  peer_event(conn);
}

void Bus::handle_connection_open(const ConnId& conn, TimeMs now_ms) {
  forget_admitted();
  Conn& c = conns_[conn];
  // A fresh open is the transport's proof of a live channel: listed (the roster may lag the
  // channel) and no longer held.
  c.transport_open = true;
  c.listed = true;
  c.held = false;
  opened(conn, c, now_ms);
}

void Bus::handle_connection_closed(const ConnId& conn, TimeMs) {
  forget_admitted();
  auto it = conns_.find(conn);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  c.transport_open = false;
  c.held = false;
  if (!c.listed) {
    // Off the roster and now closed too: gone, as a closed connection the roster drops is.
    unbind(conn, c);
    conns_.erase(it);
  }
  peer_event(conn);
}

// The connection left the room: its stream may be claimed by the peer's next connection.
void Bus::unbind(const ConnId& conn, Conn& c) {
  forget_admitted();
  if (!c.stream) return;
  auto s = streams_.find(*c.stream);
  if (s != streams_.end() && s->second.conn == conn) {
    s->second.conn.reset();
    s->second.handoff_capable = false;
    s->second.announce = nullptr;
    const bool keep = !s->second.queue.empty() ||
                      std::any_of(outgoing_.begin(), outgoing_.end(),
                                  [&](const auto& h) { return h.second.to == s->first; });
    if (!keep) streams_.erase(s);
  }
  c.stream.reset();
}

void Bus::handle_roster(const std::vector<ConnId>& conns, TimeMs) {
  forget_admitted();  // it may hold or unlist the connection
  std::set<ConnId> now(conns.begin(), conns.end());
  for (auto it = conns_.begin(); it != conns_.end();) {
    if (now.count(it->first)) {
      ++it;
      continue;
    }
    const ConnId gone = it->first;
    Conn& c = it->second;
    const bool news = c.listed || c.stream;  // an unlisted one only if a message rebound it
    unbind(gone, c);
    if (c.transport_open) {
      // The transport still calls it open, but the room says the peer left: unreachable now,
      // remembered so that a re-listing holds it rather than trusting the old channel.
      c.listed = false;
      c.held = false;
      ++it;
    } else {
      it = conns_.erase(it);
    }
    if (news) peer_event(gone);
  }
  for (const auto& id : conns) {
    auto it = conns_.find(id);
    if (it == conns_.end()) {
      conns_[id];  // known, not open: only the transport opens a connection
      peer_event(id);
    } else if (!it->second.listed) {
      // Back in the room on a channel that never closed: held until it carries a message or
      // the transport opens a new one (a restarted peer's old channel may be the dead one).
      it->second.listed = true;
      it->second.held = it->second.transport_open;
      peer_event(id);
    }
  }
}

void Bus::handle_signaling_restored(TimeMs now_ms) {
  forget_admitted();
  for (const auto& [id, c] : conns_)
    if (c.reachable()) opened(id, c, now_ms);
}

// --- receiving --------------------------------------------------------------------------------

namespace {

IdentityView view_of(const Identity& i) {
  return {i.stream_id, i.role, i.name, i.instance_id};
}
IdentityView view_of(const ScannedEnvelope& e) {
  return {e.stream_id, e.role, e.name, e.instance_id};
}

std::optional<std::string_view> view_of(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  return std::string_view(*s);
}

std::optional<std::string> owned(std::optional<std::string_view> s) {
  if (!s) return std::nullopt;
  return std::string(*s);
}

}  // namespace

void Bus::handle_text(const ConnId& conn, ByteView text, TimeMs now_ms, std::uint64_t text_tag) {
  receive_text(conn, text, now_ms, text_tag);
}

bool Bus::handle_text_untimed(const ConnId& conn, ByteView text, std::uint64_t text_tag) {
  return receive_text(conn, text, std::nullopt, text_tag);
}

bool Bus::reads_time(MessageType t) {
  switch (t) {
    case MessageType::announce:         // on_announce: retry_handoffs_to
    case MessageType::ping:             // on_ping: the pong's ts
    case MessageType::history_request:  // on_history_request: the replays' ts
    case MessageType::history_replay:   // on_history_replay: the reply window
    case MessageType::handoff:          // on_handoff: expiry, the receipt's ts
    case MessageType::skill_update:     // on_skill_update: retry_handoffs_to
      return true;
    default: return false;
  }
}

bool Bus::receive_text(const ConnId& conn, ByteView text, std::optional<TimeMs> now_ms,
                       std::uint64_t text_tag) {
  // The admitted connection is not held: only a roster holds one, and a roster drops admitted_.
  if (!admitted_.stream || !equal_bytes(admitted_.conn, conn)) {
    auto cit = conns_.find(conn);
    if (cit != conns_.end() && cit->second.held) {
      if (!now_ms) return false;
      // A held channel carried something: it is alive (see Reachability in bus.hpp). Woken
      // before this message is handled, so our announce precedes anything it makes us send.
      cit->second.held = false;
      opened(conn, cit->second, *now_ms);
    }
  }
  // From here on only reads_time types read the time (the refusals, admit(), history, the seen
  // set and confirmations never do), and without it those stop before anything changes. The
  // value below is then never read.
  const TimeMs now = now_ms.value_or(TimeMs{0});
  const bool spans_only = config_.message_spans_only;
  auto scanned = scan_envelope(text, spans_only ? &tape_scratch_ : nullptr);
  if (!scanned) {
    // Everything the one-pass scanner leaves, and every refusal, is the DOM path's.
    auto parsed = parse_envelope_dom(text);
    if (!parsed) return reject(conn, parsed.error()), true;
    Envelope& e = parsed.value();
    if (!now_ms && reads_time(e.type)) return false;
    Stream* s = admit(conn, view_of(e.from), e.type, view_of(e.to), now);
    if (!s) return true;
    Event ev;
    ev.kind = EventKind::message;
    ev.conn = conn;
    on_envelope(conn, *s, std::move(e), now, std::move(ev), text);
    return true;
  }
  const ScannedEnvelope& v = *scanned;
  if (!now_ms && reads_time(v.type)) return false;
  Stream* s = admit_scanned(conn, v, now);
  if (!s) return true;
  if (spans_only) {
    // A payload the bus never reads, or an ack or command_response naming nothing we wait on: no
    // Envelope to build. History, when it keeps the type, keeps the text; a file_chunk or a
    // swarm_* message is carried and never kept. The event is built where it lies in the queue,
    // and takes the tape the scan wrote (the host hands one back: recycle_tape).
    const bool confirms = v.type == MessageType::ack || v.type == MessageType::command_response;
    if (!bus_reads_payload(v.type) || (confirms && may_confirm(v, text) == false)) {
      if (is_kept_in_history(v.type)) {
        remember_seen(v.stream_id, v.id);
        record_history(v.type, v.stream_id, v.to, text.as_chars());
      }
      Event& ev = events_.emplace_live();
      ev.kind = EventKind::message;
      ev.conn = conn;
      ev.as_scanned = true;
      ev.text_tag = text_tag;
      ev.spans = v;
      ev.tape.swap(tape_scratch_);
      return true;
    }
  }
  Event ev;
  ev.kind = EventKind::message;
  ev.conn = conn;
  ev.as_scanned = true;
  if (spans_only) {
    ev.text_tag = text_tag;
    ev.spans = v;
    ev.tape = tape_scratch_;
  }
  // Payloads the bus never reads stay the text the scanner validated (bus_reads_payload): a
  // delivered chat costs one pass over its bytes, not a DOM nobody looks at.
  Envelope e;
  e.id = std::string(v.id);
  e.type = v.type;
  e.from = s->identity ? *s->identity : view_of(v).owned();
  e.to = owned(v.to);
  e.topic = owned(v.topic);
  e.ts = v.ts;
  if (!v.payload.empty()) {
    if (bus_reads_payload(v.type)) {
      JsonParse p = parse_json(ByteView(v.payload));  // validated by the scan: cannot fail
      e.payload = p.ok() ? std::move(p.value) : Json(nullptr);
      if (!spans_only) ev.payload_text = std::string(v.payload);
    } else {
      e.payload_text = std::string(v.payload);
    }
  }
  on_envelope(conn, *s, std::move(e), now, std::move(ev), text);
  return true;
}

Bus::Stream* Bus::admit_scanned(const ConnId& conn, const ScannedEnvelope& v, TimeMs now_ms) {
  if (admitted_.stream && equal_bytes(admitted_.conn, conn) &&
      equal_bytes(admitted_.from_text, v.from_text) &&
      (!v.to || equal_bytes(*v.to, config_.self.stream_id)))
    return admitted_.stream;
  Stream* s = admit(conn, view_of(v), v.type, v.to, now_ms);
  if (s) {
    // admit() left the connection bound to this stream, the stream to this connection and its
    // identity equal to this sender: what the shortcut relies on.
    admitted_.conn = conn;
    admitted_.from_text.assign(v.from_text);
    admitted_.stream = s;
  }
  return s;
}

Bus::Stream* Bus::admit(const ConnId& conn, const IdentityView& from, MessageType type,
                        std::optional<std::string_view> to, TimeMs now_ms) {
  forget_admitted();  // whatever it decides, it may rebind a stream or a connection
  const std::string_view sid = from.stream_id;
  auto quoted = [](std::string_view v) { return "\"" + std::string(v) + "\""; };
  if (sid == config_.self.stream_id) {
    reject(conn, bus_error(BusErrorCode::forged_identity, "from.streamId",
                           "the envelope claims our own stream id " + quoted(sid) + "; refused"));
    return nullptr;
  }
  if (config_.conn_is_stream && sid != conn) {
    reject(conn,
           bus_error(BusErrorCode::forged_identity, "from.streamId",
                     "this connection is peer \"" + conn + "\" and cannot send as " + quoted(sid)));
    return nullptr;
  }
  auto cit = conns_.find(conn);
  if (cit == conns_.end()) cit = conns_.emplace(conn, Conn{}).first;
  Conn& c = cit->second;
  if (c.stream && *c.stream != sid) {
    reject(conn, bus_error(BusErrorCode::forged_identity, "from.streamId",
                           "this connection is bound to stream \"" + *c.stream +
                               "\" and cannot send as " + quoted(sid)));
    return nullptr;
  }
  auto existing = streams_.find(std::string(sid));
  if (existing != streams_.end() && existing->second.conn && *existing->second.conn != conn) {
    auto other = conns_.find(*existing->second.conn);
    if (other != conns_.end() && other->second.reachable()) {
      reject(conn, bus_error(BusErrorCode::forged_identity, "from.streamId",
                             "stream " + quoted(sid) +
                                 " is established on another open connection; refused"));
      return nullptr;
    }
  }
  // A peer that has not learned our stream id yet may address its first announce to the id its
  // transport knows us by (agent-bus-notes.md): that one is ours too.
  const bool to_transport_id =
      type == MessageType::announce && to && config_.transport_id && *to == *config_.transport_id;
  if (to && *to != config_.self.stream_id && !to_transport_id) {
    reject(conn, bus_error(BusErrorCode::not_for_us, "to",
                           "the envelope is addressed to " + quoted(*to) + ", not to us; dropped"));
    return nullptr;
  }

  Stream& s = existing != streams_.end() ? existing->second : stream_for(std::string(sid));
  bool changed = false;
  if (!c.stream) {
    c.stream = std::string(sid);
    changed = true;
  }
  if (s.conn != conn) {
    s.conn = conn;
    changed = true;
  }
  if (!s.identity || s.identity->instance_id != from.instance_id) {
    // A new instance (a restart): its capabilities are unknown until it announces again.
    s.handoff_capable = false;
    s.announce = nullptr;
    changed = true;
  }
  if (!s.identity || !(from == *s.identity)) s.identity = from.owned();
  if (changed) {
    start_flush(s);
    peer_event(conn);
  }
  (void)now_ms;
  return &s;
}

std::optional<bool> Bus::may_confirm(const ScannedEnvelope& v, ByteView text) const {
  if (v.payload.empty()) return false;  // a null payload names no message
  const Tape& t = tape_scratch_;
  if (t.empty()) return std::nullopt;                          // more tokens than a tape holds
  if (TapeKind(t[0]) != TapeKind::object_begin) return false;  // confirmed_id: not an object
  // The tape's spans count UTF-16 units; in an ASCII payload they are its bytes, shifted.
  const auto* bytes = reinterpret_cast<const char*>(text.data);
  const std::size_t payload_at = std::size_t(v.payload.data() - bytes);
  if (v.payload.size() != std::size_t(v.payload_span.end - v.payload_span.begin))
    return std::nullopt;
  const std::size_t shift = payload_at - v.payload_span.begin;
  const auto view = [&](std::size_t i) {
    return std::string_view(bytes + t[i + 1] + shift, t[i + 2] - t[i + 1]);
  };
  // The top level's members, each value skipped whole; a repeated key's last value is the one
  // the DOM keeps.
  std::size_t request = 0, message = 0;  // 1 + the value's token index
  for (std::size_t i = 3; i < t.size();) {
    const TapeKind k = TapeKind(t[i]);
    if (k == TapeKind::object_end) break;
    if (k != TapeKind::key) return std::nullopt;  // an escaped key could be either name
    const std::string_view key = view(i);
    std::size_t j = i + 3;
    if (key == "requestId") request = j + 1;
    if (key == "messageId") message = j + 1;
    int depth = 0;
    do {
      const TapeKind vk = TapeKind(t[j]);
      if (vk == TapeKind::object_begin || vk == TapeKind::array_begin) ++depth;
      if (vk == TapeKind::object_end || vk == TapeKind::array_end) --depth;
      j += 3;
    } while (depth > 0 && j < t.size());
    i = j;
  }
  // confirmed_id: a command_response's requestId when it has one, else messageId.
  std::size_t at = v.type == MessageType::command_response && request ? request : message;
  if (at == 0) return false;
  --at;
  if (TapeKind(t[at]) == TapeKind::string_escaped) return std::nullopt;
  if (TapeKind(t[at]) != TapeKind::string) return false;
  const std::string id(view(at));
  return outgoing_.count(id) != 0 || sent_.count(id) != 0;
}

void Bus::on_envelope(const ConnId& conn, Stream& s, Envelope e, TimeMs now_ms, Event ev,
                      ByteView text) {
  switch (e.type) {
    case MessageType::history_request: return on_history_request(s, e, now_ms);
    case MessageType::history_replay: return on_history_replay(conn, s, e, now_ms);
    case MessageType::handoff: return on_handoff(conn, e, now_ms);
    case MessageType::announce:
      if (Json scratch; !e.payload_dom(scratch).is_object())
        return reject(
            conn,
            bus_error(BusErrorCode::bad_payload, "payload",
                      "an announce payload is an object {skills[], status, version, topics[]}"));
      on_announce(s, e);
      // An announce is a retry point for a failed flush (§ Delivery semantics).
      start_flush(s);
      retry_handoffs_to(s.id, now_ms);
      peer_event(conn);
      break;
    case MessageType::skill_update:
      if (Json scratch; !e.payload_dom(scratch).is_object())
        return reject(conn, bus_error(BusErrorCode::bad_payload, "payload",
                                      "a skill_update payload is an object {skills?[], status?, "
                                      "statusDetail?, agent?}"));
      on_skill_update(s, e, now_ms);
      peer_event(conn);
      break;
    case MessageType::ack:
    case MessageType::command_response: on_confirmation(e); break;
    case MessageType::ping: on_ping(conn, e, now_ms); break;
    default: break;
  }
  // Only what history keeps can come back in a replay, so only that needs remembering.
  if (is_kept_in_history(e.type)) {
    remember_seen(e.from.stream_id, e.id);
    record_history(e.type, e.from.stream_id, view_of(e.to), text.as_chars());
  }
  if (!ev.spans) ev.envelope = std::move(e);
  events_.push(std::move(ev));
}

namespace {

// Whether an announce's `skills` list the handoff-v1 capability (§ Handoffs).
bool lists_handoff(const Json& announce) {
  auto sk = announce.find("skills");
  if (sk == announce.end() || !sk->is_array()) return false;
  for (const auto& v : *sk)
    if (v.is_string() && v.get<std::string>() == kHandoffCapability) return true;
  return false;
}

}  // namespace

void Bus::on_announce(Stream& s, const Envelope& e) {
  Json scratch;
  const Json& p = e.payload_dom(scratch);
  s.announce = p;
  s.handoff_capable = lists_handoff(p);
}

// A skill_update changes what a peer's announce said, field by field (the public implementation
// keeps the old value of every field the update leaves out), so `peers()` shows the peer's status
// now and a peer that starts announcing handoff-v1 gets the handoffs waiting for it.
void Bus::on_skill_update(Stream& s, const Envelope& e, std::int64_t now_ms) {
  Json scratch;
  const Json& p = e.payload_dom(scratch);
  if (!s.announce.is_object()) s.announce = Json::object();
  const auto take = [&](const char* key, bool (Json::*is)() const noexcept) {
    if (auto it = p.find(key); it != p.end() && ((*it).*is)()) s.announce[key] = *it;
  };
  take("skills", &Json::is_array);
  take("status", &Json::is_string);
  take("statusDetail", &Json::is_string);
  take("agent", &Json::is_object);
  const bool was_capable = s.handoff_capable;
  s.handoff_capable = lists_handoff(s.announce);
  if (s.handoff_capable && !was_capable) retry_handoffs_to(s.id, now_ms);
}

void Bus::on_ping(const ConnId& conn, const Envelope& e, std::int64_t now_ms) {
  // Every peer answers a heartbeat, addressed to the pinger, on the connection it came by, now or
  // never: a late pong measures nothing, so it is neither queued nor kept (agent-bus-notes.md).
  Json scratch;
  const Json& p = e.payload_dom(scratch);
  std::optional<double> ping_ts;
  if (p.is_object())
    if (auto t = p.find("ts"); t != p.end()) ping_ts = json_finite(*t);
  Envelope pong = make_envelope(
      MessageType::pong, e.from.stream_id, std::nullopt,
      Json{{"pingId", e.id}, {"pingTs", ping_ts.value_or(e.ts)}, {"pongTs", now_ms}}, now_ms);
  auto text = encode_envelope(pong);
  if (text)
    immediate_.push_back(Pending{TxKind::immediate,
                                 conn,
                                 std::make_shared<const std::string>(std::move(text.value())),
                                 pong.id,
                                 {}});
}

void Bus::on_confirmation(const Envelope& e) {
  Json scratch;
  const Json& p = e.payload_dom(scratch);
  auto mid = confirmed_id(e);
  if (!mid) return;
  auto h = outgoing_.find(*mid);
  if (h != outgoing_.end() && e.type == MessageType::ack &&
      match_receipt(e, h->second.id, h->second.to,
                    std::string_view(h->second.envelope.from.instance_id)) &&
      string_member(p, "receipt") == std::optional<std::string>("stored")) {
    Event ev;
    ev.kind = EventKind::handoff_stored;
    ev.message_id = h->second.id;
    ev.peer_stream = h->second.to;
    ev.envelope = e;
    ev.handoff = h->second;
    events_.push(std::move(ev));
    outgoing_.erase(h);
    handoffs_changed();
    return;
  }
  auto s = sent_.find(*mid);
  if (s != sent_.end() && s->second.to == e.from.stream_id) {
    Event ev;
    ev.kind = EventKind::confirmation;
    ev.message_id = *mid;
    ev.peer_stream = e.from.stream_id;
    ev.for_type = s->second.type;
    ev.envelope = e;
    events_.push(std::move(ev));
  }
}

void Bus::on_handoff(const ConnId& conn, const Envelope& e, std::int64_t now_ms) {
  if (!config_.accept_handoffs)
    return reject(conn, bus_error(BusErrorCode::handoff_unsupported, "type",
                                  "we do not store handoffs (no handoff-v1 in our announce); send "
                                  "a direct message instead"));
  auto p = check_handoff(e);
  if (!p) return reject(conn, p.error());
  if (now_ms >= p->expires_at)
    return reject(conn, bus_error(BusErrorCode::handoff_expired, "payload.expiresAt",
                                  "the handoff expired before it arrived"));
  HandoffKey key{e.from.stream_id, e.from.instance_id, e.id};
  if (stored_.count(key)) {
    // Already stored: the sender missed our receipt. Re-ack, never redeliver.
    (void)send(e.from.stream_id, MessageType::ack, handoff_receipt_payload(e), std::nullopt,
               now_ms);
    return;
  }
  if (!unconfirmed_.count(key) && unconfirmed_.size() >= kMaxUnconfirmedHandoffs)
    purge_unconfirmed(now_ms);
  if (!unconfirmed_.count(key) && unconfirmed_.size() >= kMaxUnconfirmedHandoffs)
    return reject(
        conn, bus_error(BusErrorCode::queue_full, "",
                        "too many handoffs are waiting for storage; confirm stored ones first"));
  unconfirmed_[key] = e;
  Event ev;
  ev.kind = EventKind::handoff;
  ev.conn = conn;
  ev.key = handoff_key_text(key);
  ev.envelope = e;
  events_.push(std::move(ev));
}

// --- history ----------------------------------------------------------------------------------

std::size_t Bus::history_count(const Json& requested) {
  // Any positive whole number is a valid count, capped (agent-bus-notes.md § Bus messages): 1e300
  // asks for everything, so it gets the cap, as from the public implementation.
  if (!requested.is_number()) return std::size_t(kHistoryDefaultRequest);
  const double n = requested.get<double>();
  if (!std::isfinite(n) || !(n > 0) || std::floor(n) != n)
    return std::size_t(kHistoryDefaultRequest);
  return n >= double(kHistoryMaxRequest) ? std::size_t(kHistoryMaxRequest) : std::size_t(n);
}

void Bus::record_history(MessageType type, std::string_view from,
                         std::optional<std::string_view> to, std::string_view text) {
  if (!is_kept_in_history(type)) return;
  HistoryEntry* slot;
  if (history_.size() < kHistoryCapacity) {
    slot = &history_.emplace_back();
  } else {
    slot = &history_[history_head_];
    history_head_ = (history_head_ + 1) % kHistoryCapacity;
  }
  // A slot that once held a huge envelope gives that memory back rather than keep it for small ones.
  if (slot->text.capacity() > 4 * text.size() + 4096) std::string().swap(slot->text);
  slot->text.assign(text);
  slot->from.assign(from);
  slot->has_to = to.has_value();
  if (to) slot->to.assign(*to);
}

void Bus::record_history(const Envelope& e, const SharedText& text) {
  if (!is_kept_in_history(e.type)) return;
  if (text) return record_history(e.type, e.from.stream_id, view_of(e.to), *text);
  auto encoded = encode_envelope(e);
  if (encoded) record_history(e.type, e.from.stream_id, view_of(e.to), encoded.value());
}

std::vector<Envelope> Bus::history(std::size_t count, const std::string& for_stream) const {
  std::vector<Envelope> out;
  const std::size_t n = history_.size();
  for (std::size_t k = 0; k < n && out.size() < count; ++k) {
    const HistoryEntry& h = history_[(history_head_ + n - 1 - k) % n];  // newest first
    // A replay holds broadcasts and messages to or by the requester, never other peers' directs.
    if (!for_stream.empty() && h.has_to && h.to != for_stream && h.from != for_stream) continue;
    auto e =
        parse_envelope(ByteView(std::string_view(h.text)), nullptr, PayloadForm::text_unless_read);
    if (e) out.push_back(std::move(e.value()));  // it was accepted or written by us: it parses
  }
  std::reverse(out.begin(), out.end());
  return out;
}

void Bus::on_history_request(Stream& s, const Envelope& e, std::int64_t now_ms) {
  Json scratch;
  const Json& p = e.payload_dom(scratch);
  Json count = p.is_object() && p.contains("count") ? p["count"] : Json(nullptr);
  // One history_replay per message, oldest first, its payload the original envelope, addressed to
  // the requester (agent-bus-notes.md). An entry too large or too deep to travel wrapped (encode_envelope
  // refuses it) is left out.
  for (const Envelope& h : history(history_count(count), s.id)) {
    Envelope r =
        make_envelope(MessageType::history_replay, s.id, std::nullopt, envelope_to_json(h), now_ms);
    (void)send_direct(std::move(r), now_ms);
  }
}

void Bus::on_history_replay(const ConnId& conn, Stream& s, const Envelope& e, std::int64_t now_ms) {
  if (!s.history_asked_ms || now_ms - *s.history_asked_ms > kHistoryReplyWindowMs ||
      s.history_left == 0)
    return reject(
        conn,
        bus_error(
            BusErrorCode::bad_payload, "type",
            "unsolicited history_replay (we did not ask this peer for history, or it sent more "
            "replays than we asked for); dropped"));
  --s.history_left;
  Json scratch;
  const Json& p = e.payload_dom(scratch);
  if (p.is_object() && p.size() == 1 && p.contains("messages"))
    return reject(
        conn,
        bus_error(BusErrorCode::bad_payload, "payload",
                  "a history_replay carries one replayed envelope as its payload, not a batch "
                  "{messages: [...]}; send one history_replay per message"));
  auto inner = envelope_from_json(p);
  if (!inner) {
    BusError er = inner.error();
    er.field = "payload" + (er.field.empty() ? "" : "." + er.field);
    er.detail = "a history_replay's payload is the replayed envelope: " + er.detail;
    return reject(conn, std::move(er));
  }
  Envelope& x = inner.value();
  if (!is_kept_in_history(x.type)) return;                 // protocol chatter: nothing to deliver
  if (x.from.stream_id == config_.self.stream_id) return;  // our own words
  if (x.to && *x.to != config_.self.stream_id) return;     // another peer's direct
  if (seen(x)) return;
  remember_seen(x.from.stream_id, x.id);
  Event ev;
  ev.kind = EventKind::message;
  ev.conn = conn;
  ev.replayed = true;
  ev.envelope = std::move(x);
  events_.push(std::move(ev));
}

void Bus::remember_seen(std::string_view stream, std::string_view id) {
  seen_.insert(stream, id);
}

bool Bus::seen(const Envelope& e) const {
  return seen_.contains(e.from.stream_id, e.id);
}

void Bus::remember_sent_direct(const Envelope& e) {
  if (!e.to) return;
  if (sent_.emplace(e.id, SentDirect{*e.to, e.type}).second) {
    sent_order_.push_back(e.id);
    if (sent_order_.size() > kConfirmationCapacity) {
      sent_.erase(sent_order_.front());
      sent_order_.pop_front();
    }
  }
}

// --- sending ----------------------------------------------------------------------------------

Result<Sent, BusError> Bus::send_direct(Envelope e, std::int64_t now_ms) {
  (void)now_ms;
  const std::string& to = *e.to;
  if (to == config_.self.stream_id)
    return err(
        bus_error(BusErrorCode::bad_field, "to", "cannot send a direct message to ourselves"));
  auto encoded = encode_envelope(e);
  if (!encoded) return err(encoded.error());
  auto text = std::make_shared<const std::string>(std::move(encoded.value()));
  if (is_transient(e.type)) {
    // Transient traffic bypasses the backlog: sent now or not at all (§ Delivery semantics).
    auto it = streams_.find(to);
    if (it == streams_.end() || !stream_open(it->second))
      return err(bus_error(BusErrorCode::not_accepted, "to",
                           "\"" + to +
                               "\" has no open channel; transient messages are never queued (retry "
                               "after it opens)"));
    immediate_.push_back(Pending{TxKind::transient, *it->second.conn, text, e.id, to});
    return Sent{std::move(e), std::move(text)};
  }
  auto existing = streams_.find(to);
  const bool had_queue = existing != streams_.end() && !existing->second.queue.empty();
  if (!had_queue && queued_peers_ >= kMaxQueuedPeers &&
      (existing == streams_.end() || !stream_open(existing->second)))
    return err(bus_error(BusErrorCode::queue_full, "to",
                         "messages are already queued for " + std::to_string(kMaxQueuedPeers) +
                             " offline peers; wait for some to connect"));
  Stream& s = stream_for(to);
  if (s.queue.size() >= kMaxQueuedPerPeer || s.queued_bytes + text->size() > kMaxQueuedBytesPerPeer)
    return err(bus_error(BusErrorCode::queue_full, "to",
                         "the backlog for \"" + to + "\" is full (" +
                             std::to_string(s.queue.size()) +
                             " messages); keep the message and retry after the peer connects"));
  if (s.queue.empty()) ++queued_peers_;
  s.queue.push_back(Queued{e.id, e.type, text});
  s.queued_bytes += text->size();
  ++queued_total_;
  outcomes_[e.id] = SendStatus::queued;
  record_history(e, text);
  remember_sent_direct(e);
  // A new ordinary send retries this peer's backlog first and queues behind it if still blocked.
  start_flush(s);
  return Sent{std::move(e), std::move(text)};
}

Result<Sent, BusError> Bus::send(const std::string& to, MessageType type, Json payload,
                                 std::optional<std::string> topic, std::int64_t now_ms) {
  outcomes_.clear();
  if (auto x = check_string(to, kMaxToChars, "to")) return err(*x);
  if (type == MessageType::handoff)
    return err(bus_error(BusErrorCode::bad_field, "type",
                         "send handoffs with handoff(): they are retried until stored"));
  if (type == MessageType::history_replay)
    return err(bus_error(BusErrorCode::bad_field, "type",
                         "history_replay is the bus's own answer to history_request"));
  return send_direct(make_envelope(type, to, std::move(topic), std::move(payload), now_ms), now_ms);
}

Result<Sent, BusError> Bus::broadcast(MessageType type, Json payload,
                                      std::optional<std::string> topic, std::int64_t now_ms) {
  outcomes_.clear();
  bcast_ok_.clear();
  bcast_no_.clear();
  if (type == MessageType::handoff || type == MessageType::history_replay ||
      type == MessageType::history_request || type == MessageType::ack ||
      type == MessageType::command_response)
    return err(bus_error(BusErrorCode::bad_field, "type",
                         std::string(message_type_name(type)) + " is always direct; use send()"));
  Envelope e = make_envelope(type, std::nullopt, std::move(topic), std::move(payload), now_ms);
  auto encoded = encode_envelope(e);
  if (!encoded) return err(encoded.error());
  // Written once, offered to every open connection; never retained per absent peer.
  auto text = std::make_shared<const std::string>(std::move(encoded.value()));
  for (const auto& [id, c] : conns_)
    if (c.reachable()) immediate_.push_back(Pending{TxKind::broadcast, id, text, e.id, {}});
  record_history(e, text);
  return Sent{std::move(e), std::move(text)};
}

std::optional<BusError> Bus::note_sent(const Envelope& e) {
  if (e.from.stream_id != config_.self.stream_id)
    return bus_error(BusErrorCode::bad_field, "from.streamId",
                     "only our own messages can be noted as sent");
  if (!e.to)
    return bus_error(BusErrorCode::bad_field, "to",
                     "only direct messages are noted; broadcast() keeps its own");
  if (is_transient(e.type))
    return bus_error(BusErrorCode::bad_field, "type",
                     "transient messages are never kept in history");
  record_history(e, nullptr);
  remember_sent_direct(e);
  return std::nullopt;
}

Result<Sent, BusError> Bus::request_history(const std::string& to, const Json& count,
                                            std::int64_t now_ms) {
  outcomes_.clear();
  if (auto x = check_string(to, kMaxToChars, "to")) return err(*x);
  if (to == config_.self.stream_id)
    return err(bus_error(BusErrorCode::bad_field, "to", "ask another peer for history"));
  Stream& s = stream_for(to);
  s.history_asked_ms = now_ms;
  s.history_left = history_count(count);
  return send_direct(make_envelope(MessageType::history_request, to, std::nullopt,
                                   Json{{"count", std::int64_t(s.history_left)}}, now_ms),
                     now_ms);
}

Result<Sent, BusError> Bus::ack(const Envelope& received, const Json& extra, std::int64_t now_ms) {
  Json p = Json{{"messageId", received.id}};
  if (extra.is_object())
    for (auto it = extra.begin(); it != extra.end(); ++it)
      if (it.key() != "messageId") p[it.key()] = it.value();
  return send(received.from.stream_id, MessageType::ack, std::move(p), std::nullopt, now_ms);
}

Result<Sent, BusError> Bus::respond(const Envelope& command, const Json& outcome,
                                    std::int64_t now_ms) {
  auto p = command_response_payload(command.id, outcome);
  if (!p) return err(p.error());
  return send(command.from.stream_id, MessageType::command_response, std::move(p.value()),
              std::nullopt, now_ms);
}

Result<Json, BusError> command_response_payload(std::string_view request_id, const Json& outcome) {
  bool shaped = outcome.is_object();
  if (shaped)
    for (auto it = outcome.begin(); it != outcome.end(); ++it)
      if (it.key() != "result" && it.key() != "error" && it.key() != "ok") shaped = false;
  const auto error =
      shaped && outcome.contains("error") ? json_string(outcome["error"]) : std::nullopt;
  // An `ok` beside them must agree: true with a result, false with an error.
  const bool ok_disagrees =
      shaped && outcome.contains("ok") &&
      (!outcome["ok"].is_boolean() || outcome["ok"].get<bool>() == error.has_value());
  if (!shaped || (outcome.contains("error") && (!error || error->empty())) ||
      (error && outcome.contains("result")) || ok_disagrees)
    return err(bus_error(
        BusErrorCode::bad_payload, "payload",
        "a command's answer is {result} (ok: true) or {error: \"why\"} (ok: false), nothing else"));
  if (error)
    return Json{{"requestId", std::string(request_id)},
                {"ok", false},
                {"error", std::string(utf8_prefix(*error, kMaxErrorTextBytes))}};
  return Json{{"requestId", std::string(request_id)},
              {"ok", true},
              {"result", outcome.contains("result") ? outcome["result"] : Json(nullptr)}};
}

Result<Sent, BusError> Bus::set_announce(Json announce, std::int64_t now_ms) {
  if (!announce.is_object())
    return err(bus_error(BusErrorCode::bad_payload, "announce",
                         "an announce payload is an object {skills[], status, version, topics[]}"));
  config_.announce = std::move(announce);
  return broadcast(MessageType::announce, announce_payload(), std::nullopt, now_ms);
}

std::optional<SendStatus> Bus::outcome(const std::string& id) const {
  auto it = outcomes_.find(id);
  if (it == outcomes_.end()) return std::nullopt;
  return it->second;
}

Result<SendStatus, BusError> Bus::send_result(const std::string& id, bool transient) const {
  auto o = outcome(id);
  if (transient && o != SendStatus::sent)
    return err(bus_error(
        BusErrorCode::not_accepted, "to",
        "the transport did not accept it; transient messages are never queued (retry later)"));
  return o.value_or(SendStatus::queued);
}

// --- handoffs (sender) ------------------------------------------------------------------------

Result<OutgoingHandoff, BusError> Bus::handoff(const std::string& to, std::string request,
                                               std::int64_t expires_at, std::int64_t now_ms) {
  outcomes_.clear();
  if (auto x = check_string(to, kMaxToChars, "to")) return err(*x);
  if (to == config_.self.stream_id)
    return err(bus_error(BusErrorCode::bad_field, "to", "hand work to another peer"));
  auto s = streams_.find(to);
  if (s == streams_.end() || !s->second.handoff_capable)
    return err(bus_error(BusErrorCode::handoff_unsupported, "to",
                         "\"" + to +
                             "\" has no current handoff-v1 announcement; wait for its announce or "
                             "send a direct message"));
  if (outgoing_.size() >= kMaxPendingHandoffs)
    return err(bus_error(BusErrorCode::queue_full, "",
                         "too many handoffs await receipts; wait for some to be stored or expire"));
  Envelope e =
      make_envelope(MessageType::handoff, to, std::nullopt,
                    Json{{"request", std::move(request)}, {"expiresAt", expires_at}}, now_ms);
  auto p = check_handoff(e);
  if (!p) return err(p.error());
  auto text = encode_envelope(e);
  if (!text) return err(text.error());
  OutgoingHandoff h;
  h.id = e.id;
  h.to = to;
  h.expires_at = p->expires_at;
  h.envelope = std::move(e);
  h.text = std::make_shared<const std::string>(std::move(text.value()));
  attempt_handoff(h, now_ms);
  remember_sent_direct(h.envelope);
  outgoing_[h.id] = h;
  handoffs_changed();
  return h;
}

Result<OutgoingHandoff, BusError> Bus::resume_handoff(const Envelope& original,
                                                      std::int64_t now_ms) {
  if (original.from.stream_id != config_.self.stream_id)
    return err(bus_error(BusErrorCode::bad_field, "from.streamId",
                         "only our own handoffs can be resumed"));
  auto p = check_handoff(original);
  if (!p) return err(p.error());
  if (now_ms >= p->expires_at)
    return err(
        bus_error(BusErrorCode::handoff_expired, "payload.expiresAt", "the handoff has expired"));
  if (auto it = outgoing_.find(original.id); it != outgoing_.end()) return it->second;
  if (outgoing_.size() >= kMaxPendingHandoffs)
    return err(bus_error(BusErrorCode::queue_full, "",
                         "too many handoffs await receipts; wait for some to be stored or expire"));
  auto text = encode_envelope(original);
  if (!text) return err(text.error());
  OutgoingHandoff h;
  h.id = original.id;
  h.to = *original.to;
  h.expires_at = p->expires_at;
  h.envelope = original;
  h.text = std::make_shared<const std::string>(std::move(text.value()));
  attempt_handoff(h, now_ms);
  remember_sent_direct(h.envelope);
  outgoing_[h.id] = h;
  handoffs_changed();
  return h;
}

void Bus::attempt_handoff(OutgoingHandoff& h, std::int64_t now_ms) {
  auto s = streams_.find(h.to);
  if (s == streams_.end() || !s->second.handoff_capable || !stream_open(s->second)) {
    h.next_attempt_ms.reset();  // waits for the peer's next open + handoff-v1 announce
    return;
  }
  // The same envelope every time (same id, same instance): the receiver dedups on it.
  immediate_.push_back(Pending{TxKind::handoff, *s->second.conn, h.text, h.id, h.to});
  ++h.attempts;
  h.next_attempt_ms = now_ms + backoff_ms(h.attempts);
  handoffs_changed();
}

void Bus::retry_handoffs_to(const std::string& stream, std::int64_t now_ms) {
  for (auto& [id, h] : outgoing_)
    if (h.to == stream && now_ms < h.expires_at) attempt_handoff(h, now_ms);
}

bool Bus::cancel_handoff(const std::string& id) {
  if (outgoing_.erase(id) == 0) return false;
  handoffs_changed();
  return true;
}

std::vector<OutgoingHandoff> Bus::pending_handoffs() const {
  std::vector<OutgoingHandoff> v;
  for (const auto& [id, h] : outgoing_) v.push_back(h);
  return v;
}

// --- handoffs (receiver) ----------------------------------------------------------------------

void Bus::remember_handoff(const HandoffKey& key) {
  if (!stored_.insert(key).second) return;
  stored_order_.push_back(key);
  if (stored_order_.size() > kMaxRememberedHandoffs) {
    stored_.erase(stored_order_.front());
    stored_order_.pop_front();
  }
}

Result<Sent, BusError> Bus::confirm_handoff(std::string_view key_text, std::int64_t now_ms) {
  auto key = parse_handoff_key(key_text);
  if (!key)
    return err(bus_error(BusErrorCode::handoff_unknown, "key",
                         "not a handoff key (use the key from the handoff event)"));
  Json receipt;
  if (auto it = unconfirmed_.find(*key); it != unconfirmed_.end()) {
    receipt = handoff_receipt_payload(it->second);
    unconfirmed_.erase(it);
  } else if (stored_.count(*key)) {
    receipt = Json{{"messageId", key->message_id},
                   {"senderInstanceId", key->instance_id},
                   {"forType", "handoff"},
                   {"receipt", "stored"}};
  } else {
    return err(bus_error(BusErrorCode::handoff_unknown, "key",
                         "no handoff with this key arrived in this run; nothing to confirm"));
  }
  remember_handoff(*key);
  // Only now, after the app stored it, does the sender learn it is safe to stop retrying.
  return send(key->stream_id, MessageType::ack, std::move(receipt), std::nullopt, now_ms);
}

// --- time -------------------------------------------------------------------------------------

void Bus::purge_unconfirmed(std::int64_t now_ms) {
  // Incoming handoffs the app never confirmed stop holding a slot once they expire.
  for (auto it = unconfirmed_.begin(); it != unconfirmed_.end();) {
    Json scratch;
    const Json& p = it->second.payload_dom(scratch);
    auto exp = p.is_object() && p.contains("expiresAt")
                   ? json_integer(p["expiresAt"], 0, kMaxSafeInteger)
                   : std::nullopt;
    if (!exp || now_ms >= *exp)
      it = unconfirmed_.erase(it);
    else
      ++it;
  }
}

void Bus::handle_timeout(TimeMs now_ms) {
  purge_unconfirmed(now_ms);
  handoffs_changed();
  for (auto it = outgoing_.begin(); it != outgoing_.end();) {
    OutgoingHandoff& h = it->second;
    if (now_ms >= h.expires_at) {
      Event ev;
      ev.kind = EventKind::handoff_expired;
      ev.message_id = h.id;
      ev.peer_stream = h.to;
      ev.envelope = h.envelope;
      ev.handoff = h;
      events_.push(std::move(ev));
      it = outgoing_.erase(it);
      continue;
    }
    if (h.next_attempt_ms && now_ms >= *h.next_attempt_ms) attempt_handoff(h, now_ms);
    ++it;
  }
}

Timeout Bus::poll_timeout() const {
  if (!deadline_dirty_) return deadline_;
  // Recomputed only after the handoffs changed, never per message.
  Timeout w;
  for (const auto& [id, h] : outgoing_) {
    std::int64_t t = h.expires_at;
    if (h.next_attempt_ms) t = std::min(t, *h.next_attempt_ms);
    if (!w || t < *w) w = t;
  }
  deadline_ = w;
  deadline_dirty_ = false;
  return w;
}

// --- the pull loop ----------------------------------------------------------------------------

std::optional<Transmit> Bus::poll_transmit() {
  if (in_flight_) return std::nullopt;  // one offer at a time: its result decides what follows
  if (!immediate_.empty()) {
    Pending p = std::move(immediate_.front());
    immediate_.pop_front();
    const std::uint32_t token = next_token_++;
    Transmit t{token, p.conn, p.text};
    in_flight_.emplace(token, std::move(p));
    return t;
  }
  while (!ready_.empty()) {
    std::string sid = std::move(ready_.front());
    ready_.pop_front();
    auto it = streams_.find(sid);
    if (it == streams_.end()) continue;
    Stream& s = it->second;
    s.in_ready = false;
    if (!s.flush_wanted || s.queue.empty() || !stream_open(s)) continue;
    s.in_flight = true;
    const std::uint32_t token = next_token_++;
    Transmit t{token, *s.conn, s.queue.front().text};
    in_flight_.emplace(token, Pending{TxKind::queue_head, *s.conn, {}, s.queue.front().id, sid});
    return t;
  }
  return std::nullopt;
}

void Bus::handle_transmit_result(std::uint32_t token, bool accepted, TimeMs) {
  if (!in_flight_ || in_flight_->first != token) return;
  Pending p = std::move(in_flight_->second);
  in_flight_.reset();
  switch (p.kind) {
    case TxKind::immediate:
    case TxKind::handoff:
      break;  // announces are re-sent on the next open; handoffs on their retry schedule
    case TxKind::transient:
      if (accepted) outcomes_[p.id] = SendStatus::sent;
      break;
    case TxKind::broadcast: (accepted ? bcast_ok_ : bcast_no_).push_back(p.conn); break;
    case TxKind::queue_head: {
      auto it = streams_.find(p.stream);
      if (it == streams_.end()) break;
      Stream& s = it->second;
      s.in_flight = false;
      if (s.queue.empty() || s.queue.front().id != p.id) break;
      if (!accepted) {
        // A failed flush keeps this message and everything behind it, in order, for the next
        // open, announce or ordinary send.
        s.flush_wanted = false;
        break;
      }
      s.queued_bytes -= s.queue.front().text->size();
      s.queue.pop_front();
      --queued_total_;
      if (s.queue.empty()) --queued_peers_;
      outcomes_[p.id] = SendStatus::sent;
      if (!s.queue.empty() && !s.in_ready) {
        s.in_ready = true;
        ready_.push_back(s.id);
      }
      break;
    }
  }
}

// --- inspection -------------------------------------------------------------------------------

PeerInfo Bus::info_for(const ConnId& conn, const Conn& c) const {
  PeerInfo p;
  p.conn = conn;
  p.open = c.reachable();
  p.stream_id = c.stream;
  if (c.stream) {
    auto s = streams_.find(*c.stream);
    if (s != streams_.end()) {
      p.identity = s->second.identity;
      p.queued = s->second.queue.size();
      if (s->second.conn == conn) {
        p.announce = s->second.announce;
        p.handoff = s->second.handoff_capable;
      }
    }
  }
  return p;
}

std::vector<PeerInfo> Bus::peers() const {
  std::vector<PeerInfo> v;
  for (const auto& [id, c] : conns_)
    if (c.listed) v.push_back(info_for(id, c));  // one the roster dropped has left the room
  return v;
}

std::optional<PeerInfo> Bus::peer(const ConnId& conn) const {
  auto it = conns_.find(conn);
  if (it == conns_.end() || !it->second.listed) return std::nullopt;
  return info_for(conn, it->second);
}

bool Bus::is_open(const std::string& id) const {
  auto s = streams_.find(id);
  if (s != streams_.end() && stream_open(s->second)) return true;
  auto c = conns_.find(id);
  return c != conns_.end() && !c->second.stream && c->second.reachable();
}

std::size_t Bus::queued(const std::string& stream_id) const {
  auto it = streams_.find(stream_id);
  return it == streams_.end() ? 0 : it->second.queue.size();
}

}  // namespace tether::bus
