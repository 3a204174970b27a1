// libFuzzer harness: the room client core (src/room/client.hpp) seeded with a hostile persisted
// outbox (createRoomClient's outbox), then driven by hostile server text. The first byte picks the
// options; lines starting with 'O' are outbox entries (seeded together before anything else), lines
// starting with 'W' are writes (the rest of the line is the ops JSON), every other line is a server
// message. Properties: nothing crashes; a refused outbox seeds nothing; the tail and its messages
// agree; the clock never runs back (every write stamps above the previous one, whatever the server
// said in between).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "room/client.hpp"
#include "room/envelope.hpp"

using namespace tether;
using namespace tether::room;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  RoomClientOptions o{"r", "me", "w"};
  o.schema_version = data[0] & 3;
  RoomClient c(o);
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::string> outbox, lines;
  while (!rest.empty()) {
    std::size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (!line.empty() && line[0] == 'O')
      outbox.emplace_back(line.substr(1));
    else
      lines.emplace_back(line);
  }
  TimeMs now = 1000;
  if (!outbox.empty()) {
    std::string err = c.seed_tail(outbox, now);
    if (!err.empty() && c.unacked() != 0) __builtin_trap();
    if (err.empty() && c.unacked() != outbox.size()) __builtin_trap();
  }
  Hlc last{-1, 0};
  for (const auto& line : lines) {
    now += (data[0] & 4) ? 0 : 7;  // a clock that stands still, or moves
    if (!line.empty() && line[0] == 'W') {
      if (c.write(std::string_view(line).substr(1), now)) {
        std::optional<std::string> m, sent;
        while ((m = c.poll_transmit())) sent = m;
        JsonParse p = parse_json(ByteView(std::string_view(*sent)));
        const Json* env = p.ok() ? field(p.value, "env") : nullptr;
        const Json* hj = env ? field(*env, "hlc") : nullptr;
        auto h = hj ? read_hlc(*hj) : std::nullopt;
        if (!h || compare_hlc(*h, last) <= 0) __builtin_trap();
        last = *h;
      }
    } else {
      c.handle_message(line, now);
    }
    while (c.poll_transmit()) {
    }
    while (c.poll_event()) {
    }
    if (c.tail_messages().size() != c.unacked()) __builtin_trap();
    (void)c.value();
  }
  return 0;
}
