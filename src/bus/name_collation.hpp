// The order in which the public implementation lists a shared folder (agent-bus-notes.md: the
// list-files command): folders first, then files, each by `a.name.localeCompare(b.name)`, which
// is ICU's root collation under Node. A ninja-p2p peer that browses our shares sees its own order,
// and the 200 entries an answer holds (kShareLevelMaxEntries) are the same 200.
//
// ICU itself is the library for this, but its collation data alone is megabytes, far past what
// the WASM modules carry, so the collation is written here for the characters file names mostly
// hold: up to U+04FF (ASCII, Latin-1, Latin Extended-A and -B, IPA, Greek, Cyrillic), ranked
// by tools/gen-name-collation.mjs from Node's own Intl.Collator into name_collation_table.inc,
// and compared as the collation does: letters first, then accents, then case, each left to right.
// Past U+04FF a character sorts after all of those, by code point (Armenian, Hebrew, Arabic, ...
// CJK, much as ICU has the scripts; symbols and emoji there sort later than ICU puts them).
#pragma once
#include <string>
#include <string_view>

namespace tether::bus {

// Bytes whose order (std::string's <) is the collation's order of the names: every letter's
// primary rank, then every accent, then every case, each level ended by a byte below all of its
// ranks. Sorting by keys computes each name's once, not once per comparison.
std::string name_sort_key(std::string_view name);

// <0 when `a` lists before `b`, >0 after, 0 when the collation does not tell them apart.
int compare_names(std::string_view a, std::string_view b);

}  // namespace tether::bus
