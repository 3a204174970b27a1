#include "mailbox/errors.hpp"

#include "common/json.hpp"

namespace tether::mailbox {
namespace {

struct Entry {
  ErrorCode code;
  const char* name;
  int status;
  const char* fix;
};

// One table: a code added without its name, status and fix fails the static_assert below.
constexpr Entry kTable[] = {
    {ErrorCode::bad_request, "bad_request", 400,
     "fix the request as the message says; docs/mailbox.md lists every route and its body"},
    {ErrorCode::bad_key, "bad_key", 401,
     "send `Authorization: Bearer <key>`: the owner key from create for owner routes, the sender "
     "key from pairing for send and status"},
    {ErrorCode::unpaired_sender, "unpaired_sender", 403,
     "pair first: redeem a pairing code from the owner (POST /mailboxes/<id>/pairs with "
     "{\"name\",\"code\"}), or send a pair request and wait for the owner to accept it"},
    {ErrorCode::bad_code, "bad_code", 403,
     "ask the owner for a new pairing code (POST /mailboxes/<id>/codes); a code works once, "
     "within a day"},
    {ErrorCode::not_found, "not_found", 404,
     "use one of the routes in docs/mailbox.md, e.g. POST /mailboxes or GET "
     "/mailboxes/<id>/messages"},
    {ErrorCode::unknown_mailbox, "unknown_mailbox", 404,
     "check the mailbox id (32 hex characters, from create); create one with POST /mailboxes"},
    {ErrorCode::unknown_pair, "unknown_pair", 404,
     "list the pairings with GET /mailboxes/<id>/pairs and use a pair id from there"},
    {ErrorCode::unknown_message, "unknown_message", 404,
     "check the message id you sent; status is kept for 14 days after a message was stored"},
    {ErrorCode::method_not_allowed, "method_not_allowed", 405,
     "use the method docs/mailbox.md gives for this route"},
    {ErrorCode::id_conflict, "id_conflict", 409,
     "a message id names one text: resend the same text, or send the new text with a new id"},
    {ErrorCode::mailbox_exists, "mailbox_exists", 409, "create again: a new mailbox gets a new id"},
    {ErrorCode::oversize, "oversize", 413,
     "split the text into several messages, or send a link to it"},
    {ErrorCode::upgrade_required, "upgrade_required", 426,
     "open the stream as a WebSocket (Upgrade: websocket), or poll GET /mailboxes/<id>/messages"},
    {ErrorCode::flood, "flood", 429, "slow down: wait retryAfterMs, then send again"},
    {ErrorCode::too_many_pairs, "too_many_pairs", 429,
     "revoke pairings you no longer need (DELETE /mailboxes/<id>/pairs/<pair>), or wait for open "
     "codes and requests to lapse (one day)"},
    {ErrorCode::too_many_readers, "too_many_readers", 429,
     "close a reader you no longer need; each mailbox pushes to a bounded number of readers"},
    {ErrorCode::storage_failed, "storage_failed", 503,
     "retry: the write did not reach storage and nothing was changed"},
    {ErrorCode::busy, "busy", 503,
     "retry after retryAfterMs: earlier writes are still being stored"},
    {ErrorCode::mailbox_full, "mailbox_full", 507,
     "the owner must read messages (POST /mailboxes/<id>/ack with status read) to make room; "
     "unread text also leaves after seven days"},
    {ErrorCode::internal, "internal", 500, "report this: the mailbox host broke its contract"},
};
static_assert(sizeof(kTable) / sizeof(kTable[0]) == kErrorCodeCount, "one row per ErrorCode");

const Entry& entry(ErrorCode code) {
  for (const Entry& e : kTable) {
    if (e.code == code) return e;
  }
  return kTable[kErrorCodeCount - 1];
}

}  // namespace

std::string_view error_name(ErrorCode code) {
  return entry(code).name;
}
int error_status(ErrorCode code) {
  return entry(code).status;
}
std::string_view error_fix(ErrorCode code) {
  return entry(code).fix;
}

std::string shown(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  constexpr std::size_t kMax = 64;
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size() && i < kMax; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (s.size() > kMax) out += "...";
  out += '"';
  return out;
}

std::string error_body(const ApiError& e) {
  std::string out = "{\"ok\":false,\"error\":";
  append_json_string(out, error_name(e.code));
  out += ",\"message\":";
  append_json_string(out, e.message);
  out += ",\"fix\":";
  append_json_string(out, error_fix(e.code));
  if (e.limit >= 0) {
    out += ",\"limit\":";
    out += std::to_string(e.limit);
  }
  if (e.retry_after_ms >= 0) {
    out += ",\"retryAfterMs\":";
    out += std::to_string(e.retry_after_ms);
  }
  out += '}';
  return out;
}

}  // namespace tether::mailbox
