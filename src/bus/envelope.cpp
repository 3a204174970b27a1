// Strict envelope parsing and canonical serialisation (agent-bus-notes.md § The envelope).
#include "bus/envelope.hpp"

#include <array>
#include <cmath>

#include "bus/limits.hpp"
#include "bus/scan.hpp"
#include "common/utf8.hpp"

namespace tether::bus {

namespace {

constexpr std::array<std::string_view, kMessageTypeCount> kTypeNames = {
    "chat",
    "announce",
    "skill_update",
    "command",
    "command_response",
    "file_offer",
    "file_chunk",
    "file_complete",
    "file_ack",
    "event",
    "ping",
    "pong",
    "ack",
    "history_replay",
    "history_request",
    "handoff",
    "swarm_offer",
    "swarm_manifest_request",
    "swarm_manifest_page",
    "swarm_announce",
    "swarm_request",
    "swarm_chunk",
    "swarm_have",
};

BusError err_of(BusErrorCode c, std::string field, std::string detail) {
  return BusError{c, std::move(field), std::move(detail)};
}

// A required string member with its bound.
std::optional<BusError> read_string(const Json& obj, const char* key, std::size_t max,
                                    const std::string& field, std::string& out) {
  auto it = obj.find(key);
  if (it == obj.end())
    return err_of(BusErrorCode::missing_field, field, field + " is required (a string)");
  auto s = json_string(*it);
  if (!s) return err_of(BusErrorCode::bad_field, field, field + " must be a string");
  if (auto e = check_string(*s, max, field)) return e;
  out.assign(s->data(), s->size());
  return std::nullopt;
}

// An optional string-or-null member (to, topic): absent and null both mean "none".
std::optional<BusError> read_nullable(const Json& obj, const char* key, std::size_t max,
                                      const std::string& field, std::optional<std::string>& out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    out.reset();
    return std::nullopt;
  }
  auto s = json_string(*it);
  if (!s) return err_of(BusErrorCode::bad_field, field, field + " must be a string or null");
  if (auto e = check_string(*s, max, field)) return e;
  out = std::string(*s);
  return std::nullopt;
}

}  // namespace

std::string_view message_type_name(MessageType t) {
  return kTypeNames[std::size_t(t)];
}

std::optional<MessageType> message_type_from_name(std::string_view name) {
  // The names of each length (at most three share one), found once: a received type costs the
  // compares of its length's names, not a walk over the list (every received envelope asks).
  constexpr std::size_t kMaxLength = 32, kPerLength = 4;
  struct ByLength {
    std::array<std::array<std::int8_t, kPerLength>, kMaxLength> index{};
    constexpr ByLength() {
      for (auto& row : index)
        for (auto& i : row) i = -1;
      for (std::size_t t = 0; t < kTypeNames.size(); ++t) {
        auto& row = index[kTypeNames[t].size()];
        std::size_t k = 0;
        while (row[k] >= 0) ++k;  // a fifth name of one length fails to compile (out of range)
        row[k] = std::int8_t(t);
      }
    }
  };
  static constexpr ByLength kByLength;
  if (name.size() >= kMaxLength) return std::nullopt;
  for (const std::int8_t i : kByLength.index[name.size()]) {
    if (i < 0) break;
    if (kTypeNames[std::size_t(i)] == name) return MessageType(i);
  }
  return std::nullopt;
}

bool is_transient(MessageType t) {
  switch (t) {
    case MessageType::file_offer:
    case MessageType::file_chunk:
    case MessageType::file_complete:
    case MessageType::swarm_offer:
    case MessageType::swarm_manifest_request:
    case MessageType::swarm_manifest_page:
    case MessageType::swarm_announce:
    case MessageType::swarm_request:
    case MessageType::swarm_chunk:
    case MessageType::swarm_have: return true;
    default: return false;
  }
}

bool bus_reads_payload(MessageType t) {
  switch (t) {
    case MessageType::announce:          // skills: handoff-v1 (Bus::on_announce)
    case MessageType::ack:               // messageId, receipt (Bus::on_confirmation, match_receipt)
    case MessageType::command_response:  // requestId (or a legacy messageId), ok, error
    case MessageType::handoff:           // request, expiresAt (check_handoff)
    case MessageType::history_request:   // count
    case MessageType::history_replay:    // the replayed envelope
    case MessageType::ping:              // ts, for the pong
    case MessageType::skill_update:      // the announce fields it replaces (Bus::on_skill_update)
      return true;
    default: return false;
  }
}

