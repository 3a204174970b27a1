#include "decode/inflate.hpp"

#include <zlib.h>

#include <limits>

namespace tether::decode {
namespace {

// Frees the zlib stream on every path out.
struct InflateStream {
  z_stream z{};
  bool ready = false;
  InflateStream() { ready = inflateInit(&z) == Z_OK; }
  ~InflateStream() {
    if (ready) inflateEnd(&z);
  }
};

}  // namespace

std::optional<DecodeError> inflate_exact(ByteView compressed, std::uint8_t* out,
                                         std::size_t expected) {
  if (compressed.size > std::numeric_limits<uInt>::max() ||
      expected > std::numeric_limits<uInt>::max())
    return DecodeError::payload_too_large;
  InflateStream s;
  if (!s.ready) return DecodeError::not_zlib;
  s.z.next_in = const_cast<Bytef*>(compressed.data);
  s.z.avail_in = uInt(compressed.size);
  std::uint8_t none;  // zlib refuses a null output pointer even with no room, as for n = 0 voxels
  s.z.next_out = out != nullptr ? out : &none;
  s.z.avail_out = uInt(expected);
  int rc = inflate(&s.z, Z_FINISH);
  if (rc == Z_BUF_ERROR && s.z.avail_out == 0) {
    // The output is full but the stream has not ended: see whether it holds one byte more.
    std::uint8_t probe;
    s.z.next_out = &probe;
    s.z.avail_out = 1;
    rc = inflate(&s.z, Z_FINISH);
    if (s.z.avail_out == 0) return DecodeError::too_much_data;
  }
  if (rc == Z_STREAM_END) {
    if (s.z.total_out != expected) return DecodeError::too_little_data;
    if (s.z.avail_in != 0) return DecodeError::trailing_bytes;
    return std::nullopt;
  }
  if (rc == Z_BUF_ERROR) return DecodeError::too_little_data;  // input ran out mid-stream
  return DecodeError::not_zlib;
}

}  // namespace tether::decode
