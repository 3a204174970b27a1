// Bounds of the encodings the cockpit decodes (cockpit-wire-v7-notes.md § Encodings that the
// decoders handle). Each is checked before anything is inflated or allocated.
#pragma once
#include <cstddef>

namespace tether::decode {

constexpr std::size_t kMaxCompressedBytes = 8 * 1024 * 1024;  // costmap and voxel payloads
constexpr std::size_t kMaxCostmapSide = 2048;
constexpr std::size_t kMaxVoxels = std::size_t(1) << 21;
constexpr std::size_t kVoxelRecordBytes = 7;  // int16 ix, int16 iy, int16 iz, uint8 value
constexpr std::size_t kMaxImageSide = 16384;  // jpeg.v1 meta sanity bound (project choice)
constexpr std::size_t kMaxJsonPayloadBytes = 1024 * 1024;  // *.json.vN payloads (project choice)

// Costmap cell values: 0..100 is cost, 255 is unknown (ROS -1).
constexpr unsigned kCostFree = 0;
constexpr unsigned kCostLethal = 100;
constexpr unsigned kCostUnknown = 255;

}  // namespace tether::decode
