// fixtures/room/sealed.json against the native core: frames sealed from the pinned session come
// out byte for byte, and every received sequence gives the pinned texts and refusals
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

TEST_CASE("sealed fixtures: frames, key id and outcomes are the pinned ones") {
  const Json f = fixture("room/sealed.json");
  const std::string secret = f["secret"].get<std::string>();
  const std::string room = f["room"].get<std::string>();
  CHECK(b64(f["keyId"]) ==
        tether::testing::hkdf_sha256(secret, ByteView(kSealedKeyIdSalt).to_bytes(),
                                     ByteView(kSealedKeyIdInfo).to_bytes(), kSealedKeyIdBytes));
  const Json& s = f["seal"];
  SealedOptions o;
  o.room = room;
  o.self = s["from"].get<std::string>();
  const Bytes session = b64(s["session"]);
  REQUIRE(session.size() == kSealedSessionBytes);
  std::copy(session.begin(), session.end(), o.session.begin());
  SealedHost alice(secret, o);
  REQUIRE(s["frames"].size() >= 4);
  for (const auto& fr : s["frames"]) {
    INFO(fr.dump());
    REQUIRE(alice.seal(fr["to"].get<std::string>(), fr["text"].get<std::string>()) ==
            SealedError::none);
    CHECK(alice.sent.back().second == fr["frame"].get<std::string>());
    ParsedSealedFrame p = parse_sealed_frame(alice.sent.back().second, 1 << 20);
    CHECK(p.header.counter == fr["counter"].get<std::uint64_t>());
    CHECK(sealed_nonce(p.header.counter) == b64(fr["nonce"]));
    CHECK(sealed_aad(ByteView(p.header_bytes), room, o.self, fr["to"].get<std::string>()) ==
          b64(fr["aad"]));
  }
  REQUIRE(f["open"].size() >= 10);
  for (const auto& c : f["open"]) {
    INFO(c["name"].get<std::string>());
    SealedHost bob(secret, tether::testing::sealed_options(room, "bob", 0x20));
    for (const auto& fr : c["frames"])
      bob.open(c["from"].get<std::string>(), fr.get<std::string>());
    Json got = Json::array();
    for (const auto& e : bob.events) {
      if (e.kind == SealedEvent::Kind::text) got.push_back("text:" + e.text);
      if (e.kind == SealedEvent::Kind::refused)
        got.push_back(std::string("refused:") + sealed_error_name(e.error));
    }
    CHECK(got == c["expect"]);
  }
  CHECK(f["limits"]["headerBytes"].get<std::size_t>() == kSealedHeaderBytes);
  CHECK(f["limits"]["maxPlaintextOf256KiB"].get<std::size_t>() == sealed_max_plaintext(256 * 1024));
}
