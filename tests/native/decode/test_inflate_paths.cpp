// inflate_exact's two paths (src/decode/inflate.cpp): libdeflate inflates what it accepts, zlib
// judges the rest. Every damaged, cut or extended stream must get exactly the verdict, and every
// accepted one exactly the bytes, that zlib alone gives (zlib_alone below is inflate_exact as it
// was before libdeflate), so the fast path can never accept what zlib refuses.
#include <zlib.h>

#include <catch2/catch.hpp>
#include <optional>

#include "decode/inflate.hpp"

using namespace tether;
using namespace tether::decode;

namespace {

Bytes zlib(const Bytes& raw, int level) {
  uLongf n = compressBound(uLong(raw.size()));
  Bytes out(n);
  REQUIRE(compress2(out.data(), &n, raw.data(), uLong(raw.size()), level) == Z_OK);
  out.resize(n);
  return out;
}

std::optional<DecodeError> zlib_alone(const Bytes& in, std::uint8_t* out, std::size_t expected) {
  z_stream z{};
  REQUIRE(inflateInit(&z) == Z_OK);
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = uInt(in.size());
  z.next_out = out;
  z.avail_out = uInt(expected);
  int rc = inflate(&z, Z_FINISH);
  std::optional<DecodeError> verdict = DecodeError::not_zlib;
  if (rc == Z_BUF_ERROR && z.avail_out == 0) {
    std::uint8_t probe;
    z.next_out = &probe;
    z.avail_out = 1;
    rc = inflate(&z, Z_FINISH);
    if (z.avail_out == 0) rc = Z_MEM_ERROR, verdict = DecodeError::too_much_data;
  }
  if (rc == Z_STREAM_END)
    verdict = z.total_out != expected ? std::optional(DecodeError::too_little_data)
              : z.avail_in != 0       ? std::optional(DecodeError::trailing_bytes)
                                      : std::nullopt;
  else if (rc == Z_BUF_ERROR)
    verdict = DecodeError::too_little_data;
  inflateEnd(&z);
  return verdict;
}

// A costmap-like grid: runs, a gradient, and lethal blocks, so streams hold literals and matches.
Bytes cells(std::size_t side) {
  Bytes c(side * side);
  for (std::size_t i = 0; i < c.size(); ++i) {
    const std::size_t x = i % side, y = i / side;
    c[i] = (x / 8 + y / 8) % 5 == 0 ? 255 : std::uint8_t((x * 7 + y * 3) % 101);
  }
  return c;
}

void same_as_zlib(const Bytes& stream, std::size_t expected) {
  Bytes ours(expected + 1, 0xAA), theirs(expected + 1, 0xAA);
  const auto got = inflate_exact(ByteView(stream), ours.data(), expected);
  const auto want = zlib_alone(stream, theirs.data(), expected);
  REQUIRE(got == want);
  if (!got) REQUIRE(ours == theirs);
  REQUIRE(ours[expected] == 0xAA);  // never a byte past the promised size
}

}  // namespace

TEST_CASE("inflate: every flipped bit of a stream gets zlib's verdict and bytes") {
  const Bytes raw = cells(24);
  for (int level : {1, 9}) {
    const Bytes good = zlib(raw, level);
    same_as_zlib(good, raw.size());
    for (std::size_t i = 0; i < good.size(); ++i) {
      for (std::uint8_t mask : {0x01, 0x10, 0x80}) {
        INFO("level " << level << " byte " << i << " mask " << int(mask));
        Bytes bad = good;
        bad[i] ^= mask;
        same_as_zlib(bad, raw.size());
      }
    }
  }
}

TEST_CASE("inflate: every cut, an extra byte, and a wrong size get zlib's verdict") {
  const Bytes raw = cells(24);
  const Bytes good = zlib(raw, 6);
  for (std::size_t n = 0; n < good.size(); ++n) {
    INFO("cut to " << n);
    same_as_zlib(Bytes(good.begin(), good.begin() + std::ptrdiff_t(n)), raw.size());
  }
  Bytes longer = good;
  longer.push_back(0);
  same_as_zlib(longer, raw.size());
  same_as_zlib(good, raw.size() - 1);  // the stream holds one byte more than promised
  same_as_zlib(good, raw.size() + 1);  // one byte less
  same_as_zlib(zlib(Bytes(), 6), 0);
}
