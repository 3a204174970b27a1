#include "decode/costmap.hpp"

#include <cstring>

#include "decode/inflate.hpp"
#include "decode/limits.hpp"

namespace tether::decode {
namespace {

constexpr std::uint32_t rgba(std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  return 0xFF000000u | std::uint32_t(b) << 16 | std::uint32_t(g) << 8 | r;
}

Palette make_palette() {
  Palette p{};
  const std::uint32_t unknown = rgba(0x5a, 0x63, 0x70);  // slate grey
  for (auto& c : p) c = unknown;
  p[kCostFree] = rgba(0xf4, 0xf6, 0xf8);  // near white
  // Graded cost 1..99: from pale yellow through orange to deep red.
  for (unsigned v = 1; v < kCostLethal; ++v) {
    const double t = double(v - 1) / double(kCostLethal - 2);
    p[v] =
        rgba(std::uint8_t(250 - 60 * t), std::uint8_t(230 - 200 * t), std::uint8_t(120 - 100 * t));
  }
  p[kCostLethal] = rgba(0x14, 0x10, 0x28);  // near black, blue-tinted
  return p;
}

// Four RGBA pixels as one 16-byte vector: a GNU vector type, which both compilers of the one source
// lower to their own SIMD (SSE2 natively; WebAssembly SIMD, since CMakeLists.txt builds this file
// with -msimd128), so a vector's four colours are gathered in registers and stored at once.
using Colours4 = std::uint32_t __attribute__((vector_size(16)));

// The colours of the four cells at `c`.
inline Colours4 colours_of(const std::uint32_t* palette, const std::uint8_t* c) {
  return Colours4{palette[c[0]], palette[c[1]], palette[c[2]], palette[c[3]]};
}

}  // namespace

const Palette& costmap_palette() {
  static const Palette palette = make_palette();
  return palette;
}

Result<CostmapMeta, DecodeError> parse_costmap_meta(const Json& meta) {
  if (!meta.is_object()) return err(DecodeError::bad_meta);
  CostmapMeta m;
  auto w = meta.find("w"), h = meta.find("h"), res = meta.find("res"), origin = meta.find("origin");
  if (w == meta.end() || h == meta.end() || res == meta.end() || origin == meta.end())
    return err(DecodeError::bad_meta);
  auto wv = json_integer(*w, 1, kMaxCostmapSide), hv = json_integer(*h, 1, kMaxCostmapSide);
  auto rv = json_finite(*res);
  if (!wv || !hv || !rv || *rv <= 0) return err(DecodeError::bad_meta);
  if (!origin->is_array() || origin->size() != 3) return err(DecodeError::bad_meta);
  auto x = json_finite((*origin)[0]), y = json_finite((*origin)[1]),
       yaw = json_finite((*origin)[2]);
  if (!x || !y || !yaw) return err(DecodeError::bad_meta);
  m.w = std::uint32_t(*wv);
  m.h = std::uint32_t(*hv);
  m.res = *rv;
  m.origin_x = *x;
  m.origin_y = *y;
  m.origin_yaw = *yaw;
  return m;
}

void colourise_costmap(const std::uint8_t* cells, std::uint32_t w, std::uint32_t h,
                       std::uint8_t* out) {
  const std::uint32_t* p = costmap_palette().data();
  for (std::uint32_t row = 0; row < h; ++row) {
    const std::uint8_t* src = cells + std::size_t(h - 1 - row) * w;
    std::uint8_t* dst = out + std::size_t(row) * w * 4;
    std::uint32_t col = 0;
    // Eight cells per step, their colours gathered into two 16-byte vectors and stored as such:
    // one store per four pixels instead of four. A cell is one byte load and its colour one load
    // straight into a vector lane, which V8 compiles as x86 does natively; reading the cells as
    // words and shifting them apart was slower in WASM (bench/README.md § Decode).
    for (; col + 8 <= w; col += 8) {
      const Colours4 colours[2] = {colours_of(p, src + col), colours_of(p, src + col + 4)};
      std::memcpy(dst + std::size_t(col) * 4, colours, sizeof colours);
    }
    for (; col < w; ++col) std::memcpy(dst + std::size_t(col) * 4, &p[src[col]], 4);  // R, G, B, A
  }
}

std::optional<DecodeError> CostmapDecoder::decode(const Json& meta_json, ByteView payload) {
  if (payload.size > kMaxCompressedBytes) return DecodeError::payload_too_large;
  auto meta = parse_costmap_meta(meta_json);
  if (!meta) return meta.error();
  const std::size_t n = std::size_t(meta->w) * meta->h;
  if (scratch_.size() < n) scratch_.resize(n);
  if (auto e = inflate_exact(payload, scratch_.data(), n)) return e;
  cells_.swap(scratch_);
  if (rgba_.size() < n * 4) rgba_.resize(n * 4);
  meta_ = meta.value();
  colourise_costmap(cells_.data(), meta_.w, meta_.h, rgba_.data());
  return std::nullopt;
}

}  // namespace tether::decode
