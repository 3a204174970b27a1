// The relay's output, shared by its components: the one queue of actions behind poll_action, the
// encoding of a message for a session's reply lane (§ Transport per leg; v7 notes § Endpoints),
// and the id spaces actions name (streams, sendOrder). Components push here; nothing else leaves.
#pragma once
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "cockpit/types.hpp"
#include "common/drive.hpp"
#include "common/json.hpp"

namespace tether::cockpit {

// Error text in a reply datagram to a robot, so the datagram stays under Chromium's 1211 bytes.
constexpr std::size_t kMaxDatagramErrorTextBytes = 900;

// `error {code, message}` with the message cut on a code point to at most `cap` bytes.
Json error_message(wire::ErrorCode code, std::string_view message, std::size_t cap);

// Where a session's replies go and how they are framed.
struct Endpoint {
  SessionId id = 0;
  Role role = Role::viewer;
  Lane lane = Lane::webtransport;
  std::uint64_t out_seq = 0;  // @control frames sent to it over a WebSocket
};

class Outbox {
 public:
  std::optional<CockpitAction> poll() {
    if (queue_.empty()) return std::nullopt;
    std::optional<CockpitAction> a(std::move(queue_.front()));
    queue_.pop_front();
    return a;
  }
  bool empty() const { return queue_.empty(); }
  // The actions not yet polled, the next poll's first (the relay's window count reads them).
  std::size_t size() const { return queue_.size(); }
  const CockpitAction& queued(std::size_t i) const { return queue_[i]; }
  CockpitAction& push(ActionKind kind, SessionId session, StreamId stream = 0);

  // A JSON message on the endpoint's reply lane: a datagram to a robot, the control stream to a
  // viewer, an @control data frame to either over a WebSocket. The action, or nullptr when the
  // message could not be framed (it stays valid until polled).
  CockpitAction* send(Endpoint& to, const Json& message);
  // `error {code, message}`, the message cut on a code point to fit the lane.
  void send_error(Endpoint& to, wire::ErrorCode code, std::string_view message);
  void close(SessionId session, std::optional<wire::ErrorCode> code, std::string reason);
  void reset(SessionId session, StreamId stream, StreamEnd why);

  StreamId new_stream() { return ++next_stream_; }
  // Decreases with every stream opened, so the newest stream goes first (workaround 7).
  std::int64_t next_send_order() { return --send_order_; }

 private:
  std::deque<CockpitAction> queue_;  // a PollQueue (common/drive.hpp) that can be read ahead
  StreamId next_stream_ = 0;
  std::int64_t send_order_ = 0;
};

}  // namespace tether::cockpit
