#include "decode/json_payloads.hpp"

#include "decode/limits.hpp"

namespace tether::decode {

Result<Json, DecodeError> decode_json(ByteView payload) {
  if (payload.size > kMaxJsonPayloadBytes) return err(DecodeError::payload_too_large);
  JsonParse parsed = parse_json(payload);
  if (!parsed.ok()) return err(DecodeError::invalid_json);
  return std::move(parsed.value);
}

Result<Json, DecodeError> decode_json_object(ByteView payload) {
  auto r = decode_json(payload);
  if (r && !r->is_object()) return err(DecodeError::bad_shape);
  return r;
}

Result<Pose, DecodeError> decode_pose(ByteView payload) {
  auto r = decode_json_object(payload);
  if (!r) return err(r.error());
  const Json& j = r.value();
  auto number = [&](const char* key, bool required, double& out) {
    auto it = j.find(key);
    if (it == j.end()) return !required;
    auto v = json_finite(*it);
    if (!v) return false;
    out = *v;
    return true;
  };
  Pose p;
  if (!number("x", true, p.x) || !number("y", true, p.y) || !number("yaw", true, p.yaw) ||
      !number("z", false, p.z) || !number("ts", false, p.ts))
    return err(DecodeError::bad_shape);
  return p;
}

}  // namespace tether::decode
