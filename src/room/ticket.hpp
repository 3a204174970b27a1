// Signed connection tickets (the room-relay spec, "Trust": the relay never mints identity). A
// server that knows who the user is mints a short-lived ticket; the room endpoint checks it before
// any WebSocket exists and takes writer and kind from it, never from the client's messages.
// web/edge/tickets.js is this codec in JS (through the bindings); fixtures/room/tickets.json pins
// its bytes and verdicts in both suites.
//
// Format: `t1.<payload>.<mac>`, both base64url without padding. payload is the UTF-8 JSON
// {"w": writer, "k": "human"|"agent", "r": room, "exp": unix seconds}; mac is
// HMAC-SHA256(secret, "t1." + payload). The room is part of the signed payload, so a ticket for
// one room opens no other.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/drive.hpp"

namespace tether::room {

constexpr std::string_view kTicketVersion = "t1";
// Longest ticket accepted: checked before any decoding or crypto.
constexpr std::size_t kMaxTicketChars = 2048;
// Shortest secret accepted (in characters, as JS counts them): an HMAC key should carry 256 bits.
constexpr std::size_t kMinSecretChars = 32;
// Longest lifetime a minted ticket may have: tickets are for connecting, not sessions.
constexpr double kMaxTicketTtlSeconds = 24 * 3600;
constexpr double kDefaultTicketTtlSeconds = 300;
// writer and room: the relay's own id bound (limits.hpp kMaxIdBytes / kMaxRoomNameBytes).
constexpr std::size_t kMaxTicketIdBytes = 512;
constexpr std::size_t kTicketMacBytes = 32;

struct TicketClaims {
  std::string writer;
  std::string kind = "human";  // "human" or "agent"
  std::string room;
  double exp = 0;  // unix seconds
};

// A ticket, or the message that names what to fix.
struct MintedTicket {
  std::string ticket;
  std::string error;
};
// exp = floor(now / 1000) + ceil(ttl_seconds).
MintedTicket mint_ticket(std::string_view secret, std::string_view writer, std::string_view kind,
                         std::string_view room, double ttl_seconds, TimeMs now_ms);

struct TicketVerdict {
  bool ok = false;
  TicketClaims claims;  // ok
  // not ok: "missing", "malformed", "signature", "expired" or "room", and what to do about it.
  std::string reason;
  std::string message;
};
// Signature first (constant time), then expiry and, when `room` is given, the room.
TicketVerdict verify_ticket(std::string_view secret, std::string_view ticket,
                            std::optional<std::string_view> room, TimeMs now_ms);

// Why a secret cannot sign tickets ("" when it can).
std::string secret_error(std::string_view secret);

}  // namespace tether::room