const Json& Envelope::payload_dom(Json& scratch) const {
  if (payload_text.empty()) return payload;
  // Text is only ever kept after the scanner validated it, so this parse cannot fail; if it
  // somehow did, null is what a missing payload reads as.
  JsonParse p = parse_json(ByteView(std::string_view(payload_text)));
  scratch = p.ok() ? std::move(p.value) : Json(nullptr);
  return scratch;
}

Json Envelope::payload_value() const {
  if (payload_text.empty()) return payload;
  Json scratch;
  payload_dom(scratch);
  return scratch;
}

bool is_kept_in_history(MessageType t) {
  if (is_transient(t)) return false;
  switch (t) {
    case MessageType::announce:
    case MessageType::ping:
    case MessageType::pong:
    case MessageType::history_replay:
    case MessageType::history_request:
    case MessageType::handoff: return false;
    default: return true;
  }
}

std::optional<BusError> check_string(std::string_view value, std::size_t max_chars,
                                     const std::string& field) {
  if (value.empty()) return err_of(BusErrorCode::empty_string, field, field + " must not be empty");
  // Cheap bound first: a UTF-8 string has at least as many bytes as UTF-16 units / ... at most
  // 3 bytes per unit, so a string over 3*max bytes is too long without counting.
  if (value.size() > 3 * max_chars || utf16_units(value) > max_chars)
    return err_of(
        BusErrorCode::too_long, field,
        field + " is longer than " + std::to_string(max_chars) + " characters; shorten it");
  if (value.find('\0') != std::string_view::npos)
    return err_of(BusErrorCode::nul_in_string, field,
                  field + " contains a NUL character; remove it");
  // A received field is valid already (the whole text was); this is for the ones we are given to
  // send, which must never make an envelope every receiver, ourselves included, refuses.
  if (!is_valid_utf8(ByteView(value)))
    return err_of(BusErrorCode::bad_field, field, field + " is not valid UTF-8; send text");
  return std::nullopt;
}

std::optional<BusError> check_identity(const Identity& id, const std::string& p) {
  if (auto e = check_string(id.stream_id, kMaxStreamIdChars, p + ".streamId")) return e;
  if (auto e = check_string(id.role, kMaxRoleChars, p + ".role")) return e;
  if (auto e = check_string(id.name, kMaxNameChars, p + ".name")) return e;
  if (auto e = check_string(id.instance_id, kMaxInstanceIdChars, p + ".instanceId")) return e;
  return std::nullopt;
}

Result<Envelope, BusError> envelope_from_json(const Json& j) {
  if (!j.is_object())
    return err(err_of(BusErrorCode::not_object, "",
                      "an envelope is a JSON object {v, id, type, from, to, topic, ts, payload}"));
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k != "v" && k != "id" && k != "type" && k != "from" && k != "to" && k != "topic" &&
        k != "ts" && k != "payload") {
      std::string shown = k.size() > 64 ? k.substr(0, 64) + "..." : k;
      return err(
          err_of(BusErrorCode::unknown_field, "",
                 "unknown envelope key \"" + shown +
                     "\"; an envelope has exactly v, id, type, from, to, topic, ts, payload"));
    }
  }
  auto v = j.find("v");
  if (v == j.end())
    return err(err_of(BusErrorCode::missing_field, "v", "v is required (the envelope version, 1)"));
  if (json_integer(*v, kEnvelopeVersion, kEnvelopeVersion) != kEnvelopeVersion)
    return err(err_of(BusErrorCode::bad_version, "v",
                      "only envelope version 1 is understood; upgrade the peer or send v:1"));
  Envelope e;
  if (auto x = read_string(j, "id", kMaxIdChars, "id", e.id)) return err(*x);
  std::string type;
  if (auto x = read_string(j, "type", kMaxTypeChars, "type", type)) return err(*x);
  auto t = message_type_from_name(type);
  if (!t)
    return err(
        err_of(BusErrorCode::unknown_type, "type", "\"" + type + "\" is not a bus message type"));
  e.type = *t;
  auto from = j.find("from");
  if (from == j.end())
    return err(err_of(BusErrorCode::missing_field, "from",
                      "from is required ({streamId, role, name, instanceId})"));
  if (!from->is_object())
    return err(err_of(BusErrorCode::bad_field, "from",
                      "from must be an object {streamId, role, name, instanceId}"));
  for (auto it = from->begin(); it != from->end(); ++it) {
    const std::string& k = it.key();
    if (k != "streamId" && k != "role" && k != "name" && k != "instanceId")
      return err(err_of(BusErrorCode::unknown_field, "from",
                        "from has exactly streamId, role, name and instanceId"));
  }
  if (auto x = read_string(*from, "streamId", kMaxStreamIdChars, "from.streamId", e.from.stream_id))
    return err(*x);
  if (auto x = read_string(*from, "role", kMaxRoleChars, "from.role", e.from.role)) return err(*x);
  if (auto x = read_string(*from, "name", kMaxNameChars, "from.name", e.from.name)) return err(*x);
  if (auto x = read_string(*from, "instanceId", kMaxInstanceIdChars, "from.instanceId",
                           e.from.instance_id))
    return err(*x);
  if (auto x = read_nullable(j, "to", kMaxToChars, "to", e.to)) return err(*x);
  if (auto x = read_nullable(j, "topic", kMaxTopicChars, "topic", e.topic)) return err(*x);
  auto ts = j.find("ts");
  if (ts == j.end())
    return err(err_of(BusErrorCode::missing_field, "ts", "ts is required (Unix milliseconds)"));
  if (!ts->is_number())
    return err(err_of(BusErrorCode::bad_field, "ts", "ts must be a number (Unix milliseconds)"));
  auto f = json_finite(*ts);
  if (!f) return err(err_of(BusErrorCode::not_finite, "ts", "ts must be a finite number"));
  e.ts = *f;
  auto p = j.find("payload");
  e.payload = p == j.end() ? Json(nullptr) : *p;
  return e;
}

