// libFuzzer harness: the decode core's parsers (zlib costmaps and voxels, JPEG checks, JSON
// encodings) under hostile payloads and metas. Properties: nothing crashes, no output grows past
// what the meta allows, and a failed frame leaves the last good value untouched.
#include <cstddef>
#include <cstdint>
#include <string>

#include "decode/channel_decoder.hpp"

using namespace tether;
using namespace tether::decode;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  static const char* kEncodings[] = {"costmap.zlib.v1", "voxels.zlib.v1", "jpeg.v1",
                                     "pose.json.v1",    "stats.json.v1",  "other.json.v2",
                                     "pointcloud.v9"};
  const char* encoding = kEncodings[data[0] % 7];
  // Small sides keep each run fast; the bounds themselves are covered by unit tests.
  const std::uint32_t w = 1 + data[1] % 64, h = 1 + data[2] % 64;
  Json meta;
  switch (data[3] % 4) {
    case 0: meta = Json{{"w", w}, {"h", h}, {"res", 0.05}, {"origin", {0.0, 0.0, 0.0}}}; break;
    case 1: meta = Json{{"n", w * h}, {"res", 0.1}, {"origin", {0.0, 0.0, 0.0}}}; break;
    case 2: meta = Json{{"w", w}, {"h", h}}; break;
    default: meta = Json(nullptr); break;
  }
  ByteView payload(data + 4, size - 4);
  ChannelDecoder dec(encoding);
  auto first = dec.decode(meta, payload);
  if (!first && dec.kind() == EncodingKind::costmap) {
    if (dec.costmap().cells().size != std::size_t(w) * h) __builtin_trap();
    if (dec.costmap().rgba().size != std::size_t(w) * h * 4) __builtin_trap();
  }
  if (!first && dec.kind() == EncodingKind::voxels &&
      dec.voxels().positions().size() != std::size_t(w) * h * 3)
    __builtin_trap();
  // Feed the same decoder a corrupt frame: the last good value must not change.
  const std::string before =
      dec.kind() == EncodingKind::costmap ? std::string(dec.costmap().rgba().as_chars()) : "";
  const std::uint8_t junk[3] = {0x78, 0x9c, 0xff};
  if (!dec.decode(meta, ByteView(junk, 3)) && dec.kind() == EncodingKind::costmap) __builtin_trap();
  if (dec.kind() == EncodingKind::costmap && std::string(dec.costmap().rgba().as_chars()) != before)
    __builtin_trap();
  return 0;
}
