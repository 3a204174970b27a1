// Helpers for the bus tests: drive a Bus's pull loop against a scripted transport that records
// every offered text and accepts or rejects it, and build envelopes by hand.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "bus/bus.hpp"

namespace bus_test {

using namespace tether;
using namespace tether::bus;

struct Offer {
  std::string conn;
  std::string text;
  bool accepted;
};

// Offers everything the bus wants to send; `accept(conn, text)` plays the transport.
inline std::vector<Offer> pump(
    Bus& b, const std::function<bool(const std::string&, const std::string&)>& accept) {
  std::vector<Offer> out;
  for (int guard = 0; guard < 100000; ++guard) {
    auto t = b.poll_transmit();
    if (!t) break;
    const bool ok = accept(t->conn, *t->text);
    out.push_back(Offer{t->conn, *t->text, ok});
    b.handle_transmit_result(t->token, ok, 0);
  }
  return out;
}
inline std::vector<Offer> pump_all(Bus& b) {
  return pump(b, [](const std::string&, const std::string&) { return true; });
}
inline std::vector<Offer> pump_none(Bus& b) {
  return pump(b, [](const std::string&, const std::string&) { return false; });
}

inline Identity ident(const std::string& stream, const std::string& instance = "i1") {
  return Identity{stream, "agent", "Agent " + stream, instance};
}

inline BusConfig config(const std::string& stream, bool handoffs = false, std::uint64_t seed = 7) {
  BusConfig c;
  c.self = ident(stream);
  c.seed = seed;
  c.accept_handoffs = handoffs;
  return c;
}

inline Envelope env(const std::string& id, MessageType type, const Identity& from,
                    std::optional<std::string> to, Json payload = Json::object(),
                    double ts = 1000) {
  Envelope e;
  e.id = id;
  e.type = type;
  e.from = from;
  e.to = std::move(to);
  e.ts = ts;
  e.payload = std::move(payload);
  return e;
}

inline void deliver(Bus& b, const std::string& conn, const Envelope& e, std::int64_t now = 1000) {
  const std::string t = serialize_envelope(e);
  b.handle_text(conn, ByteView(std::string_view(t)), now);
}

inline Envelope parsed(const std::string& text) {
  auto e = parse_envelope(ByteView(std::string_view(text)));
  return e.ok() ? e.value() : Envelope{};
}

// The offered envelopes of a type, in order.
inline std::vector<Envelope> of_type(const std::vector<Offer>& offers, MessageType t,
                                     bool accepted_only = true) {
  std::vector<Envelope> v;
  for (const auto& o : offers) {
    if (accepted_only && !o.accepted) continue;
    Envelope e = parsed(o.text);
    if (e.type == t && !e.id.empty()) v.push_back(e);
  }
  return v;
}

inline std::vector<Event> events_of(std::vector<Event> all, EventKind k) {
  std::vector<Event> v;
  for (auto& e : all)
    if (e.kind == k) v.push_back(std::move(e));
  return v;
}

}  // namespace bus_test
