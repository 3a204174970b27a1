// The file-set core's decisions (swarm/node.hpp): envelopes built and bound to their connection,
// offers remembered and refused, manifest sources chosen, serves de-duplicated, the resume pass
// and the whole file's digest (agent-bus-and-swarm.md § Swarm transfer, § Untrusted wire input,
// § Why the manifest is paged, § Resume).
#include <catch2/catch.hpp>

#include <set>

#include "bus/envelope.hpp"
#include "bus/limits.hpp"
#include "swarm/node.hpp"

using namespace tether;
using namespace tether::swarm;

namespace {

struct TestFile {
  FileShape shape;
  std::vector<Bytes> chunks;
  std::vector<ChunkHash> hashes;
  Offer offer;
};

TestFile make_file(std::uint32_t chunks, std::string_view tag = "t") {
  TestFile f;
  const std::uint32_t size = 1024;
  f.shape = FileShape{std::uint64_t(chunks) * size, size, chunks};
  Sha256 whole;
  for (std::uint32_t i = 0; i < chunks; ++i) {
    Bytes b(size, std::uint8_t(i * 7 + tag.size()));
    b[0] = std::uint8_t(i >> 8);
    b[1] = std::uint8_t(i);
    whole.update(ByteView(b));
    f.hashes.push_back(sha256(ByteView(b)));
    f.chunks.push_back(std::move(b));
  }
  f.offer = make_offer(whole.finish(), std::string(tag) + ".bin", "x/y", f.shape, f.hashes).value();
  return f;
}

std::string offer_payload(const Offer& o) {
  return encode_payload(Message{o});
}

// An envelope as peer `from` writes it.
std::string env(const std::string& from, std::string_view type, const std::string& payload,
                const char* to = nullptr) {
  bus::Envelope e;
  e.id = from + ".1";
  e.type = *bus::message_type_from_name(type);
  e.from = bus::Identity{from, "peer", from, from + ".i"};
  if (to) e.to = std::string(to);
  e.ts = 1;
  std::string out;
  bus::append_envelope_json(out, e, payload);
  return out;
}

ByteView text(const std::string& s) {
  return ByteView(std::string_view(s));
}

template <class T, class V>
struct Holds;
template <class T, class... Ts>
struct Holds<T, std::variant<Ts...>> : std::disjunction<std::is_same<T, Ts>...> {};

// The T in `v`, when T is one of its alternatives at all.
template <class T, class V>
const T* pick(const V& v) {
  if constexpr (Holds<T, V>::value)
    return std::get_if<T>(&v);
  else
    return nullptr;
}

struct Node {
  SwarmNode node{NodeConfig{bus::Identity{"me", "peer", "me", "me.1"}, 7, {}}};
  std::vector<NodeAction> actions;
  std::vector<NodeEvent> events;

  void drain() {
    while (auto a = node.poll_action()) actions.push_back(std::move(*a));
    while (auto e = node.poll_event()) events.push_back(std::move(*e));
  }
  template <class T>
  std::vector<T> take() {
    drain();
    std::vector<T> out;
    for (const auto& a : actions)
      if (auto* x = pick<T>(a)) out.push_back(*x);
    for (const auto& e : events)
      if (auto* x = pick<T>(e)) out.push_back(*x);
    actions.clear();
    events.clear();
    return out;
  }
  void clear() { take<NodeSend>(); }
  void open(const std::string& peer) { node.handle_peer_open(peer, PeerCaps{}, 0); }
  void close(const std::string& peer) { node.handle_peer_closed(peer, 0); }
  void say(const std::string& peer, std::string_view type, const std::string& payload,
           const char* to = nullptr, TimeMs now = 0) {
    node.handle_text(peer, text(env(peer, type, payload, to)), now);
  }
  std::size_t refusals(std::string_view code) const {
    std::size_t n = 0;
    for (const auto& r : node.stats().refused) n += r.code == code;
    return n;
  }
};

// The swarm messages inside the sends, parsed back through the bus's strict envelope parser.
struct Sent {
  std::string peer;
  bus::Envelope envelope;
  Message message;
};
std::vector<Sent> parse_sends(const std::vector<NodeSend>& sends) {
  std::vector<Sent> out;
  for (const auto& s : sends) {
    auto e = bus::parse_envelope(text(s.text));
    REQUIRE(e.ok());
    auto m = parse_message(bus::message_type_name(e->type), e->payload_value());
    REQUIRE(m.ok());
    out.push_back({s.peer, std::move(e.value()), std::move(m.value())});
  }
  return out;
}

std::vector<ManifestPage> pages_of(const TestFile& f) {
  std::vector<ManifestPage> out;
  for (std::uint32_t p = 0; p < f.offer.pages; ++p) {
    ManifestPage page{
        f.offer.file_id, p, f.offer.pages, f.offer.page_size, *f.offer.chunk_hashes_hash, {}};
    const std::uint32_t first = p * f.offer.page_size;
    const std::uint32_t n = std::min(f.offer.page_size, f.shape.total_chunks - first);
    page.hashes.assign(f.hashes.begin() + first, f.hashes.begin() + first + n);
    out.push_back(std::move(page));
  }
  return out;
}

void send_pages(Node& n, const std::string& from, const std::vector<ManifestPage>& pages) {
  for (const auto& p : pages) n.say(from, "swarm_manifest_page", encode_payload(Message{p}), "me");
}

// Who the manifest requests among these sends went to.
std::set<std::string> manifest_requests_to(const std::vector<NodeSend>& sends) {
  std::set<std::string> to;
  for (const auto& s : parse_sends(sends))
    if (std::holds_alternative<ManifestRequest>(s.message)) to.insert(s.peer);
  return to;
}

// Each of `peers` connects and offers `f`, then the fetch starts: who the manifest is asked of.
std::set<std::string> fetch_offered_by(Node& n, const TestFile& f,
                                       std::initializer_list<const char*> peers) {
  for (const char* p : peers) n.open(p);
  for (const char* p : peers) n.say(p, "swarm_offer", offer_payload(f.offer));
  n.clear();
  REQUIRE(n.node.fetch(f.offer.file_id, std::nullopt, 0).ok());
  return manifest_requests_to(n.take<NodeSend>());
}

}  // namespace

