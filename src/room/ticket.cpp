// Signed connection tickets (ticket.hpp).
#include "room/ticket.hpp"

#include <cmath>

#include "common/base64.hpp"
#include "common/hmac.hpp"
#include "common/json.hpp"
#include "common/utf8.hpp"
#include "room/envelope.hpp"

namespace tether::room {

namespace {

// Characters as JavaScript counts them (UTF-16 code units) in valid UTF-8.
std::size_t js_length(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xc0) != 0x80) n += c >= 0xf0 ? 2 : 1;
  }
  return n;
}

// The same shape the relay core accepts for ids: non-empty, no control characters, bounded.
bool clean_ticket_id(std::string_view s) {
  if (s.empty() || s.size() > kMaxTicketIdBytes || !is_valid_utf8(ByteView(s))) return false;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

bool known_kind(std::string_view k) {
  return k == "human" || k == "agent";
}

std::string b64url(ByteView bytes) {
  std::string s = base64_encode(bytes);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (char& c : s) {
    if (c == '+')
      c = '-';
    else if (c == '/')
      c = '_';
  }
  return s;
}

// base64url without padding, read as atob reads it (trailing bits of the last character ignored).
std::optional<Bytes> unb64url(std::string_view text) {
  std::string s;
  s.reserve(text.size() + 3);
  for (char c : text) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) return std::nullopt;
    s += c == '-' ? '+' : c == '_' ? '/' : c;
  }
  static const char* const kPad[] = {"", "===", "==", "="};
  s += kPad[text.size() % 4];
  return base64_decode(s);
}

Sha256Digest mac_of(std::string_view secret, std::string_view signed_part) {
  return hmac_sha256(ByteView(secret), ByteView(signed_part));
}

TicketVerdict fail(const char* reason, std::string message) {
  TicketVerdict v;
  v.reason = reason;
  v.message = std::move(message);
  return v;
}

std::string json_string(std::string_view s) {
  std::string out;
  append_quoted(out, s);
  return out;
}

}  // namespace

std::string secret_error(std::string_view secret) {
  if (!is_valid_utf8(ByteView(secret)) || js_length(secret) < kMinSecretChars) {
    return "the ticket secret must be a string of at least " + std::to_string(kMinSecretChars) +
           " characters; set TICKET_SECRET (`make edge-secret NAME=TICKET_SECRET` at the edge, or "
           "--ticket-secret-file for the Deno host)";
  }
  return std::string();
}

MintedTicket mint_ticket(std::string_view secret, std::string_view writer, std::string_view kind,
                         std::string_view room, double ttl_seconds, TimeMs now_ms) {
  MintedTicket out;
  if (std::string e = secret_error(secret); !e.empty()) {
    out.error = std::move(e);
    return out;
  }
  if (!clean_ticket_id(writer)) {
    out.error = "writer must be a non-empty id of at most 512 bytes without control characters";
    return out;
  }
  if (!clean_ticket_id(room)) {
    out.error = "room must be a non-empty name of at most 512 bytes without control characters";
    return out;
  }
  if (!known_kind(kind)) {
    out.error = "kind must be one of human, agent, not " + json_string(kind);
    return out;
  }
  if (!(ttl_seconds > 0 && ttl_seconds <= kMaxTicketTtlSeconds)) {
    out.error =
        "ttlSeconds must be in (0, " + std::to_string(static_cast<int>(kMaxTicketTtlSeconds)) + "]";
    return out;
  }
  const double exp = std::floor(static_cast<double>(now_ms) / 1000) + std::ceil(ttl_seconds);
  std::string payload = "{\"w\":" + json_string(writer) + ",\"k\":" + json_string(kind) +
                        ",\"r\":" + json_string(room) + ",\"exp\":";
  append_number(payload, exp);
  payload += '}';
  std::string signed_part = std::string(kTicketVersion) + "." + b64url(ByteView(payload));
  const Sha256Digest mac = mac_of(secret, signed_part);
  std::string ticket = signed_part + "." + b64url(ByteView(mac.data(), mac.size()));
  if (ticket.size() > kMaxTicketChars) {
    out.error = "the ticket is too long; shorten writer or room";
    return out;
  }
  out.ticket = std::move(ticket);
  return out;
}

TicketVerdict verify_ticket(std::string_view secret, std::string_view ticket,
                            std::optional<std::string_view> room, TimeMs now_ms) {
  if (ticket.empty()) {
    return fail("missing",
                "no ticket: connect with ?ticket=<ticket minted by your server (tether "
                "tickets.mintTicket)>");
  }
  // A ticket is ASCII; anything longer in bytes is longer in characters too.
  if (ticket.size() > kMaxTicketChars && js_length(ticket) > kMaxTicketChars) {
    return fail("malformed",
                "the ticket is longer than " + std::to_string(kMaxTicketChars) + " characters");
  }
  const std::size_t a = ticket.find('.');
  const std::size_t b = a == std::string_view::npos ? a : ticket.find('.', a + 1);
  const bool three =
      b != std::string_view::npos && ticket.find('.', b + 1) == std::string_view::npos;
  if (!three || ticket.substr(0, a) != kTicketVersion) {
    return fail("malformed", "a ticket is t1.<payload>.<mac>; mint it with tickets.mintTicket");
  }
  const std::string_view payload_text = ticket.substr(a + 1, b - a - 1);
  auto mac = unb64url(ticket.substr(b + 1));
  auto payload = unb64url(payload_text);
  if (!mac || !payload || mac->size() != kTicketMacBytes)
    return fail("malformed", "the ticket is not base64url");
  const Sha256Digest expected = mac_of(secret, ticket.substr(0, b));
  if (!constant_time_equal(ByteView(*mac), ByteView(expected.data(), expected.size()))) {
    return fail("signature",
                "the ticket was not signed with this server's TICKET_SECRET; mint a new one");
  }
  const std::string_view claims_text(reinterpret_cast<const char*>(payload->data()),
                                     payload->size());
  JsonParse parsed = parse_json(ByteView(claims_text));
  if (!parsed.ok()) return fail("malformed", "the ticket payload is not UTF-8 JSON");
  const Json& c = parsed.value;
  auto str = [&](const char* k) -> const std::string* {
    const Json* v = c.is_object() ? field(c, k) : nullptr;
    return v && v->is_string() ? &v->get_ref<const std::string&>() : nullptr;
  };
  const std::string* w = str("w");
  const std::string* k = str("k");
  const std::string* r = str("r");
  const Json* exp = c.is_object() ? field(c, "exp") : nullptr;
  const double exp_v = exp ? read_number(*exp).value_or(std::nan("")) : std::nan("");
  if (!w || !clean_ticket_id(*w) || !r || !clean_ticket_id(*r) || !k || !known_kind(*k) ||
      !std::isfinite(exp_v)) {
    return fail("malformed",
                "the ticket payload needs w (writer), k (human|agent), r (room) and exp");
  }
  if (exp_v * 1000 <= static_cast<double>(now_ms)) {
    return fail("expired", "the ticket has expired; mint a fresh one just before connecting");
  }
  if (room && *r != *room) {
    return fail("room",
                "the ticket is for room " + json_string(*r) + ", not " + json_string(*room));
  }
  TicketVerdict v;
  v.ok = true;
  v.claims = TicketClaims{*w, *k, *r, exp_v};
  return v;
}

}  // namespace tether::room
