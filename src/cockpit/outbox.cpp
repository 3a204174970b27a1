#include "cockpit/outbox.hpp"

#include <algorithm>

#include "wire/limits.hpp"

namespace tether::cockpit {

std::string_view stream_end_name(StreamEnd e) {
  switch (e) {
    case StreamEnd::expired: return "expired";
    case StreamEnd::aborted: return "aborted";
    case StreamEnd::closing: return "closing";
  }
  return "closing";
}

std::string_view action_kind_name(ActionKind k) {
  switch (k) {
    case ActionKind::send_datagram: return "send_datagram";
    case ActionKind::write_control: return "write_control";
    case ActionKind::open_carrier: return "open_carrier";
    case ActionKind::write_carrier: return "write_carrier";
    case ActionKind::open_stream: return "open_stream";
    case ActionKind::write_stream: return "write_stream";
    case ActionKind::reset_stream: return "reset_stream";
    case ActionKind::close_session: return "close_session";
    case ActionKind::persist_lease_gen: return "persist_lease_gen";
    case ActionKind::sfu_call: return "sfu_call";
    case ActionKind::sfu_cancel: return "sfu_cancel";
    case ActionKind::handoff: return "handoff";
    case ActionKind::presence: return "presence";
    case ActionKind::fleet_robots: return "fleet_robots";
  }
  return "close_session";
}

std::string_view sfu_op_name(SfuOp op) {
  switch (op) {
    case SfuOp::new_session: return "newSession";
    case SfuOp::new_tracks: return "newTracks";
    case SfuOp::renegotiate: return "renegotiate";
    case SfuOp::close_tracks: return "closeTracks";
    case SfuOp::generate_ice_servers: return "generateIceServers";
  }
  return "newSession";
}

CockpitAction& Outbox::push(ActionKind kind, SessionId session, StreamId stream) {
  CockpitAction& a = queue_.emplace_back();
  a.kind = kind;
  a.session = session;
  a.stream = stream;
  return a;
}

CockpitAction* Outbox::send(Endpoint& to, const Json& message) {
  const std::string text = to_json(message);
  Bytes out;
  if (to.lane == Lane::websocket) {
    wire::FrameHeader h;
    h.ch = wire::kControlChannel;
    h.seq = std::int64_t(to.out_seq++);
    h.delivery = wire::Delivery::reliable;
    if (wire::append_data_frame(out, h, ByteView(std::string_view(text)))) return nullptr;
  } else if (to.role == Role::robot) {
    append(out, text);
  } else if (wire::append_control_frame(out, text)) {
    return nullptr;
  }
  CockpitAction& a =
      push(to.role == Role::robot ? ActionKind::send_datagram : ActionKind::write_control, to.id);
  a.bytes = share(std::move(out));
  return &a;
}

Json error_message(wire::ErrorCode code, std::string_view message, std::size_t cap) {
  Json m = Json::object();
  m["t"] = "error";
  m["code"] = std::string(wire::error_name(code));
  std::size_t n = std::min(message.size(), cap);
  while (n > 0 && n < message.size() && (std::uint8_t(message[n]) & 0xC0) == 0x80) --n;
  m["message"] = std::string(message.substr(0, n));
  return m;
}

void Outbox::send_error(Endpoint& to, wire::ErrorCode code, std::string_view message) {
  // A robot's replies are datagrams (workaround 3): keep them under the smallest datagram size.
  const std::size_t cap = to.role == Role::robot && to.lane == Lane::webtransport
                              ? kMaxDatagramErrorTextBytes
                              : wire::kMaxMessageTextChars;
  send(to, error_message(code, message, cap));
}

void Outbox::close(SessionId session, std::optional<wire::ErrorCode> code, std::string reason) {
  CockpitAction& a = push(ActionKind::close_session, session);
  a.code = code;
  a.reason = std::move(reason);
}

void Outbox::reset(SessionId session, StreamId stream, StreamEnd why) {
  push(ActionKind::reset_stream, session, stream).end = why;
}

}  // namespace tether::cockpit
