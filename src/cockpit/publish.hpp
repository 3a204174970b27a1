// The relay's publish component (cockpit-wire-v7-notes.md § Publishing): a viewer's tx frame on a
// `publish: true` channel goes to the robot's carrier under a relay-assigned request id, and the
// robot's pub_ack or pub_nack goes back to the publisher. Refusals (not_publishable, scopes,
// publish_too_large, duplicate_request, pending_limit, rate_limited) and deadlines
// (publish_timeout, robot_disconnected) live here, with the bounded reader of a viewer's one-shot
// streams, which refuses an oversized publish before buffering its payload.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "cockpit/outbox.hpp"
#include "cockpit/session.hpp"
#include "common/bytes.hpp"
#include "common/drive.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"

namespace tether::cockpit {

// The spec names the errors; this project sets the numbers.
constexpr std::size_t kMaxPendingPublishes = 8;  // unanswered publishes per viewer
constexpr TimeMs kPublishTimeoutMs = 5000;       // the robot's answer deadline
constexpr double kPublishRatePerSecond = 20;     // token bucket refill per viewer
constexpr double kPublishBurst = 20;             // token bucket size

// Reads the one frame of a viewer's one-shot stream: a publish, bounded by wire::kMaxPublishBytes
// before its payload is buffered, or an @control message.
class ViewerStreamReader {
 public:
  enum class Status { more, frame, too_large, failed };
  struct Step {
    Status status = Status::more;
    wire::DataFrame frame;                    // Status::frame: views into this reader's buffer
    std::optional<wire::FrameHeader> header;  // Status::too_large: the refused publish's header
    wire::FrameError error = wire::FrameError::invalid_header;  // Status::failed
  };
  // Feeds bytes; stops at the first frame, a refusal or a failure (the stream is one-shot, so
  // whatever follows is never read).
  Step feed(ByteView chunk);
  bool partial() const { return !buf_.empty(); }

 private:
  Bytes buf_;
  Bytes frame_;  // the complete frame the last Status::frame views
};

class Publish {
 public:
  // A viewer's tx frame on a channel that is not reserved. `robot` is the robot it watches, when
  // connected.
  void on_publish(Session& viewer, Robot* robot, const wire::DataFrame& f, Sessions& sessions,
                  Outbox& out, TimeMs now);
  // A publish refused before its payload was read.
  void too_large(Session& viewer, const wire::FrameHeader& h, Outbox& out);
  // pub_ack or pub_nack from a robot, mapped back to the publisher.
  void on_answer(const Session& robot, const wire::Message& m, Sessions& sessions, Outbox& out);
  // The robot left: its unanswered publishes can never be answered now.
  void robot_left(SessionId robot, Sessions& sessions, Outbox& out);
  void viewer_left(SessionId viewer);

  Timeout poll_timeout() const;
  void handle_timeout(TimeMs now, Sessions& sessions, Outbox& out);

 private:
  struct Pending {
    SessionId viewer;
    std::string ch;
    std::string viewer_id;
  };
  struct RobotPublishes {
    std::uint64_t next_request = 0;
    std::map<std::string, Pending> pending;  // relay request id ->
  };
  struct ViewerPublishes {
    std::map<std::string, std::string> pending;  // viewer request id -> relay request id
    double tokens = kPublishBurst;
    TimeMs tokens_ms = 0;
  };
  struct Deadline {
    TimeMs at;
    SessionId robot;
    std::string relay_id;
  };
  void nack(Session& viewer, const std::string& ch, const std::string& id, wire::ErrorCode code,
            const std::string& message, Outbox& out);
  // Drops answered requests from the front, so the front is a live deadline.
  void trim();

  std::unordered_map<SessionId, RobotPublishes> robots_;
  std::unordered_map<SessionId, ViewerPublishes> viewers_;
  // Every unanswered publish by deadline; one constant timeout keeps it in order.
  std::deque<Deadline> deadlines_;
};

}  // namespace tether::cockpit
