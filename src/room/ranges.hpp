// A room's admission evidence for one origin (the room-relay spec, "Persistence": ranges and the
// settled vector): the versions it holds as inclusive ranges ordered by their start. A version
// inside a range was admitted (its resend is the acknowledgement), one above the maximum is new,
// one below it that no range holds was never admitted ('order'). The relay keeps one per origin;
// tether/relay exports it as the reference's createRanges / recordAdmission.
//
// The reference's semantics exactly, including for ranges handed in: they are ordered by start
// (stable) but merged only by the next add, and max() is the end of the last range.
#pragma once
#include <utility>
#include <vector>

namespace tether::room {

class VersionRanges {
 public:
  using Range = std::pair<double, double>;
  VersionRanges() = default;
  explicit VersionRanges(std::vector<Range> initial);

  bool has(double version) const;
  // Records an admitted version; false when it was already held.
  bool add(double version);
  // The end of the last range (the highest admitted version in practice), 0 when none.
  double max() const { return ranges_.empty() ? 0 : ranges_.back().second; }
  // The end of the first range: the origin's first contiguous run of admitted versions, or 0.
  double prefix() const { return ranges_.empty() ? 0 : ranges_.front().second; }
  bool empty() const { return ranges_.empty(); }
  const std::vector<Range>& list() const { return ranges_; }

 private:
  std::vector<Range> ranges_;
};

// One admitted envelope joins its origin's evidence: true when the first contiguous run grew, in
// which case the origin's settled stamp becomes this envelope's (the caller keeps the stamps).
bool record_admission(VersionRanges& ranges, double version);

}  // namespace tether::room
