// The shared-folder commands (agent-bus-notes.md § Bus messages; agent-bus-and-swarm.md § Security
// boundary): `command {command: "shares"}`, `{command: "list-files", args: {share, path?}}` and
// `{command: "get-file", args: {share, path}}`, as the public implementation sends and reads them.
// The owner answers the first two with a command_response (Bus::respond) and get-file with an
// ordinary, untagged file_offer and its chunks (transfer.hpp), then a command_response naming the
// transfer. This file holds the wire shapes and their bounds; the files are the host's to read,
// with real-path containment.
#pragma once
#include <optional>
#include <string>

#include "bus/envelope.hpp"
#include "bus/errors.hpp"
#include "common/result.hpp"

namespace tether::bus {

struct ShareCommand {
  enum class Kind { shares, list_files, get_file } kind = Kind::shares;
  std::string share;  // list-files, get-file: the share's name, trimmed
  std::string path;   // list-files (may be empty: the share's root), get-file: share_path's
};

// A path inside a share as the owner reads it (and so as the puller must, to know the file it
// is sent): JavaScript-trimmed, backslashes as slashes (a Windows peer writes them), `.` and `..`
// folded as path.posix.normalize folds them, no leading or trailing slash; "" is the share's
// root. A leading `..` stays, for the owner's real-path containment to refuse. A puller sends
// the path as given and reads it so only to know the file's name.
std::string share_path(std::string_view raw);

std::string_view share_command_name(ShareCommand::Kind k);  // "shares", "list-files", "get-file"

// nullopt: `e` is not one of the three (another command, or not a command at all). Otherwise the
// parsed command, or why its arguments are refused: the owner answers that with
// respond(command, {error: detail}), never with silence.
std::optional<Result<ShareCommand, BusError>> parse_share_command(const Envelope& e);

// The command payload {command, args?} for `c`, checked against the same bounds (an error is
// refused here, before it is sent).
Result<Json, BusError> share_command_payload(const ShareCommand& c);

}  // namespace tether::bus
