// Names of the bus's refusal codes: the strings web/glue/bus.d.ts lists as BusErrorCode.
#include "bus/errors.hpp"

namespace tether::bus {

std::string_view bus_error_name(BusErrorCode code) {
  switch (code) {
    case BusErrorCode::too_large: return "too_large";
    case BusErrorCode::not_json: return "not_json";
    case BusErrorCode::not_object: return "not_object";
    case BusErrorCode::bad_version: return "bad_version";
    case BusErrorCode::missing_field: return "missing_field";
    case BusErrorCode::unknown_field: return "unknown_field";
    case BusErrorCode::bad_field: return "bad_field";
    case BusErrorCode::empty_string: return "empty_string";
    case BusErrorCode::too_long: return "too_long";
    case BusErrorCode::nul_in_string: return "nul_in_string";
    case BusErrorCode::not_finite: return "not_finite";
    case BusErrorCode::unknown_type: return "unknown_type";
    case BusErrorCode::forged_identity: return "forged_identity";
    case BusErrorCode::not_for_us: return "not_for_us";
    case BusErrorCode::unknown_peer: return "unknown_peer";
    case BusErrorCode::bad_payload: return "bad_payload";
    case BusErrorCode::handoff_too_large: return "handoff_too_large";
    case BusErrorCode::handoff_expiry: return "handoff_expiry";
    case BusErrorCode::handoff_expired: return "handoff_expired";
    case BusErrorCode::handoff_unsupported: return "handoff_unsupported";
    case BusErrorCode::handoff_unknown: return "handoff_unknown";
    case BusErrorCode::queue_full: return "queue_full";
    case BusErrorCode::not_accepted: return "not_accepted";
    case BusErrorCode::closed: return "closed";
    case BusErrorCode::file_too_large: return "file_too_large";
    case BusErrorCode::too_many_transfers: return "too_many_transfers";
    case BusErrorCode::over_promised: return "over_promised";
    case BusErrorCode::unknown_transfer: return "unknown_transfer";
    case BusErrorCode::not_owner: return "not_owner";
    case BusErrorCode::duplicate_transfer: return "duplicate_transfer";
    case BusErrorCode::bad_chunk: return "bad_chunk";
    case BusErrorCode::size_mismatch: return "size_mismatch";
    case BusErrorCode::sha256_mismatch: return "sha256_mismatch";
  }
  return "bad_field";
}

}  // namespace tether::bus