TEST_CASE("swarm node: ids stay within the envelope's bounds for the longest stream id",
          "[swarm][node]") {
  // A 128-character stream id is allowed; the instance id the node draws and every message id
  // must still be at most 128 (a public peer refuses the whole envelope otherwise).
  for (const std::string& instance : {std::string(), std::string(128, 'i')}) {
    SwarmNode node{NodeConfig{bus::Identity{std::string(128, 's'), "peer", "me", instance}, 7, {}}};
    node.handle_peer_open("alice", PeerCaps{}, 0);
    TestFile f = make_file(2);
    REQUIRE(node.share(f.offer, f.hashes, 0).ok());
    std::vector<NodeSend> sends;
    while (auto a = node.poll_action())
      if (auto* x = std::get_if<NodeSend>(&*a)) sends.push_back(*x);
    REQUIRE_FALSE(sends.empty());
    for (const Sent& x : parse_sends(sends)) {  // parse_envelope enforces both bounds
      CHECK(x.envelope.id.size() <= bus::kMaxIdChars);
      CHECK(x.envelope.from.instance_id.size() <= bus::kMaxIdChars);
    }
  }
}

TEST_CASE("swarm node: envelopes are the core's, one broadcast per open peer", "[swarm][node]") {
  Node n;
  n.open("alice");
  n.open("bob");
  TestFile f = make_file(4);
  REQUIRE(n.node.share(f.offer, f.hashes, 1234).ok());
  // The offers among the sends (the session also announces its bitfield to each peer).
  auto offers_in = [](std::vector<Sent> all) {
    std::vector<Sent> out;
    for (auto& s : all)
      if (std::holds_alternative<Offer>(s.message)) out.push_back(std::move(s));
    return out;
  };
  auto sent = offers_in(parse_sends(n.take<NodeSend>()));
  REQUIRE(sent.size() == 2);
  std::set<std::string> peers;
  for (const auto& s : sent) {
    peers.insert(s.peer);
    CHECK(s.envelope.type == bus::MessageType::swarm_offer);
    CHECK(s.envelope.from == bus::Identity{"me", "peer", "me", "me.1"});
    CHECK_FALSE(s.envelope.to.has_value());  // addressed to the room
    CHECK(s.envelope.ts == 1234);
    CHECK(offer_payload(std::get<Offer>(s.message)) == offer_payload(f.offer));
  }
  CHECK(peers == std::set<std::string>{"alice", "bob"});
  CHECK(sent[0].envelope.id == sent[1].envelope.id);  // one envelope, sent to each

  // A peer that joins later is offered the file alone, in an envelope addressed to it.
  n.open("carol");
  auto later = offers_in(parse_sends(n.take<NodeSend>()));
  REQUIRE(later.size() == 1);
  CHECK(later[0].peer == "carol");
  CHECK(later[0].envelope.to == std::optional<std::string>("carol"));
  CHECK(later[0].envelope.id != sent[0].envelope.id);

  // A request answered on the control lane: a swarm_chunk envelope to the asker.
  const std::string chunk =
      n.node.chunk_envelope("carol", f.offer.file_id, 2, ByteView(f.chunks[2]), 5);
  auto c = parse_sends({NodeSend{"carol", chunk, 0}});
  CHECK(c[0].envelope.to == std::optional<std::string>("carol"));
  CHECK(std::get<ChunkMessage>(c[0].message).data == f.chunks[2]);

  // An instance id the host does not give is made from the seed, the same for the same seed.
  SwarmNode a{NodeConfig{bus::Identity{"x", "peer", "x", ""}, 9, {}}};
  SwarmNode b{NodeConfig{bus::Identity{"x", "peer", "x", ""}, 9, {}}};
  CHECK(a.identity().instance_id.rfind("x.", 0) == 0);
  CHECK(a.identity().instance_id.size() == 10);
  CHECK(a.identity().instance_id == b.identity().instance_id);
}

