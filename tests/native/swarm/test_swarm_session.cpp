// The scheduler and picker rules, driven directly (agent-bus-and-swarm.md § Startup, § Losing a
// chunk on a healthy link, § Surviving a network drop, § Why the manifest is paged, § Resume,
// § Concurrent downloads).
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "swarm/picker.hpp"
#include "swarm/resume.hpp"
#include "swarm/session.hpp"

using namespace tether;
using namespace tether::swarm;

namespace {

struct File {
  FileShape shape;
  std::vector<Bytes> chunks;
  std::vector<ChunkHash> hashes;
  Offer offer;
};

File make_file(std::uint32_t chunks, std::uint32_t chunk_size = 1024) {
  File f;
  f.shape = FileShape{std::uint64_t(chunks) * chunk_size, chunk_size, chunks};
  for (std::uint32_t i = 0; i < chunks; ++i) {
    Bytes b(chunk_size, std::uint8_t(i * 7 + 1));
    b[0] = std::uint8_t(i >> 8);
    b[1] = std::uint8_t(i);
    f.hashes.push_back(sha256(ByteView(b)));
    f.chunks.push_back(std::move(b));
  }
  f.offer = make_offer(sha256(ByteView(std::string_view("t"))), "t.bin", "x/y", f.shape, f.hashes)
                .value();
  return f;
}

template <class T>
std::vector<T> only(const std::vector<Action>& actions) {
  std::vector<T> out;
  for (const auto& a : actions)
    if (auto* x = std::get_if<T>(&a)) out.push_back(*x);
  return out;
}

Message full_announce(const File& f) {
  Bitfield all(f.shape.total_chunks);
  for (std::uint32_t i = 0; i < f.shape.total_chunks; ++i) all.set(i);
  return Announce{f.offer.file_id, f.shape.total_chunks, all.to_wire()};
}

Swarm downloader(const File& f, SwarmConfig cfg = {}) {
  auto s = Swarm::fetch(f.offer, 1, cfg, 0);
  REQUIRE(s.ok());
  Swarm sw = std::move(s.value());
  REQUIRE(only<ManifestReady>(drain_actions(sw)).size() == 1);
  sw.handle_resume_done(Bitfield(f.shape.total_chunks), 0);
  drain_actions(sw);
  return sw;
}

// Peers first..last join and announce the whole file; returns the requests that planned.
std::vector<SendRequest> announced_by(Swarm& s, const File& f, PeerId first, PeerId last) {
  for (PeerId p = first; p <= last; ++p) {
    s.handle_peer_open(p, {}, 0);
    s.handle_message(p, full_announce(f), true, 0);
  }
  return only<SendRequest>(drain_actions(s));
}

}  // namespace

