// libFuzzer harness: the sealed channel's receive side (src/room/sealed.hpp) with the real cipher
// under it (Mbed TLS, tests/native/room/sealed_host.hpp), for the secret and room of
// fixtures/room/sealed.json. The input is sealed frame texts, one per line, all from "alice".
// Properties: nothing crashes; every frame gives exactly one outcome (a text or a named refusal);
// texts are valid UTF-8; a frame that parses writes back to the same bytes.
#include <cstddef>
#include <cstdint>
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
  std::size_t frames = 0;
  while (!in.empty()) {
    const std::size_t nl = in.find('\n');
    std::string_view line = in.substr(0, nl);
    in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
    ParsedSealedFrame p = parse_sealed_frame(line, 1 << 20);
    if (p.error == SealedError::none) {
      std::string again = sealed_frame_text(ByteView(p.header_bytes), ByteView(p.body));
      if (*base64_decode(again) != *base64_decode(line)) __builtin_trap();
    }
    bob.open("alice", std::string(line));
    ++frames;
    if (bob.events.size() != frames + 1) __builtin_trap();  // + the ready event
  }
  for (const auto& e : bob.events) {
    if (e.kind == SealedEvent::Kind::refused && std::string(sealed_error_name(e.error)).empty())
      __builtin_trap();
    if (e.kind != SealedEvent::Kind::text) continue;
    if (!is_valid_utf8(ByteView(std::string_view(e.text)))) __builtin_trap();
  }
  return 0;
}
