// The relay's auth file (cockpit-wire-protocol.md § Sessions and messages: "a token when the relay
// has an auth file"; v7 notes § Publishing: requiredScope). This project's format:
//   {"tokens": [{"token": "…", "name"?: "…", "roles"?: ["robot"|"viewer"], "scopes"?: ["…"]}]}
// A token without roles may open either role. Parsing never throws; errors name the entry.
#pragma once
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/bytes.hpp"
#include "common/result.hpp"

namespace tether::cockpit {

constexpr std::size_t kMaxAuthFileBytes = 1024 * 1024;
constexpr std::size_t kMaxAuthTokens = 4096;
constexpr std::size_t kMinTokenChars = 16;  // shorter tokens are guessable
constexpr std::size_t kMaxScopesPerToken = 64;

struct TokenGrant {
  std::string name;
  bool robot = true;
  bool viewer = true;
  std::set<std::string> scopes;
};

class AuthTable {
 public:
  // Parses and checks an auth file's bytes.
  static Result<AuthTable, std::string> parse(ByteView file);
  // The grant for a token and role, or nothing (auth_failed).
  const TokenGrant* check(std::string_view token, bool robot_role) const;
  std::size_t size() const { return grants_.size(); }

 private:
  std::unordered_map<std::string, TokenGrant> grants_;
};

}  // namespace tether::cockpit
