// libFuzzer harness: the room client core's inbound messages (src/room/client.hpp), as a hostile
// or broken relay would send them. The input is a flags byte (the options' policy and schema
// versions) and newline-separated lines: a line starting with 'W' is a local write (the rest is
// the StoreOps JSON), every other line is a server message for room "doc" ($I stands for the
// instance the client last saw). Properties: nothing crashes; every client message it transmits
// and every tail message is a JSON object for room "doc"; the folded value always serialises;
// the seq it reports only moves back when a welcome says so; a refused write names its reason and
// carries an envelope that parses; a read acknowledgement is only ever sent after a welcome that
// advertised readAck, names a count it read (a non-negative integer, at most what arrived), and
// the counts it names never go back.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json.hpp"
#include "room/client.hpp"

using namespace tether;
using namespace tether::room;

namespace {
void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_message(const std::string& text) {
  JsonParse p = parse_json(ByteView(std::string_view(text)));
  check(p.ok() && p.value.is_object());
  auto room = p.value.find("room");
  check(room != p.value.end() && *room == "doc");
}

struct Reads {
  bool advertised = false;  // some welcome carried readAck
  double received = 0;      // bytes of every message handed in
  double last = 0;          // the last count acknowledged
};

void drain(RoomClient& c, Reads& r) {
  while (auto t = c.poll_transmit()) {
    check_message(*t);
    JsonParse p = parse_json(ByteView(std::string_view(*t)));
    if (p.value.value("t", "") != "read") continue;
    check(r.advertised);
    auto n = p.value.find("bytes");
    check(n != p.value.end() && n->is_number());
    const double b = n->get<double>();
    check(b >= 0 && b <= r.received && (b == 0 || b > r.last));
    if (b > 0) r.last = b;
  }
  while (auto e = c.poll_event()) {
    if (e->kind != RoomClientEvent::Kind::refused) continue;  // the relay's reason, as it came
    check(!e->reason.empty());
    check(parse_json(ByteView(std::string_view(e->envelope))).ok());
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  RoomClientOptions o;
  o.room = "doc";
  o.origin = "o1";
  o.writer = "w1";
  o.policy_version = data[0] & 3;
  o.schema_version = (data[0] >> 2) & 3;
  RoomClient client(o);
  check_message(client.connect());
  Reads reads;
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  TimeMs now = 1000;
  std::size_t start = 0;
  for (int line = 0; line < 64 && start <= input.size(); ++line) {
    std::size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    std::string msg(input.substr(start, end - start));
    start = end + 1;
    for (std::size_t at = msg.find("$I"); at != std::string::npos;
         at = msg.find("$I", at + client.instance().size()))
      msg.replace(at, 2, client.instance());
    now += 7;
    const double seq_before = client.seq();
    const bool is_welcome = msg.find("welcome") != std::string::npos;
    if (!msg.empty() && (msg[0] == 'W' || msg[0] == 'M')) {
      // 'W' a write, 'M' a migration (docs/rooms.md § Migrations): either is queued only when
      // welcomed, and an ordinary write never carries a schema other than the room's unless the
      // room was never written.
      const std::string_view ops = std::string_view(msg).substr(1);
      const WriteOutcome out = msg[0] == 'W' ? client.write(ops, now) : client.migrate(ops, now);
      check(!out || client.welcomed());
      check(!out || msg[0] == 'W' || o.schema_version > client.room_schema_version());
    } else {
      if (msg.find("\"readAck\"") != std::string::npos) reads.advertised = true;
      reads.received += static_cast<double>(msg.size());
      client.handle_message(msg, now);
    }
    check(client.seq() >= seq_before || is_welcome);
    drain(client, reads);
    check_message(client.hello());
    for (const std::string& t : client.tail_messages()) check_message(t);
    (void)to_json(client.value());
  }
  return 0;
}
