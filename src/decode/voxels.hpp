// voxels.zlib.v1 (cockpit-wire-v7-notes.md § Encodings; defined by this project): zlib of n
// little-endian records {int16 ix, int16 iy, int16 iz, uint8 value}, meta {n, res, origin:
// [x, y, z]}, n <= 2^21. Decoded into Float32 voxel-centre positions and Float32 RGB colours,
// the layout three.js InstancedMesh attributes take without conversion.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "common/bytes.hpp"
#include "common/json.hpp"
#include "common/result.hpp"
#include "decode/errors.hpp"

namespace tether::decode {

struct VoxelMeta {
  std::uint32_t n = 0;
  double res = 0;
  double origin_x = 0, origin_y = 0, origin_z = 0;
};

Result<VoxelMeta, DecodeError> parse_voxel_meta(const Json& meta);

class VoxelDecoder {
 public:
  // On failure the positions and colours keep the last good frame.
  std::optional<DecodeError> decode(const Json& meta, ByteView payload);

  const VoxelMeta& meta() const { return meta_; }
  const std::vector<float>& positions() const { return positions_; }  // 3 per voxel, x y z
  const std::vector<float>& colours() const { return colours_; }      // 3 per voxel, r g b in 0..1

 private:
  VoxelMeta meta_;
  std::vector<float> positions_, colours_;
  Bytes records_;
};

}  // namespace tether::decode
