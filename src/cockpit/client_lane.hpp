// How a cockpit client's messages are framed on its lane (cockpit-wire-protocol.md § Framing,
// § Transport per leg; v7 notes § Endpoints), shared by the viewer session and the robot session.
// Every message is validated by the wire core before it is framed, so a client never sends what
// the relay would drop.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cockpit/types.hpp"
#include "common/bytes.hpp"
#include "common/drive.hpp"
#include "common/json.hpp"
#include "wire/messages.hpp"

namespace tether::cockpit {

// The canonical text of a message `from` may send, or nullopt when the wire core refuses it.
std::optional<std::string> client_message(const Json& message, wire::Sender from);

// Text the host hands a client core for its events (a transport's reason for closing, say): at
// most this many bytes, and UTF-8 whatever the host passed.
constexpr std::size_t kMaxHostTextBytes = 256;
std::string host_text(std::string_view text);

class ClientLane {
 public:
  void reset(Lane lane) {
    lane_ = lane;
    control_seq_ = 0;
  }
  Lane lane() const { return lane_; }
  // An @control data frame (a WebSocket message, or a robot's one-shot stream on WebTransport),
  // numbered on this connection.
  Bytes control_data_frame(const std::string& json, TimeMs now);
  // A viewer's control-stream message: length-prefixed on WebTransport, an @control data frame on
  // a WebSocket.
  Bytes control_message(const std::string& json, TimeMs now);
  // A datagram: raw JSON on WebTransport, an @control data frame on a WebSocket.
  Bytes datagram(const std::string& json, TimeMs now);

 private:
  Lane lane_ = Lane::webtransport;
  std::uint64_t control_seq_ = 0;
};

}  // namespace tether::cockpit
