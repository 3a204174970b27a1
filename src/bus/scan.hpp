// A single-pass validating scanner for the common shape of an envelope (agent-bus-notes.md § The
// envelope; agent-bus-and-swarm.md § Untrusted wire input), so receiving one costs one pass over
// its bytes instead of a nlohmann DOM, a re-serialisation and a second parse in JavaScript.
//
// It only ever accepts. Whatever it is not sure of (an escape in a header string, an unknown or
// repeated key, a number it cannot convert exactly, a bound that fails, any syntax error) makes
// it answer "not mine" and the caller runs the unchanged DOM path (parse_envelope_dom), which
// produces every refusal and its error code. So the verdicts cannot drift: when the scanner
// accepts, the DOM path accepts the same envelope (tests/fuzz/fuzz_bus_envelope.cpp checks it).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "bus/envelope.hpp"
#include "common/bytes.hpp"

namespace tether::bus {

struct ScannedEnvelope {
  // Header strings exactly as written: the scanner accepts them only without escapes, so the
  // bytes between the quotes are the value.
  std::string_view id;
  MessageType type = MessageType::chat;
  std::string_view stream_id, role, name, instance_id;
  std::optional<std::string_view> to, topic;
  double ts = 0;
  // The payload's JSON text, verbatim and validated (syntax, UTF-8, depth); empty when absent
  // (which means null).
  std::string_view payload;
};

// nullopt: "not mine", run parse_envelope_dom for the verdict.
std::optional<ScannedEnvelope> scan_envelope(ByteView text);

// The glue's result text for an accepted scan, `{"ok":true,"envelope":{...}}` with the header in
// canonical form and the payload text verbatim, so JavaScript runs exactly one JSON.parse. The
// payload's values are those the DOM path would give: the scanner leaves to it every number whose
// value JSON.parse and the canonical writer could disagree on (-0, exponents, over 15 digits).
void append_scanned_result(std::string& out, const ScannedEnvelope& e);

}  // namespace tether::bus
