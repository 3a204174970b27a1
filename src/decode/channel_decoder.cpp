#include "decode/channel_decoder.hpp"

#include "decode/limits.hpp"

namespace tether::decode {
namespace {

bool ends_with_json_version(std::string_view e) {
  // "*.json.vN" with N one or more digits, or exactly "json.v1".
  const auto dot_v = e.rfind(".v");
  if (dot_v == std::string_view::npos || dot_v + 2 >= e.size()) return false;
  for (char c : e.substr(dot_v + 2)) {
    if (c < '0' || c > '9') return false;
  }
  const auto head = e.substr(0, dot_v);
  return head == "json" || (head.size() > 5 && head.substr(head.size() - 5) == ".json");
}

}  // namespace

std::string_view encoding_kind_name(EncodingKind k) {
  switch (k) {
    case EncodingKind::jpeg: return "jpeg";
    case EncodingKind::costmap: return "costmap";
    case EncodingKind::voxels: return "voxels";
    case EncodingKind::pose: return "pose";
    case EncodingKind::json: return "json";
    case EncodingKind::track: return "track";
    case EncodingKind::unsupported: return "unsupported";
  }
  return "unsupported";
}

EncodingKind encoding_kind(std::string_view e) {
  if (e == "jpeg.v1") return EncodingKind::jpeg;
  if (e == "costmap.zlib.v1") return EncodingKind::costmap;
  if (e == "voxels.zlib.v1") return EncodingKind::voxels;
  if (e == "pose.json.v1") return EncodingKind::pose;
  if (e == "video.webrtc.v1") return EncodingKind::track;
  if (ends_with_json_version(e)) return EncodingKind::json;
  return EncodingKind::unsupported;
}

std::optional<DecodeError> check_jpeg(const Json& meta, ByteView payload, JpegMeta& out) {
  if (!meta.is_object() || !meta.contains("w") || !meta.contains("h")) return DecodeError::bad_meta;
  auto w = json_integer(meta["w"], 1, kMaxImageSide), h = json_integer(meta["h"], 1, kMaxImageSide);
  if (!w || !h) return DecodeError::bad_meta;
  if (payload.size > kMaxCompressedBytes) return DecodeError::payload_too_large;
  if (payload.size < 3 || payload.data[0] != 0xFF || payload.data[1] != 0xD8 ||
      payload.data[2] != 0xFF)
    return DecodeError::not_jpeg;
  out = {std::uint32_t(*w), std::uint32_t(*h)};
  return std::nullopt;
}

std::optional<DecodeError> ChannelDecoder::decode_kind(const Json& meta, ByteView payload) {
  switch (kind_) {
    case EncodingKind::jpeg: {
      JpegMeta m;
      if (auto e = check_jpeg(meta, payload, m)) return e;
      jpeg_.assign(payload.data, payload.data + payload.size);
      jpeg_meta_ = m;
      return std::nullopt;
    }
    case EncodingKind::costmap: return costmap_.decode(meta, payload);
    case EncodingKind::voxels: return voxels_.decode(meta, payload);
    case EncodingKind::pose: {
      auto p = decode_pose(payload);
      if (!p) return p.error();
      pose_ = p.value();
      json_ = Json{
          {"x", pose_.x}, {"y", pose_.y}, {"z", pose_.z}, {"yaw", pose_.yaw}, {"ts", pose_.ts}};
      return std::nullopt;
    }
    case EncodingKind::json: {
      auto j = decode_json(payload);
      if (!j) return j.error();
      json_ = std::move(j.value());
      return std::nullopt;
    }
    case EncodingKind::track:
    case EncodingKind::unsupported: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<DecodeError> ChannelDecoder::decode(const Json& meta, ByteView payload) {
  ++frames_;
  auto e = decode_kind(meta, payload);
  if (e) {
    ++errors_;
    last_error_ = e;
  } else if (kind_ != EncodingKind::unsupported && kind_ != EncodingKind::track) {
    has_value_ = true;
  }
  return e;
}

}  // namespace tether::decode
