#include "wire/errors.hpp"

#include <array>

namespace tether::wire {
namespace {

using E = ErrorCode;
constexpr std::array<ErrorCodeInfo, kErrorCodeCount> kErrors = {{
    {E::hello_required, "hello_required", true, false, "send hello first on every session"},
    {E::version_mismatch, "version_mismatch", true, true,
     "upgrade the client to protocol v7; there is no compatibility mode"},
    {E::role_mismatch, "role_mismatch", true, true,
     "robots connect to /robot and viewers to /viewer, with the matching hello role"},
    {E::missing_robot_id, "missing_robot_id", true, true,
     "a robot hello needs robot {id, name, model}"},
    {E::auth_failed, "auth_failed", true, true,
     "use a token listed in the relay's auth file; do not retry with the same token"},
    {E::invalid_manifest, "invalid_manifest", true, true,
     "fix the manifest; the error message names the field"},
    {E::rtc_unavailable, "rtc_unavailable", true, true,
     "start the relay with an SFU configuration, or drop the track channels"},
    {E::hello_mismatch, "hello_mismatch", true, false,
     "a repeated hello must carry the same identity and manifest; reconnect to change them"},
    {E::robot_id_conflict, "robot_id_conflict", true, false,
     "another robot holds this id; stop it or pick another id"},
    {E::invalid_control, "invalid_control", false, false,
     "the message was dropped; check it against the v7 message shapes"},
    {E::control_too_large, "control_too_large", true, false, "control messages are at most 64 KiB"},
    {E::carrier_failed, "carrier_failed", true, false,
     "the robot's carrier stream failed; reconnect to re-register"},
    {E::unknown_robot, "unknown_robot", false, false, "watch a robot from the robots list"},
    {E::unknown_channel, "unknown_channel", false, false,
     "subscribe only to channels in the watched robot's manifest"},
    {E::no_watch, "no_watch", false, false, "watch a robot before subscribing"},
    {E::teleop_held, "teleop_held", false, false,
     "another viewer holds the teleop lease; wait for it to be released"},
    {E::duplicate_request, "duplicate_request", false, false, "use a fresh request id"},
    {E::publish_too_large, "publish_too_large", false, false,
     "published values are at most 32 KiB"},
    {E::not_publishable, "not_publishable", false, false,
     "publish only on manifest channels with dir tx and publish: true"},
    {E::pending_limit, "pending_limit", false, false,
     "wait for pub_ack or pub_nack before publishing more"},
    {E::rate_limited, "rate_limited", false, false, "publish less often"},
    {E::publish_timeout, "publish_timeout", false, false,
     "the robot did not answer in time; retry with a new request id"},
    {E::robot_disconnected, "robot_disconnected", false, false,
     "the robot left; watch it again when it returns"},
    {E::rtc_failed, "rtc_failed", false, false, "the relay retries the SFU call with backoff"},
    {E::rtc_session_gone, "rtc_session_gone", false, false,
     "the SFU session is gone; send a new rtc_offer"},
}};

}  // namespace

const ErrorCodeInfo& error_info(ErrorCode code) {
  return kErrors[static_cast<std::size_t>(code)];
}

std::optional<ErrorCode> error_code_from_name(std::string_view name) {
  for (const auto& e : kErrors) {
    if (e.name == name) return e.code;
  }
  return std::nullopt;
}

std::string_view frame_error_name(FrameError e) {
  switch (e) {
    case FrameError::header_too_large: return "header_too_large";
    case FrameError::frame_too_large: return "frame_too_large";
    case FrameError::control_too_large: return "control_too_large";
    case FrameError::invalid_utf8: return "invalid_utf8";
    case FrameError::too_deep: return "too_deep";
    case FrameError::invalid_json: return "invalid_json";
    case FrameError::invalid_header: return "invalid_header";
    case FrameError::truncated: return "truncated";
    case FrameError::empty_message: return "empty_message";
    case FrameError::trailing_bytes: return "trailing_bytes";
  }
  return "invalid_header";
}

std::string_view frame_error_text(FrameError e) {
  switch (e) {
    case FrameError::header_too_large:
      return "the header is over 64 KiB; move bulk data into the payload";
    case FrameError::frame_too_large: return "the frame is over 64 MiB; split the payload";
    case FrameError::control_too_large: return "a control message is at most 64 KiB";
    case FrameError::invalid_utf8: return "the header is not valid UTF-8";
    case FrameError::too_deep: return "the header JSON nests deeper than 64 levels";
    case FrameError::invalid_json: return "the header is not valid JSON";
    case FrameError::invalid_header:
      return "the header must be {ch, seq, ts, delivery, meta?}: ch 1..64 characters, seq an "
             "integer 0..2^53-1, ts a finite number, delivery \"latest\" or \"reliable\", meta "
             "an object";
    case FrameError::truncated:
      return "the stream ended inside a frame; the partial frame was dropped";
    case FrameError::empty_message: return "a control message cannot be empty";
    case FrameError::trailing_bytes:
      return "the buffer holds bytes after its one frame; decode several with a stream decoder";
  }
  return "invalid frame";
}

ErrorCode frame_error_code(FrameError e) {
  return e == FrameError::control_too_large ? ErrorCode::control_too_large
                                            : ErrorCode::invalid_control;
}

std::string_view drop_reason_name(DropReason r) {
  switch (r) {
    case DropReason::invalid_utf8: return "invalid_utf8";
    case DropReason::too_deep: return "too_deep";
    case DropReason::invalid_json: return "invalid_json";
    case DropReason::too_large: return "too_large";
    case DropReason::not_an_object: return "not_an_object";
    case DropReason::missing_type: return "missing_type";
    case DropReason::unknown_type: return "unknown_type";
    case DropReason::wrong_sender: return "wrong_sender";
    case DropReason::missing_field: return "missing_field";
    case DropReason::unknown_field: return "unknown_field";
    case DropReason::wrong_type: return "wrong_type";
    case DropReason::out_of_range: return "out_of_range";
    case DropReason::reserved_channel: return "reserved_channel";
  }
  return "invalid_json";
}

}  // namespace tether::wire
