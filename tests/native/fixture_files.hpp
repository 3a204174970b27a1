// Loads golden vectors for the native suite: our own (fixtures/) and other
// implementations' (fixtures/compat/).
#pragma once
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "common/base64.hpp"
#include "common/json.hpp"

namespace tether::testing {

inline Json load_json_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  INFO("reading " << path << " (run `make fixtures` to write ours; fixtures/compat/ is committed)");
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  auto parsed = parse_json(ByteView(std::string_view(text)));
  REQUIRE(parsed.ok());
  return parsed.value;
}

inline Json fixture(const std::string& name) {
  return load_json_file(std::string(TETHER_FIXTURES_DIR) + "/" + name);
}
inline Json compat(const std::string& name) {
  return load_json_file(std::string(TETHER_COMPAT_DIR) + "/" + name);
}

inline Bytes b64(const Json& v) {
  auto r = base64_decode(v.get<std::string>());
  REQUIRE(r.has_value());
  return *r;
}

inline std::string as_string(const Bytes& b) {
  return std::string(b.begin(), b.end());
}

}  // namespace tether::testing
