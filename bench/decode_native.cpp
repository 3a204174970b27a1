// Native side of the decode benchmark: inflate + colourise a 2048x2048 costmap, and inflate +
// lay out a 1M-voxel frame. The payloads are made here with zlib from a fixed pattern, the same
// pattern bench/decode.bench.mjs makes, so every implementation decodes the same bytes.
// Prints one JSON line per case, then the costmap's two phases timed alone (inflate with its
// Adler-32 check, colourise), so the bench can say which one WASM trails in. Built twice
// (CMakeLists.txt): against the system libdeflate, and against the WASM build's libdeflate
// source, which bench/decode.bench.mjs runs with libdeflate's x86 dispatch switched off.
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "decode/costmap.hpp"
#include "decode/inflate.hpp"
#include "decode/voxels.hpp"

using namespace tether;
using namespace tether::decode;
using Clock = std::chrono::steady_clock;

namespace {

Bytes compress(const Bytes& raw) {
  uLongf n = compressBound(uLong(raw.size()));
  Bytes out(n);
  compress2(out.data(), &n, raw.data(), uLong(raw.size()), 6);
  out.resize(n);
  return out;
}

template <class F>
double best_ms(int runs, F&& f) {
  double best = 1e300;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::stoi(argv[1]) : 10;
  const std::uint32_t side = 2048;
  Bytes cells(std::size_t(side) * side);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::size_t x = i % side, y = i / side;
    cells[i] = (x / 64 + y / 64) % 9 == 0 ? 255 : std::uint8_t((x * 7 + y * 3) % 101);
  }
  const Bytes costmap = compress(cells);
  const Json cmeta = {{"w", side}, {"h", side}, {"res", 0.05}, {"origin", {0.0, 0.0, 0.0}}};
  CostmapDecoder cdec;
  const double cms = best_ms(runs, [&] { cdec.decode(cmeta, ByteView(costmap)); });
  Bytes inflated(cells.size()), rgba(cells.size() * 4);
  const double inflate_ms =
      best_ms(runs, [&] { inflate_exact(ByteView(costmap), inflated.data(), inflated.size()); });
  const double colourise_ms =
      best_ms(runs, [&] { colourise_costmap(inflated.data(), side, side, rgba.data()); });

  const std::uint32_t n = 1u << 20;
  Bytes records(std::size_t(n) * 7);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint16_t ix = std::uint16_t(i % 128), iy = std::uint16_t((i / 128) % 128),
                        iz = std::uint16_t(i / 16384);
    std::uint8_t* r = &records[std::size_t(i) * 7];
    r[0] = std::uint8_t(ix), r[1] = std::uint8_t(ix >> 8), r[2] = std::uint8_t(iy),
    r[3] = std::uint8_t(iy >> 8);
    r[4] = std::uint8_t(iz), r[5] = std::uint8_t(iz >> 8), r[6] = std::uint8_t(i * 13);
  }
  const Bytes voxels = compress(records);
  const Json vmeta = {{"n", n}, {"res", 0.1}, {"origin", {0.0, 0.0, 0.0}}};
  VoxelDecoder vdec;
  const double vms = best_ms(runs, [&] { vdec.decode(vmeta, ByteView(voxels)); });
  std::printf("{\"impl\":\"native\",\"case\":\"costmap 2048x2048\",\"ms\":%.2f,\"bytes\":%zu}\n",
              cms, costmap.size());
  std::printf("{\"impl\":\"native\",\"case\":\"voxels 1M\",\"ms\":%.2f,\"bytes\":%zu}\n", vms,
              voxels.size());
  std::printf("{\"impl\":\"native\",\"case\":\"costmap inflate\",\"ms\":%.3f}\n", inflate_ms);
  std::printf("{\"impl\":\"native\",\"case\":\"costmap colourise\",\"ms\":%.3f}\n", colourise_ms);
  return 0;
}
