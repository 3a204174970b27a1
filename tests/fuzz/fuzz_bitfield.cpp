// libFuzzer harness: the swarm bitfield (src/swarm/bitfield.hpp) and its wire form, the
// swarm_announce `chunks` bytes (agent-bus-notes.md § Swarm messages). The first three bytes give
// the size n in chunks (little-endian, low 12 bits: several words; at most 64 more than the input's
// remaining bytes hold, so a run costs what its bytes cost), then
// come the wire bytes a peer sent (the ceil(n / 8) an announce carries, fewer when the input
// ends), then set/reset operations (two bytes each: an index and a set-or-reset bit). Properties,
// checked against a plain std::vector<bool>: set/reset/test/count/all agree with it; reading wire
// bytes bit by bit (wire_test, as Swarm::apply_bitfield does) and writing the set back (to_wire)
// gives the same bytes with only the bits past n cleared, which is what an announce must carry; a
// bitfield of another size compares by index (has_any_missing_from) as the model does.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "swarm/bitfield.hpp"

using namespace tether;
using namespace tether::swarm;

namespace {
void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_model(const Bitfield& b, const std::vector<bool>& model) {
  std::uint32_t count = 0;
  for (std::uint32_t i = 0; i < model.size(); ++i) {
    check(b.test(i) == model[i]);
    count += model[i];
  }
  check(!b.test(static_cast<std::uint32_t>(model.size())));
  check(b.count() == count);
  check(b.all() == (count == model.size()));
  const Bytes wire = b.to_wire();
  check(wire.size() == Bitfield::wire_bytes(b.size()));
  for (std::uint32_t i = 0; i < wire.size() * 8; ++i)
    check(Bitfield::wire_test(ByteView(wire), i) == (i < model.size() && model[i]));
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const std::size_t rest = size - 3;
  // At most 64 bits past what the input's bytes could carry: a short announce is still reached,
  // and a three-byte input no longer costs 4,096 bits of checks (what one parse of it costs).
  const std::uint32_t n = std::min<std::uint32_t>(
      (data[0] | (std::uint32_t(data[1]) << 8) | (std::uint32_t(data[2]) << 16)) & 0xfff,
      std::uint32_t(64 + 8 * rest));
  const std::size_t split = std::min(rest, Bitfield::wire_bytes(n));
  const ByteView wire(data + 3, split);
  const std::uint8_t* ops = data + 3 + split;
  const std::size_t op_bytes = rest - split;

  // Wire bytes in, as Swarm::apply_bitfield reads them.
  Bitfield b(n);
  std::vector<bool> model(n, false);
  for (std::uint32_t i = 0; i < n; ++i) {
    const bool on = Bitfield::wire_test(wire, i);
    check(on == ((i >> 3) < wire.size && (wire.data[i >> 3] >> (i & 7)) & 1));
    if (on) check(b.set(i));
    model[i] = on;
  }
  check_model(b, model);
  // Written back: the same bytes, padded with zeros to the size, bits past n cleared.
  const Bytes out = b.to_wire();
  for (std::size_t k = 0; k < out.size(); ++k) {
    std::uint8_t expect = k < wire.size ? wire.data[k] : 0;
    if (n % 8 != 0 && k == out.size() - 1) expect &= std::uint8_t((1u << (n % 8)) - 1);
    check(out[k] == expect);
  }

  // Operations, each returning whether it changed the bit; out-of-range indexes change nothing.
  for (std::size_t k = 0; k + 1 < op_bytes; k += 2) {
    const std::uint32_t v = ops[k] | (std::uint32_t(ops[k + 1]) << 8);
    const std::uint32_t i = n ? (v >> 1) % (n + 8) : v >> 1;  // reach a little past the end
    const bool in_range = i < n;
    if (v & 1) {
      const bool changed = b.set(i);
      check(changed == (in_range && !model[i]));
      if (in_range) model[i] = true;
    } else {
      const bool changed = b.reset(i);
      check(changed == (in_range && model[i]));
      if (in_range) model[i] = false;
    }
  }
  check_model(b, model);

  // Against a bitfield of another size built from the same wire bytes.
  const std::uint32_t m = n ? (op_bytes ? ops[0] * 131u : 7u) % (n + 1) : 0;
  Bitfield other(m);
  for (std::uint32_t i = 0; i < m; ++i)
    if (Bitfield::wire_test(wire, i)) other.set(i);
  bool missing = false;
  for (std::uint32_t i = 0; i < n; ++i) missing |= model[i] && !other.test(i);
  check(b.has_any_missing_from(other) == missing);
  check(b.memory_bytes() >= b.word_count() * sizeof(std::uint64_t));
  return 0;
}
