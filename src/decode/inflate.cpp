#include "decode/inflate.hpp"

#include <libdeflate.h>
#include <zlib.h>

#include <limits>
#include <memory>

namespace tether::decode {
namespace {

// RFC 1950 framing around the deflate data: a two-byte header, a big-endian Adler-32 trailer.
constexpr std::size_t kZlibHeaderBytes = 2;
constexpr std::size_t kZlibTrailerBytes = 4;

// Frees the zlib stream on every path out.
struct InflateStream {
  z_stream z{};
  bool ready = false;
  InflateStream() { ready = inflateInit(&z) == Z_OK; }
  ~InflateStream() {
    if (ready) inflateEnd(&z);
  }
};

struct FreeDecompressor {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

// zlib's inflate: the judge of every stream the fast path below does not accept, so each refusal
// keeps the error it always had (fixtures/decode pins them: a truncated stream is too_little_data,
// a bad checksum not_zlib, ...).
std::optional<DecodeError> inflate_zlib(ByteView compressed, std::uint8_t* out,
                                        std::size_t expected) {
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

// The fast path: libdeflate inflates the deflate data in one call, bounded by `expected` like
// zlib, and the trailer is checked with zlib's adler32(). true only for a stream that is whole,
// exactly `expected` bytes, checksummed and followed by nothing. Why libdeflate: zlib's inflate
// loop is where WASM lost most to native (2.2x; libdeflate's 1.4x), bench/README.md § Decode.
// Why zlib's Adler-32 rather than libdeflate's: both builds then run the same checksum code
// (libdeflate picks AVX2 natively and has no WASM SIMD one).
bool inflate_fast(ByteView compressed, std::uint8_t* out, std::size_t expected) {
  if (compressed.size < kZlibHeaderBytes + kZlibTrailerBytes || out == nullptr) return false;
  const std::uint8_t cmf = compressed.data[0], flg = compressed.data[1];
  // Method 8 (deflate), a window of at most 32 KiB, the check bits, no preset dictionary.
  if ((cmf & 0x0f) != 8 || (cmf >> 4) > 7 || ((cmf << 8) | flg) % 31 != 0 || (flg & 0x20) != 0)
    return false;
  std::unique_ptr<libdeflate_decompressor, FreeDecompressor> d(libdeflate_alloc_decompressor());
  if (!d) return false;
  std::size_t in_used = 0, out_made = 0;
  const libdeflate_result r = libdeflate_deflate_decompress_ex(
      d.get(), compressed.data + kZlibHeaderBytes, compressed.size - kZlibHeaderBytes, out,
      expected, &in_used, &out_made);
  if (r != LIBDEFLATE_SUCCESS || out_made != expected) return false;
  const std::size_t rest = compressed.size - kZlibHeaderBytes - in_used;
  if (rest != kZlibTrailerBytes) return false;
  const std::uint8_t* t = compressed.data + kZlibHeaderBytes + in_used;
  const std::uint32_t want = std::uint32_t(t[0]) << 24 | std::uint32_t(t[1]) << 16 |
                             std::uint32_t(t[2]) << 8 | std::uint32_t(t[3]);
  return std::uint32_t(adler32(adler32(0, nullptr, 0), out, uInt(expected))) == want;
}

}  // namespace

std::optional<DecodeError> inflate_exact(ByteView compressed, std::uint8_t* out,
                                         std::size_t expected) {
  if (compressed.size > std::numeric_limits<uInt>::max() ||
      expected > std::numeric_limits<uInt>::max())
    return DecodeError::payload_too_large;
  if (inflate_fast(compressed, out, expected)) return std::nullopt;
  return inflate_zlib(compressed, out, expected);
}

}  // namespace tether::decode
