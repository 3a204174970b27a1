// fixtures/room/sealed.json against the native core: the epoch handshake and the frames sealed from
// the pinned session come out byte for byte, and every received sequence, to a receiver of the
// pinned session, gives the pinned texts, refusals and links and the pinned answers
// (tests/node/sealed-fixtures.test.mjs checks the same file through WebCrypto and the WASM build).
#include <catch2/catch.hpp>
#include <string>

#include "fixture_files.hpp"
#include "room/sealed.hpp"
#include "room/sealed_host.hpp"

using namespace tether;
using namespace tether::room;
using tether::testing::b64;
using tether::testing::fixture;
using tether::testing::SealedHost;

namespace {
SealedOptions options_of(const std::string& room, const std::string& self, const Json& session) {
  SealedOptions o;
  o.room = room;
  o.self = self;
  const Bytes s = b64(session);
  REQUIRE(s.size() == kSealedSessionBytes);
  std::copy(s.begin(), s.end(), o.session.begin());
  return o;
}
}  // namespace

TEST_CASE("sealed fixtures: frames, key id and outcomes are the pinned ones") {
  const Json f = fixture("room/sealed.json");
  const std::string secret = f["secret"].get<std::string>();
  const std::string room = f["room"].get<std::string>();
  CHECK(b64(f["keyId"]) ==
        tether::testing::hkdf_sha256(secret, ByteView(kSealedKeyIdSalt).to_bytes(),
                                     ByteView(kSealedKeyIdInfo).to_bytes(), kSealedKeyIdBytes));
  const Json& s = f["seal"];
  const std::string self = s["from"].get<std::string>();
  SealedHost alice(secret, options_of(room, self, s["session"]));
  // The handshake: our greeting, the peer's hello back, our answer; then we are linked.
  const Json& hs = s["handshake"];
  const std::string peer = hs["peer"].get<std::string>();
  CHECK(alice.seal(peer, "too early") == SealedError::no_epoch);
  REQUIRE(alice.ch.greet(peer) == SealedError::none);
  alice.pump();
  REQUIRE(alice.sent.size() == 1);
  CHECK(alice.sent.back().second == hs["greet"].get<std::string>());
  alice.open(peer, hs["peerHello"].get<std::string>());
  REQUIRE(alice.sent.size() == 2);
  CHECK(alice.sent.back().second == hs["answer"].get<std::string>());
  CHECK(alice.ch.linked(peer));
  REQUIRE(s["frames"].size() >= 4);
  for (const auto& fr : s["frames"]) {
    INFO(fr.dump());
    REQUIRE(alice.seal(fr["to"].get<std::string>(), fr["text"].get<std::string>()) ==
            SealedError::none);
    CHECK(alice.sent.back().second == fr["frame"].get<std::string>());
    ParsedSealedFrame p = parse_sealed_frame(alice.sent.back().second, 1 << 20);
    CHECK(p.header.counter == fr["counter"].get<std::uint64_t>());
    CHECK(sealed_nonce(p.header.counter) == b64(fr["nonce"]));
    CHECK(sealed_aad(ByteView(p.header_bytes), room, self, fr["to"].get<std::string>()) ==
          b64(fr["aad"]));
    CHECK(Bytes(p.header.epoch.begin(), p.header.epoch.end()) == b64(hs["peerSession"]));
  }
  REQUIRE(f["open"].size() >= 16);
  for (const auto& c : f["open"]) {
    INFO(c["name"].get<std::string>());
    SealedHost rx(secret, options_of(room, c["receiver"]["self"].get<std::string>(),
                                     c["receiver"]["session"]));
    for (const auto& fr : c["frames"]) rx.open(c["from"].get<std::string>(), fr.get<std::string>());
    Json got = Json::array();
    for (const auto& e : rx.events) {
      if (e.kind == SealedEvent::Kind::text) got.push_back("text:" + e.text);
      if (e.kind == SealedEvent::Kind::refused)
        got.push_back(std::string("refused:") + sealed_error_name(e.error));
      if (e.kind == SealedEvent::Kind::linked) got.push_back("linked:" + e.peer);
    }
    CHECK(got == c["expect"]);
    Json sends = Json::array();
    for (SealedKind k : rx.sent_kinds) sends.push_back(sealed_kind_name(k));
    CHECK(sends == c["sends"]);
  }
  CHECK(f["limits"]["headerBytes"].get<std::size_t>() == kSealedHeaderBytes);
  CHECK(f["limits"]["epochAt"].get<std::size_t>() == kSealedEpochAt);
  CHECK(f["limits"]["maxPlaintextOf256KiB"].get<std::size_t>() == sealed_max_plaintext(256 * 1024));
}