Result<Envelope, BusError> parse_envelope(ByteView text, ParseInfo* info, PayloadForm form) {
  if (info) *info = ParseInfo{};
  // The common shape in one pass; its payload becomes a DOM only when asked for or when the bus
  // reads it (announce, ack, handoff, ...), else it stays the text the scanner validated.
  // Anything else gets the DOM path's verdict.
  if (auto s = scan_envelope(text)) {
    Envelope e;
    e.id.assign(s->id);
    e.type = s->type;
    e.from.stream_id.assign(s->stream_id);
    e.from.role.assign(s->role);
    e.from.name.assign(s->name);
    e.from.instance_id.assign(s->instance_id);
    if (s->to) e.to = std::string(*s->to);
    if (s->topic) e.topic = std::string(*s->topic);
    e.ts = s->ts;
    if (info) *info = ParseInfo{true, s->payload};
    if (s->payload.empty()) return e;
    if (form == PayloadForm::text_unless_read && !bus_reads_payload(e.type)) {
      e.payload_text.assign(s->payload);
      return e;
    }
    // The scanner checked syntax, UTF-8 and depth, so this cannot fail; if it ever did, the DOM
    // path would still decide.
    JsonParse p = parse_json(ByteView(s->payload));
    if (p.ok()) {
      e.payload = std::move(p.value);
      return e;
    }
    if (info) *info = ParseInfo{};
  }
  return parse_envelope_dom(text);
}

std::size_t max_envelope_bytes(MessageType t) {
  return t == MessageType::file_chunk ? kMaxFileChunkEnvelopeBytes : kMaxEnvelopeBytes;
}

namespace {

BusError too_large(std::size_t size, std::size_t limit, std::string field) {
  return err_of(BusErrorCode::too_large, std::move(field),
                "the envelope is " + std::to_string(size) + " bytes; the limit is " +
                    std::to_string(limit) + " (send large data as a file or swarm transfer)");
}

}  // namespace

Result<Envelope, BusError> parse_envelope_dom(ByteView text) {
  // Nothing larger than the largest file_chunk reaches the parser; other types are held to their
  // own bound once the type is read.
  if (text.size > kMaxFileChunkEnvelopeBytes)
    return err(too_large(text.size, kMaxFileChunkEnvelopeBytes, ""));
  JsonParse p = parse_json(text);
  if (p.error == JsonError::number_out_of_range)
    return err(err_of(BusErrorCode::not_json, "",
                      "the envelope holds a number beyond a double's range, which JSON.parse reads "
                      "as Infinity and no JSON text can carry; send finite numbers"));
  if (!p.ok())
    return err(
        err_of(BusErrorCode::not_json, "",
               std::string("the envelope is not JSON text (") + json_error_name(p.error) + ")"));
  auto e = envelope_from_json(p.value);
  if (e && text.size > max_envelope_bytes(e->type))
    return err(too_large(text.size, max_envelope_bytes(e->type), ""));
  return e;
}

Json envelope_to_json(const Envelope& e) {
  Json j = Json::object();
  j["v"] = kEnvelopeVersion;
  j["id"] = e.id;
  j["type"] = std::string(message_type_name(e.type));
  j["from"] = Json{{"streamId", e.from.stream_id},
                   {"role", e.from.role},
                   {"name", e.from.name},
                   {"instanceId", e.from.instance_id}};
  j["to"] = e.to ? Json(*e.to) : Json(nullptr);
  j["topic"] = e.topic ? Json(*e.topic) : Json(nullptr);
  j["ts"] = e.ts;
  j["payload"] = e.payload_value();
  return j;
}