TEST_CASE("swarm node: a connection speaks only as the identity it was opened with",
          "[swarm][node]") {
  Node n;
  n.open("alice");
  TestFile f = make_file(4);
  // Mallory's name on alice's connection.
  n.node.handle_text("alice", text(env("mallory", "swarm_offer", offer_payload(f.offer))), 0);
  CHECK(n.node.stats().forged_identity == 1);
  CHECK(n.refusals("identity") == 1);
  CHECK(n.node.known_offer(f.offer.file_id) == nullptr);

  // Another envelope version is no envelope we read.
  std::string v2 = env("alice", "swarm_offer", offer_payload(f.offer));
  v2.replace(v2.find("\"v\":1"), 5, "\"v\":2");
  n.node.handle_text("alice", text(v2), 0);
  CHECK(n.node.stats().forged_identity == 2);
  CHECK(n.node.known_offer(f.offer.file_id) == nullptr);

  // No `from` at all.
  n.node.handle_text("alice", text(R"({"v":1,"type":"swarm_offer","payload":{}})"), 0);
  CHECK(n.node.stats().forged_identity == 3);

  // Addressed to somebody else: not ours, and no fault.
  n.say("alice", "swarm_offer", offer_payload(f.offer), "bob");
  CHECK(n.node.known_offer(f.offer.file_id) == nullptr);
  CHECK(n.node.stats().refused_count == 3);

  // The real thing is remembered.
  n.say("alice", "swarm_offer", offer_payload(f.offer));
  REQUIRE(n.node.known_offer(f.offer.file_id) != nullptr);
  CHECK(n.node.known_offer(f.offer.file_id)->offerers == std::vector<std::string>{"alice"});
}

TEST_CASE("swarm node: a second, different offer under a known id is refused, the first stands",
          "[swarm][node]") {
  Node n;
  TestFile f = make_file(4);
  // Another shape under the same id: refused.
  Offer other = make_file(5).offer;
  other.file_id = f.offer.file_id;
  n.say("alice", "swarm_offer", offer_payload(f.offer));
  n.say("mallory", "swarm_offer", offer_payload(other));
  n.say("bob", "swarm_offer", offer_payload(f.offer));
  n.say("alice", "swarm_offer", offer_payload(f.offer));  // again: counted once
  // The same bytes under another name and type (seeded twice, or by a peer that guesses the
  // type): the same file, one more source; the first offer's name stands.
  Offer renamed = f.offer;
  renamed.name = "copy.bin";
  renamed.mime_type = "image/png";
  n.say("carol", "swarm_offer", offer_payload(renamed));
  const KnownOffer* k = n.node.known_offer(f.offer.file_id);
  REQUIRE(k != nullptr);
  CHECK(k->offer.name == "t.bin");
  CHECK(k->offerers == std::vector<std::string>{"alice", "bob", "carol"});
  CHECK(n.refusals("conflicting_offer") == 1);
  CHECK(n.node.stats().refused[0].peer == "mallory");

  // The fetch asks the first offerer, or the one named when it offered.
  REQUIRE(n.node.fetch(f.offer.file_id, std::string("bob"), 0).ok());
  CHECK(n.node.file(f.offer.file_id)->state == FileState::resuming);  // an inline list
  CHECK_FALSE(n.node.fetch(f.offer.file_id, std::nullopt, 0).ok());   // already transferring
  CHECK_FALSE(n.node.fetch(make_file(2, "u").offer.file_id, std::nullopt, 0).ok());  // no offer
}

