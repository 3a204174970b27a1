// Native side of `make bench`: data-frame encode and decode throughput for 200 B, 4 KiB and 1 MiB
// payloads. Prints one JSON line per case; bench/run.mjs lays them beside the WASM and plain-JS
// figures from the same run.
#include <chrono>
#include <cstdio>
#include <string>

#include "wire/frame.hpp"
#include "wire/stream_decoder.hpp"

using namespace tether;
using namespace tether::wire;
using Clock = std::chrono::steady_clock;

namespace {

volatile std::size_t g_sink = 0;

template <class F>
double seconds_for(std::size_t iterations, F&& f) {
  const auto t0 = Clock::now();
  for (std::size_t i = 0; i < iterations; ++i) f(i);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const double budget = argc > 1 ? std::stod(argv[1]) : 0.5;  // seconds per case, roughly
  const std::size_t sizes[] = {200, 4096, 1 << 20};
  for (std::size_t size : sizes) {
    Bytes payload(size);
    for (std::size_t i = 0; i < size; ++i) payload[i] = std::uint8_t(i * 31);
    FrameHeader h{"camera", 1, 1752576000.5, Delivery::latest, std::nullopt};
    // Calibrate to the time budget.
    std::size_t n = 16;
    double t = 0;
    Bytes frame;
    for (;;) {
      t = seconds_for(n, [&](std::size_t i) {
        h.seq = std::int64_t(i);
        frame.clear();
        append_data_frame(frame, h, ByteView(payload));
        g_sink += frame.size();
      });
      if (t > budget / 4 || n > (1u << 26)) break;
      n *= 4;
    }
    const double enc_mbs = double(n) * double(frame.size()) / t / 1e6;

    auto encoded = encode_data_frame(h, ByteView(payload)).value();
    DataStreamDecoder dec;
    std::size_t m = 16;
    for (;;) {
      t = seconds_for(m, [&](std::size_t) {
        dec.feed(ByteView(encoded), [](const DataFrame& f) { g_sink += f.payload.size; });
      });
      if (t > budget / 4 || m > (1u << 26)) break;
      m *= 4;
    }
    const double dec_mbs = double(m) * double(encoded.size()) / t / 1e6;
    std::printf(
        "{\"impl\":\"native\",\"payload\":%zu,\"frame\":%zu,\"encodeMBs\":%.1f,\"decodeMBs\":%.1f}"
        "\n",
        size, encoded.size(), enc_mbs, dec_mbs);
  }
  return 0;
}
