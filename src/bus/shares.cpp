// See shares.hpp.
#include "bus/shares.hpp"

#include <cctype>

#include "bus/limits.hpp"

namespace tether::bus {

namespace {

constexpr std::string_view kWhitespace = " \t\r\n\f\v";

std::string_view trim(std::string_view s) {
  const auto a = s.find_first_not_of(kWhitespace);
  if (a == std::string_view::npos) return {};
  const auto b = s.find_last_not_of(kWhitespace);
  return s.substr(a, b - a + 1);
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
  c.path = path.value_or("");
  if (auto bad = check_args(c, "payload.args")) return Result<ShareCommand, BusError>(err(*bad));
  return Result<ShareCommand, BusError>(std::move(c));
}

Result<Json, BusError> share_command_payload(const ShareCommand& c) {
  ShareCommand t = c;
  t.share = std::string(trim(c.share));
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
