#include "decode/voxels.hpp"

#include <array>

#include "decode/inflate.hpp"
#include "decode/limits.hpp"

namespace tether::decode {
namespace {

// Value 0..255 to a perceptually ordered blue-green-yellow ramp, precomputed once.
const std::array<std::array<float, 3>, 256>& voxel_ramp() {
  static const auto ramp = [] {
    std::array<std::array<float, 3>, 256> r{};
    for (int v = 0; v < 256; ++v) {
      const float t = float(v) / 255.0f;
      r[std::size_t(v)] = {0.15f + 0.8f * t * t, 0.25f + 0.6f * t, 0.7f - 0.55f * t};
    }
    return r;
  }();
  return ramp;
}

std::int16_t read_i16_le(const std::uint8_t* p) {
  return std::int16_t(std::uint16_t(p[0] | p[1] << 8));
}

}  // namespace

Result<VoxelMeta, DecodeError> parse_voxel_meta(const Json& meta) {
  if (!meta.is_object()) return err(DecodeError::bad_meta);
  auto n = meta.find("n"), res = meta.find("res"), origin = meta.find("origin");
  if (n == meta.end() || res == meta.end() || origin == meta.end())
    return err(DecodeError::bad_meta);
  auto nv = json_integer(*n, 0, kMaxVoxels);
  auto rv = json_finite(*res);
  if (!nv || !rv || *rv <= 0) return err(DecodeError::bad_meta);
  if (!origin->is_array() || origin->size() != 3) return err(DecodeError::bad_meta);
  auto x = json_finite((*origin)[0]), y = json_finite((*origin)[1]), z = json_finite((*origin)[2]);
  if (!x || !y || !z) return err(DecodeError::bad_meta);
  return VoxelMeta{std::uint32_t(*nv), *rv, *x, *y, *z};
}

std::optional<DecodeError> VoxelDecoder::decode(const Json& meta_json, ByteView payload) {
  if (payload.size > kMaxCompressedBytes) return DecodeError::payload_too_large;
  auto meta = parse_voxel_meta(meta_json);
  if (!meta) return meta.error();
  const std::size_t n = meta->n;
  if (records_.size() < n * kVoxelRecordBytes) records_.resize(n * kVoxelRecordBytes);
  if (auto e = inflate_exact(payload, records_.data(), n * kVoxelRecordBytes)) return e;
  meta_ = meta.value();
  positions_.resize(n * 3);
  colours_.resize(n * 3);
  const auto& ramp = voxel_ramp();
  const float res = float(meta_.res);
  // Voxel centres: origin + (index + 0.5) * res.
  const float ox = float(meta_.origin_x) + res * 0.5f, oy = float(meta_.origin_y) + res * 0.5f,
              oz = float(meta_.origin_z) + res * 0.5f;
  const std::uint8_t* r = records_.data();
  for (std::size_t i = 0; i < n; ++i, r += kVoxelRecordBytes) {
    positions_[3 * i] = ox + res * float(read_i16_le(r));
    positions_[3 * i + 1] = oy + res * float(read_i16_le(r + 2));
    positions_[3 * i + 2] = oz + res * float(read_i16_le(r + 4));
    const auto& c = ramp[r[6]];
    colours_[3 * i] = c[0];
    colours_[3 * i + 1] = c[1];
    colours_[3 * i + 2] = c[2];
  }
  return std::nullopt;
}

}  // namespace tether::decode
