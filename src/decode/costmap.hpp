// costmap.zlib.v1 (cockpit-wire-v7-notes.md § Encodings): zlib of w*h uint8 cells, row-major,
// row 0 at world min-y; 0..100 cost, 255 unknown. Decoded straight into an RGBA image ready for a
// canvas (putImageData) or a texture, with image row 0 at world max-y so north is up.
#pragma once
#include <array>
#include <cstdint>
#include <optional>

#include "common/bytes.hpp"
#include "common/json.hpp"
#include "common/result.hpp"
#include "decode/errors.hpp"

namespace tether::decode {

struct CostmapMeta {
  std::uint32_t w = 0, h = 0;
  double res = 0;                                     // metres per cell
  double origin_x = 0, origin_y = 0, origin_yaw = 0;  // world pose of cell (0, 0)'s corner
};

// Checks meta {w, h, res, origin: [x, y, yaw]}: w, h integers in 1..2048, res > 0, finite origin.
Result<CostmapMeta, DecodeError> parse_costmap_meta(const Json& meta);

// RGBA per cell value. Unknown, free, graded cost and lethal cells get distinct colours; values
// 101..254 (outside the encoding) render as unknown.
using Palette = std::array<std::uint32_t, 256>;  // 0xAABBGGRR, the byte order of ImageData
const Palette& costmap_palette();

// Reusable decoder: buffers grow to the largest map seen and are then reused, so a stream of
// maps allocates nothing per frame.
class CostmapDecoder {
 public:
  // On success the cells and the RGBA image describe the new map; on failure both keep the last
  // good map.
  std::optional<DecodeError> decode(const Json& meta, ByteView payload);

  const CostmapMeta& meta() const { return meta_; }
  ByteView cells() const { return ByteView(cells_.data(), std::size_t(meta_.w) * meta_.h); }
  // w*h*4 bytes, row 0 = world max-y.
  ByteView rgba() const { return ByteView(rgba_.data(), std::size_t(meta_.w) * meta_.h * 4); }

 private:
  CostmapMeta meta_;
  Bytes cells_, rgba_;
  Bytes scratch_;  // inflate target, swapped in on success
};

// Writes the RGBA image of `cells` (w*h, row 0 at min-y) into `rgba` (w*h*4), flipped north-up.
void colourise_costmap(const std::uint8_t* cells, std::uint32_t w, std::uint32_t h,
                       std::uint8_t* rgba);

}  // namespace tether::decode
