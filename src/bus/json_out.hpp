// The bus's results as JSON values in the shapes web/glue/bus.d.ts declares (BusError, BusPeer,
// OutgoingHandoff, the handler events). One place turns core values into the JS API's shapes, so
// the Embind layer stays marshalling only and the native suite can check the same shapes.
#pragma once
#include "bus/bus.hpp"
#include "bus/transfer.hpp"

namespace tether::bus {

Json error_json(const BusError& e);  // {ok:false, code, field, detail}
Json identity_json(const Identity& id);
Json peer_json(const PeerInfo& p);                     // BusPeer
Json outgoing_handoff_json(const OutgoingHandoff& h);  // OutgoingHandoff
// One event: {kind: "message"|"rejected"|"handoff"|"handoffStored"|"handoffExpired"|"confirmation"|"peer", ...}.
Json event_json(const Event& e, const Bus& bus);
// The same event as JSON text. A message event, the one every received envelope makes, is
// written directly (no DOM around the envelope); the others go through event_json.
void append_event_json(std::string& out, const Event& e, const Bus& bus);
Json receipt_json(const Receipt& r, const Envelope& e, std::string_view request_id,
                  std::string_view peer);
// Checks a configuration before a Bus is built from it (our own identity is held to the rules).
std::optional<BusError> check_config(const BusConfig& c);
// The parsed form of `{self:{...}, seed, acceptHandoffs, announce}` (the glue's options).
Result<BusConfig, BusError> config_from_json(const Json& j);
Json limits_json();

}  // namespace tether::bus
