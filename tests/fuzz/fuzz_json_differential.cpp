// libFuzzer harness, differential: the room relay's JSON scanner (src/room/json_scan.hpp) against
// nlohmann through parse_json (src/common/json.hpp), on the same bytes. The rule they must share
// (docs/rooms.md, "Numbers out of range"): both accept exactly RFC 8259 JSON within kMaxJsonDepth,
// except a number beyond a double's range, which the scanner accepts (JSON.parse reads it as
// +-Infinity, and so does number()) and parse_json refuses as number_out_of_range. Properties:
// - parse_json accepts: the scanner accepts, finds no such number, and every value agrees (types,
//   numbers as doubles, strings unescaped, objects by key with the last duplicate winning);
// - parse_json says number_out_of_range: the scanner accepts and found one; the text the relay
//   would send on (json(), such numbers as null) parses with nlohmann to the same values with
//   those numbers null, and equals json_overflow_as_null's rewrite of the input;
// - any other refusal: the scanner refuses too.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json.hpp"
#include "room/json_scan.hpp"

using namespace tether;
using tether::room::JsonScan;

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

double as_double(const Json& j) {
  if (j.is_number_unsigned()) return static_cast<double>(j.get<std::uint64_t>());
  if (j.is_number_integer()) return static_cast<double>(j.get<std::int64_t>());
  return j.get<double>();
}

// `inf_is_null`: the nlohmann side is the rewritten text, where the scanner's infinities are null.
void same(const JsonScan& s, std::uint32_t i, const Json& j, bool inf_is_null) {
  const JsonScan::Node& n = s.node(i);
  std::string scratch;
  switch (n.type) {
    case JsonScan::Type::null: check(j.is_null()); return;
    case JsonScan::Type::boolean: check(j.is_boolean() && j.get<bool>() == n.truthy); return;
    case JsonScan::Type::number: {
      const double d = s.number(i);
      if (std::isinf(d)) return check(inf_is_null && j.is_null());
      check(j.is_number() && as_double(j) == d);
      return;
    }
    case JsonScan::Type::string:
      check(j.is_string() && s.str(i, scratch) == j.get_ref<const std::string&>());
      return;
    case JsonScan::Type::array: {
      check(j.is_array() && j.size() == n.count);
      std::size_t k = 0;
      for (std::uint32_t c = n.first; c != JsonScan::kNone; c = s.node(c).next)
        same(s, c, j[k++], inf_is_null);
      return;
    }
    case JsonScan::Type::object: {
      check(j.is_object());
      std::size_t distinct = 0;
      for (std::uint32_t c = n.first; c != JsonScan::kNone; c = s.node(c).next) {
        const std::string key(s.key(c, scratch));
        if (s.field(i, key) != c) continue;  // an earlier duplicate: the last one counts
        ++distinct;
        auto it = j.find(key);
        check(it != j.end());
        same(s, c, *it, inf_is_null);
      }
      check(distinct == j.size());
      return;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  JsonScan scan;
  const bool scanned = scan.parse(text, kMaxJsonDepth);
  const JsonParse dom = parse_json(ByteView(text));
  if (dom.ok()) {
    check(scanned && !scan.has_overflow());
    same(scan, 0, dom.value, false);
    std::string scratch;
    check(scan.json(0, scratch) ==
          text.substr(scan.node(0).begin, scan.node(0).end - scan.node(0).begin));
    return 0;
  }
  if (dom.error != JsonError::number_out_of_range) {
    check(!scanned);
    return 0;
  }
  check(scanned && scan.has_overflow());
  std::string scratch;
  const std::string sent(scan.json(0, scratch));
  const JsonParse again = parse_json(ByteView(std::string_view(sent)));
  check(again.ok());
  same(scan, 0, again.value, true);
  // The two rewrites agree (json_overflow_as_null also keeps the whitespace around the value).
  std::string rewritten;
  check(json_overflow_as_null(text, rewritten));
  const std::size_t lead = scan.node(0).begin;
  check(rewritten.compare(lead, sent.size(), sent) == 0);
  return 0;
}