namespace {

// Everything up to the payload's value, in wire order.
void append_header(std::string& out, const Envelope& e) {
  out += "{\"v\":1,\"id\":";
  append_json_string(out, e.id);
  out += ",\"type\":\"";
  out += message_type_name(e.type);  // names need no escaping
  out += "\",\"from\":{\"streamId\":";
  append_json_string(out, e.from.stream_id);
  out += ",\"role\":";
  append_json_string(out, e.from.role);
  out += ",\"name\":";
  append_json_string(out, e.from.name);
  out += ",\"instanceId\":";
  append_json_string(out, e.from.instance_id);
  out += "},\"to\":";
  if (e.to)
    append_json_string(out, *e.to);
  else
    out += "null";
  out += ",\"topic\":";
  if (e.topic)
    append_json_string(out, *e.topic);
  else
    out += "null";
  out += ",\"ts\":";
  append_js_number(out, e.ts);
  out += ",\"payload\":";
}

}  // namespace

// Written directly rather than through envelope_to_json: the same bytes (keys in wire order, the
// same escapes and number format) without building a DOM around the payload first.
void append_envelope_json(std::string& out, const Envelope& e) {
  append_envelope_json(out, e, std::string_view());
}

namespace {

// The envelope in wire order; returns how deep its payload nests (0 for `payload_text` given by
// the caller, which was read within the bound already).
std::size_t append_envelope_nesting(std::string& out, const Envelope& e,
                                    std::string_view payload_text) {
  append_header(out, e);
  std::size_t payload_nesting = 0;
  if (!payload_text.empty())
    out += payload_text;
  else if (e.payload_text.empty())
    payload_nesting = append_json(out, e.payload, JsonNumbers::js_double);
  // Canonical bytes for a payload kept as text: the text may hold whitespace, \u escapes or
  // number spellings (1.50) that the canonical writer spells otherwise.
  else
    payload_nesting = append_json(out, e.payload_value(), JsonNumbers::js_double);
  out += '}';
  return payload_nesting;
}

}  // namespace

void append_envelope_json(std::string& out, const Envelope& e, std::string_view payload_text) {
  (void)append_envelope_nesting(out, e, payload_text);
}

void append_envelope_as_received(std::string& out, const Envelope& e) {
  if (e.payload_text.empty()) return append_envelope_json(out, e);
  out.reserve(out.size() + e.payload_text.size() + 256);
  append_header(out, e);
  out += e.payload_text;
  out += '}';
}

std::string serialize_envelope(const Envelope& e) {
  std::string out;
  append_envelope_json(out, e);
  return out;
}

Result<std::string, BusError> encode_envelope(const Envelope& e) {
  if (auto x = check_string(e.id, kMaxIdChars, "id")) return err(*x);
  if (auto x = check_identity(e.from, "from")) return err(*x);
  if (e.to)
    if (auto x = check_string(*e.to, kMaxToChars, "to")) return err(*x);
  if (e.topic)
    if (auto x = check_string(*e.topic, kMaxTopicChars, "topic")) return err(*x);
  if (!std::isfinite(e.ts))
    return err(err_of(BusErrorCode::not_finite, "ts", "ts must be a finite number"));
  std::string text;
  const std::size_t payload_nesting = append_envelope_nesting(text, e, std::string_view());
  if (text.size() > max_envelope_bytes(e.type))
    return err(too_large(text.size(), max_envelope_bytes(e.type), "payload"));
  // Every reader parses an envelope within kMaxJsonDepth, the envelope's own object included, so a
  // deeper payload (a 64-deep DOM from the API, or a replayed envelope wrapped once more) would
  // leave here as bytes that everyone, ourselves included, refuses.
  if (payload_nesting + 1 > kMaxJsonDepth)
    return err(err_of(BusErrorCode::bad_payload, "payload",
                      "the payload nests " + std::to_string(payload_nesting) +
                          " levels deep; an envelope nests at most " +
                          std::to_string(kMaxJsonDepth) + ", so a payload at most " +
                          std::to_string(kMaxJsonDepth - 1) + ": flatten it"));
  return text;
}

std::size_t json_string_bytes(std::string_view s) {
  std::size_t n = 2;  // the quotes
  for (unsigned char c : s) {
    switch (c) {
      case '"':
      case '\\':
      case '\b':
      case '\f':
      case '\n':
      case '\r':
      case '\t': n += 2; break;
      default: n += c < 0x20 ? 6 : 1;  // \u00XX
    }
  }
  return n;
}

}  // namespace tether::bus
