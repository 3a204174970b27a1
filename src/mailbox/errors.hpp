// The hosted mailbox's documented error codes (docs/mailbox.md § Errors). Every refusal is a value:
// a code with its HTTP status, what went wrong, and what to do about it. The JSON body the hosts
// send is written here too, so both hosts answer byte for byte alike and JS never builds one.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "common/drive.hpp"

namespace tether::mailbox {

enum class ErrorCode {
  bad_request,         // 400: malformed JSON, a missing or unknown field, a bad query value
  bad_key,             // 401: no key, a malformed key, a key this mailbox does not know
  unpaired_sender,     // 403: no sender key, a pairing still pending, or one the owner revoked
  bad_code,            // 403: a pairing code that is unknown, used or expired
  not_found,           // 404: no such route
  unknown_mailbox,     // 404: no mailbox has this id
  unknown_pair,        // 404: no pairing has this id
  unknown_message,     // 404: this sender sent no message with this id (or it was forgotten)
  method_not_allowed,  // 405
  id_conflict,         // 409: a message id reused for different text
  mailbox_exists,      // 409
  oversize,            // 413: a request body or a message text over its limit
  upgrade_required,    // 426: the stream route takes a WebSocket upgrade
  flood,               // 429: this sender is sending faster than its bound
  too_many_pairs,      // 429: pairings, pair requests or codes at their limit
  too_many_readers,    // 429
  storage_failed,      // 503: a write did not reach storage; nothing was changed
  busy,                // 503: responses are waiting for storage
  mailbox_full,        // 507: the mailbox's message count or bytes are at their limit
  internal,            // 500: the host broke the contract (too little entropy)
};
constexpr int kErrorCodeCount = 20;

std::string_view error_name(ErrorCode code);
int error_status(ErrorCode code);
// The standing advice for a code: what the caller can do.
std::string_view error_fix(ErrorCode code);

struct ApiError {
  ErrorCode code = ErrorCode::bad_request;
  std::string message;         // what went wrong, with the specifics
  std::int64_t limit = -1;     // the bound that was hit, when one was
  TimeMs retry_after_ms = -1;  // when trying again can succeed (flood, busy)
};

inline ApiError api_error(ErrorCode code, std::string message, std::int64_t limit = -1) {
  return ApiError{code, std::move(message), limit, -1};
}

// {"ok":false,"error":"<code>","message":"...","fix":"...",["limit":n,]["retryAfterMs":n]}
std::string error_body(const ApiError& e);

// Client text quoted for a message: at most 64 bytes, printable ASCII kept, every other byte
// written as \xNN, so a message never carries invalid UTF-8 or control characters back.
std::string shown(std::string_view client_text);

}  // namespace tether::mailbox
