// The one way every core is driven (docs/design.md § Driving a core). quinn-proto's Connection is
// the model: the host feeds inputs in, then polls what to do, one item at a time, until nothing is
// left; then it asks when the core next wants the clock.
//
//   core.handle_<input>(..., now_ms);          bytes, a message, a transport event, or the result
//                                              of an action the host carried out
//   while (auto a = core.poll_action()) ...    what to send, open, close, persist or call, in order
//                                              (a core with only transmits names it poll_transmit)
//   while (auto e = core.poll_event()) ...     what the application should learn
//   if (auto t = core.poll_timeout()) ...      the absolute time (ms) to call handle_timeout(now_ms),
//                                              or nullopt: no timer
//
// Rules every core keeps:
//  - Time is a TimeMs (milliseconds, int64) passed in; a core never reads a clock.
//  - Nothing calls back into the host in the middle of a call. A decision the host owns (a policy
//    verdict, a durable write, an HTTP call) is an action; its answer comes back as a handle_*
//    input, carrying the token the action named.
//  - poll_timeout() is cheap and idempotent. A handle_timeout(now) before the deadline is harmless.
//  - Polling is the only way output leaves a core, so the same inputs give the same outputs.
#pragma once
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

namespace tether {

using TimeMs = std::int64_t;
// When a core next wants handle_timeout: an absolute TimeMs, or nullopt for never.
using Timeout = std::optional<TimeMs>;

// The earlier of two deadlines, either of which may be absent.
inline Timeout earliest(Timeout a, Timeout b) {
  if (!a) return b;
  if (!b) return a;
  return *a < *b ? a : b;
}

// A FIFO of output items behind poll_action / poll_event: push while handling an input, pop one
// per poll. Items leave in the order they were pushed.
template <class Item>
class PollQueue {
 public:
  void push(Item item) { items_.push_back(std::move(item)); }
  template <class... Args>
  Item& emplace(Args&&... args) {
    return items_.emplace_back(std::forward<Args>(args)...);
  }
  std::optional<Item> poll() {
    if (items_.empty()) return std::nullopt;
    std::optional<Item> out(std::move(items_.front()));
    items_.pop_front();
    return out;
  }
  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size(); }
  void clear() { items_.clear(); }

 private:
  std::deque<Item> items_;
};

}  // namespace tether
