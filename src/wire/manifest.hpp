// Manifest v1 validation and normalisation (cockpit-wire-protocol.md § Manifest). Where v7 is
// silent, dimos v5 (its predecessor) decides: encodings and kinds are bounded, a row or column has
// at least one child, a panel is placed at most once across the layout and the pages, and unknown
// keys are ignored and dropped from the normal form, so a newer robot's manifest still validates.
//
// The normal form fills every default, so consumers never guess: a channel always has dir,
// delivery, params and publish; a panel always has title, channels and params; layout and pages
// are always present (layout is null only when no panel is left to place). Errors carry stable
// codes and the path of the offending value.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "common/result.hpp"

namespace tether::wire {

enum class ManifestErrorCode {
  not_an_object,
  unsupported_version,  // the SDK reports this as manifestUnsupported
  missing_field,
  wrong_type,
  bad_channel_id,  // empty, over 64 characters, or starting with '@'
  duplicate_channel,
  bad_value,  // dir, delivery, maxHz, encoding, kind, scope out of their domain
  publish_needs_tx,
  duplicate_panel,
  unknown_channel,  // a panel names a channel the manifest does not declare
  panel_rule,       // a known panel kind whose channels break its rule
  bad_layout,       // a malformed node, an empty row or column, a panel placed twice
  unknown_panel,    // layout or pages name a panel the manifest does not declare
  too_many,
};
constexpr std::size_t kManifestErrorCodeCount = 14;
std::string_view manifest_error_name(ManifestErrorCode c);

struct ManifestError {
  ManifestErrorCode code;
  std::string path;     // e.g. "channels[2].ch"
  std::string message;  // what is wrong and what is expected
};

using ManifestErrors = std::vector<ManifestError>;

// Validates a manifest object. On success returns the normal form; on failure, up to
// kMaxManifestErrors errors in document order.
Result<Json, ManifestErrors> validate_manifest(const Json& manifest);

}  // namespace tether::wire
