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
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bus/envelope.hpp"
#include "common/bytes.hpp"

namespace tether::bus {

// Where a part of the text lies, in UTF-16 code units (what JavaScript's String.prototype.slice
// takes): a host holding the text it passed in reads the value from it without a second parse.
struct Span {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
};

// The payload's tokens, three words each (kind, begin, end; spans as above), in document order,
// for a host that builds the payload from its own text instead of parsing it again: a 64 KiB
// base64 string then costs a slice, not a copy. Strings and keys span the bytes between their
// quotes; an escaped one is read with JSON.parse of the quoted slice. Recorded only for payloads
// of at most kMaxTapeTokens tokens, where walking the tokens beats JSON.parse (bench/README.md
// § bus); a longer payload leaves the tape empty and the host parses the payload's span.
enum class TapeKind : std::uint32_t {
  object_begin,
  object_end,
  array_begin,
  array_end,
  key,
  key_escaped,
  string,
  string_escaped,
  number,
  true_value,
  false_value,
  null_value,
};
constexpr std::size_t kMaxTapeTokens = 64;
using Tape = std::vector<std::uint32_t>;

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
  // The same parts as UTF-16 spans of the text (see Span); `payload_span` is empty when there is
  // no payload.
  Span id_span, stream_id_span, role_span, name_span, instance_id_span, payload_span;
  // The `from` object exactly as written. Its strings are escape-free, so two envelopes whose
  // from_text bytes are equal name the same sender (the bus's per-message identity check).
  std::string_view from_text;
  std::optional<Span> to_span, topic_span;
};

// nullopt: "not mine", run parse_envelope_dom for the verdict. With `tape`, the payload's tokens
// are recorded there (cleared first; left empty for a payload of more than kMaxTapeTokens).
std::optional<ScannedEnvelope> scan_envelope(ByteView text, Tape* tape = nullptr);

namespace detail {
// The first byte in [p, end) that ends a plain run inside a JSON string (a quote, a backslash, a
// control byte or a byte of 0x80 and above), or `end`. The scanner's inner loop: a 64 KiB base64
// chunk, and most of any payload, is this. `skip_plain` reads sixteen bytes at a time with
// SIMD-128 (WebAssembly SIMD under emcc -msimd128, SSE2 natively) and never reads past `end`;
// `skip_plain_scalar` is the portable eight-at-a-time loop it falls back to, kept callable so the
// tests compare the two at every length and position.
const std::uint8_t* skip_plain(const std::uint8_t* p, const std::uint8_t* end);
const std::uint8_t* skip_plain_scalar(const std::uint8_t* p, const std::uint8_t* end);
}  // namespace detail

// The glue's result text for an accepted scan, `{"ok":true,"envelope":{...}}` with the header in
// canonical form and the payload text verbatim, so JavaScript runs exactly one JSON.parse. The
// payload's values are those the DOM path would give: the scanner leaves to it every number whose
// value JSON.parse and the canonical writer could disagree on (-0, exponents, over 15 digits).
void append_scanned_result(std::string& out, const ScannedEnvelope& e);

}  // namespace tether::bus
