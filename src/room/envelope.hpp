// OpEnvelope well-formedness for the room relay (the room-relay spec, "The envelope" and
// "Trust"): the structural check every envelope passes before policy, admission or retention,
// plus the small JSON helpers the room core writes its wire text with.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "room/json_scan.hpp"

namespace tether::room {

// Hybrid logical clock stamp: ordered by p, then l (plain doubles, as on the wire).
struct Hlc {
  double p = 0;
  double l = 0;
};
inline int compare_hlc(const Hlc& a, const Hlc& b) {
  if (a.p != b.p) return a.p < b.p ? -1 : 1;
  if (a.l != b.l) return a.l < b.l ? -1 : 1;
  return 0;
}
inline bool hlc_le(const Hlc& a, const Hlc& b) {
  return compare_hlc(a, b) <= 0;
}

enum class OpKind : std::uint8_t { set, del, clear };
const char* op_kind_name(OpKind k);

// A cite of one sibling write, read out of an op.
struct Cite {
  std::string origin;
  Hlc hlc;
};

// One op of a well-formed envelope, with the derived facts retention and policy need. Node
// indices point into the JsonScan the envelope was validated from.
struct OpView {
  std::uint32_t op = JsonScan::kNone;
  std::uint32_t path = JsonScan::kNone;
  std::uint32_t next = JsonScan::kNone;  // set: the value
  std::uint32_t prev = JsonScan::kNone;  // the inversion hint, when present
  OpKind kind = OpKind::set;
  std::string key;        // String(seg) joined by kPathKeySeparator: the register identity
  std::size_t depth = 0;  // path length
  double epoch = 0;
  // Reused across envelopes (capacity kept): only the first n_* entries are this op's.
  std::vector<Cite> cites;
  std::size_t n_cites = 0;
  std::vector<std::string> segments;  // String(seg) per segment, for the native path ACL
};

// The envelope fields the relay reads after validation. Storage is reused across envelopes.
struct EnvelopeView {
  std::string instance;
  std::string origin;
  std::string writer;
  double version = 0;
  Hlc hlc;
  std::uint32_t schema = JsonScan::kNone;
  std::vector<OpView> ops;
  std::size_t n_ops = 0;
};

// Checks envelope node `env` of `scan` whole; returns nullptr when well-formed (and fills
// `out`), otherwise the short reason that becomes the 'malformed' violation's detail:
// "envelope", "instance", "origin", "writer", "hlc", "version", "ops", "op", "kind", "path",
// "path-control", "path-proto", "root-op", "epoch", "cites", "dup-path", and ours, "bounds"
// (a kMax* limit).
const char* validate_envelope(const JsonScan& scan, std::uint32_t env, EnvelopeView& out);
// The same over a parsed value (tests, cold paths).
const char* validate_envelope(const Json& env, EnvelopeView& out, JsonScan& scan,
                              std::string& text);

// True for a non-empty string with no character below U+0020 and at most kMaxIdBytes bytes.
bool clean_id(const Json& v);
bool has_control_char(std::string_view s);

// JavaScript's String(value) for a path segment: numbers in JS format, objects as
// "[object Object]", arrays joined by commas.
void append_js_string(std::string& out, const Json& v);
void append_js_string(std::string& out, const JsonScan& scan, std::uint32_t v);
// The register identity of a path (an array): String(seg) of each segment joined by
// kPathKeySeparator, as the reference keys its registers.
std::string path_register_key(const Json& path);
// A non-empty string without control characters, at most kMaxIdBytes, read from `scan`.
bool clean_id(const JsonScan& scan, std::uint32_t v, std::string& out);
std::optional<Hlc> read_hlc(const JsonScan& scan, std::uint32_t v);
std::optional<double> read_number(const JsonScan& scan, std::uint32_t v);

// JSON.stringify's output for a parsed value (integers beyond 2^53 written as JS would).
void append_value(std::string& out, const Json& v);
std::string value_text(const Json& v);
void append_quoted(std::string& out, std::string_view s);
void append_number(std::string& out, double v);
void append_hlc(std::string& out, const Hlc& h);

std::optional<Hlc> read_hlc(const Json& v);
std::optional<double> read_number(const Json& v);
// Looks up a key of an object; nullptr when absent (or when `obj` is not an object).
const Json* field(const Json& obj, std::string_view key);

}  // namespace tether::room
