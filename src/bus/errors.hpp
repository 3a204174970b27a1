// Why the bus refused something (agent-bus-and-swarm.md § Untrusted wire input). A refusal is a
// value naming the field and the fix; it never tears a connection or the room down.
#pragma once
#include <string>
#include <string_view>

namespace tether::bus {

enum class BusErrorCode {
  // the envelope itself
  too_large,
  not_json,
  not_object,
  bad_version,
  missing_field,
  unknown_field,
  bad_field,
  empty_string,
  too_long,
  nul_in_string,
  not_finite,
  unknown_type,
  // identity and routing
  forged_identity,
  not_for_us,
  unknown_peer,
  // payloads with rules
  bad_payload,
  handoff_too_large,
  handoff_expiry,
  handoff_expired,
  handoff_unsupported,
  handoff_unknown,
  // sending
  queue_full,
  not_accepted,
  closed,
  // the simple one-to-one transfer
  file_too_large,
  too_many_transfers,
  over_promised,
  unknown_transfer,
  not_owner,
  duplicate_transfer,
  bad_chunk,
  size_mismatch,
  sha256_mismatch,
};
constexpr int kBusErrorCodeCount = 33;

std::string_view bus_error_name(BusErrorCode code);

struct BusError {
  BusErrorCode code = BusErrorCode::bad_field;
  std::string field;   // "from.name", "payload.expiresAt", ...
  std::string detail;  // what went wrong and what to do about it
};

inline BusError bus_error(BusErrorCode code, std::string field, std::string detail) {
  return BusError{code, std::move(field), std::move(detail)};
}

}  // namespace tether::bus
