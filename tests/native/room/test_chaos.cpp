// Convergence under chaos (the room-relay spec, "Persistence", "Writes the relay refuses
// without ejecting anyone"): room clients (src/room/client.hpp) against the relay core
// through a seeded hostile network: random disconnects, lost echoes and notices, whole-tail
// resends (duplicates) in shuffled order, and relay restarts through hydrate from the state
// persisted at every commit. Invariants: once the network heals, every client folds to the same
// value, and every write the relay echoed to its writer is still admitted in the room.
#include <algorithm>
#include <catch2/catch.hpp>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "room/client.hpp"
#include "room/relay.hpp"

using namespace tether;
using namespace tether::room;

namespace {

struct Net {
  explicit Net(std::uint64_t seed) : rng(seed) {}
  std::mt19937_64 rng;
  std::unique_ptr<RoomRelay> relay;
  std::string persisted;  // the RoomSnapshot written at the last commit
  std::deque<std::string> journal;
  std::vector<std::unique_ptr<RoomClient>> clients;
  std::vector<ConnId> conn;  // 0: offline
  std::vector<std::deque<std::string>> inbox;
  std::set<std::pair<std::string, double>> echoed;  // (origin, version) a writer saw echoed
  double now = 1000;
  bool lossy = true;

  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  }

  void start_relay() {
    RoomRelayOptions o;
    o.durable = true;
    o.journal_limit = 8;
    o.seed = rng();
    relay = std::make_unique<RoomRelay>(o);
    if (!persisted.empty()) REQUIRE(relay->hydrate("doc", persisted, now));
    for (auto& c : conn) c = 0;
  }

  void pump() {
    // A commit verdict releases echoes, a close disconnects: poll until nothing is left.
    while (auto a = relay->poll_action()) {
      if (a->kind == RoomAction::Kind::commit) {
        journal.push_back(*a->text);
        if (journal.size() > 8) journal.pop_front();
        std::string state = relay->state_json("doc");
        state.pop_back();
        state += ",\"registers\":" + relay->checkpoint_json("doc") + ",\"journal\":[";
        for (std::size_t k = 0; k < journal.size(); ++k) state += (k ? "," : "") + journal[k];
        persisted = state + "]}";
        relay->handle_commit_result(a->token, RoomRelay::Verdict::ok);
      } else if (a->kind == RoomAction::Kind::send || a->kind == RoomAction::Kind::close) {
        for (std::size_t c = 0; c < conn.size(); ++c) {
          if (conn[c] != a->conn) continue;
          if (a->kind == RoomAction::Kind::send)
            inbox[c].push_back(*a->text);
          else {
            relay->handle_disconnect(conn[c]);
            conn[c] = 0;
          }
        }
      }
    }
    while (relay->poll_event()) {
    }
  }

  // What the client queued to send, in order.
  void flush_client(std::size_t c) {
    while (auto m = clients[c]->poll_transmit()) send(c, *m);
  }

  void send(std::size_t c, const std::string& msg) {
    if (!conn[c]) return;
    relay->handle_message(conn[c], msg, now);
    pump();
  }

  void deliver(std::size_t c) {
    while (!inbox[c].empty()) {
      std::string msg = inbox[c].front();
      inbox[c].pop_front();
      if (!conn[c]) continue;
      bool droppable = msg.find("\"t\":\"env\"") != std::string::npos ||
                       msg.find("\"t\":\"settled\"") != std::string::npos;
      if (lossy && droppable && chance(0.1)) continue;  // lost in transit
      JsonParse p = parse_json(ByteView(std::string_view(msg)));
      if (p.ok() && p.value.value("t", "") == "env") {
        const Json& env = p.value["env"];
        if (env.value("origin", "") == "o" + std::to_string(c))
          echoed.emplace(env.value("origin", ""), env.value("version", 0.0));
      }
      clients[c]->handle_message(msg, now);
      flush_client(c);
    }
  }

  void connect(std::size_t c) {
    conn[c] = relay->connect("w" + std::to_string(c));
    send(c, clients[c]->hello());
  }
};