TEST_CASE("swarm scheduler: a request is outstanding only once the transport accepted it",
          "[swarm]") {
  File f = make_file(64);
  Swarm s = downloader(f);
  auto reqs = announced_by(s, f, 1, 1);
  REQUIRE(reqs.size() == kDefaultWindowPerPeer);
  // The transport refused every one: nothing is outstanding, nothing can time out, nobody is charged.
  for (const auto& r : reqs) s.handle_send_result(r.token, false, 10);
  CHECK(s.outstanding() == 0);
  CHECK(s.stats().requests_rejected == kDefaultWindowPerPeer);
  s.handle_timeout(100'000);
  CHECK(s.stats().timeouts == 0);
  CHECK(s.stats().misses_charged == 0);
  // Accepted ones start their clock at acceptance, not at planning.
  reqs = only<SendRequest>(drain_actions(s));
  REQUIRE(!reqs.empty());
  for (const auto& r : reqs) s.handle_send_result(r.token, true, 100'000 + 5'000);
  s.handle_timeout(100'000 + kTimeoutCeilingMs + 4'999);
  CHECK(s.stats().timeouts == 0);
  s.handle_timeout(100'000 + kTimeoutCeilingMs + 5'000);
  CHECK(s.stats().timeouts == reqs.size());
}

TEST_CASE("swarm scheduler: timeouts scale with RTT, floor 3 s, ceiling 15 s untimed", "[swarm]") {
  File f = make_file(64);
  Swarm s = downloader(f);
  s.handle_peer_open(1, {}, 0);
  CHECK(s.timeout_for(1) == kTimeoutCeilingMs);  // not yet timed
  s.handle_message(1, full_announce(f), true, 0);
  auto reqs = only<SendRequest>(drain_actions(s));
  for (const auto& r : reqs) s.handle_send_result(r.token, true, 0);
  // Answered in 80 ms: the timeout drops to the floor, not to a few hundred ms.
  REQUIRE(s.handle_chunk(1, reqs[0].index, ByteView(f.chunks[reqs[0].index]), 80) ==
          ChunkOutcome::stored);
  CHECK(s.timeout_for(1) == kTimeoutFloorMs);
  // A peer answering in 2.5 s gets more than the floor.
  for (std::size_t k = 1; k < 6; ++k)
    s.handle_chunk(1, reqs[k].index, ByteView(f.chunks[reqs[k].index]), 2'500 * std::int64_t(k));
  CHECK(s.timeout_for(1) > kTimeoutFloorMs);
  CHECK(s.timeout_for(1) <= kTimeoutCeilingMs);
  // Corrupt bytes are refused and re-planned.
  Bytes bad = f.chunks[reqs[7].index];
  bad[5] ^= 1;
  CHECK(s.handle_chunk(1, reqs[7].index, ByteView(bad), 20'000) == ChunkOutcome::bad_hash);
  CHECK(s.handle_chunk(1, reqs[1].index, ByteView(f.chunks[reqs[1].index]), 20'000) ==
        ChunkOutcome::duplicate);
  CHECK(s.handle_chunk(1, 9999, ByteView(bad), 20'000) == ChunkOutcome::unexpected);
}

TEST_CASE("swarm scheduler: a chunk the host hashed decides exactly as one the core hashes",
          "[swarm]") {
  File f = make_file(16);
  Swarm s = downloader(f);
  auto reqs = announced_by(s, f, 1, 1);
  REQUIRE(reqs.size() >= 4);
  for (const auto& r : reqs) s.handle_send_result(r.token, true, 0);
  const auto& c0 = f.chunks[reqs[0].index];
  // The digest of other bytes, or the right digest with the wrong length: refused, re-planned.
  Bytes bad = c0;
  bad[0] ^= 1;
  CHECK(s.handle_chunk_digest(1, reqs[0].index, c0.size(), sha256(ByteView(bad)), 10) ==
        ChunkOutcome::bad_hash);
  CHECK(s.handle_chunk_digest(1, reqs[1].index, f.chunks[reqs[1].index].size() - 1,
                              sha256(ByteView(f.chunks[reqs[1].index])),
                              10) == ChunkOutcome::bad_hash);
  CHECK(s.stats().chunks_bad == 2);
  // The right length and digest: stored; again: a duplicate; out of range: unexpected.
  const auto& c2 = f.chunks[reqs[2].index];
  CHECK(s.handle_chunk_digest(1, reqs[2].index, c2.size(), sha256(ByteView(c2)), 20) ==
        ChunkOutcome::stored);
  CHECK(s.handle_chunk_digest(1, reqs[2].index, c2.size(), sha256(ByteView(c2)), 20) ==
        ChunkOutcome::duplicate);
  CHECK(s.handle_chunk(1, reqs[2].index, ByteView(c2), 20) == ChunkOutcome::duplicate);
  CHECK(s.handle_chunk_digest(1, 9999, c2.size(), sha256(ByteView(c2)), 20) ==
        ChunkOutcome::unexpected);
  CHECK(s.stats().chunks_stored == 1);
}

TEST_CASE(
    "swarm scheduler: stored chunks are announced in batches, and at once when the file completes",
    "[swarm]") {
  File f = make_file(kHaveBatchMax + 8);
  Swarm s = downloader(f);
  s.handle_peer_open(1, {}, 0);
  s.handle_message(1, full_announce(f), true, 0);
  std::vector<SendRequest> pending;  // requests taken, not yet answered
  // Takes the actions: returns the haves' index lists, keeps the requests for answering.
  auto take = [&]() {
    std::vector<Json> haves;
    auto acts = drain_actions(s);
    for (const auto& c : only<SendControl>(acts))
      if (c.type == "swarm_have") haves.push_back(Json::parse(c.payload)["indexes"]);
    for (const auto& r : only<SendRequest>(acts)) pending.push_back(r);
    return haves;
  };
  auto answer = [&](std::size_t n, std::int64_t now) {
    std::vector<std::uint32_t> done;
    for (std::size_t k = 0; k < n && !pending.empty(); ++k) {
      SendRequest r = pending.front();
      pending.erase(pending.begin());
      s.handle_send_result(r.token, true, now);
      REQUIRE(s.handle_chunk(1, r.index, ByteView(f.chunks[r.index]), now) == ChunkOutcome::stored);
      done.push_back(r.index);
    }
    return done;
  };
  // Three chunks at t=10: nothing announced yet; a wake is due 50 ms after the first.
  CHECK(take().empty());
  auto three = answer(3, 10);
  CHECK(take().empty());
  CHECK(s.poll_timeout() == 10 + kHaveBatchMs);
  s.handle_timeout(10 + kHaveBatchMs - 1);
  CHECK(take().empty());
  s.handle_timeout(10 + kHaveBatchMs);
  auto first = take();
  REQUIRE(first.size() == 1);
  CHECK(first[0] == Json(three));
  // The rest arrive at once: full batches leave without waiting, and the last chunk flushes the
  // remainder, so every chunk is announced exactly once with no timer.
  std::size_t batches = 0, announced = three.size();
  for (int round = 0; round < 1000 && !s.complete(); ++round) {
    answer(pending.size(), 100);
    for (const auto& h : take()) {
      ++batches;
      announced += h.size();
      CHECK(h.size() <= kHaveBatchMax);
    }
  }
  for (const auto& h : take()) ++batches, announced += h.size();
  CHECK(s.complete());
  CHECK(announced == f.chunks.size());
  CHECK(batches == 2);  // 64 at once, then the final 5
}

TEST_CASE(
    "swarm scheduler: a silent peer is rebuilt after consecutive misses, a busy one is not charged",
    "[swarm]") {
  File f = make_file(256);
  Swarm s = downloader(f);
  s.handle_peer_open(1, {}, 0);
  s.handle_peer_open(2, {}, 0);
  s.handle_message(1, full_announce(f), true, 0);
  s.handle_message(2, full_announce(f), true, 0);
  auto reqs = only<SendRequest>(drain_actions(s));
  for (const auto& r : reqs) s.handle_send_result(r.token, true, 0);
  // Peer 2 answers everything; peer 1 answers nothing (its path is silently dead).
  std::int64_t t = 10;
  for (const auto& r : reqs)
    if (r.to == 2) s.handle_chunk(2, r.index, ByteView(f.chunks[r.index]), t += 10);
  drain_actions(s);
  s.handle_timeout(kTimeoutCeilingMs);  // peer 1 was never timed: the 15 s ceiling
  auto acts = drain_actions(s);
  auto rebuilds = only<RebuildPeer>(acts);
  REQUIRE(rebuilds.size() == 1);
  CHECK(rebuilds[0].peer == 1);
  CHECK(s.stats().misses_charged == kDefaultWindowPerPeer);
  // While the connection is rebuilt nothing is asked of it.
  for (const auto& r : only<SendRequest>(acts)) CHECK(r.to == 2);
}

TEST_CASE("swarm scheduler: our own reconnect abandons everything and holds rebuilds off",
          "[swarm]") {
  File f = make_file(256);
  Swarm s = downloader(f);
  s.handle_peer_open(1, {}, 0);
  s.handle_message(1, full_announce(f), true, 0);
  for (const auto& r : only<SendRequest>(drain_actions(s))) s.handle_send_result(r.token, true, 0);
  REQUIRE(s.outstanding() == kDefaultWindowPerPeer);
  s.handle_transport_down(1'000);
  CHECK(s.outstanding() == 0);
  CHECK(s.stats().abandoned_on_reconnect == kDefaultWindowPerPeer);
  s.handle_timeout(2'000);
  CHECK(only<SendRequest>(drain_actions(s)).empty());  // nothing planned while we are away
  CHECK(s.stats().timeouts == 0);
  s.handle_transport_up(3'000);
  auto reqs = only<SendRequest>(drain_actions(s));
  REQUIRE(reqs.size() == kDefaultWindowPerPeer);  // re-planned at once
  for (const auto& r : reqs) s.handle_send_result(r.token, true, 3'000);
  // The path stayed dead: every request misses, but the rebuild waits for the grace period.
  s.handle_timeout(3'000 + kTimeoutCeilingMs);
  CHECK(s.stats().misses_charged == kDefaultWindowPerPeer);
  const std::int64_t grace_end = 3'000 + kRebuildGraceMs;
  if (3'000 + kTimeoutCeilingMs < grace_end) {
    CHECK(only<RebuildPeer>(drain_actions(s)).empty());
    s.handle_timeout(grace_end);
  }
  CHECK(only<RebuildPeer>(drain_actions(s)).size() == 1);

  // Within the grace window itself nothing is rebuilt.
  Swarm g = downloader(f);
  g.handle_peer_open(1, {}, 0);
  g.handle_message(1, full_announce(f), true, 0);
  for (const auto& r : only<SendRequest>(drain_actions(g))) g.handle_send_result(r.token, true, 0);
  g.handle_transport_down(14'000);
  g.handle_transport_up(14'500);
  for (const auto& r : only<SendRequest>(drain_actions(g)))
    g.handle_send_result(r.token, true, 14'500);
  g.handle_timeout(14'500 + kTimeoutCeilingMs - 1);
  CHECK(only<RebuildPeer>(drain_actions(g)).empty());
}

TEST_CASE("swarm startup: a bitfield is answered once, only with something the peer lacks",
          "[swarm]") {
  File f = make_file(16);
  auto bits = [&](std::initializer_list<std::uint32_t> idx) {
    Bitfield b(16);
    for (auto i : idx) b.set(i);
    return Message{Announce{f.offer.file_id, 16, b.to_wire()}};
  };
  Swarm a = downloader(f);
  a.handle_peer_open(2, {}, 0);
  drain_actions(a);
  // We hold nothing: a broadcast from a peer gets no answer.
  a.handle_message(2, bits({1, 2}), false, 0);
  CHECK(only<SendControl>(drain_actions(a)).empty());
  // Now we hold chunk 5, which the peer lacks: one unicast answer.
  for (const auto& r : only<SendRequest>(drain_actions(a))) a.handle_send_result(r.token, true, 0);
  a.handle_chunk(2, 1, ByteView(f.chunks[1]), 10);
  drain_actions(a);
  Swarm seeder = Swarm::seed(f.offer, f.hashes, {}).value();
  seeder.handle_peer_open(3, {}, 0);
  drain_actions(seeder);
  seeder.handle_message(3, bits({}), false, 0);
  auto sent = only<SendControl>(drain_actions(seeder));
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].type == "swarm_announce");
  REQUIRE(sent[0].to);
  CHECK(*sent[0].to == 3);
  // A reply (directed) is never answered, so two partial peers cannot ping-pong.
  seeder.handle_message(3, bits({}), true, 0);
  CHECK(only<SendControl>(drain_actions(seeder)).empty());
  // A peer that has everything we have gets no answer.
  seeder.handle_message(3, bits({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}), false, 0);
  CHECK(only<SendControl>(drain_actions(seeder)).empty());
  CHECK(seeder.stats().startup_replies == 1);
}

TEST_CASE("swarm manifest: pages are checked against the offer's digest before anything opens",
          "[swarm]") {
  File f = make_file(600);  // three pages of 256
  REQUIRE(f.offer.paged());
  auto fetched = Swarm::fetch(f.offer, 7, {}, 0);
  REQUIRE(fetched.ok());
  Swarm s = std::move(fetched.value());
  auto req = only<SendControl>(drain_actions(s));
  REQUIRE(req.size() == 1);
  CHECK(req[0].type == "swarm_manifest_request");
  CHECK(*req[0].to == 7);
  auto page = [&](std::uint32_t p) {
    ManifestPage m{f.offer.file_id, p, 3, 256, *f.offer.chunk_hashes_hash, {}};
    for (std::uint32_t i = p * 256; i < std::min<std::uint32_t>(600, (p + 1) * 256); ++i)
      m.hashes.push_back(f.hashes[i]);
    return m;
  };
  // A page of another manifest (different digest) is not stored.
  ManifestPage foreign = page(0);
  foreign.chunk_hashes_hash[0] ^= 1;
  s.handle_message(7, foreign, true, 0);
  // Pages whose hashes were tampered with assemble to the wrong digest: refused, nothing opened.
  ManifestPage tampered = page(1);
  tampered.hashes[3][0] ^= 1;
  s.handle_message(7, page(0), true, 0);
  s.handle_message(7, tampered, true, 0);
  s.handle_message(7, page(2), true, 0);
  auto acts = drain_actions(s);
  CHECK(only<ManifestReady>(acts).empty());
  auto failed = only<Failed>(acts);
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].code == "manifest_digest_mismatch");
  CHECK_FALSE(s.manifest_ready());
  // The liar is never asked again: nobody is, until the host names another source, and pages
  // from anyone but the source are not taken.
  CHECK_FALSE(s.manifest_source());
  s.handle_timeout(kTimeoutCeilingMs + 1);
  CHECK(only<SendControl>(drain_actions(s)).empty());
  for (std::uint32_t p = 0; p < 3; ++p) s.handle_message(7, page(p), true, kTimeoutCeilingMs + 2);
  CHECK(only<ManifestReady>(drain_actions(s)).empty());
  s.retry_manifest_from(8, kTimeoutCeilingMs + 3);
  req = only<SendControl>(drain_actions(s));
  REQUIRE(req.size() == 1);
  CHECK(*req[0].to == 8);
  s.handle_message(9, page(0), true, kTimeoutCeilingMs + 4);  // unasked: ignored
  for (std::uint32_t p = 0; p < 3; ++p) s.handle_message(8, page(p), true, kTimeoutCeilingMs + 4);
  CHECK(only<ManifestReady>(drain_actions(s)).size() == 1);
  CHECK(s.hashes() == f.hashes);

  // A seeder serves pages of at most 256 hashes, each under the smallest SCTP limit.
  Swarm seeder = Swarm::seed(f.offer, f.hashes, {}).value();
  seeder.handle_peer_open(9, {}, 0);
  drain_actions(seeder);
  seeder.handle_message(9, ManifestRequest{f.offer.file_id, 256, {0, 1, 2, 3}}, true, 0);
  auto pages = only<SendControl>(drain_actions(seeder));
  CHECK(pages.size() == 3);  // page 3 does not exist
  for (const auto& p : pages) CHECK(p.payload.size() <= max_payload_bytes(kMinSctpMessageSize));
}

TEST_CASE("swarm manifest: pages are served in the size asked, each once, inline offers too",
          "[swarm]") {
  // The public implementation asks in the page size of the first offer it saw for the file,
  // which need not be ours, and answers any size from 1 to 256 (swarm-manager.ts
  // handleManifestRequest); so do we.
  File f = make_file(600);
  Swarm seeder = Swarm::seed(f.offer, f.hashes, {}).value();
  seeder.handle_peer_open(9, {}, 0);
  drain_actions(seeder);
  seeder.handle_message(9, ManifestRequest{f.offer.file_id, 100, {5, 0, 5, 6}}, true, 0);
  auto sent = only<SendControl>(drain_actions(seeder));
  REQUIRE(sent.size() == 2);  // page 5 once, page 6 of 6 does not exist
  std::vector<ManifestPage> pages;
  for (const auto& c : sent) {
    auto m = parse_message("swarm_manifest_page",
                           parse_json(ByteView(std::string_view(c.payload))).value);
    REQUIRE(m.ok());
    pages.push_back(std::get<ManifestPage>(m.value()));
  }
  CHECK(pages[0].page == 5);
  CHECK(pages[1].page == 0);
  for (const auto& p : pages) {
    CHECK(p.page_size == 100);
    CHECK(p.total_pages == 6);
    CHECK(p.chunk_hashes_hash == *f.offer.chunk_hashes_hash);
    CHECK(p.hashes == std::vector<ChunkHash>(f.hashes.begin() + p.page * 100,
                                             f.hashes.begin() + p.page * 100 + 100));
  }
  // A file small enough to travel inline is served in pages as well.
  File small = make_file(3);
  REQUIRE_FALSE(small.offer.paged());
  Swarm little = Swarm::seed(small.offer, small.hashes, {}).value();
  little.handle_peer_open(9, {}, 0);
  drain_actions(little);
  little.handle_message(9, ManifestRequest{small.offer.file_id, 2, {1}}, true, 0);
  sent = only<SendControl>(drain_actions(little));
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].payload.find("\"totalPages\":2") != std::string::npos);
}

TEST_CASE("swarm lanes: the answer format is chosen per request and per peer limit", "[swarm]") {
  File f = make_file(4, 65536);
  Swarm seeder = Swarm::seed(f.offer, f.hashes, {}).value();
  seeder.handle_peer_open(1, PeerCaps{true, 262'144}, 0);
  seeder.handle_peer_open(2, PeerCaps{false, 262'144}, 0);
  seeder.handle_peer_open(3, PeerCaps{true, 65'536}, 0);
  drain_actions(seeder);
  seeder.handle_message(1, Request{f.offer.file_id, 0, true}, true, 0);
  seeder.handle_message(1, Request{f.offer.file_id, 1, false}, true,
                        0);  // an old peer on a new link
  seeder.handle_message(2, Request{f.offer.file_id, 2, true}, true, 0);  // no binary channel open
  seeder.handle_message(3, Request{f.offer.file_id, 3, true}, true, 0);  // 64 KiB fits neither lane
  auto served = only<ServeChunk>(drain_actions(seeder));
  REQUIRE(served.size() == 3);
  CHECK(served[0].binary);
  CHECK_FALSE(served[1].binary);
  CHECK_FALSE(served[2].binary);
  CHECK(seeder.stats().requests_refused_too_large == 1);
  // The downloader never asks a peer whose limit cannot carry the file's chunks.
  Swarm d = downloader(f);
  d.handle_peer_open(3, PeerCaps{true, 65'536}, 0);
  d.handle_message(3, full_announce(f), true, 0);
  CHECK(only<SendRequest>(drain_actions(d)).empty());
}

TEST_CASE(
    "swarm announce: a bitfield travels whole, and a peer whose limit cannot carry it gets "
    "swarm_have "
    "lists",
    "[swarm]") {
  // A million chunks of 1 KiB: the whole bitfield is 166,668 base64 characters, over what a
  // 65,536-byte peer takes, and the public implementation refuses a partial (ranged) one.
  FileShape shape{std::uint64_t(kMaxChunks) * kMinChunkSize, kMinChunkSize, kMaxChunks};
  Offer o;
  o.file_id = sha256(ByteView(std::string_view("m")));
  o.shape = shape;
  o.page_size = 256;
  o.pages = (kMaxChunks + 255) / 256;
  std::vector<ChunkHash> hashes(kMaxChunks, sha256(ByteView(std::string_view("c"))));
  o.chunk_hashes_hash = chunk_hashes_digest(hashes);
  CHECK_FALSE(announce_fits(kMaxChunks, 65'536));
  CHECK(announce_fits(kMaxChunks, 262'144));
  Swarm seeder = Swarm::seed(o, hashes, {}).value();
  seeder.handle_peer_open(1, PeerCaps{true, 262'144}, 0);
  auto whole = only<SendControl>(drain_actions(seeder));
  REQUIRE(whole.size() == 1);
  CHECK(whole[0].type == "swarm_announce");
  CHECK(whole[0].payload.size() == announce_payload_bytes(kMaxChunks));
  auto j = parse_json(ByteView(std::string_view(whole[0].payload)));
  auto m = parse_message("swarm_announce", j.value);
  REQUIRE(m.ok());
  CHECK(std::get<Announce>(m.value()).bits.size() == Bitfield::wire_bytes(kMaxChunks));
  CHECK(j.value.find("firstChunk") == j.value.end());

  seeder.handle_peer_open(2, PeerCaps{true, 65'536}, 0);
  auto lists = only<SendControl>(drain_actions(seeder));
  REQUIRE(lists.size() == (kMaxChunks + kMaxHaveIndexes - 1) / kMaxHaveIndexes);
  std::uint32_t next = 0;
  for (const auto& l : lists) {
    CHECK(l.type == "swarm_have");
    REQUIRE(l.to);
    CHECK(*l.to == 2);
    CHECK(l.payload.size() <= max_payload_bytes(65'536));
    auto hj = parse_json(ByteView(std::string_view(l.payload)));
    auto h = parse_message("swarm_have", hj.value);
    REQUIRE(h.ok());
    for (std::uint32_t i : std::get<Have>(h.value()).indexes) CHECK(i == next++);
  }
  CHECK(next == kMaxChunks);
  // The periodic refresh is one whole broadcast; the lists are not repeated every interval.
  seeder.handle_timeout(kAnnounceIntervalMs + 1);
  auto refresh = only<SendControl>(drain_actions(seeder));
  REQUIRE(refresh.size() == 1);
  CHECK(refresh[0].type == "swarm_announce");
  CHECK_FALSE(refresh[0].to);
}

TEST_CASE("swarm picker: rarest first, random ties from the seed, index ties for the baseline",
          "[swarm]") {
  Bitfield peer(1000), busy(1000);
  for (std::uint32_t i = 0; i < 1000; ++i) peer.set(i);
  std::set<std::uint32_t> firsts;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    Picker p(1000, TieBreak::random);
    for (std::uint32_t i = 0; i < 1000; ++i) p.increment(i);
    SeededRng rng(seed);
    const std::uint32_t first = *p.pick(peer, busy, rng);
    firsts.insert(first);
    // The same seed makes the same choice: runs are reproducible.
    SeededRng again(seed);
    Picker q(1000, TieBreak::random);
    for (std::uint32_t i = 0; i < 1000; ++i) q.increment(i);
    CHECK(*q.pick(peer, busy, again) == first);
  }
  CHECK(firsts.size() >= 6);  // different seeds diverge from the first pick
  Picker ix(1000, TieBreak::index);
  for (std::uint32_t i = 0; i < 1000; ++i) ix.increment(i);
  SeededRng rng(1);
  CHECK(*ix.pick(peer, busy, rng) == 0);
  // Rarest first: chunk 500 is held by one peer, the rest by two.
  Picker r(1000, TieBreak::random);
  for (std::uint32_t i = 0; i < 1000; ++i) {
    r.increment(i);
    if (i != 500) r.increment(i);
  }
  CHECK(*r.pick(peer, busy, rng) == 500);
  busy.set(500);
  CHECK(*r.pick(peer, busy, rng) != 500);  // in flight elsewhere
  // A peer holding a single chunk deep in a large bucket is still found.
  Bitfield one(1000);
  one.set(777);
  busy.reset(500);
  CHECK(*r.pick(one, busy, rng) == 777);
  r.remove(777);
  CHECK_FALSE(r.pick(one, busy, rng));
}

TEST_CASE("swarm resume: chunks are credited only when they verify, and locks go stale at 5 min",
          "[swarm]") {
  File f = make_file(8);
  ResumeVerifier v(f.shape, f.hashes);
  CHECK(v.feed(0, ByteView(f.chunks[0])));
  CHECK_FALSE(v.feed(1, ByteView(Bytes(1024, 0))));           // a gap of zeros
  CHECK_FALSE(v.feed(2, ByteView(f.chunks[2].data(), 512)));  // an interrupted write
  CHECK_FALSE(v.feed(3, ByteView(f.chunks[4])));              // another chunk's bytes
  CHECK_FALSE(v.feed(99, ByteView(f.chunks[0])));
  CHECK(v.verified().count() == 1);
  CHECK_FALSE(v.complete());
  // Part files are keyed by content and destination.
  const auto& d = *f.offer.chunk_hashes_hash;
  CHECK(part_file_name(f.offer.file_id, d, "/home/a/Downloads") ==
        part_file_name(f.offer.file_id, d, "/home/a/Downloads"));
  CHECK(part_file_name(f.offer.file_id, d, "/home/a/Downloads") !=
        part_file_name(f.offer.file_id, d, "/tmp"));
  CHECK(part_file_name(f.offer.file_id, d, "/tmp").size() == 32 + 5);
  CHECK(decide_lock(std::nullopt, "me", 0).verdict == LockVerdict::acquire);
  CHECK(decide_lock(LockRecord{"me", 0}, "me", 10).verdict == LockVerdict::ours);
  auto busy = decide_lock(LockRecord{"other", 1'000}, "me", 1'000 + kStaleLockMs - 1);
  CHECK(busy.verdict == LockVerdict::busy);
  CHECK(busy.message.find("same folder") != std::string::npos);
  CHECK(decide_lock(LockRecord{"other", 1'000}, "me", 1'000 + kStaleLockMs).verdict ==
        LockVerdict::take_over);
}

TEST_CASE("swarm scheduler: the window is shared by all of a download's peers", "[swarm]") {
  File f = make_file(256);
  auto per_peer = [](const std::vector<SendRequest>& reqs) {
    std::map<PeerId, int> n;
    for (const auto& r : reqs) ++n[r.to];
    return n;
  };
  SECTION("one peer gets the whole window") {
    Swarm s = downloader(f);
    CHECK(announced_by(s, f, 1, 1).size() == kDefaultWindowTotal);
  }
  SECTION("three peers share it: each delivery frees one slot, planned round-robin") {
    Swarm s = downloader(f);
    // The first peer to announce got the whole window; the other two got nothing more.
    auto first = announced_by(s, f, 1, 3);
    REQUIRE(first.size() == kDefaultWindowTotal);
    for (const auto& r : first) s.handle_send_result(r.token, true, 1);
    std::vector<SendRequest> next;
    for (const auto& r : first) {
      REQUIRE(s.handle_chunk(r.to, r.index, ByteView(f.chunks[r.index]), 50) ==
              ChunkOutcome::stored);
      auto more = only<SendRequest>(drain_actions(s));
      CHECK(more.size() == 1);  // one slot freed, one request
      for (const auto& m : more) s.handle_send_result(m.token, true, 50);
      next.insert(next.end(), more.begin(), more.end());
      CHECK(s.outstanding() == kDefaultWindowTotal);
    }
    auto n = per_peer(next);
    REQUIRE(n.size() == 3);
    for (auto [peer, count] : n) CHECK(count >= int(kDefaultWindowTotal / 3) - 1);
  }
  SECTION("a larger total lets each peer fill its own window") {
    SwarmConfig cfg;
    cfg.window_total = 3 * kDefaultWindowPerPeer;
    Swarm s = downloader(f, cfg);
    auto reqs = announced_by(s, f, 1, 3);
    CHECK(reqs.size() == 3 * kDefaultWindowPerPeer);
    for (auto [peer, n] : per_peer(reqs)) CHECK(n == int(kDefaultWindowPerPeer));
  }
}
