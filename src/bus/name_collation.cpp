// See name_collation.hpp.
#include "bus/name_collation.hpp"

#include <cstdint>
#include <vector>

#include "common/utf8.hpp"

namespace tether::bus {

namespace {

struct CollationEntry {
  std::uint16_t primary;   // 0: the collation ignores the character; kExpands: see kExpansions
  std::uint8_t secondary;  // the accent, within its letter
  std::uint8_t tertiary;   // the case or variant, within its letter and accent
};
constexpr std::uint16_t kExpands = 0xFFFF;

// A character the collation reads as two or three (æ as a, e; ¼ as 1, ⁄, 4).
struct CollationExpansion {
  char32_t code_point;
  std::uint16_t primaries[3];  // 0 past the last
  std::uint8_t secondary;      // of the first
  std::uint8_t tertiary;       // of each
};

#include "bus/name_collation_table.inc"

static_assert(sizeof(kCollation) / sizeof(kCollation[0]) == kCollationLast + 1,
              "one entry per code point up to kCollationLast");

struct Element {
  std::uint32_t primary;
  std::uint8_t secondary;
  std::uint8_t tertiary;
};

std::vector<Element> elements(std::string_view name) {
  std::vector<Element> out;
  out.reserve(name.size());
  const bool valid = is_valid_utf8(ByteView(name));
  for (std::size_t i = 0; i < name.size();) {
    std::size_t len = 1;
    // Bytes that are not UTF-8 (a native caller's; JS strings cross as UTF-8): ASCII as itself,
    // any other byte as U+FFFD.
    const auto byte = static_cast<unsigned char>(name[i]);
    char32_t cp = valid ? utf8_code_point_at(name, i, len) : (byte < 0x80 ? byte : 0xFFFD);
    i += len;
    if (cp > kCollationLast) {
      out.push_back({std::uint32_t(kCollationPrimaries) + 1 + std::uint32_t(cp), 0, 0});
      continue;
    }
    const CollationEntry& e = kCollation[cp];
    if (e.primary == 0) continue;
    if (e.primary != kExpands) {
      out.push_back({e.primary, e.secondary, e.tertiary});
      continue;
    }
    for (const CollationExpansion& x : kExpansions) {
      if (x.code_point != cp) continue;
      for (std::size_t k = 0; k < 3 && x.primaries[k] != 0; ++k)
        out.push_back({x.primaries[k], k == 0 ? x.secondary : std::uint8_t(0), x.tertiary});
      break;
    }
  }
  return out;
}

}  // namespace

std::string name_sort_key(std::string_view name) {
  const std::vector<Element> el = elements(name);
  std::string key;
  key.reserve(el.size() * 5 + 5);
  // Primaries as three bytes each (all at least 1, so the level's end, three zero bytes, is
  // below every one); accents and cases as one byte each, shifted up by one past their end, 0.
  for (const Element& e : el) {
    key += char((e.primary >> 16) & 0xFF);
    key += char((e.primary >> 8) & 0xFF);
    key += char(e.primary & 0xFF);
  }
  key.append(3, '\0');
  for (const Element& e : el) key += char(e.secondary + 1);
  key += '\0';
  for (const Element& e : el) key += char(e.tertiary + 1);
  return key;
}

int compare_names(std::string_view a, std::string_view b) {
  const int c = name_sort_key(a).compare(name_sort_key(b));
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace tether::bus
