// The agent-bus envelope: `{v:1, id, type, from:{streamId, role, name, instanceId}, to, topic,
// ts, payload}` (agent-bus-notes.md § The envelope; agent-bus-and-swarm.md § Untrusted wire
// input). Parsing is stricter than the TypeScript types: every string is bounded, non-empty and
// NUL-free, the type is one of a closed set, unknown keys are refused, ts is finite. A refusal is
// a value; the caller drops the message and the room lives on.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bus/errors.hpp"
#include "common/bytes.hpp"
#include "common/json.hpp"
#include "common/result.hpp"

namespace tether::bus {

enum class MessageType {
  chat,
  announce,
  skill_update,
  command,
  command_response,
  file_offer,
  file_chunk,
  file_complete,
  file_ack,
  event,
  ping,
  pong,
  ack,
  history_replay,
  history_request,
  handoff,
  swarm_offer,
  swarm_manifest_request,
  swarm_manifest_page,
  swarm_announce,
  swarm_request,
  swarm_chunk,
  swarm_have,
};
constexpr int kMessageTypeCount = 23;

std::string_view message_type_name(MessageType t);
std::optional<MessageType> message_type_from_name(std::string_view name);
// Never queued for offline peers and never kept in history: file_offer/chunk/complete and every
// swarm_* type. Replaying a partial transfer after reconnect cannot rebuild its transport state.
bool is_transient(MessageType t);
// Protocol chatter that the history ring does not keep either: replaying an old announce would
// advertise stale capabilities, replaying a replay is meaningless, and handoffs have their own
// confirmed path.
bool is_kept_in_history(MessageType t);

struct Identity {
  std::string stream_id;
  std::string role;
  std::string name;
  std::string instance_id;
  bool operator==(const Identity& o) const {
    return stream_id == o.stream_id && role == o.role && name == o.name &&
           instance_id == o.instance_id;
  }
};

// Does the bus core itself read this type's payload (announce skills, ack/command_response
// correlation, handoff checks, history counts and replays)? Every other payload is only carried:
// delivered, kept in history, replayed (agent-bus-notes.md § The envelope; agent-bus-and-swarm.md
// § Delivery semantics), so a received one is kept as the text the scanner validated.
bool bus_reads_payload(MessageType t);

struct Envelope {
  std::string id;
  MessageType type = MessageType::chat;
  Identity from;
  std::optional<std::string> to;     // null: a broadcast
  std::optional<std::string> topic;  // null: no topic
  double ts = 0;                     // Unix ms
  // The payload (any JSON value) in one of two forms. Either `payload` holds it as a DOM and
  // `payload_text` is empty, or `payload_text` holds it as JSON text and `payload` is null. The
  // text form comes only from parse_envelope, for a type the bus does not read
  // (bus_reads_payload) whose envelope the one-pass scanner accepted (bus/scan.hpp): the text is
  // verbatim and validated (syntax, strict UTF-8, depth, no number whose value JSON.parse and the
  // DOM could disagree on), so parsing it gives exactly the DOM the eager path would have built,
  // and JSON.parse in JavaScript reads the same values. A 64 KiB file_chunk then costs one scan
  // instead of a scan plus a DOM nobody reads.
  Json payload;
  std::string payload_text;
  // The payload as a DOM, whichever form holds it: the text is parsed on demand, so a reader
  // that needs values (a history replay, an app) pays for it and delivery does not. Readers go
  // through these two, never `payload` directly. payload_dom avoids the copy when the payload is
  // a DOM: it returns `payload`, or `scratch` after parsing the text into it.
  Json payload_value() const;
  const Json& payload_dom(Json& scratch) const;
};

// Checks one string field: non-empty, no NUL, at most `max_chars` UTF-16 code units.
std::optional<BusError> check_string(std::string_view value, std::size_t max_chars,
                                     const std::string& field);
// Checks an Identity (the bounds of `from`), naming fields under `prefix` ("from").
std::optional<BusError> check_identity(const Identity& id, const std::string& prefix);

// How parse_envelope hands over a payload the scanner validated. `dom`: always as `payload`.
// `text_unless_read`: as `payload_text` when the bus does not read the type (bus_reads_payload),
// which is what Bus::receive asks for.
enum class PayloadForm { dom, text_unless_read };

// The largest envelope text of this type: kMaxEnvelopeBytes, or kMaxFileChunkEnvelopeBytes for a
// file_chunk (one-to-one chunks of up to 1 MiB, agent-bus-notes.md § Sizes).
std::size_t max_envelope_bytes(MessageType t);

// Parses JSON text (refused above kMaxFileChunkEnvelopeBytes before parsing, and above
// max_envelope_bytes(type) once the type is known).
// Scans the common shape in one pass (bus/scan.hpp) and falls back to parse_envelope_dom for
// everything else, so the verdicts and error codes are the DOM path's.
// What parse_envelope tells a caller that holds on to the received text.
struct ParseInfo {
  // The scanner took the envelope: its header strings are escape-free and its numbers are ones
  // JSON.parse reads to the same values, so the received text itself, read by JSON.parse and put
  // in canonical key order, is the envelope (bus/scan.hpp).
  bool scanned = false;
  // The payload's text as received when scanned (verbatim, validated; a view into `text`);
  // empty when not scanned or when there is no payload.
  std::string_view raw_payload;
};
Result<Envelope, BusError> parse_envelope(ByteView text, ParseInfo* info = nullptr,
                                          PayloadForm form = PayloadForm::dom);
// The general path: nlohmann DOM, then envelope_from_json. Every refusal comes from here.
Result<Envelope, BusError> parse_envelope_dom(ByteView text);
// Validates an already parsed JSON value (history_replay carries envelopes as objects).
Result<Envelope, BusError> envelope_from_json(const Json& value);

// The canonical JSON text: keys in wire order, numbers as JSON.stringify writes them. A payload
// kept as text is parsed and written canonically, so both forms give the same bytes.
std::string serialize_envelope(const Envelope& e);
void append_envelope_json(std::string& out, const Envelope& e);
// The same with `payload_text` written in place of the payload (text the scanner validated).
void append_envelope_json(std::string& out, const Envelope& e, std::string_view payload_text);
// The envelope as received: canonical header, the payload's text verbatim when it is kept as
// text, else written from the DOM. Its values (JSON.parse) are serialize_envelope's; this is
// what a delivered message hands on.
void append_envelope_as_received(std::string& out, const Envelope& e);
Json envelope_to_json(const Envelope& e);
// Serialises after checking every bound, including kMaxEnvelopeBytes: what we put on the wire is
// held to the rules we hold others to.
Result<std::string, BusError> encode_envelope(const Envelope& e);

// The UTF-8 byte length of `s` written as a JSON string (quotes and escapes included), as
// `new TextEncoder().encode(JSON.stringify(s)).length` counts it.
std::size_t json_string_bytes(std::string_view s);

}  // namespace tether::bus