std::string write_op(std::mt19937_64& rng, int n) {
  static const char* keys[] = {"a", "b", "c", "d"};
  std::string k = keys[rng() % 4];
  switch (rng() % 5) {
    case 0: return R"([{"kind":"set","path":[")" + k + R"("],"next":)" + std::to_string(n) + "}]";
    case 1:
      return R"([{"kind":"set","path":[")" + k + R"(","x"],"next":)" + std::to_string(n) + "}]";
    case 2: return R"([{"kind":"delete","path":[")" + k + R"("],"prev":null}])";
    case 3:
      return R"([{"kind":"set","path":["list",)" + std::to_string(n % 3) + R"(],"next":"v)" +
             std::to_string(n) + "\"}]";
    default:
      return R"([{"kind":"set","path":[")" + k + R"("],"next":{"n":)" + std::to_string(n) + "}}]";
  }
}

}  // namespace

TEST_CASE("chaos: room clients converge and no echoed write is lost") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    INFO("seed " << seed);
    Net net(seed);
    const std::size_t n = 4;
    for (std::size_t c = 0; c < n; ++c) {
      net.clients.push_back(std::make_unique<RoomClient>(
          RoomClientOptions{"doc", "o" + std::to_string(c), "w" + std::to_string(c)}));
      net.conn.push_back(0);
      net.inbox.emplace_back();
    }
    net.start_relay();
    for (std::size_t c = 0; c < n; ++c) net.connect(c);
    for (std::size_t c = 0; c < n; ++c) net.deliver(c);
    // Seed the document once, from one client.
    if (net.clients[0]->write(R"([{"kind":"set","path":[],"next":{"title":"doc"}}])", net.now))
      net.flush_client(0);
    int writes = 0;
    for (int step = 0; step < 300; ++step) {
      net.now += static_cast<double>(net.pick(50));
      std::size_t c = net.pick(n);
      double roll = std::uniform_real_distribution<double>(0, 1)(net.rng);
      if (roll < 0.45) {
        if (net.conn[c] && net.clients[c]->welcomed()) {
          if (net.clients[c]->write(write_op(net.rng, ++writes), net.now)) net.flush_client(c);
        }
      } else if (roll < 0.75) {
        net.deliver(c);
      } else if (roll < 0.83) {
        if (net.conn[c]) {
          net.relay->handle_disconnect(net.conn[c]);
          net.conn[c] = 0;
          net.inbox[c].clear();
          net.pump();
        } else {
          net.connect(c);
        }
      } else if (roll < 0.9) {
        // A duplicate, shuffled resend of the whole tail, as a confused transport might do.
        if (net.conn[c] && net.clients[c]->welcomed()) {
          std::vector<std::string> again = net.clients[c]->tail_messages();
          std::shuffle(again.begin(), again.end(), net.rng);
          for (const auto& m : again) net.send(c, m);
        }
      } else if (roll < 0.93) {
        // The relay process restarts: everything not persisted is gone, every socket with it.
        for (std::size_t k = 0; k < n; ++k) net.inbox[k].clear();
        net.start_relay();
      } else {
        if (!net.conn[c]) net.connect(c);
      }
    }
    // Heal: no loss, everyone reconnects, deliver until quiet.
    net.lossy = false;
    for (std::size_t c = 0; c < n; ++c) {
      if (net.conn[c]) {
        net.relay->handle_disconnect(net.conn[c]);
        net.conn[c] = 0;
        net.pump();
      }
      net.inbox[c].clear();
      net.connect(c);
    }
    for (int round = 0; round < 50; ++round) {
      bool any = false;
      for (std::size_t c = 0; c < n; ++c) {
        any = any || !net.inbox[c].empty();
        net.deliver(c);
      }
      if (!any) break;
    }
    Json expected = net.clients[0]->value();
    for (std::size_t c = 0; c < n; ++c) {
      INFO("client " << c << " value " << to_json(net.clients[c]->value()) << " vs "
                     << to_json(expected));
      CHECK(net.clients[c]->welcomed());
      CHECK(net.clients[c]->unacked() == 0);
      CHECK(net.clients[c]->value() == expected);
    }
    std::string state = net.relay->state_json("doc");
    JsonParse st = parse_json(ByteView(std::string_view(state)));
    REQUIRE(st.ok());
    for (const auto& [origin, version] : net.echoed) {
      bool admitted = false;
      for (const auto& range : st.value["ranges"][origin]) {
        if (range[0].get<double>() <= version && version <= range[1].get<double>()) admitted = true;
      }
      INFO("echoed " << origin << " v" << version << " ranges " << state);
      CHECK(admitted);
    }
    CHECK(writes > 20);
    CHECK(net.echoed.size() > 10);
  }
}
