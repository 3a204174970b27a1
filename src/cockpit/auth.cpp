#include "cockpit/auth.hpp"

#include "common/json.hpp"
#include "wire/limits.hpp"

namespace tether::cockpit {

Result<AuthTable, std::string> AuthTable::parse(ByteView file) {
  if (file.size > kMaxAuthFileBytes) return err(std::string("the auth file is over 1 MiB"));
  JsonParse parsed = parse_json(file);
  if (!parsed.ok())
    return err(std::string("the auth file is not valid JSON (") + json_error_name(parsed.error) +
               "); expected {\"tokens\": [{\"token\", \"roles\"?, \"scopes\"?}]}");
  const Json& root = parsed.value;
  if (!root.is_object() || !root.contains("tokens") || !root["tokens"].is_array())
    return err(std::string("the auth file must be an object with a tokens array"));
  const Json& tokens = root["tokens"];
  if (tokens.size() > kMaxAuthTokens)
    return err("the auth file lists more than " + std::to_string(kMaxAuthTokens) + " tokens");
  AuthTable table;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string where = "tokens[" + std::to_string(i) + "]";
    const Json& t = tokens[i];
    if (!t.is_object()) return err(where + " must be an object");
    for (auto it = t.begin(); it != t.end(); ++it) {
      if (it.key() != "token" && it.key() != "name" && it.key() != "roles" && it.key() != "scopes")
        return err(where + "." + it.key() + " is not a known key (token, name, roles, scopes)");
    }
    auto token = t.contains("token") ? json_string(t["token"]) : std::nullopt;
    if (!token || token->size() < kMinTokenChars || token->size() > wire::kMaxMessageTextChars)
      return err(where + ".token must be a string of " + std::to_string(kMinTokenChars) + " to " +
                 std::to_string(wire::kMaxMessageTextChars) + " characters");
    TokenGrant g;
    if (t.contains("name")) {
      auto name = json_string(t["name"]);
      if (!name) return err(where + ".name must be a string");
      g.name = std::string(*name);
    }
    if (t.contains("roles")) {
      const Json& roles = t["roles"];
      if (!roles.is_array() || roles.empty() || roles.size() > 2)
        return err(where + ".roles must be a non-empty array of \"robot\" and \"viewer\"");
      g.robot = g.viewer = false;
      for (const Json& r : roles) {
        auto s = json_string(r);
        if (s && *s == "robot")
          g.robot = true;
        else if (s && *s == "viewer")
          g.viewer = true;
        else
          return err(where + ".roles may hold only \"robot\" and \"viewer\"");
      }
    }
    if (t.contains("scopes")) {
      const Json& scopes = t["scopes"];
      if (!scopes.is_array() || scopes.size() > kMaxScopesPerToken)
        return err(where + ".scopes must be an array of at most " +
                   std::to_string(kMaxScopesPerToken) + " strings");
      for (const Json& sc : scopes) {
        auto s = json_string(sc);
        if (!s || s->empty() || s->size() > wire::kMaxShortTextChars)
          return err(where + ".scopes entries must be strings of 1 to 256 characters");
        g.scopes.insert(std::string(*s));
      }
    }
    if (!table.grants_.emplace(std::string(*token), std::move(g)).second)
      return err(where + ".token repeats an earlier token; each token appears once");
  }
  return table;
}

const TokenGrant* AuthTable::check(std::string_view token, bool robot_role) const {
  auto it = grants_.find(std::string(token));
  if (it == grants_.end()) return nullptr;
  if (robot_role ? !it->second.robot : !it->second.viewer) return nullptr;
  return &it->second;
}

}  // namespace tether::cockpit
