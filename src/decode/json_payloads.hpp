// JSON encodings (cockpit-wire-v7-notes.md § Encodings): pose.json.v1 {x, y, z, yaw, ts},
// twist/stats/text/chat/audio.json.v1 and json.v1 as objects, any other *.json.vN as plain JSON.
// Payloads are bounded before parsing; invalid UTF-8 is refused, never repaired.
#pragma once
#include <string_view>

#include "common/bytes.hpp"
#include "common/json.hpp"
#include "common/result.hpp"
#include "decode/errors.hpp"

namespace tether::decode {

struct Pose {
  double x = 0, y = 0, z = 0, yaw = 0;
  double ts = 0;  // seconds; 0 when the robot did not stamp it
};

// x, y and yaw are required finite numbers; z and ts default to 0.
Result<Pose, DecodeError> decode_pose(ByteView payload);

// Any JSON value, bounded in size and depth.
Result<Json, DecodeError> decode_json(ByteView payload);

// A JSON object: the named *.json.v1 encodings carry objects.
Result<Json, DecodeError> decode_json_object(ByteView payload);

}  // namespace tether::decode
