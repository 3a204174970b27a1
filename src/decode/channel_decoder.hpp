// One channel's decoder as the cockpit uses it: picks the decoder by encoding, keeps the last
// good value when a frame fails, and counts frames and errors (cockpit-wire-v7-notes.md
// § Encodings: "An encoding with no decoder is not an error"; "A decoder that fails keeps the
// last good value and counts a decode error").
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.hpp"
#include "common/json.hpp"
#include "decode/costmap.hpp"
#include "decode/errors.hpp"
#include "decode/json_payloads.hpp"
#include "decode/voxels.hpp"

namespace tether::decode {

enum class EncodingKind { jpeg, costmap, voxels, pose, json, track, unsupported };
std::string_view encoding_kind_name(EncodingKind k);
// jpeg.v1, costmap.zlib.v1, voxels.zlib.v1, pose.json.v1, any other *.json.vN or json.v1,
// video.webrtc.v1 (a media track: frames never carry it); everything else is unsupported.
EncodingKind encoding_kind(std::string_view encoding);

struct JpegMeta {
  std::uint32_t w = 0, h = 0;
};
// jpeg.v1: meta {w, h} within 1..16384 and a start-of-image marker. The bytes go to the browser's
// own decoder untouched.
std::optional<DecodeError> check_jpeg(const Json& meta, ByteView payload, JpegMeta& out);

class ChannelDecoder {
 public:
  explicit ChannelDecoder(std::string_view encoding) : kind_(encoding_kind(encoding)) {}

  // Decodes one frame. Unsupported encodings only count frames and never fail.
  std::optional<DecodeError> decode(const Json& meta, ByteView payload);

  EncodingKind kind() const { return kind_; }
  std::uint64_t frames() const { return frames_; }
  std::uint64_t errors() const { return errors_; }
  std::optional<DecodeError> last_error() const { return last_error_; }
  bool has_value() const { return has_value_; }

  // The last good value, by kind.
  const CostmapDecoder& costmap() const { return costmap_; }
  const VoxelDecoder& voxels() const { return voxels_; }
  const Pose& pose() const { return pose_; }
  const Json& json() const { return json_; }
  ByteView jpeg() const { return ByteView(jpeg_); }
  const JpegMeta& jpeg_meta() const { return jpeg_meta_; }

 private:
  std::optional<DecodeError> decode_kind(const Json& meta, ByteView payload);

  EncodingKind kind_;
  std::uint64_t frames_ = 0, errors_ = 0;
  std::optional<DecodeError> last_error_;
  bool has_value_ = false;
  CostmapDecoder costmap_;
  VoxelDecoder voxels_;
  Pose pose_;
  Json json_;
  Bytes jpeg_;
  JpegMeta jpeg_meta_;
};

}  // namespace tether::decode
