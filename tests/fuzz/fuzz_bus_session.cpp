// libFuzzer harness: a bus session driven by hostile peers over three connections, and the
// receive that reads no clock (Bus::handle_text_untimed) held to the one that does.
//
// The WASM glue passes every text without the time first and again with it only when the bus
// answers false (bench/README.md § bus, round 4). That is sound only if Bus::reads_time names
// every type whose handling reads now_ms, and a held channel's wake asks too: a type left off
// the list would be handled with a wrong time. Two buses get the same script here, one always
// with the time, one untimed first; after every step both must have sent the same bytes to the
// same connections, reported the same events and asked to be woken at the same moment, and a
// text the untimed bus gave back must have changed nothing. The clock moves at every step, so a
// text handled with a wrong time shows up in what it sends or reports. Properties of the session
// itself: nothing crashes or leaks, everything the bus sends is a valid envelope, the queues and
// the history keep their bounds.
//
// Input: records separated by 0x1E (never valid inside JSON text, so a JSON seed is one record).
// A record's first byte picks the step (a text on one of the connections, a connection opened or
// closed, a roster, a timer) and how far the clock moves; the rest is the text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bus/bus.hpp"
#include "bus/json_out.hpp"

using namespace tether;
using namespace tether::bus;

namespace {

constexpr char kSeparator = '\x1e';
const char* const kConns[] = {"c1", "c2", "c3"};

// Everything a step made the bus do, in order: transmits (offered to a transport that refuses
// some, decided by their token so both buses decide alike), then events.
std::string drain(Bus& bus) {
  std::string out;
  for (int guard = 0; guard < 10000; ++guard) {
    auto t = bus.poll_transmit();
    if (!t) break;
    // We only ever emit valid envelopes.
    if (!parse_envelope(ByteView(std::string_view(*t->text)))) __builtin_trap();
    out += t->conn + " > " + *t->text + "\n";
    bus.handle_transmit_result(t->token, t->token % 5 != 0, 0);
  }
  while (auto e = bus.poll_event()) {
    out += "event ";
    if (e->spans) {
      // A spans-only message event has no envelope: its tag and where its parts lie stand for it.
      out += "message tag " + std::to_string(e->text_tag) + " id " +
             std::to_string(e->spans->id_span.begin) + "-" + std::to_string(e->spans->id_span.end) +
             " conn " + e->conn;
      bus.recycle_tape(std::move(e->tape));
    } else {
      append_event_json(out, *e, bus);
    }
    out += "\n";
  }
  const Timeout wake = bus.poll_timeout();
  out += "wake " + (wake ? std::to_string(*wake) : std::string("none")) + "\n";
  return out;
}

// A bus with two connections open, one peer ("p") bound on c1 that takes handoffs, a command of
// ours waiting for its response and a history request outstanding: confirmations, replays and
// handoff retries are live from the first step.
Bus session(bool spans_only) {
  BusConfig c;
  c.self = Identity{"me", "agent", "Me", "i0"};
  c.seed = 11;
  c.accept_handoffs = true;
  c.message_spans_only = spans_only;
  Bus bus(std::move(c));
  bus.handle_roster({"c1", "c2", "c3"}, 0);
  bus.handle_connection_open("c1", 0);
  bus.handle_connection_open("c2", 0);
  const std::string announce =
      R"({"v":1,"id":"an0","type":"announce","from":{"streamId":"p","role":"agent","name":"P","instanceId":"i1"},"to":null,"topic":null,"ts":0,"payload":{"skills":["handoff-v1"]}})";
  bus.handle_text("c1", ByteView(std::string_view(announce)), 0);
  (void)bus.send("p", MessageType::command, Json{{"run", "x"}}, std::nullopt, 1);
  (void)bus.request_history("p", Json(5), 1);
  (void)bus.handoff("p", "review", 90000, 1);
  (void)drain(bus);
  return bus;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  // Odd sizes run the JavaScript host's mode (message events as spans of the host's text).
  const bool spans_only = size % 2 == 1;
  Bus timed = session(spans_only);
  Bus untimed = session(spans_only);
  if (drain(timed) != drain(untimed)) __builtin_trap();

  std::int64_t now = 1000;
  std::uint64_t tag = 0;
  std::size_t start = 0;
  for (int steps = 0; start <= in.size() && steps < 256; ++steps) {
    std::size_t end = in.find(kSeparator, start);
    if (end == std::string_view::npos) end = in.size();
    const std::string_view record = in.substr(start, end - start);
    start = end + 1;
    // A record that starts with '{' is a text on c1 (so a JSON seed runs as it is); otherwise the
    // first byte is the step.
    const bool bare = record.empty() || record[0] == '{';
    const std::uint8_t op = bare ? 0 : static_cast<std::uint8_t>(record[0]);
    const std::string_view body = bare ? record : record.substr(1);
    now += 1 + (op % 7) * 4999;  // up to ~30 s a step: expiries and retries come due
    const std::string conn = kConns[(op >> 3) % 3];
    switch ((op >> 5) % 8) {
      case 4:
        timed.handle_connection_open(conn, now);
        untimed.handle_connection_open(conn, now);
        break;
      case 5:
        timed.handle_connection_closed(conn, now);
        untimed.handle_connection_closed(conn, now);
        break;
      case 6: {
        // A roster of any subset: one that drops a connection and lists it again holds it.
        std::vector<ConnId> roster;
        for (int i = 0; i < 3; ++i)
          if (op & (1 << i)) roster.push_back(kConns[i]);
        timed.handle_roster(roster, now);
        untimed.handle_roster(roster, now);
        break;
      }
      case 7:
        timed.handle_timeout(now);
        untimed.handle_timeout(now);
        break;
      default: {
        ++tag;
        const ByteView text(body);
        timed.handle_text(conn, text, now, tag);
        const std::string idle = drain(untimed);  // nothing pending: only its wake line
        if (!untimed.handle_text_untimed(conn, text, tag)) {
          // Given back: it must have changed nothing before it comes again with the time.
          if (drain(untimed) != idle) __builtin_trap();
          untimed.handle_text(conn, text, now, tag);
        }
      }
    }
    if (drain(timed) != drain(untimed)) __builtin_trap();
  }
  if (timed.queued_total() > kMaxQueuedPerPeer * kMaxQueuedPeers) __builtin_trap();
  if (timed.history(1000, "").size() > kHistoryCapacity) __builtin_trap();
  return 0;
}
