// libFuzzer harness: the swarm message parser and the binary-lane frame parser, over the same
// bytes. Properties: nothing crashes or leaks; every refusal explains itself; a message that
// parses re-encodes to a canonical form that parses again to the same form; a parsed frame
// re-encodes to the same bytes. Parsed offers, pages and announces are then fed to a swarm session,
// as a hostile peer would, and must not crash it either.
#include <cstddef>
#include <cstdint>

#include "swarm/messages.hpp"
#include "swarm/session.hpp"

using namespace tether;
using namespace tether::swarm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView in(data, size);
  if (auto f = parse_chunk_frame(in)) {
    if (encode_chunk_frame(f->file_id, f->index, f->data) != in.to_bytes()) __builtin_trap();
  }
  auto m = parse_message_text(in);
  if (!m) {
    if (m.error().detail.empty()) __builtin_trap();
    return 0;
  }
  const std::string canonical = encode_message_text(m.value());
  auto again = parse_message_text(ByteView(std::string_view(canonical)));
  if (!again || encode_message_text(again.value()) != canonical) __builtin_trap();

  // Drive a small session with it: a seeder and a downloader of a 3-chunk file (a partial last
  // bitfield byte) whose id is the message's own, so the message is "for" that file.
  FileId id{};
  std::visit([&](const auto& x) { id = x.file_id; }, m.value());
  std::vector<ChunkHash> hashes = {sha256(ByteView()), sha256(ByteView()), sha256(ByteView())};
  auto offer =
      make_offer(id, "f", "x/y", FileShape{3 * kMinChunkSize - 1, kMinChunkSize, 3}, hashes);
  if (!offer) __builtin_trap();
  auto seeder = Swarm::seed(offer.value(), hashes, {});
  auto fetcher = Swarm::fetch(offer.value(), 1, {}, 0);
  if (!seeder || !fetcher) __builtin_trap();
  fetcher->handle_resume_done(Bitfield(3), 0);
  for (Swarm* s : {&seeder.value(), &fetcher.value()}) {
    s->handle_peer_open(1, PeerCaps{true, 65'536}, 0);
    s->handle_message(1, m.value(), size % 2 == 0, 0);
    s->handle_timeout(20'000);
    (void)drain_actions(*s);
  }
  if (auto* o = std::get_if<Offer>(&m.value()); o && o->shape.total_chunks <= 4096) {
    auto f = Swarm::fetch(*o, 2, {}, 0);
    if (f) {
      f->handle_timeout(1);
      (void)drain_actions(f.value());
    }
  }
  return 0;
}
