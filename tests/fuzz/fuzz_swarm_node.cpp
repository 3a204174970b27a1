// libFuzzer harness: the swarm file-set core's inbound paths (src/swarm/node.hpp) as a hostile room
// would drive them. The input is a flags byte (which of three connections each line arrives on,
// and whether to fetch), then newline-separated control-lane texts; every line is also tried as a
// binary frame. The node seeds a 3-chunk file and may fetch whatever was offered. Properties:
// nothing crashes; every envelope the node sends is one the bus's strict parser accepts, from
// our own identity, to the peer it is sent to; a serve is never queued twice for one peer and chunk
// while the first is pending; offers stay within kMaxKnownOffers.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "bus/envelope.hpp"
#include "swarm/node.hpp"

using namespace tether;
using namespace tether::swarm;

namespace {
const char* const kPeers[] = {"alice", "bob", "mallory"};

void check(SwarmNode& node, std::set<std::pair<std::string, std::uint32_t>>& queued, TimeMs now) {
  // A deadline already due is answered at once, as the driver would.
  if (auto t = node.poll_timeout(); t && *t <= now) node.handle_timeout(now);
  while (auto a = node.poll_action()) {
    if (auto* s = std::get_if<NodeSend>(&*a)) {
      auto e = bus::parse_envelope(ByteView(std::string_view(s->text)));
      if (!e || !(e->from == node.identity())) __builtin_trap();
      if (e->to && *e->to != s->peer) __builtin_trap();
      if (s->token) node.handle_send_result(s->token, s->token % 3 != 0, now);
    } else if (auto* v = std::get_if<NodeServe>(&*a)) {
      if (!queued.emplace(v->peer, v->index).second) __builtin_trap();
    } else if (auto* r = std::get_if<NodeResumeRead>(&*a)) {
      node.handle_resume_chunk(r->file, r->index, r->length, std::nullopt, now);
    } else if (auto* o = std::get_if<NodeOpenPart>(&*a)) {
      node.handle_part_opened(o->file, 2048, now);
    }
  }
  while (node.poll_event()) {
  }
  if (node.offers().size() > kMaxKnownOffers) __builtin_trap();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t flags = data[0];
  SwarmNode node(NodeConfig{bus::Identity{"me", "peer", "me", "me.1"}, flags, {}});
  std::set<std::pair<std::string, std::uint32_t>> queued;
  TimeMs now = 0;
  for (const char* p : kPeers) node.handle_peer_open(p, PeerCaps{true, 65'536}, now);
  std::vector<ChunkHash> hashes = {sha256(ByteView()), sha256(ByteView()), sha256(ByteView())};
  auto offer = make_offer(sha256(ByteView(std::string_view("f"))), "f", "x/y",
                          FileShape{3 * kMinChunkSize - 1, kMinChunkSize, 3}, hashes);
  if (!offer || !node.share(offer.value(), hashes, now)) __builtin_trap();
  check(node, queued, now);

  std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  std::size_t start = 0;
  for (int line = 0; line < 64 && start <= input.size(); ++line) {
    std::size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    const std::string_view text = input.substr(start, end - start);
    start = end + 1;
    now += 1'000;
    const char* peer = kPeers[(flags >> (line % 4)) % 3];
    const ByteView bytes(text);
    if (auto c = node.handle_text(peer, bytes, now))
      (void)node.handle_chunk(peer, c->file, c->index, ByteView(c->data), now);
    if (auto f = node.handle_frame(bytes, bytes.size))
      (void)node.handle_chunk(peer, f->file, f->index, bytes.sub(f->offset, f->length), now);
    // Fetch whatever somebody offered, from whoever it names.
    if (flags & 0x80)
      for (const auto& [id, known] : node.offers())
        if (!node.file(id)) (void)node.fetch(id, std::string(peer), now);
    node.handle_timeout(now);
    check(node, queued, now);
    if (line % 5 == 4) {
      node.handle_peer_closed(peer, now);
      for (auto it = queued.begin(); it != queued.end();)
        it = it->first == peer ? queued.erase(it) : std::next(it);
      node.handle_peer_open(peer, PeerCaps{line % 2 == 0, 65'536}, now);
      check(node, queued, now);
    }
  }
  return 0;
}