TEST_CASE("swarm node: offers remembered are bounded", "[swarm][node]") {
  Node n;
  for (std::size_t i = 0; i <= kMaxKnownOffers; ++i) {
    Offer o = make_file(1).offer;
    o.file_id = sha256(ByteView(std::string_view(std::to_string(i))));
    n.say("alice", "swarm_offer", offer_payload(o));
  }
  CHECK(n.node.offers().size() == kMaxKnownOffers);
  CHECK(n.refusals("too_many_offers") == 1);
}

TEST_CASE("swarm node: manifest pages are taken only from the peer asked", "[swarm][node]") {
  Node n;
  TestFile f = make_file(600);  // three pages
  REQUIRE(f.offer.paged());
  CHECK(fetch_offered_by(n, f, {"alice", "bob"}) == std::set<std::string>{"alice"});

  // Bob's pages, true or not, were not asked for: refused, and they fill nothing.
  send_pages(n, "bob", pages_of(f));
  CHECK(n.node.stats().unsolicited_pages == 3);
  CHECK(n.refusals("unsolicited_page") == 3);
  CHECK(n.take<NodeOpenPart>().empty());
  CHECK(n.node.file(f.offer.file_id)->state == FileState::manifest);

  // Alice's complete it.
  send_pages(n, "alice", pages_of(f));
  CHECK(n.take<NodeOpenPart>().size() == 1);
  CHECK(n.node.stats().unsolicited_pages == 3);
}

TEST_CASE("swarm node: when the manifest source leaves, an open offerer is asked instead",
          "[swarm][node]") {
  Node n;
  for (const char* p : {"alice", "bob", "carol"}) n.open(p);
  TestFile f = make_file(600);  // three pages
  for (const char* p : {"alice", "bob", "carol"}) n.say(p, "swarm_offer", offer_payload(f.offer));
  n.close("bob");  // an offerer that is not here is never asked
  n.clear();
  REQUIRE(n.node.fetch(f.offer.file_id, std::nullopt, 0).ok());
  CHECK(manifest_requests_to(n.take<NodeSend>()) == std::set<std::string>{"alice"});
  auto pages = pages_of(f);
  send_pages(n, "alice", {pages[0]});
  n.clear();
  n.close("alice");
  CHECK(manifest_requests_to(n.take<NodeSend>()) == std::set<std::string>{"carol"});
  // The list starts over from carol alone (a digest failure must name one source): alice's
  // late pages fill nothing, carol's three finish it.
  send_pages(n, "alice", {pages[1], pages[2]});
  send_pages(n, "carol", {pages[1], pages[2]});
  CHECK(n.take<NodeOpenPart>().empty());
  send_pages(n, "carol", {pages[0]});
  CHECK(n.take<NodeOpenPart>().size() == 1);
}

TEST_CASE(
    "swarm node: a manifest source that stays but leaves pages unanswered gives way to the "
    "next offerer",
    "[swarm][node]") {
  // The public implementation asks the next source for a page unanswered after 2 s
  // (swarm-manager.ts requestManifestPages); a source that stays connected must not hold us.
  Node n;
  TestFile f = make_file(600);  // three pages
  CHECK(fetch_offered_by(n, f, {"alice", "bob", "carol"}) == std::set<std::string>{"alice"});
  auto pages = pages_of(f);
  send_pages(n, "alice", {pages[0]});
  n.clear();
  // Due on the core's clock: the deadline is the page timeout, and nothing moves before it.
  REQUIRE(n.node.poll_timeout());
  CHECK(*n.node.poll_timeout() == kManifestPageTimeoutMs);
  n.node.handle_timeout(kManifestPageTimeoutMs - 1);
  CHECK(manifest_requests_to(n.take<NodeSend>()).empty());
  n.node.handle_timeout(kManifestPageTimeoutMs);
  CHECK(manifest_requests_to(n.take<NodeSend>()) == std::set<std::string>{"bob"});
  // Bob is silent too: carol next, not alice again.
  n.node.handle_timeout(2 * kManifestPageTimeoutMs);
  CHECK(manifest_requests_to(n.take<NodeSend>()) == std::set<std::string>{"carol"});
  // The page already in is kept, and a late answer from anyone asked still counts.
  send_pages(n, "alice", {pages[1]});
  send_pages(n, "carol", {pages[2]});
  CHECK(n.node.stats().unsolicited_pages == 0);
  CHECK(n.take<NodeOpenPart>().size() == 1);
}

