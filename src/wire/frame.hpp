// Cockpit v7 framing (cockpit-wire-protocol.md § Framing): data frames
// `u32-LE headerLen | u32-LE payloadLen | header JSON | payload`, control-stream frames
// `u32-LE length | JSON`, and datagrams (raw JSON). Stream reassembly is in stream_decoder.hpp.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.hpp"
#include "common/json.hpp"
#include "common/result.hpp"
#include "wire/errors.hpp"
#include "wire/limits.hpp"

namespace tether::wire {

enum class Delivery { latest, reliable };
std::string_view delivery_name(Delivery d);
std::optional<Delivery> delivery_from_name(std::string_view name);

// The data-frame header. On the wire its keys are exactly `ch, seq, ts, delivery, meta`, in that
// order; golden vectors depend on it.
struct FrameHeader {
  std::string ch;
  std::int64_t seq = 0;  // per channel, 0..2^53-1
  double ts = 0;         // seconds
  Delivery delivery = Delivery::latest;
  std::optional<Json> meta;  // an object when present
};

// A decoded data frame. The views point into the bytes it was decoded from: `header_json` is the
// validated header text as received, `payload` the payload.
struct DataFrame {
  FrameHeader header;
  ByteView header_json;
  ByteView payload;
};

// True for ids that only control frames may use (`@control`, ...); never forwarded to viewers.
inline bool is_reserved_channel(std::string_view ch) {
  return !ch.empty() && ch[0] == '@';
}

// Checks a header value before encoding: non-empty channel id of at most 64 characters, seq in
// range, finite ts, meta an object.
std::optional<FrameError> check_header(const FrameHeader& h);

// Serialises the header JSON in wire key order.
void append_header_json(std::string& out, const FrameHeader& h);

// Appends one data frame to `out`. Fails, appending nothing, if the header is invalid or a bound
// would be broken.
std::optional<FrameError> append_data_frame(Bytes& out, const FrameHeader& h, ByteView payload);
Result<Bytes, FrameError> encode_data_frame(const FrameHeader& h, ByteView payload);

// Parses and validates header JSON (any key order; unknown keys refused).
Result<FrameHeader, FrameError> parse_header(ByteView header_json);

// Decodes a buffer holding exactly one data frame (a WebSocket message, say).
Result<DataFrame, FrameError> decode_data_frame(ByteView frame);

// Length-prefixes one control message. Fails if it is over kMaxControlBytes or empty.
std::optional<FrameError> append_control_frame(Bytes& out, std::string_view json);
Result<Bytes, FrameError> encode_control_frame(std::string_view json);

}  // namespace tether::wire
