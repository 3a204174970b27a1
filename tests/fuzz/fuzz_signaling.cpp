// libFuzzer harness: the signaling negotiation (src/bus/signaling.hpp). The input is newline-
// separated lines; a line's first byte picks who or what (signals from a lower and a higher peer,
// the room's welcome and roster, connection events for the current generation, timeouts) and the
// rest is the signal's data. Properties: nothing crashes; every signal that leaves is one JSON
// object with a string `k`; every generation we mint is new; only the lower id creates an offering
// connection; a timeout leaves nothing due behind it; after close nothing leaves.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "bus/signaling.hpp"
#include "common/json.hpp"

using namespace tether;
using namespace tether::bus;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Signaling s(SignalingOptions{"m", size, 10'000});
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::set<std::string> gens;
  std::string last_gen;
  std::string last_peer;
  TimeMs now = 0;
  bool closed = false;
  auto drain = [&]() {
    while (auto a = s.poll_action()) {
      if (closed) __builtin_trap();
      if (a->kind == SignalingAction::Kind::signal) {
        JsonParse p = parse_json(ByteView(std::string_view(a->text)));
        if (!p.ok() || !p.value.is_object() || !p.value.contains("k") || !p.value["k"].is_string())
          __builtin_trap();
      }
      if (a->kind == SignalingAction::Kind::create) {
        // Our own generations are never reused (a peer may replay its own offer).
        if (a->offerer && !gens.insert(a->peer + "/" + a->gen).second) __builtin_trap();
        if (a->offerer && !(std::string("m") < a->peer)) __builtin_trap();
        last_gen = a->gen;
        last_peer = a->peer;
      }
    }
    while (s.poll_event()) {
    }
  };
  std::size_t start = 0;
  for (int line = 0; line < 256 && start < input.size(); ++line) {
    std::size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    std::string_view l = input.substr(start, end - start);
    start = end + 1;
    now += 100;
    if (l.empty()) continue;
    const char op = l[0];
    std::string_view rest = l.substr(1);
    switch (op % 12) {
      case 0: s.handle_signal("a", rest, now); break;  // the lower id: it offers to us
      case 1: s.handle_signal("z", rest, now); break;  // the higher id: it asks us
      case 2: s.handle_welcome({"a", "z", std::string(rest)}, now); break;
      case 3: s.handle_roster({"z", std::string(rest)}, now); break;
      case 4: s.handle_signaling_down(now); break;
      case 5: s.handle_description(last_peer, last_gen, rest, now); break;
      case 6: s.handle_remote_set(last_peer, last_gen, now); break;
      case 7: s.handle_channels_open(last_peer, last_gen, now); break;
      case 8: s.handle_connection_state(last_peer, last_gen, rest, now); break;
      case 9:
        s.handle_local_candidate(last_peer, last_gen,
                                 Candidate{std::string(rest), std::string("0"), 0}, now);
        break;
      case 10:
        now += 10'000;
        s.handle_timeout(now);
        drain();
        // Nothing due is left behind a timeout.
        if (auto t = s.poll_timeout(); t && *t <= now) __builtin_trap();
        break;
      case 11:
        if (rest == "close") {
          s.handle_close();
          drain();
          closed = true;
        } else {
          s.rebuild(rest, now);
        }
        break;
    }
    drain();
  }
  return 0;
}