TEST_CASE("swarm node: with nobody else to ask, the silent source is asked again",
          "[swarm][node]") {
  Node n;
  TestFile f = make_file(600);
  CHECK(fetch_offered_by(n, f, {"alice"}) == std::set<std::string>{"alice"});
  n.node.handle_timeout(kManifestPageTimeoutMs);
  CHECK(manifest_requests_to(n.take<NodeSend>()) == std::set<std::string>{"alice"});
  send_pages(n, "alice", pages_of(f));
  CHECK(n.take<NodeOpenPart>().size() == 1);
}

TEST_CASE(
    "swarm node: pages from several sources that miss the digest start over from one, "
    "whose own miss names it",
    "[swarm][node]") {
  Node n;
  TestFile f = make_file(600);
  CHECK(fetch_offered_by(n, f, {"liar", "honest"}) == std::set<std::string>{"liar"});
  auto lies = pages_of(f);
  lies[0].hashes[1][0] ^= 1;
  send_pages(n, "liar", {lies[0]});
  n.node.handle_timeout(kManifestPageTimeoutMs);
  CHECK(manifest_requests_to(n.take<NodeSend>()) == std::set<std::string>{"honest"});
  // Page 0 from the liar, 1 and 2 from the honest peer: nobody can be blamed, nobody is.
  send_pages(n, "honest", {pages_of(f)[1], pages_of(f)[2]});
  CHECK(n.node.stats().manifest_failures == 0);
  CHECK(n.refusals("manifest_digest_mismatch") == 0);
  CHECK(n.node.file(f.offer.file_id)->session.stats().manifest_restarts == 1);
  CHECK(n.node.known_offer(f.offer.file_id)->offerers.size() == 2);
  // Again, all of it from the honest peer alone, which no timeout moves away from now.
  CHECK(manifest_requests_to(n.take<NodeSend>()) == std::set<std::string>{"honest"});
  n.node.handle_timeout(2 * kManifestPageTimeoutMs);
  CHECK(manifest_requests_to(n.take<NodeSend>()) == std::set<std::string>{"honest"});
  send_pages(n, "liar", {pages_of(f)[0]});  // no longer asked: refused
  CHECK(n.node.stats().unsolicited_pages == 1);
  send_pages(n, "honest", pages_of(f));
  CHECK(n.take<NodeOpenPart>().size() == 1);
}

TEST_CASE("swarm node: after a digest mismatch the next offerer is asked, the liar never again",
          "[swarm][node]") {
  Node n;
  TestFile f = make_file(600);
  CHECK(fetch_offered_by(n, f, {"liar", "honest"}) == std::set<std::string>{"liar"});

  // Well-formed pages that carry the offer's digest but other hashes.
  auto lies = pages_of(f);
  lies[1].hashes[5][0] ^= 1;
  send_pages(n, "liar", lies);
  CHECK(n.node.stats().manifest_failures == 1);
  REQUIRE(n.refusals("manifest_digest_mismatch") == 1);
  CHECK(n.node.stats().refused.back().peer == "liar");
  CHECK(n.node.known_offer(f.offer.file_id)->offerers == std::vector<std::string>{"honest"});
  CHECK(manifest_requests_to(n.take<NodeSend>()) == std::set<std::string>{"honest"});
  CHECK(n.take<NodeFileFailed>().empty());

  // The liar's true pages now are refused; the honest peer's finish the manifest.
  send_pages(n, "liar", pages_of(f));
  CHECK(n.take<NodeOpenPart>().empty());
  send_pages(n, "honest", pages_of(f));
  CHECK(n.take<NodeOpenPart>().size() == 1);
}

TEST_CASE("swarm node: a digest mismatch with nobody else offering fails the file, naming why",
          "[swarm][node]") {
  Node n;
  n.open("liar");
  TestFile f = make_file(600);
  n.say("liar", "swarm_offer", offer_payload(f.offer));
  REQUIRE(n.node.fetch(f.offer.file_id, std::nullopt, 0).ok());
  auto lies = pages_of(f);
  lies[0].hashes[0][3] ^= 0x80;
  send_pages(n, "liar", lies);
  auto failed = n.take<NodeFileFailed>();
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].code == "manifest_digest_mismatch");
  CHECK(failed[0].message.find("no other peer offers it") != std::string::npos);
  CHECK_FALSE(n.node.file(f.offer.file_id).has_value());
}

