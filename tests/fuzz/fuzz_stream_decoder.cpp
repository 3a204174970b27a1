// libFuzzer harness: the incremental data-frame and control-stream decoders under arbitrary bytes
// and arbitrary chunking. Properties: nothing crashes or leaks; every frame that comes out
// re-encodes and decodes to the same header and payload; chunking never changes the result.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "wire/frame.hpp"
#include "wire/stream_decoder.hpp"

using namespace tether;
using namespace tether::wire;

namespace {

struct Seen {
  std::string header;
  std::string payload;
  bool operator==(const Seen& o) const { return header == o.header && payload == o.payload; }
};

std::vector<Seen> run(const std::uint8_t* data, std::size_t size, std::size_t chunk,
                      std::optional<FrameError>& error) {
  DataStreamDecoder dec;
  std::vector<Seen> out;
  for (std::size_t pos = 0; pos < size; pos += chunk) {
    const std::size_t n = std::min(chunk, size - pos);
    // Copy each chunk, so ASan sees a read past it or a view kept too long.
    std::vector<std::uint8_t> piece(data + pos, data + pos + n);
    dec.feed(ByteView(piece.data(), piece.size()), [&](const DataFrame& f) {
      std::string h;
      append_header_json(h, f.header);
      out.push_back({h, std::string(f.payload.as_chars())});
      auto again = encode_data_frame(f.header, f.payload);
      if (!again) __builtin_trap();  // a decoded header must always re-encode
      auto back = decode_data_frame(ByteView(again.value()));
      if (!back || back->payload.size != f.payload.size) __builtin_trap();
      std::string h2;
      append_header_json(h2, back->header);
      if (h2 != h) __builtin_trap();
    });
  }
  error = dec.finish();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 17;
  std::optional<FrameError> e_small, e_whole;
  auto small = run(data + 1, size - 1, chunk, e_small);
  auto whole = run(data + 1, size - 1, size, e_whole);
  if (!(small == whole) || e_small != e_whole) __builtin_trap();

  ControlStreamDecoder control;
  std::size_t messages = 0;
  control.feed(ByteView(data + 1, size - 1), [&](ByteView m) {
    if (m.size > kMaxControlBytes) __builtin_trap();
    ++messages;
  });
  control.finish();
  return 0;
}
