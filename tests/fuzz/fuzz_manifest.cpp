// libFuzzer harness: manifest v1 validation. Properties: nothing crashes; errors are bounded and
// explained; the normal form is a fixed point (validating it again gives it back unchanged).
#include <cstddef>
#include <cstdint>

#include "common/json.hpp"
#include "wire/limits.hpp"
#include "wire/manifest.hpp"

using namespace tether;
using namespace tether::wire;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxControlBytes) return 0;  // a manifest travels inside a 64 KiB hello
  JsonParse parsed = parse_json(ByteView(data, size));
  if (!parsed.ok()) return 0;
  auto r = validate_manifest(parsed.value);
  if (!r) {
    if (r.error().empty() || r.error().size() > kMaxManifestErrors) __builtin_trap();
    for (const auto& e : r.error()) {
      if (e.message.empty()) __builtin_trap();
    }
    return 0;
  }
  auto again = validate_manifest(r.value());
  if (!again || to_json(again.value()) != to_json(r.value())) __builtin_trap();
  return 0;
}