TEST_CASE(
    "swarm node: a request repeated while its serve is queued is served once, the queue is "
    "bounded",
    "[swarm][node]") {
  Node n;
  n.open("alice");
  TestFile f = make_file(100);
  REQUIRE(n.node.share(f.offer, f.hashes, 0).ok());
  n.clear();
  auto request = [&](std::uint32_t index) {
    n.say("alice", "swarm_request", encode_payload(Message{Request{f.offer.file_id, index, true}}),
          "me");
  };
  request(3);
  request(3);
  request(3);
  auto serves = n.take<NodeServe>();
  REQUIRE(serves.size() == 1);
  CHECK(serves[0].peer == "alice");
  CHECK(serves[0].index == 3);
  CHECK(serves[0].offset == 3 * 1024);
  CHECK(serves[0].length == 1024);
  CHECK(n.node.stats().serves_deduplicated == 2);

  // Once served, a new request for it is a new serve.
  n.node.handle_serve_done("alice", f.offer.file_id, 3);
  request(3);
  CHECK(n.take<NodeServe>().size() == 1);

  // Index 3 is still queued: 63 more fill the queue, the rest are dropped.
  for (std::uint32_t i = 10; i < 10 + kMaxPendingServesPerPeer; ++i) request(i);
  CHECK(n.take<NodeServe>().size() == kMaxPendingServesPerPeer - 1);
  CHECK(n.node.stats().serves_dropped == 1);

  // A peer that closes takes its queue with it.
  n.node.handle_peer_closed("alice", 0);
  n.open("alice");
  request(3);
  CHECK(n.take<NodeServe>().size() == 1);
}

TEST_CASE("swarm node: the resume pass reads in order, one chunk at a time, within the part file",
          "[swarm][node]") {
  Node n;
  n.open("alice");
  TestFile f = make_file(5);
  n.say("alice", "swarm_offer", offer_payload(f.offer));
  REQUIRE(n.node.fetch(f.offer.file_id, std::nullopt, 0).ok());
  REQUIRE(n.take<NodeOpenPart>().size() == 1);
  // The part file holds 3.5 chunks: chunk 3 is cut short, so it is not read.
  n.node.handle_part_opened(f.offer.file_id, 3 * 1024 + 512, 0);
  std::vector<std::uint32_t> reads;
  for (;;) {
    auto r = n.take<NodeResumeRead>();
    if (r.empty()) break;
    REQUIRE(r.size() == 1);  // one at a time
    CHECK(r[0].offset == std::uint64_t(r[0].index) * 1024);
    reads.push_back(r[0].index);
    // Chunk 1 reads back as zeros (a gap).
    const Sha256Digest d =
        r[0].index == 1 ? sha256(ByteView(Bytes(1024, 0))) : f.hashes[r[0].index];
    n.node.handle_resume_chunk(f.offer.file_id, r[0].index, r[0].length, d, 0);
  }
  CHECK(reads == std::vector<std::uint32_t>{0, 1, 2});
  REQUIRE(n.node.file(f.offer.file_id)->state == FileState::downloading);
  CHECK(n.node.file(f.offer.file_id)->resumed_indexes == std::vector<std::uint32_t>{0, 2});
  CHECK(n.node.file(f.offer.file_id)->session.have().count() == 2);
}

TEST_CASE("swarm node: an answer out of order or a failed read credits nothing", "[swarm][node]") {
  Node n;
  n.open("alice");
  TestFile f = make_file(3);
  n.say("alice", "swarm_offer", offer_payload(f.offer));
  REQUIRE(n.node.fetch(f.offer.file_id, std::nullopt, 0).ok());
  n.node.handle_part_opened(f.offer.file_id, 3 * 1024, 0);
  n.clear();
  n.node.handle_resume_chunk(f.offer.file_id, 2, 1024, f.hashes[2], 0);  // not the one asked
  CHECK(n.take<NodeResumeRead>().empty());
  n.node.handle_resume_chunk(f.offer.file_id, 0, 1024, std::nullopt, 0);  // the read failed
  n.node.handle_resume_chunk(f.offer.file_id, 1, 1024, f.hashes[1], 0);
  n.node.handle_resume_chunk(f.offer.file_id, 2, 1024, f.hashes[2], 0);
  auto started = n.take<DownloadStarted>();
  REQUIRE(started.size() == 1);
  CHECK(started[0].resumed == 2);
}

