// The swarm golden vectors (fixtures/swarm/, written by tether_swarm_fixtures): the native build
// must read and write exactly these bytes; tests/node/swarm.test.mjs checks the WASM build.
#include <catch2/catch.hpp>
#include <set>

#include "fixture_files.hpp"
#include "swarm/bitfield.hpp"
#include "swarm/messages.hpp"
#include "swarm/session.hpp"

using namespace tether;
using namespace tether::swarm;
using tether::testing::fixture;

TEST_CASE("swarm fixtures: messages parse to their canonical form or their refusal",
          "[swarm][fixtures]") {
  const Json f = fixture("swarm/messages.json");
  REQUIRE(f["valid"].size() >= 10);
  for (const auto& v : f["valid"]) {
    INFO(v["name"].get<std::string>());
    const std::string text = v["text"].get<std::string>();
    auto m = parse_message_text(ByteView(std::string_view(text)));
    REQUIRE(m.ok());
    CHECK(message_type(m.value()) == v["type"].get<std::string>());
    CHECK(encode_message_text(m.value()) == v["canonical"].get<std::string>());
  }
  REQUIRE(f["invalid"].size() >= 10);
  for (const auto& v : f["invalid"]) {
    INFO(v["name"].get<std::string>());
    const std::string text = v["text"].get<std::string>();
    auto m = parse_message_text(ByteView(std::string_view(text)));
    REQUIRE_FALSE(m.ok());
    CHECK(message_error_name(m.error().code) == v["code"].get<std::string>());
    CHECK(m.error().field == v["field"].get<std::string>());
  }
}

TEST_CASE("swarm fixtures: binary-lane frames", "[swarm][fixtures]") {
  const Json f = fixture("swarm/frames.json");
  for (const auto& v : f["frames"]) {
    INFO(v["name"].get<std::string>());
    const Bytes frame = testing::b64(v["frame_b64"]);
    auto parsed = parse_chunk_frame(ByteView(frame));
    REQUIRE(parsed);
    CHECK(to_hex(parsed->file_id) == v["file_id"].get<std::string>());
    CHECK(parsed->index == v["index"].get<std::uint32_t>());
    CHECK(parsed->data.to_bytes() == testing::b64(v["data_b64"]));
    CHECK(encode_chunk_frame(parsed->file_id, parsed->index, parsed->data) == frame);
  }
  for (const auto& v : f["ignored"]) {
    INFO(v["name"].get<std::string>());
    CHECK_FALSE(parse_chunk_frame(ByteView(testing::b64(v["frame_b64"]))));
  }
}

namespace {

// A file of `total` 1 KiB chunks under the fixtures' file id, and a session over it.
struct FixtureFile {
  Offer offer;
  std::vector<ChunkHash> hashes;
};
FixtureFile fixture_file(std::uint32_t total) {
  FixtureFile f;
  for (std::uint32_t i = 0; i < total; ++i)
    f.hashes.push_back(sha256(ByteView(std::string_view("c" + std::to_string(i)))));
  const FileShape shape{std::uint64_t(total) * kMinChunkSize, kMinChunkSize, total};
  f.offer = make_offer(sha256(ByteView(std::string_view("tether swarm fixture"))), "f.bin", "x/y",
                       shape, f.hashes)
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

}  // namespace

TEST_CASE(
    "swarm fixtures: bitfields in the public implementation's order, read and written by the core",
    "[swarm][fixtures]") {
  const Json f = fixture("swarm/bitfields.json");
  REQUIRE(f["bitfields"].size() >= 12);
  for (const auto& v : f["bitfields"]) {
    INFO(v["name"].get<std::string>());
    const std::uint32_t total = v["totalChunks"].get<std::uint32_t>();
    std::set<std::uint32_t> held;
    for (const auto& i : v["held"]) held.insert(i.get<std::uint32_t>());
    const Bytes wire = testing::b64(v["chunks"]);
    // The codec reads the ninja-p2p bytes to exactly the held set, and writes them back.
    auto m = parse_message_text(ByteView(std::string_view(v["announce"].get<std::string>())));
    REQUIRE(m.ok());
    const auto& a = std::get<Announce>(m.value());
    CHECK(a.bits == wire);
    Bitfield b(total);
    std::set<std::uint32_t> read;
    for (std::uint32_t i = 0; i < total; ++i)
      if (Bitfield::wire_test(ByteView(a.bits), i)) read.insert(i), b.set(i);
    CHECK(read == held);
    CHECK(b.to_wire() == wire);
    if (total == 0 || total > kMaxInlineHashes)
      continue;  // an inline offer: the manifest is ready at once
    // A session: a peer announcing these bytes is asked only for what it holds, all of it.
    FixtureFile file = fixture_file(total);
    SwarmConfig cfg;
    cfg.window_per_peer = 4096;
    cfg.window_total = 4096;
    Swarm d = Swarm::fetch(file.offer, 1, cfg, 0).value();
    d.handle_resume_done(Bitfield(total), 0);
    d.handle_peer_open(1, PeerCaps{true, 262'144}, 0);
    drain_actions(d);
    d.handle_message(1, m.value(), true, 0);
    std::set<std::uint32_t> asked;
    for (const auto& r : only<SendRequest>(drain_actions(d))) asked.insert(r.index);
    CHECK(asked == held);
    // A session holding these chunks announces exactly these bytes.
    Bitfield verified(total);
    for (std::uint32_t i : held) verified.set(i);
    Swarm holder = Swarm::fetch(file.offer, 1, {}, 0).value();
    drain_actions(holder);
    holder.handle_resume_done(verified, 0);
    auto sent = only<SendControl>(drain_actions(holder));
    REQUIRE_FALSE(sent.empty());
    CHECK(sent[0].type == "swarm_announce");
    CHECK("{\"type\":\"swarm_announce\",\"payload\":" + sent[0].payload + "}" ==
          v["announce"].get<std::string>());
  }
}
