// A room's admission evidence for one origin (room/ranges.hpp).
#include "room/ranges.hpp"

#include <algorithm>

namespace tether::room {

VersionRanges::VersionRanges(std::vector<Range> initial) : ranges_(std::move(initial)) {
  std::stable_sort(ranges_.begin(), ranges_.end(),
                   [](const Range& x, const Range& y) { return x.first < y.first; });
}

bool VersionRanges::has(double v) const {
  for (const auto& [a, b] : ranges_) {
    if (v < a) return false;
    if (v <= b) return true;
  }
  return false;
}

bool VersionRanges::add(double v) {
  if (has(v)) return false;
  if (ranges_.size() == 1 && v == ranges_.back().second + 1 && v > ranges_.back().first) {
    ranges_.back().second = v;  // the common case: the next version of one contiguous run
    return true;
  }
  // After the ranges that start at or before v (a stable sort would put it there), then merge.
  auto pos = std::upper_bound(ranges_.begin(), ranges_.end(), v,
                              [](double x, const Range& r) { return x < r.first; });
  ranges_.insert(pos, Range{v, v});
  std::vector<Range> merged;
  merged.reserve(ranges_.size());
  for (const auto& r : ranges_) {
    if (!merged.empty() && r.first <= merged.back().second + 1)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  }
  ranges_.swap(merged);
  return true;
}

bool record_admission(VersionRanges& ranges, double version) {
  const double before = ranges.prefix();
  ranges.add(version);
  return ranges.prefix() > before;
}

}  // namespace tether::room
