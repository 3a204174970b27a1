// Read acknowledgements on the room wire (docs/rooms.md § The slow-reader rule): how a reader
// tells the relay what it has read, so that a host with no bufferedAmount (workerd) bounds each
// socket's queue by size instead of by an assumed pace.
//
// Both ends count the UTF-8 bytes of every frame on one socket, from its first frame. A *mark* is
// the end of a frame whose count crosses a multiple of the interval the relay advertised in its
// welcome (`readAck`). A reader acknowledges exactly at marks ({"t":"read","room","bytes"}), and
// the relay credits only a count that is one of the marks it handed that socket: the count
// cannot be guessed without reading every frame up to it (the cockpit lane's pong marks,
// docs/cockpit-protocol.md § The slow-reader rule on a WebSocket, in the room wire's shape).
// `bytes: 0` is the claim: the reader acknowledges from now on, so the relay holds it to that.
//
// The relay side lives in room/admission.hpp (it sees every frame sent); the reader side is
// ReadCounter, run by the room client and the room member.
#pragma once
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

namespace tether::room {

// The welcome field that advertises acknowledgements, and the message that carries one.
constexpr std::string_view kReadAckField = "readAck";
constexpr std::string_view kReadMessageType = "read";
// The interval a reader accepts from a welcome: below it a hostile relay could make a reader
// acknowledge every small frame; above it the count leaves the integers a double holds exactly.
constexpr double kMinReadAckBytes = 1024;
constexpr double kMaxReadAckBytes = 1ull << 40;
// The largest count a `read` may carry (2^53 - 1, JSON's safe integers).
constexpr double kMaxReadCount = 9007199254740991.0;

// True when a frame that moved the count from `before` to `after` ends at a mark.
inline bool crosses_mark(double before, double after, double every) {
  return every > 0 && std::floor(after / every) > std::floor(before / every);
}

// A valid `bytes` of a read message: a non-negative integer within JSON's safe range.
inline bool read_count_valid(double n) {
  return n >= 0 && n <= kMaxReadCount && std::floor(n) == n;
}

// {"t":"read","room":<room_json>,"bytes":n}; room_json is the room name as JSON text, n a valid
// count (read_count_valid).
inline std::string read_message(std::string_view room_json, double bytes) {
  std::string out = "{\"t\":\"read\",\"room\":";
  out += room_json;
  out += ",\"bytes\":";
  out += std::to_string(static_cast<unsigned long long>(bytes));
  out += '}';
  return out;
}

// The reader's side, per socket.
class ReadCounter {
 public:
  // A new socket: the count starts again and nothing is claimed on it.
  void reset() { *this = ReadCounter(); }
  // One frame of `bytes` UTF-8 bytes was read (before it is parsed).
  void frame(double bytes) {
    before_ = count_;
    count_ += bytes;
  }
  // The frame just read was a welcome advertising `every` (not a number: absent). An interval
  // outside [kMinReadAckBytes, kMaxReadAckBytes] or not an integer is ignored.
  void advertised(double every) {
    if (every >= kMinReadAckBytes && every <= kMaxReadAckBytes && std::floor(every) == every)
      every_ = every;
  }
  // After the frame just read: the count to acknowledge, if any. The frame ended at a mark, or
  // it is the first frame since the relay advertised acknowledgements (the claim: 0).
  std::optional<double> take() {
    if (every_ <= 0) return std::nullopt;
    if (crosses_mark(before_, count_, every_)) {
      claimed_ = true;
      return count_;
    }
    if (claimed_) return std::nullopt;
    claimed_ = true;
    return 0.0;
  }
  double count() const { return count_; }
  double every() const { return every_; }

 private:
  double count_ = 0;
  double before_ = 0;
  double every_ = 0;  // 0: the relay never asked (a drop-in relay): never acknowledge
  bool claimed_ = false;
};

}  // namespace tether::room
