// Native per-envelope cost of the room relay core (src/room), without JS: a room hydrated with
// K registers, 8 members, journalLimit 1000 filled, then a stream of one-op envelopes that cite
// their key's previous write. Prints µs per envelope for K = 1k, 10k, 100k; the cost must not
// grow with K (DESIGN.md rule 6). Usage: tether_bench_room_relay_native [envelopes]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "room/relay.hpp"

using namespace tether::room;

int main(int argc, char** argv) {
  int count = argc > 1 ? std::atoi(argv[1]) : 50000;
  const int members = 8;
  for (int keys : {1000, 10000, 100000}) {
    RoomRelayOptions o;
    RoomRelay relay(o);
    std::string snap = "{\"seq\":" + std::to_string(keys) + ",\"instance\":\"I\",\"registers\":[";
    for (int i = 0; i < keys; ++i) {
      if (i) snap += ',';
      snap += "{\"path\":[\"k\"," + std::to_string(i) +
              "],\"siblings\":[{\"kind\":\"set\",\"writer\":\"seed\",\"origin\":\"seed\",\"hlc\":{"
              "\"p\":" +
              std::to_string(i + 1) + ",\"l\":0},\"epoch\":0,\"value\":" + std::to_string(i) +
              "}],\"water\":{}}";
    }
    snap += "],\"ranges\":{\"seed\":[[1," + std::to_string(keys) +
            "]]},\"settled\":{\"seed\":{\"p\":" + std::to_string(keys) + ",\"l\":0}}}";
    relay.hydrate("bench", snap, 0);
    std::vector<ConnId> conns;
    for (int m = 0; m < members; ++m) {
      ConnId c = relay.connect("w" + std::to_string(m));
      relay.handle_message(
          c,
          "{\"t\":\"hello\",\"room\":\"bench\",\"origin\":\"o" + std::to_string(m) +
              "\",\"proto\":3,\"policyVersion\":0,\"seq\":" + std::to_string(keys) + "}",
          0);
      conns.push_back(c);
    }
    while (relay.poll_action()) {
    }
    while (relay.poll_event()) {
    }
    std::vector<std::string> last_origin(keys, "seed");
    std::vector<long> last_p(keys);
    for (int i = 0; i < keys; ++i) last_p[i] = i + 1;
    std::vector<int> versions(members, 0);
    std::vector<std::string> texts;
    int total = 1000 + count;
    texts.reserve(total);
    for (int n = 0; n < total; ++n) {
      int m = n % members;
      int key = static_cast<int>((static_cast<long>(n) * 7919) % keys);
      long p = 1000000 + n;
      texts.push_back(
          "{\"t\":\"env\",\"room\":\"bench\",\"env\":{\"proto\":3,\"instance\":\"I\",\"origin\":"
          "\"o" +
          std::to_string(m) + "\",\"writer\":\"w" + std::to_string(m) + "\",\"version\":" +
          std::to_string(++versions[m]) + ",\"hlc\":{\"p\":" + std::to_string(p) +
          ",\"l\":0},\"policyVersion\":0,\"ops\":[{\"kind\":\"set\",\"path\":[\"k\"," +
          std::to_string(key) + "],\"next\":{\"n\":" + std::to_string(n) +
          ",\"text\":\"lorem ipsum\"},\"prev\":null,\"cites\":[{\"origin\":\"" + last_origin[key] +
          "\",\"hlc\":{\"p\":" + std::to_string(last_p[key]) + ",\"l\":0}}],\"epoch\":0}]}}");
      last_origin[key] = "o" + std::to_string(m);
      last_p[key] = p;
    }
    for (int n = 0; n < 1000; ++n) {
      relay.handle_message(conns[n % members], texts[n], 0);
      while (relay.poll_action()) {
      }
    }
    auto t0 = std::chrono::steady_clock::now();
    std::size_t sent = 0;
    for (int n = 1000; n < total; ++n) {
      relay.handle_message(conns[n % members], texts[n], 0);
      while (relay.poll_action()) ++sent;
    }
    double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
        count;
    std::printf(
        "keys %6d: %.2f us/envelope, %.0f envelopes/s, %zu actions, %zu registers, %.0f "
        "B/register\n",
        keys, us, 1e6 / us, sent, relay.register_count(),
        static_cast<double>(relay.register_bytes()) / static_cast<double>(relay.register_count()));
  }
  return 0;
}
