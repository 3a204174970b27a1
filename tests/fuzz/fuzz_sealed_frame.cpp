// libFuzzer harness: the sealed channel (src/room/sealed.hpp) with the real cipher under it (Mbed
// TLS, tests/native/room/sealed_host.hpp), for the secret and room of fixtures/room/sealed.json,
// as the receiver "bob" of the fixtures' pinned session (its epoch). The input is lines, each a
// sealed frame text from "alice", or `!greet` (the lane to alice opened) or `!seal TEXT` (bob seals
// to alice), so the epoch handshake runs both ways.
// Properties: nothing crashes; every frame gives exactly one outcome (a text, a named refusal, or
// a handshake frame taken); texts are valid UTF-8; a frame that parses writes back to the same
// bytes; a linked event comes only with a frame bound to bob's epoch; everything bob transmits is
// a well-formed frame of his session, and a text only to an epoch alice showed in a frame.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "../native/room/sealed_host.hpp"
#include "common/base64.hpp"
#include "common/utf8.hpp"
#include "room/sealed.hpp"

using namespace tether;
using namespace tether::room;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  testing::SealedHost bob("golden room secret, shared out of band",
                          testing::sealed_options("lab", "bob", 0x20));
  std::set<std::array<std::uint8_t, kSealedSessionBytes>> alice_sessions;
  std::size_t outcomes = 0;  // texts and refusals seen so far, and handshake frames taken
  auto count = [&] {
    std::size_t n = bob.ch.stats().hellos_opened;
    for (const auto& e : bob.events)
      if (e.kind == SealedEvent::Kind::text || e.kind == SealedEvent::Kind::refused) ++n;
    return n;
  };
  while (!in.empty()) {
    const std::size_t nl = in.find('\n');
    std::string_view line = in.substr(0, nl);
    in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
    if (line == "!greet") {
      bob.ch.greet("alice");
      bob.pump();
      continue;
    }
    if (line.substr(0, 6) == "!seal ") {
      bob.seal("alice", std::string(line.substr(6)));
      continue;
    }
    ParsedSealedFrame p = parse_sealed_frame(line, 1 << 20);
    if (p.error == SealedError::none) {
      std::string again = sealed_frame_text(ByteView(p.header_bytes), ByteView(p.body));
      if (*base64_decode(again) != *base64_decode(line)) __builtin_trap();
      alice_sessions.insert(p.header.session);
    }
    const std::size_t linked_before = bob.events.size();
    bob.open("alice", std::string(line));
    const std::size_t now = count();
    if (now != outcomes + 1) __builtin_trap();
    outcomes = now;
    for (std::size_t i = linked_before; i < bob.events.size(); ++i)
      if (bob.events[i].kind == SealedEvent::Kind::linked &&
          (p.error != SealedError::none || p.header.epoch != bob.ch.options().session))
        __builtin_trap();
  }
  for (const auto& e : bob.events) {
    if (e.kind == SealedEvent::Kind::refused && std::string(sealed_error_name(e.error)).empty())
      __builtin_trap();
    if (e.kind != SealedEvent::Kind::text) continue;
    if (!is_valid_utf8(ByteView(std::string_view(e.text)))) __builtin_trap();
  }
  for (std::size_t i = 0; i < bob.sent.size(); ++i) {
    const auto& [to, text] = bob.sent[i];
    ParsedSealedFrame p = parse_sealed_frame(text, 1 << 20);
    if (to != "alice" || p.error != SealedError::none || p.header.kind != bob.sent_kinds[i] ||
        p.header.session != bob.ch.options().session)
      __builtin_trap();
    if (p.header.kind == SealedKind::text && !alice_sessions.count(p.header.epoch))
      __builtin_trap();
  }
  return 0;
}
