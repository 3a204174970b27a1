// The shared-folder commands (agent-bus-notes.md § Bus messages; agent-bus-and-swarm.md § Security
// boundary): `command {command: "shares"}`, `{command: "list-files", args: {share, path?}}` and
// `{command: "get-file", args: {share, path}}`, as the public implementation sends and reads them.
// The owner answers the first two with a command_response (Bus::respond) and get-file with an
// ordinary, untagged file_offer and its chunks (transfer.hpp), then a command_response naming the
// transfer. This file holds the wire shapes and their bounds; the files are the host's to read,
// with real-path containment.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// A name a user may give a share (`tether agent share add NAME DIR`): 1 to kMaxShareNameChars
// letters, digits, '.', '_' or '-', and neither "." nor "..". Peers send it back in list-files and
// get-file and type it on their command lines, so it is one plain word that reads the same
// everywhere and can never be taken for a path.
bool valid_share_name(std::string_view name);

// One child of a shared folder as the owner's host read it, its real-path containment applied.
struct ShareEntry {
  std::string name;
  bool dir = false;
  std::uint64_t size = 0;  // a file's size in bytes; a folder's is null on the wire
};

// The list-files answer's result, in the public implementation's shape: {share, path, entries:
// [{name, path, type: "dir" | "file", size}], truncated, omitted}. Folders first, then files,
// each by name as JavaScript's localeCompare orders them (name_collation.hpp); at most
// kShareLevelMaxEntries of them, `truncated` when the folder held more. An entry's path is
// `path`/name ("" is the share's root); `omitted` counts the children the host left out
// (escaping, broken or unreadable).
Json list_files_result(std::string_view share, std::string_view path,
                       std::vector<ShareEntry> entries, std::size_t omitted);

std::string_view share_command_name(ShareCommand::Kind k);  // "shares", "list-files", "get-file"

// nullopt: `e` is not one of the three (another command, or not a command at all). Otherwise the
// parsed command, or why its arguments are refused: the owner answers that with
// respond(command, {error: detail}), never with silence.
std::optional<Result<ShareCommand, BusError>> parse_share_command(const Envelope& e);

// The command payload {command, args?} for `c`, checked against the same bounds (an error is
// refused here, before it is sent).
Result<Json, BusError> share_command_payload(const ShareCommand& c);

}  // namespace tether::bus
