// The vocabulary the cockpit relay's components share (cockpit-wire-protocol.md § Transport per
// leg): session and stream ids, the two roles and lanes, and the actions the relay asks its host to
// carry out. The components are session.hpp, lease.hpp, delivery.hpp and publish.hpp; relay.hpp
// composes them (docs/cockpit-protocol.md § The relay's structure).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.hpp"
#include "wire/errors.hpp"
#include "wire/frame.hpp"

namespace tether::cockpit {

// The encoding of a WebRTC track channel (§ WebRTC video).
constexpr char kTrackEncoding[] = "video.webrtc.v1";

using SessionId = std::uint64_t;
using StreamId = std::uint64_t;  // relay-assigned; incoming, outgoing and carriers share one space

enum class Role { robot, viewer };
// The transport of a session. Only the bytes of replies differ: a WebTransport viewer gets
// length-prefixed control frames and a robot raw datagrams; over a WebSocket both are @control
// data frames (v7 notes § Endpoints).
enum class Lane { webtransport, websocket };

// Why the relay ends a stream (§ Delivery modes, workaround 12).
enum class StreamEnd {
  expired,  // routine end of life of a latest stream (counted as expired)
  aborted,  // a backpressure reset of a write-wedged latest stream (counted as aborted)
  closing,  // the subscription or the session ended, or a one-shot stream's frame is in
};
constexpr std::size_t kStreamEndCount = 3;
std::string_view stream_end_name(StreamEnd e);

// What the host does. The order of actions is the order they must be carried out in.
enum class ActionKind {
  send_datagram,  // a robot reply (raw JSON on WebTransport)
  write_control,  // a viewer control-stream message (framed for the lane)
  open_carrier,   // the one relay-opened unidirectional stream of a robot session (workaround 3)
  write_carrier,  // one data frame on the carrier; the host reports write_done(stream) when the
                  // write completes and stream_failed(stream) when the carrier fails
  open_stream,    // a relay-to-viewer unidirectional stream; the host reports stream_opened
  write_stream,   // one frame; the host reports write_done when the write completes (writes on
                  // one stream complete in order)
  reset_stream,   // RESET an outgoing stream, or STOP_SENDING an incoming one-shot stream
  close_session,  // after flushing what was queued before it
  // The newest teleop lease generation (`gen`), for a host that can store it (the edge); a relay
  // made later with RelayConfig::lease_gen_floor set to it issues only greater ones. Not tied to
  // a session. Hosts without storage ignore it (the lease's clock seed carries them).
  persist_lease_gen,
  // WebRTC brokering (§ WebRTC video; rtc.hpp): one call of the SFU's HTTPS API, carrying a call
  // token; the host answers with handle_sfu_result(call, result) once the call is done.
  sfu_call,
  sfu_cancel,  // abandon the call named by `call` (its result, if it still comes, is ignored)
  // A fleet split over objects (fleet.hpp, docs/cockpit-fleet.md). handoff: the session belongs
  // in the object of robot `ch`; `bytes` is the ticket the host hands that object
  // (handle_handoff) before anything else the client sends. The session is already released
  // here: the host keeps its transport open for the move, and nothing more is sent on it.
  handoff,
  // This robot object's robot registered (`bytes`: its identity JSON) or left (`null`), for the
  // directory (handle_presence on the directory's core). Not tied to a session.
  presence,
  // The directory's robots list changed: `bytes` (a robots message) goes to every robot object
  // (handle_fleet_robots). Not tied to a session.
  fleet_robots,
};
constexpr std::size_t kActionKindCount = 14;
std::string_view action_kind_name(ActionKind k);

// The SFU calls the relay makes, named as Cloudflare Realtime's client names them
// (web/sfu/client.js `call({op})`).
enum class SfuOp { new_session, new_tracks, renegotiate, close_tracks, generate_ice_servers };
constexpr std::size_t kSfuOpCount = 5;
std::string_view sfu_op_name(SfuOp op);

using SharedBytes = std::shared_ptr<const Bytes>;  // one frame fanned out to many viewers
inline SharedBytes share(Bytes b) {
  return std::make_shared<const Bytes>(std::move(b));
}

struct CockpitAction {
  ActionKind kind;
  SessionId session = 0;
  StreamId stream = 0;  // open_carrier, write_carrier, open_stream, write_stream, reset_stream
  SharedBytes bytes;
  // open_stream: the channel, its mode and a sendOrder that decreases with every stream opened
  // (workaround 7).
  std::string ch;
  wire::Delivery delivery = wire::Delivery::latest;
  std::int64_t send_order = 0;
  StreamEnd end = StreamEnd::closing;  // reset_stream
  std::uint64_t gen = 0;               // persist_lease_gen
  // A pong: where it sits in its socket's queue marks what the client's next ping acknowledges.
  bool ack_mark = false;
  // close_session: the error sent just before (absent for a plain close) and a reason for logs
  // and the WebTransport close.
  std::optional<wire::ErrorCode> code;
  std::string reason;
  // sfu_call and sfu_cancel: the call's token. sfu_call also names the operation, the SFU session
  // it is about (empty for a new session and for TURN credentials), and carries its JSON body in
  // `bytes`; `session` is the relay session it is made for (0 for TURN).
  std::uint64_t call = 0;
  SfuOp op = SfuOp::new_session;
  std::string sfu_session;
};

// Per robot and channel (§ Workaround 12 for expired and aborted).
struct ChannelCounters {
  std::uint64_t sent = 0;     // frames whose bytes were handed to a viewer stream write
  std::uint64_t dropped = 0;  // frames a viewer never got: superseded, stale by seq, overflow
  std::uint64_t expired = 0;  // latest streams reset at routine end of life
  std::uint64_t aborted = 0;  // latest streams reset under backpressure
};

}  // namespace tether::cockpit
