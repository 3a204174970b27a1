// libFuzzer harness: the message parser, for every sender. Properties: nothing crashes; a message
// that parses has a canonical form that parses again to the same canonical form.
#include <cstddef>
#include <cstdint>

#include "wire/messages.hpp"

using namespace tether;
using namespace tether::wire;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  for (Sender s : {Sender::robot, Sender::viewer, Sender::relay}) {
    auto m = parse_message(ByteView(data, size), s);
    if (!m) {
      if (m.error().detail.empty()) __builtin_trap();  // every drop explains itself
      continue;
    }
    const std::string canonical = encode_message(m.value());
    auto again = parse_message(ByteView(std::string_view(canonical)), s);
    if (!again || encode_message(again.value()) != canonical) __builtin_trap();
    if (m->type == MessageType::hello) {
      (void)check_hello(m.value(), Role::robot);
      (void)check_hello(m.value(), Role::viewer);
    }
  }
  return 0;
}
