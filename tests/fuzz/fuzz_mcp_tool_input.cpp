// libFuzzer harness: the arguments of the `tether mcp` tools (docs/mcp.md § Tools) where they reach
// the bus core. web/agent/mcp/ validates them with zod first, but the core must hold its own bounds
// whatever JavaScript let through (a CLI, an old client or a bug in a schema reaches the same
// calls), so the harness calls exactly what the tools call, with the shapes they pass:
//   send       Bus::send(peer, type, parse_json(JSON.stringify(payload)), topic)   (web/glue/bus.js)
//   broadcast  Bus::broadcast(type, payload, topic)
//   history    Bus::request_history(peer, parse_json(JSON.stringify(count)))
//   handoff    Bus::handoff(peer, request, now + expires_in_ms)
// Arguments checked only in JavaScript never reach a C++ parser: read/peek `take` (the inbox on
// disk), receipt `request_id` (a file lookup), swarm_offer `path` and swarm_fetch `to` (the file
// system), swarm_fetch/swarm_status `file_id` (FILE_ID_RE, a catalogue lookup: the core only ever
// sees the offer a peer sent, fuzzed by fuzz_swarm_message), and the flags.
//
// Input: one byte (low two bits: the tool; bit 2: a topic is given; bits 3-7: the message type),
// then fields `u16-LE len | bytes`: peer, payload (or count, or request), topic, and for a handoff
// four bytes of expires_in_ms. Properties: nothing crashes or leaks; a refusal names its field and
// says what to do; what the core accepts it would accept from the wire (the text it queues parses
// as an envelope, within every bound, with the peer, type, topic and payload it was given, JSON
// numbers compared as JavaScript reads them); an accepted history request asks for 1 to
// kHistoryMaxRequest messages; an accepted handoff passes check_handoff with the request and
// expiry it was given; every transmit the bus then makes is a valid envelope.
#include <cstddef>
#include <cstdint>
#include <string>

#include "bus/bus.hpp"
#include "bus/json_out.hpp"

using namespace tether;
using namespace tether::bus;

namespace {

constexpr std::int64_t kNow = 1'700'000'000'000;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

std::string js_text(const Json& j) {
  std::string out;
  append_json(out, j, JsonNumbers::js_double);
  return out;
}

struct Reader {
  const std::uint8_t* data;
  std::size_t size, pos = 1;
  std::string field() {
    if (pos + 2 > size) return {};
    const std::size_t len = std::min<std::size_t>(data[pos] | data[pos + 1] << 8, size - pos - 2);
    std::string out(reinterpret_cast<const char*>(data + pos + 2), len);
    pos += 2 + len;
    return out;
  }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4 && pos < size; ++i) v |= std::uint32_t(data[pos++]) << (8 * i);
    return v;
  }
};

// A bus that knows peer "p" on connection "c", announced with handoff-v1 (so a handoff can go).
Bus make_bus() {
  BusConfig c;
  c.self = Identity{"me", "agent", "Me", "i0"};
  Bus bus(c);
  bus.handle_connection_open("c", kNow);
  Envelope a;
  a.id = "a1";
  a.type = MessageType::announce;
  a.from = Identity{"p", "agent", "P", "ip"};
  a.ts = double(kNow);
  a.payload = Json{{"skills", Json::array({kHandoffCapability})}};
  const std::string t = serialize_envelope(a);
  bus.handle_text("c", ByteView(std::string_view(t)), kNow);
  (void)drain_events(bus);
  while (auto t2 = bus.poll_transmit()) bus.handle_transmit_result(t2->token, true, kNow);
  return bus;
}

void check_refusal(const BusError& e) {
  check(!e.detail.empty());
}

// The queued text is an envelope the core would take from a peer, and says what it was given.
Envelope check_sent(const Result<Sent, BusError>& r, MessageType type) {
  check(r->text != nullptr);
  auto e = parse_envelope(ByteView(std::string_view(*r->text)));
  check(e.ok());
  check(e->type == type && e->id == r->envelope.id);
  check(serialize_envelope(e.value()) == *r->text);
  return std::move(e.value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const unsigned tool = data[0] & 3;
  const bool has_topic = data[0] & 4;
  Reader in{data, size};
  const std::string peer = in.field(), body = in.field(), topic_text = in.field();
  const std::optional<std::string> topic =
      has_topic ? std::optional<std::string>(topic_text) : std::nullopt;
  // The JSON text JSON.stringify made; parse_json's refusal becomes null, as the bindings do.
  JsonParse parsed = parse_json(ByteView(std::string_view(body)));
  const Json value = parsed.ok() ? parsed.value : Json(nullptr);
  // Any bus type: the MCP schema allows a few, the CLI and the glue pass any name the core knows.
  const MessageType type = MessageType((data[0] >> 3) % kMessageTypeCount);

  Bus bus = make_bus();
  switch (tool) {
    case 0: {
      auto r = bus.send(peer, type, value, topic, kNow);
      if (!r) {
        check_refusal(r.error());
        break;
      }
      const Envelope e = check_sent(r, type);
      check(e.to == peer && e.topic == topic);
      check(js_text(e.payload_value()) == js_text(value));
      break;
    }
    case 1: {
      auto r = bus.broadcast(type, value, topic, kNow);
      if (!r) {
        check_refusal(r.error());
        break;
      }
      const Envelope e = check_sent(r, type);
      check(!e.to && e.topic == topic);
      check(js_text(e.payload_value()) == js_text(value));
      break;
    }
    case 2: {
      auto r = bus.request_history(peer, value, kNow);
      if (!r) {
        check_refusal(r.error());
        break;
      }
      const Envelope e = check_sent(r, MessageType::history_request);
      check(e.to == peer);
      const Json p = e.payload_value();
      check(p.is_object() && p.contains("count") && p["count"].is_number_integer());
      const std::int64_t n = p["count"].get<std::int64_t>();
      check(n >= 1 && n <= kHistoryMaxRequest);
      break;
    }
    case 3: {
      const std::int64_t expires_at = kNow + std::int64_t(in.u32());
      auto h = bus.handoff(peer, body, expires_at, kNow);
      if (!h) {
        check_refusal(h.error());
        break;
      }
      check(h->text != nullptr && h->to == peer);
      auto e = parse_envelope(ByteView(std::string_view(*h->text)));
      check(e.ok() && e->type == MessageType::handoff && e->to == peer);
      auto p = check_handoff(e.value());
      check(p.ok());
      check(p->expires_at == expires_at && expires_at - kNow <= kHandoffMaxTtlMs);
      check(e->payload_value()["request"] == body);
      break;
    }
  }
  for (int i = 0; i < 64; ++i) {
    auto t = bus.poll_transmit();
    if (!t) break;
    check(parse_envelope(ByteView(std::string_view(*t->text))).ok());
    bus.handle_transmit_result(t->token, true, kNow);
  }
  return 0;
}
