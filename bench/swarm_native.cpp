// Swarm core benchmark (make bench; printed by bench/swarm.bench.mjs). Prints one JSON object:
// - picker and scheduler decisions per second for a 1,000,000-chunk file with 16 peers;
// - memory per tracked chunk and per peer;
// - simulated completion times, in the deterministic simulator (tests/native/swarm/sim/), for the
//   file sizes and link settings of the spec's figures (agent-bus-and-swarm.md: 250 MB offers,
//   7.8 -> 14.1 MB/s with three downloaders, a 60 MB transfer interrupted at 30%).
// Wall-clock time is measured here only; tests never assert on it.
#include <chrono>
#include <cstdio>
#include <string>

#include "swarm/sim/sim.hpp"

using namespace tether;
using namespace tether::swarm;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Decisions {
  double picks_per_s = 0;
  double scheduler_per_s = 0;
  double bytes_per_chunk = 0;
  double bytes_per_peer = 0;
  double setup_s = 0;
};

Decisions decisions() {
  Decisions out;
  const std::uint32_t n = kMaxChunks;
  const std::uint32_t peers = 16;
  auto t0 = Clock::now();
  // A million chunks of the smallest size the spec allows, each handed in with its digest (the
  // path where the host hashed it): the shape stresses the picker and scheduler, not SHA-256.
  const std::uint32_t size = kMinChunkSize;
  std::vector<ChunkHash> byte_hash(256);
  for (int b = 0; b < 256; ++b) byte_hash[b] = sha256(ByteView(std::string(size, char(b))));
  std::vector<ChunkHash> hashes(n);
  for (std::uint32_t i = 0; i < n; ++i) hashes[i] = byte_hash[i & 255];
  FileId id = sha256(ByteView(std::string_view("bench")));
  Offer offer =
      make_offer(id, "b", "x/y", FileShape{std::uint64_t(n) * size, size, n}, hashes).value();
  Swarm s = std::move(Swarm::fetch(offer, 0, {}, 0).value());
  drain_actions(s);
  // Assemble the manifest from pages, as a real fetch does.
  for (std::uint32_t p = 0; p < offer.pages; ++p) {
    ManifestPage page{id, p, offer.pages, offer.page_size, *offer.chunk_hashes_hash, {}};
    const std::uint32_t first = p * offer.page_size;
    for (std::uint32_t i = first; i < std::min(n, first + offer.page_size); ++i)
      page.hashes.push_back(hashes[i]);
    s.handle_message(0, page, true, 0);
  }
  drain_actions(s);
  s.handle_resume_done(Bitfield(n), 0);
  drain_actions(s);
  // 8 seeders and 8 partial peers holding a random half each.
  SeededRng rng(7);
  for (std::uint32_t p = 0; p < peers; ++p) {
    s.handle_peer_open(p, PeerCaps{true, 262'144}, 0);
    Bitfield b(n);
    for (std::uint32_t i = 0; i < n; ++i)
      if (p < 8 || rng.below(2)) b.set(i);
    s.handle_message(p, Announce{id, n, b.to_wire()}, true, 0);
  }
  out.setup_s = seconds_since(t0);
  out.bytes_per_chunk = double(s.memory_bytes()) / n;
  out.bytes_per_peer = double(s.peer_memory_bytes());

  // Scheduler: each decision is a planned request, its acceptance, and its chunk arriving
  // (verified, recorded, a swarm_have emitted, the next request planned).
  std::vector<SendRequest> pending;
  for (auto& a : drain_actions(s))
    if (auto* r = std::get_if<SendRequest>(&a)) pending.push_back(*r);
  const std::uint32_t target = 400'000;
  std::uint32_t done = 0;
  std::int64_t now = 1;
  t0 = Clock::now();
  while (done < target && !pending.empty()) {
    std::vector<SendRequest> next;
    for (const auto& r : pending) {
      s.handle_send_result(r.token, true, now);
      s.handle_chunk_digest(r.to, r.index, size, byte_hash[r.index & 255], now + 1);
      ++done;
      for (auto& a : drain_actions(s))
        if (auto* q = std::get_if<SendRequest>(&a)) next.push_back(*q);
    }
    pending.swap(next);
    now += 2;
  }
  out.scheduler_per_s = done / seconds_since(t0);

  // Picker alone: rarest-first picks against a seeder's and a partial peer's bitfield.
  Picker picker(n, TieBreak::random);
  Bitfield full(n), half(n), busy(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    full.set(i);
    if (i % 2) half.set(i);
    picker.increment(i);
    if (i % 2) picker.increment(i);
  }
  SeededRng prng(3);
  const std::uint32_t picks = 200'000;
  t0 = Clock::now();
  for (std::uint32_t k = 0; k < picks; ++k) {
    auto c = picker.pick(k % 2 ? full : half, busy, prng);
    if (!c) break;
    picker.remove(*c);  // received
  }
  out.picks_per_s = picks / seconds_since(t0);
  return out;
}

sim::Scenario scenario(std::uint64_t size, int seeders, int downloaders, double up_bytes_per_ms) {
  sim::Scenario s;
  s.file_size = size;
  for (int i = 0; i < seeders + downloaders; ++i) {
    sim::NodeSpec n;
    n.seeder = i < seeders;
    n.start_ms = 100;
    n.up_bytes_per_ms = up_bytes_per_ms;
    s.nodes.push_back(n);
  }
  return s;
}

std::int64_t done_ms(const sim::SimResult& r) {
  std::int64_t t = 0;
  for (const auto& n : r.nodes) t = std::max(t, n.completed_ms);
  return t - 100;
}

}  // namespace

int main() {
  const Decisions d = decisions();
  std::printf("{\n");
  std::printf(
      "  \"decisions\": {\"chunks\": %u, \"peers\": 16, \"picks_per_s\": %.0f, "
      "\"scheduler_decisions_per_s\": %.0f, "
      "\"setup_s\": %.2f},\n",
      kMaxChunks, d.picks_per_s, d.scheduler_per_s, d.setup_s);
  std::printf("  \"memory\": {\"bytes_per_tracked_chunk\": %.1f, \"bytes_per_peer\": %.0f},\n",
              d.bytes_per_chunk, d.bytes_per_peer);

  // 250 MB at 64 KiB chunks: the offer the spec says used to be ~275 KB.
  {
    const std::uint64_t size = 250'000'000;
    const std::uint32_t chunks = std::uint32_t((size + 65535) / 65536);
    std::vector<ChunkHash> h(chunks, sha256(ByteView()));
    Offer o = make_offer(sha256(ByteView()), "big.bin", "application/octet-stream",
                         FileShape{size, 65536, chunks}, h)
                  .value();
    std::printf(
        "  \"offer_250mb\": {\"chunks\": %u, \"offer_payload_bytes\": %zu, \"inline_list_bytes\": "
        "%zu, \"pages\": %u},\n",
        chunks, encode_payload(o).size(), std::size_t(chunks) * 67, o.pages);
  }
  // Spec: one downloader 7.8 MB/s; three downloaders 14.1 MB/s aggregate. Links at 7.8 MB/s up.
  const double up = 7'800;  // bytes per simulated ms
  auto t0 = Clock::now();
  const auto one = sim::simulate(scenario(250'000'000, 1, 1, up));
  const auto three = sim::simulate(scenario(250'000'000, 1, 3, up));
  auto idx = scenario(250'000'000, 1, 3, up);
  idx.swarm.ties = TieBreak::index;
  const auto three_index = sim::simulate(idx);
  // Spec: 60 MB in ~5 s uninterrupted; ~55 s when the downloader's signalling dropped at 30%.
  const double up60 = 12'000;
  const auto clean60 = sim::simulate(scenario(60'000'000, 1, 1, up60));
  auto cut = scenario(60'000'000, 1, 1, up60);
  const std::int64_t at30 = 100 + std::int64_t(0.3 * double(done_ms(clean60)));
  cut.outages.push_back(sim::Outage{1, at30, at30 + 1'000});
  const auto cut60 = sim::simulate(cut);
  auto cut3 = scenario(60'000'000, 3, 1, up60 / 3);
  cut3.outages.push_back(sim::Outage{3, at30, at30 + 1'000});
  const auto cut60_3 = sim::simulate(cut3);
  const auto clean60_3 = sim::simulate(scenario(60'000'000, 3, 1, up60 / 3));
  const double sim_wall = seconds_since(t0);
  auto mbps = [](std::uint64_t bytes, std::int64_t ms) {
    return ms > 0 ? double(bytes) / 1e3 / double(ms) : 0.0;
  };
  std::printf("  \"sim\": {\n");
  std::printf(
      "    \"mb250_one_downloader\": {\"ms\": %lld, \"mb_per_s\": %.2f, \"complete\": %s},\n",
      (long long)done_ms(one), mbps(250'000'000, done_ms(one)),
      one.all_complete ? "true" : "false");
  std::printf(
      "    \"mb250_three_random\": {\"ms\": %lld, \"aggregate_mb_per_s\": %.2f, \"complete\": "
      "%s},\n",
      (long long)done_ms(three), mbps(750'000'000, done_ms(three)),
      three.all_complete ? "true" : "false");
  std::printf(
      "    \"mb250_three_index\": {\"ms\": %lld, \"aggregate_mb_per_s\": %.2f, \"complete\": "
      "%s},\n",
      (long long)done_ms(three_index), mbps(750'000'000, done_ms(three_index)),
      three_index.all_complete ? "true" : "false");
  std::printf("    \"mb60_clean\": {\"ms\": %lld},\n", (long long)done_ms(clean60));
  std::printf("    \"mb60_cut_at_30pct\": {\"ms\": %lld, \"rebuilds\": %llu, \"complete\": %s},\n",
              (long long)done_ms(cut60), (unsigned long long)cut60.nodes[1].stats.rebuilds,
              cut60.all_complete ? "true" : "false");
  std::printf("    \"mb60_three_seeders_clean\": {\"ms\": %lld},\n", (long long)done_ms(clean60_3));
  std::printf(
      "    \"mb60_three_seeders_cut_at_30pct\": {\"ms\": %lld, \"rebuilds\": %llu, \"complete\": "
      "%s},\n",
      (long long)done_ms(cut60_3), (unsigned long long)cut60_3.nodes[3].stats.rebuilds,
      cut60_3.all_complete ? "true" : "false");
  std::printf("    \"wall_s\": %.2f\n  }\n}\n", sim_wall);
  return 0;
}
