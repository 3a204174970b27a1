// The protocol's error codes (cockpit-wire-protocol.md § Sessions and messages) and the local
// reasons a frame or message is refused. Errors are values: nothing in the wire core throws.
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

namespace tether::wire {

// Codes carried by `error {code, message}`.
enum class ErrorCode {
  hello_required,
  version_mismatch,
  role_mismatch,
  missing_robot_id,
  auth_failed,
  invalid_manifest,
  rtc_unavailable,
  hello_mismatch,
  robot_id_conflict,
  invalid_control,
  control_too_large,
  carrier_failed,
  unknown_robot,
  unknown_channel,
  no_watch,
  teleop_held,
  duplicate_request,
  publish_too_large,
  not_publishable,
  pending_limit,
  rate_limited,
  publish_timeout,
  robot_disconnected,
  rtc_failed,
  rtc_session_gone,
};
constexpr std::size_t kErrorCodeCount = 25;

struct ErrorCodeInfo {
  ErrorCode code;
  std::string_view name;
  // The relay closes the session after sending it.
  bool terminal;
  // Reconnecting with the same credentials and manifest cannot succeed; a client should stop and
  // tell its operator (auth_failed "is terminal on both sides").
  bool final_for_client;
  // What the receiver should do about it, for logs and UIs.
  std::string_view fix;
};

const ErrorCodeInfo& error_info(ErrorCode code);
std::optional<ErrorCode> error_code_from_name(std::string_view name);
inline std::string_view error_name(ErrorCode code) {
  return error_info(code).name;
}
inline bool is_terminal(ErrorCode code) {
  return error_info(code).terminal;
}

// Why bytes could not become a frame. A framing error fails its own stream and nothing else.
enum class FrameError {
  header_too_large,   // headerLen over kMaxHeaderBytes
  frame_too_large,    // the whole frame over kMaxFrameBytes
  control_too_large,  // a control message over kMaxControlBytes
  invalid_utf8,
  too_deep,
  invalid_json,
  invalid_header,  // header JSON that is not {ch, seq, ts, delivery, meta?}
  truncated,       // the stream ended or was reset inside a frame
  empty_message,
  trailing_bytes,  // a single-frame buffer with bytes after its frame
};
std::string_view frame_error_name(FrameError e);
// What went wrong and what to do about it, for logs and thrown-away streams.
std::string_view frame_error_text(FrameError e);
constexpr std::size_t kFrameErrorCount = 10;
// The code to send a peer whose stream failed this way.
ErrorCode frame_error_code(FrameError e);

// Why a well-framed message is dropped. A dropped message never ends the session.
enum class DropReason {
  invalid_utf8,
  too_deep,
  invalid_json,
  too_large,
  not_an_object,
  missing_type,
  unknown_type,
  wrong_sender,  // a valid type that this peer may not send
  missing_field,
  unknown_field,
  wrong_type,
  out_of_range,
  reserved_channel,
};
constexpr std::size_t kDropReasonCount = 13;
std::string_view drop_reason_name(DropReason r);

}  // namespace tether::wire
