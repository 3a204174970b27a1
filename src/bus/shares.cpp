// See shares.hpp.
#include "bus/shares.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include "bus/limits.hpp"
#include "bus/name_collation.hpp"
#include "common/utf8.hpp"

namespace tether::bus {

namespace {

// The public implementation reads its strings with String.prototype.trim(): so do we.
std::string_view trim(std::string_view s) {
  return js_trim(s);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// args[key] as a trimmed, bounded string; nullopt when absent, not a string or blank (the public
// implementation treats those alike: the argument is missing).
std::optional<std::string> arg(const Json& args, const char* key) {
  if (!args.is_object()) return std::nullopt;
  auto it = args.find(key);
  if (it == args.end()) return std::nullopt;
  auto s = json_string(*it);
  if (!s) return std::nullopt;
  const std::string_view t = trim(*s);
  if (t.empty()) return std::nullopt;
  return std::string(t);
}

std::optional<BusError> check_args(const ShareCommand& c, const std::string& prefix) {
  if (c.kind == ShareCommand::Kind::shares) return std::nullopt;
  if (auto e = check_string(c.share, kMaxShareNameChars, prefix + ".share")) return e;
  if (c.path.empty() && c.kind == ShareCommand::Kind::list_files) return std::nullopt;
  return check_string(c.path, kMaxSharePathChars, prefix + ".path");
}

}  // namespace

std::string share_path(std::string_view raw) {
  std::string slashed(raw);
  for (char& ch : slashed)
    if (ch == '\\') ch = '/';
  const std::string_view p = trim(slashed);
  const bool absolute = !p.empty() && p.front() == '/';
  std::vector<std::string_view> parts;
  for (std::size_t at = 0; at <= p.size();) {
    std::size_t end = p.find('/', at);
    if (end == std::string_view::npos) end = p.size();
    const std::string_view part = p.substr(at, end - at);
    at = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..")
        parts.pop_back();
      else if (!absolute)
        parts.push_back(part);  // above a relative start: kept (normalize does)
      continue;
    }
    parts.push_back(part);
  }
  std::string out;
  for (const auto& part : parts) {
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

bool valid_share_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxShareNameChars || name == "." || name == "..") return false;
  for (char ch : name) {
    const bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                       (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
    if (!plain) return false;
  }
  return true;
}

Json list_files_result(std::string_view share, std::string_view path,
                       std::vector<ShareEntry> entries, std::size_t omitted) {
  // Folders, then files, each in the public implementation's order (name_collation.hpp); a stable
  // sort, as JavaScript's, so names the collation cannot tell apart keep the host's order.
  std::vector<std::pair<std::string, std::size_t>> keys;
  keys.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i)
    keys.emplace_back(std::string(1, entries[i].dir ? '\0' : '\1') + name_sort_key(entries[i].name),
                      i);
  std::stable_sort(keys.begin(), keys.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<ShareEntry> sorted;
  sorted.reserve(entries.size());
  for (const auto& k : keys) sorted.push_back(std::move(entries[k.second]));
  entries = std::move(sorted);
  const bool truncated = entries.size() > kShareLevelMaxEntries;
  if (truncated) entries.resize(kShareLevelMaxEntries);
  Json listed = Json::array();
  for (const ShareEntry& e : entries) {
    std::string at = path.empty() ? e.name : std::string(path) + "/" + e.name;
    listed.push_back(Json{{"name", e.name},
                          {"path", std::move(at)},
                          {"type", e.dir ? "dir" : "file"},
                          {"size", e.dir ? Json(nullptr) : Json(e.size)}});
  }
  return Json{{"share", share},
              {"path", path},
              {"entries", std::move(listed)},
              {"truncated", truncated},
              {"omitted", omitted}};
}

std::string_view share_command_name(ShareCommand::Kind k) {
  switch (k) {
    case ShareCommand::Kind::shares: return "shares";
    case ShareCommand::Kind::list_files: return "list-files";
    case ShareCommand::Kind::get_file: return "get-file";
  }
  return "shares";
}

std::optional<Result<ShareCommand, BusError>> parse_share_command(const Envelope& e) {
  if (e.type != MessageType::command) return std::nullopt;
  Json scratch;
  const Json& p = e.payload_dom(scratch);
  if (!p.is_object()) return std::nullopt;
  auto name_it = p.find("command");
  if (name_it == p.end()) return std::nullopt;
  auto raw = json_string(*name_it);
  if (!raw || raw->size() > 3 * kMaxCommandNameChars) return std::nullopt;
  const std::string name = lower(trim(*raw));
  ShareCommand c;
  if (name == share_command_name(ShareCommand::Kind::shares))
    c.kind = ShareCommand::Kind::shares;
  else if (name == share_command_name(ShareCommand::Kind::list_files))
    c.kind = ShareCommand::Kind::list_files;
  else if (name == share_command_name(ShareCommand::Kind::get_file))
    c.kind = ShareCommand::Kind::get_file;
  else
    return std::nullopt;
  if (c.kind == ShareCommand::Kind::shares) return Result<ShareCommand, BusError>(std::move(c));
  static const Json kNone = nullptr;
  auto a = p.find("args");
  const Json& args = a == p.end() ? kNone : *a;
  auto share = arg(args, "share");
  auto path = arg(args, "path");
  const std::string usage =
      std::string(share_command_name(c.kind)) + (c.kind == ShareCommand::Kind::get_file
                                                     ? " requires args.share and args.path"
                                                     : " requires args.share");
  if (!share || (c.kind == ShareCommand::Kind::get_file && !path))
    return Result<ShareCommand, BusError>(
        err(bus_error(BusErrorCode::bad_payload, "payload.args", usage)));
  c.share = std::move(*share);
  c.path = share_path(path.value_or(""));
  if (c.kind == ShareCommand::Kind::get_file && c.path.empty())
    return Result<ShareCommand, BusError>(
        err(bus_error(BusErrorCode::bad_payload, "payload.args.path",
                      "get-file names a file inside the share; this path is the share's root")));
  if (auto bad = check_args(c, "payload.args")) return Result<ShareCommand, BusError>(err(*bad));
  return Result<ShareCommand, BusError>(std::move(c));
}

Result<Json, BusError> share_command_payload(const ShareCommand& c) {
  ShareCommand t = c;
  t.share = std::string(trim(c.share));
  // Sent as given (trimmed): the owner reads it with share_path, and reading an already read path
  // again need not give the same (`./ a` reads as ` a`, which trims to `a`).
  t.path = std::string(trim(c.path));
  if (t.kind != ShareCommand::Kind::shares) {
    if (t.share.empty() || (t.kind == ShareCommand::Kind::get_file && t.path.empty()))
      return err(bus_error(BusErrorCode::bad_payload, "args",
                           std::string(share_command_name(t.kind)) + " needs a share" +
                               (t.kind == ShareCommand::Kind::get_file ? " and a path" : "")));
    if (auto bad = check_args(t, "args")) return err(*bad);
  }
  Json j{{"command", std::string(share_command_name(t.kind))}};
  if (t.kind == ShareCommand::Kind::list_files) {
    j["args"] = Json{{"share", t.share}};
    if (!t.path.empty()) j["args"]["path"] = t.path;
  } else if (t.kind == ShareCommand::Kind::get_file) {
    j["args"] = Json{{"share", t.share}, {"path", t.path}};
  }
  return j;
}

}  // namespace tether::bus