TEST_CASE("swarm node: a complete part file is checked whole, then saved and offered",
          "[swarm][node]") {
  for (bool honest : {false, true}) {
    Node n;
    n.open("alice");
    TestFile f = make_file(2);
    n.say("alice", "swarm_offer", offer_payload(f.offer));
    REQUIRE(n.node.fetch(f.offer.file_id, std::nullopt, 0).ok());
    n.node.handle_part_opened(f.offer.file_id, 2 * 1024, 0);
    for (std::uint32_t i = 0; i < 2; ++i)
      n.node.handle_resume_chunk(f.offer.file_id, i, 1024, f.hashes[i], 0);
    REQUIRE(n.take<NodeVerifyFile>().size() == 1);
    Sha256Digest digest = f.offer.file_id;
    if (!honest) digest[0] ^= 1;
    n.node.handle_file_digest(f.offer.file_id, digest, 0);
    if (!honest) {
      auto failed = n.take<NodeFileFailed>();
      REQUIRE(failed.size() == 1);
      CHECK(failed[0].code == "file_digest_mismatch");
      CHECK_FALSE(n.node.file(f.offer.file_id).has_value());
      continue;
    }
    REQUIRE(n.take<NodeSaveFile>().size() == 1);
    n.node.handle_file_saved(f.offer.file_id, 0);
    n.drain();
    REQUIRE(n.events.size() == 1);
    CHECK(std::holds_alternative<FileComplete>(n.events[0]));
    auto offers = parse_sends(n.take<NodeSend>());
    REQUIRE(offers.size() == 1);
    CHECK(std::holds_alternative<Offer>(offers[0].message));
  }
}

TEST_CASE("swarm node: bad bytes on either lane are refused or ignored, and nothing is lost",
          "[swarm][node]") {
  Node n;
  n.open("alice");
  TestFile f = make_file(4);
  n.say("alice", "swarm_offer", offer_payload(f.offer));

  n.node.handle_text("alice", text(R"({"type":"swarm_offer", truncated)"), 0);
  CHECK(n.refusals("not_json") == 1);
  n.node.handle_text("alice", text(env("alice", "chat", R"({"text":"hi"})")), 0);  // not ours
  CHECK(n.node.stats().refused_count == 1);
  std::string huge = env("alice", "swarm_offer", "\"" + std::string(300 * 1024, 'a') + "\"");
  n.node.handle_text("alice", text(huge), 0);
  CHECK(n.refusals("too_large") == 1);
  Offer bad = f.offer;
  bad.shape.total_chunks = 5;  // disagrees with size / chunkSize
  n.say("bob", "swarm_offer", offer_payload(bad));
  CHECK(n.refusals("inconsistent_shape") == 1);
  n.say("alice", "swarm_have", R"({"fileId":"zz","indexes":[1]})");
  CHECK(n.refusals("bad_hash") == 1);

  // Frames: another protocol's, a truncated header, a file we do not hold.
  n.node.handle_frame(text("hello"), 5);
  Bytes frame = encode_chunk_frame(f.offer.file_id, 1, ByteView(f.chunks[1]));
  n.node.handle_frame(ByteView(frame.data(), 20), frame.size());
  CHECK(n.node.stats().ignored_frames == 2);
  CHECK_FALSE(n.node.handle_frame(ByteView(frame), frame.size()).has_value());
  CHECK(n.node.stats().ignored_frames == 3);

  // The offer survived all of it and the download goes on.
  REQUIRE(n.node.fetch(f.offer.file_id, std::nullopt, 0).ok());
  auto arrived = n.node.handle_frame(ByteView(frame), frame.size());
  REQUIRE(arrived.has_value());
  CHECK(arrived->index == 1);
  CHECK(arrived->offset == kChunkFrameHeaderBytes);
  CHECK(arrived->length == 1024);
}

TEST_CASE("swarm node: a base64 chunk comes back for the host to hash and the core to judge",
          "[swarm][node]") {
  Node n;
  n.open("alice");
  TestFile f = make_file(2);
  n.say("alice", "swarm_offer", offer_payload(f.offer));
  REQUIRE(n.node.fetch(f.offer.file_id, std::nullopt, 0).ok());
  n.node.handle_part_opened(f.offer.file_id, 0, 0);
  const std::string payload =
      encode_payload(Message{ChunkMessage{f.offer.file_id, 1, f.chunks[1]}});
  auto c = n.node.handle_text("alice", text(env("alice", "swarm_chunk", payload, "me")), 0);
  REQUIRE(c.has_value());
  CHECK(c->data == f.chunks[1]);
  CHECK(n.node.wants_chunk(f.offer.file_id, 1, c->data.size()));
  Sha256Digest wrong = f.hashes[1];
  wrong[0] ^= 1;
  CHECK(n.node.handle_chunk_digest("alice", f.offer.file_id, 1, 1024, wrong, 0) ==
        ChunkOutcome::bad_hash);
  CHECK(n.refusals("bad_chunk") == 1);
  CHECK(n.node.handle_chunk_digest("alice", f.offer.file_id, 1, 1024, f.hashes[1], 0) ==
        ChunkOutcome::stored);
  CHECK(n.node.handle_chunk_digest("alice", f.offer.file_id, 1, 1024, std::nullopt, 0) ==
        ChunkOutcome::duplicate);
}

