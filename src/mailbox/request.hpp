// The mailbox HTTP API's request parser (docs/mailbox.md § API): method, target (path and query),
// the Authorization header and the body in; a typed request or a documented error out. Pure and
// bounded: it is the libFuzzer target (tests/fuzz/fuzz_mailbox_request.cpp), and both hosts' front
// doors call parse_route so they pick a mailbox without reading anything into JS.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.hpp"
#include "common/result.hpp"
#include "mailbox/errors.hpp"
#include "mailbox/limits.hpp"

namespace tether::mailbox {

// A message's delivery status, as the sender sees it. It only moves forward.
enum class Status { stored, delivered, read, expired };
std::string_view status_name(Status s);
std::optional<Status> status_from_name(std::string_view name);

enum class Route {
  create,       // POST   /mailboxes
  info,         // GET    /mailboxes/<id>
  issue_code,   // POST   /mailboxes/<id>/codes
  pair,         // POST   /mailboxes/<id>/pairs               {name, code?}
  list_pairs,   // GET    /mailboxes/<id>/pairs
  accept_pair,  // POST   /mailboxes/<id>/pairs/<pair>/accept
  unpair,       // DELETE /mailboxes/<id>/pairs/<pair>
  send,         // POST   /mailboxes/<id>/messages            {id, text}
  list,         // GET    /mailboxes/<id>/messages?since=N&limit=M
  ack,          // POST   /mailboxes/<id>/ack                 {seqs, status}
  status,       // GET    /mailboxes/<id>/status/<message id>
  stream,       // GET    /mailboxes/<id>/stream?since=N      (WebSocket)
};
std::string_view route_name(Route r);

// Where a request goes: enough for a host to choose the mailbox (a Durable Object, a loaded core).
struct RouteInfo {
  Route route = Route::create;
  std::string mailbox;     // 32 lowercase hex characters; empty for create
  std::string pair;        // accept_pair, unpair
  std::string message_id;  // status (percent-decoded)
  std::string query;       // the raw query, parsed by parse_request
};

enum class KeyKind { none, owner, sender, malformed };
struct Credential {
  KeyKind kind = KeyKind::none;
  std::string key;  // the whole key text, only for owner and sender kinds
};

struct ApiRequest {
  RouteInfo where;
  Credential auth;
  std::string name;                       // pair
  std::string code;                       // pair (empty: a pair request the owner must accept)
  std::string id;                         // send: the sender's idempotency id
  std::string text;                       // send
  std::int64_t since = 0;                 // list, stream
  std::size_t limit = kMaxListCount;      // list
  std::vector<std::int64_t> seqs;         // ack
  Status ack_status = Status::delivered;  // ack
};

// The key prefixes tell owner keys, sender keys and pairing codes apart at a glance (and let an
// error say which one was sent where the other was needed).
constexpr std::string_view kOwnerKeyPrefix = "mbo_";
constexpr std::string_view kSenderKeyPrefix = "mbs_";
constexpr std::string_view kCodePrefix = "mbc_";

// Path only (no body): the route and its ids, or not_found, method_not_allowed, unknown_mailbox.
Result<RouteInfo, ApiError> parse_route(std::string_view method, std::string_view target);

// The front door's whole decision before any body is read: parse_route, then the declared body
// length (-1: not declared) against kMaxRequestBytes, then the stream route's upgrade.
Result<RouteInfo, ApiError> front_door(std::string_view method, std::string_view target,
                                       std::int64_t content_length, bool websocket_upgrade);

// Everything: the route, the credential, the query and the body.
Result<ApiRequest, ApiError> parse_request(std::string_view method, std::string_view target,
                                           std::string_view authorization, ByteView body);

Credential parse_authorization(std::string_view header);

// The mailbox id a create request makes from its entropy: hex of the first kMailboxIdBytes bytes.
// Hosts call it to choose where the new mailbox lives; the core makes the same id from the same
// bytes. Empty when there are too few bytes.
std::string mailbox_id_for(ByteView entropy);

bool is_mailbox_id(std::string_view s);
bool is_pair_id(std::string_view s);

}  // namespace tether::mailbox
