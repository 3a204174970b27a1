// Acknowledgement marks: how a relay that cannot see what its socket holds (workerd has no
// bufferedAmount) learns what a reader has really read. The relay records a mark (a byte count
// on that socket) where it hands the reader something the reader acknowledges; the reader's
// acknowledgement counts only when it names one of the recorded marks exactly, so it cannot be
// guessed without reading every byte up to it. Used by the cockpit relay's WebSocket lane (marks
// where pongs end, docs/cockpit-protocol.md § The slow-reader rule on a WebSocket) and by the room
// admission core (marks at read-ack intervals, docs/rooms.md § The slow-reader rule).
#pragma once
#include <algorithm>
#include <cstddef>
#include <deque>

namespace tether {

template <typename Count, std::size_t kMaxMarks>
class AckMarks {
 public:
  // A mark at `at`; past kMaxMarks the oldest is forgotten (a reader that far behind names a
  // newer one, or is closed by the bound its host enforces).
  void record(Count at) {
    marks_.push_back(at);
    if (marks_.size() > kMaxMarks) marks_.pop_front();
  }
  // True when `n` is an outstanding mark: it and every older mark are spent.
  bool credit(Count n) {
    auto it = std::find(marks_.begin(), marks_.end(), n);
    if (it == marks_.end()) return false;
    marks_.erase(marks_.begin(), it + 1);
    return true;
  }
  bool empty() const { return marks_.empty(); }
  // The outstanding marks, oldest first (what a host keeps to restore them with record()).
  template <typename F>
  void each(F f) const {
    for (const Count& m : marks_) f(m);
  }
  Count newest() const { return marks_.back(); }

 private:
  std::deque<Count> marks_;  // oldest first, at most kMaxMarks
};

}  // namespace tether
