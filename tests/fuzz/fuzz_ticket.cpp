// libFuzzer harness: the ticket parser (src/room/ticket.hpp). The input is a ticket. Properties:
// nothing crashes; a ticket that verifies has clean claims and verifies again for its own room;
// minting those claims again gives a ticket that verifies to the same claims.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "room/ticket.hpp"

using namespace tether;
using namespace tether::room;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string secret = "test-secret-0123456789abcdef0123456789abcdef";
  std::string_view ticket(reinterpret_cast<const char*>(data), size);
  const TimeMs now = 1'800'000'000'000;
  TicketVerdict v = verify_ticket(secret, ticket, std::nullopt, now);
  (void)verify_ticket(secret, ticket, std::string_view("lab"), now);
  if (!v.ok) {
    if (v.reason.empty() || v.message.empty()) __builtin_trap();
    return 0;
  }
  if (v.claims.writer.empty() || v.claims.room.empty()) __builtin_trap();
  if (!verify_ticket(secret, ticket, std::string_view(v.claims.room), now).ok) __builtin_trap();
  MintedTicket again = mint_ticket(secret, v.claims.writer, v.claims.kind, v.claims.room, 60, now);
  if (!again.error.empty()) return 0;  // a valid old ticket may name claims we no longer mint
  TicketVerdict w = verify_ticket(secret, again.ticket, std::string_view(v.claims.room), now);
  if (!w.ok || w.claims.writer != v.claims.writer || w.claims.kind != v.claims.kind)
    __builtin_trap();
  return 0;
}
