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
    // Eight cells per step: one 8-byte load of cells instead of eight byte loads, which WASM pays
    // for one by one (bench/README.md § Decode); the colours go out as one 32-byte copy.
    for (; col + 8 <= w; col += 8) {
      std::uint64_t eight;
      std::memcpy(&eight, src + col, 8);
      std::uint32_t colours[8];
      for (int k = 0; k < 8; ++k) colours[k] = p[(eight >> (8 * k)) & 0xff];  // little-endian
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