TEST_CASE("swarm node: a fetch waits for an offer until its deadline", "[swarm][node]") {
  Node n;
  TestFile f = make_file(2);
  TestFile g = make_file(2, "gg");
  n.node.want_offer(f.offer.file_id, 1000, 0);
  n.node.want_offer(g.offer.file_id, 1000, 0);
  CHECK(n.node.poll_timeout() == Timeout(1000));
  n.say("alice", "swarm_offer", offer_payload(f.offer));
  auto ready = n.take<OfferReady>();
  REQUIRE(ready.size() == 1);
  CHECK(ready[0].file == f.offer.file_id);
  n.node.handle_timeout(999);
  CHECK(n.take<OfferMissing>().empty());
  n.node.handle_timeout(1000);
  auto missing = n.take<OfferMissing>();
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].file == g.offer.file_id);
  CHECK(missing[0].message.find("is the seeder in the room?") != std::string::npos);
  CHECK_FALSE(n.node.poll_timeout().has_value());
  // Known already: ready at once.
  n.node.want_offer(f.offer.file_id, 1000, 2000);
  CHECK(n.take<OfferReady>().size() == 1);
}

TEST_CASE("swarm node: the lock is refreshed on the core's clock while a download runs",
          "[swarm][node]") {
  Node n;
  n.open("alice");
  TestFile f = make_file(2);
  n.say("alice", "swarm_offer", offer_payload(f.offer));
  REQUIRE(n.node.fetch(f.offer.file_id, std::nullopt, 100).ok());
  REQUIRE(n.node.poll_timeout().has_value());
  CHECK(*n.node.poll_timeout() <= 100 + kLockRefreshMs);
  n.node.handle_timeout(100 + kLockRefreshMs - 1);
  CHECK(n.take<NodeRefreshLock>().empty());
  n.node.handle_timeout(100 + kLockRefreshMs);
  CHECK(n.take<NodeRefreshLock>().size() == 1);
  n.node.handle_timeout(100 + 2 * kLockRefreshMs);
  CHECK(n.take<NodeRefreshLock>().size() == 1);
}

TEST_CASE("swarm node: requests wait while the disk is behind", "[swarm][node]") {
  Node n;
  n.open("alice");
  TestFile f = make_file(kMaxUnwrittenChunks + 300);
  n.say("alice", "swarm_offer", offer_payload(f.offer));
  REQUIRE(n.node.fetch(f.offer.file_id, std::nullopt, 0).ok());
  send_pages(n, "alice", pages_of(f));
  n.node.handle_part_opened(f.offer.file_id, 0, 0);
  Bitfield all(f.shape.total_chunks);
  for (std::uint32_t i = 0; i < f.shape.total_chunks; ++i) all.set(i);
  n.say("alice", "swarm_announce",
        encode_payload(Message{Announce{f.offer.file_id, f.shape.total_chunks, all.to_wire()}}),
        "me");
  std::set<std::uint32_t> outstanding;
  auto requests = [&] {
    std::size_t r = 0;
    for (const auto& s : n.take<NodeSend>()) {
      if (!s.token) continue;
      ++r;
      for (const auto& m : parse_sends({s})) outstanding.insert(std::get<Request>(m.message).index);
      n.node.handle_send_result(s.token, true, 0);
    }
    return r;
  };
  CHECK(requests() > 0);
  // kMaxUnwrittenChunks chunks arrive and none is written yet.
  for (std::uint32_t i = 0; i < kMaxUnwrittenChunks; ++i) {
    REQUIRE(n.node.handle_chunk_digest("alice", f.offer.file_id, i, 1024, f.hashes[i], 0) ==
            ChunkOutcome::stored);
    outstanding.erase(i);
    requests();
  }
  // An answer frees a window slot, but nothing new goes out while the disk is behind.
  REQUIRE_FALSE(outstanding.empty());
  const std::uint32_t r = *outstanding.begin();
  REQUIRE(n.node.handle_chunk_digest("alice", f.offer.file_id, r, 1024, f.hashes[r], 0) ==
          ChunkOutcome::stored);
  CHECK(requests() == 0);
  for (std::uint32_t i = 0; i < 2; ++i) n.node.handle_chunk_written(f.offer.file_id, i, 0);
  CHECK(requests() > 0);
}
