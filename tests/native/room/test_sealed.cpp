// The sealed channel (src/room/sealed.hpp) with a real cipher under it (Mbed TLS, sealed_host.hpp):
// round trips, what the frame shows, and every refusal by name (wrong secret, tampered bytes, a
// replay, a reorder, a stale or retired session, hostile and oversized frames), each leaving the
// session able to carry the next frame.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/base64.hpp"
#include "room/sealed.hpp"
#include "room/sealed_host.hpp"

using namespace tether;
using namespace tether::room;
using tether::testing::sealed_options;
using tether::testing::SealedHost;

namespace {
const std::string kSecret = "correct horse battery staple 42";

std::vector<std::string> texts(const SealedHost& h) {
  std::vector<std::string> out;
  for (const auto& e : h.events)
    if (e.kind == SealedEvent::Kind::text) out.push_back(e.peer + ":" + e.text);
  return out;
}
std::vector<std::string> refusals(const SealedHost& h) {
  std::vector<std::string> out;
  for (const auto& e : h.events)
    if (e.kind == SealedEvent::Kind::refused) out.push_back(sealed_error_name(e.error));
  return out;
}
std::string flip(const std::string& frame, std::size_t at) {
  Bytes raw = *base64_decode(frame);
  raw[at] ^= 0x01;
  return base64_encode(ByteView(raw));
}
}  // namespace

TEST_CASE("sealed: a round trip, in order, and the frame shows no plaintext") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  REQUIRE(a.ch.ready());
  REQUIRE(a.events.front().kind == SealedEvent::Kind::ready);
  for (int i = 0; i < 100; ++i)
    REQUIRE(a.seal("bob", "secret plan " + std::to_string(i)) == SealedError::none);
  REQUIRE(a.sent.size() == 100);
  for (const auto& [to, frame] : a.sent) {
    CHECK(to == "bob");
    CHECK(frame.find("secret") == std::string::npos);
    const Bytes raw = *base64_decode(frame);
    CHECK(std::string(raw.begin(), raw.end()).find("secret") == std::string::npos);
    b.open("alice", frame);
  }
  auto got = texts(b);
  REQUIRE(got.size() == 100);
  for (int i = 0; i < 100; ++i) CHECK(got[i] == "alice:secret plan " + std::to_string(i));
  CHECK(refusals(b).empty());
  CHECK(b.ch.stats().opened == 100);
  ParsedSealedFrame f = parse_sealed_frame(a.sent[4].second, 1 << 20);
  REQUIRE(f.error == SealedError::none);
  CHECK(f.header.version == kSealedVersion);
  CHECK(f.header.counter == 5);
  CHECK(f.header.session[0] == 1);
}

TEST_CASE("sealed: results the host finishes out of order still leave and arrive in order") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  a.hold = true;
  for (int i = 0; i < 5; ++i) a.seal("bob", "m" + std::to_string(i));
  REQUIRE(a.sent.empty());
  a.release_reversed();
  REQUIRE(a.sent.size() == 5);
  b.hold = true;
  for (const auto& [to, frame] : a.sent) b.open("alice", frame);
  REQUIRE(texts(b).empty());
  b.release_reversed();
  CHECK(texts(b) ==
        std::vector<std::string>{"alice:m0", "alice:m1", "alice:m2", "alice:m3", "alice:m4"});
}

TEST_CASE("sealed: a wrong secret is refused by name and the session goes on") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  SealedHost eve("another secret, same length..", sealed_options("lab", "alice", 9));
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  eve.seal("bob", "hi");
  b.open("alice", eve.sent.at(0).second);
  CHECK(refusals(b) == std::vector<std::string>{"wrong-secret"});
  a.seal("bob", "still here");
  b.open("alice", a.sent.at(0).second);
  CHECK(texts(b) == std::vector<std::string>{"alice:still here"});
}

TEST_CASE("sealed: tampered bytes, a changed sender, room or recipient are refused as tampered") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  SealedHost carol(kSecret, sealed_options("lab", "carol", 3));
  SealedHost other_room(kSecret, sealed_options("lab2", "bob", 4));
  a.seal("bob", "one");
  a.seal("bob", "two");
  const std::string f1 = a.sent[0].second, f2 = a.sent[1].second;
  b.open("alice", flip(f1, kSealedHeaderBytes + 1));      // ciphertext
  b.open("alice", flip(f1, kSealedHeaderBytes + 3 + 5));  // the tag
  b.open("alice", flip(f1, 1 + 8 + 16 + 6));              // the counter (bound in the AAD)
  b.open("alice", flip(f1, 1 + 8 + 2));                   // the session
  b.open("mallory", f1);                                  // the relay lies about the sender
  CHECK(refusals(b) ==
        std::vector<std::string>{"tampered", "tampered", "tampered", "tampered", "tampered"});
  carol.open("alice", f1);  // redirected to another member
  CHECK(refusals(carol) == std::vector<std::string>{"tampered"});
  other_room.open("alice", f1);  // carried into another room
  CHECK(refusals(other_room) == std::vector<std::string>{"tampered"});
  // Nothing was lost: the real frames still open, in order.
  b.open("alice", f1);
  b.open("alice", f2);
  CHECK(texts(b) == std::vector<std::string>{"alice:one", "alice:two"});
}

TEST_CASE("sealed: a replay, a reorder and a frame below the window are refused by name") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  for (int i = 1; i <= 80; ++i) a.seal("bob", std::to_string(i));
  auto f = [&](int n) { return a.sent.at(std::size_t(n - 1)).second; };
  b.open("alice", f(1));
  b.open("alice", f(1));  // replay
  b.open("alice", f(3));
  b.open("alice", f(2));  // reorder: older, never seen
  b.open("alice", f(3));  // replay
  b.open("alice", f(80));
  b.open("alice", f(10));  // 70 behind: outside the window
  b.open("alice", f(79));  // inside the window, unseen: reorder
  CHECK(refusals(b) == std::vector<std::string>{"replay", "reorder", "replay", "stale", "reorder"});
  CHECK(texts(b) == std::vector<std::string>{"alice:1", "alice:3", "alice:80"});
  a.seal("bob", "81");
  b.open("alice", a.sent.back().second);
  CHECK(texts(b).back() == "alice:81");
}

TEST_CASE("sealed: a restarted sender's new session is taken and its old one retired") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  a.seal("bob", "old 1");
  a.seal("bob", "old 2");
  b.open("alice", a.sent[0].second);
  SealedHost a2(kSecret, sealed_options("lab", "alice", 50));  // restarted: counter 1 again
  a2.seal("bob", "new 1");
  b.open("alice", a2.sent[0].second);
  b.open("alice", a.sent[1].second);  // the old session, after the new one authenticated
  b.open("alice", a.sent[0].second);
  CHECK(texts(b) == std::vector<std::string>{"alice:old 1", "alice:new 1"});
  CHECK(refusals(b) == std::vector<std::string>{"stale", "stale"});
  CHECK(b.released.size() == 1);  // the retired session's key was let go
}

TEST_CASE("sealed: forged sessions do not use up a sender's room for a real restart") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  a.seal("bob", "first");
  b.open("alice", a.sent[0].second);
  for (int i = 0; i < 20; ++i) {
    Bytes raw = *base64_decode(a.sent[0].second);
    raw[1 + 8] = std::uint8_t(100 + i);  // a fresh session id, same key id
    b.open("alice", base64_encode(ByteView(raw)));
  }
  CHECK(refusals(b).size() == 20);
  CHECK(refusals(b).back() == "tampered");
  SealedHost a2(kSecret, sealed_options("lab", "alice", 60));
  a2.seal("bob", "after restart");
  b.open("alice", a2.sent[0].second);
  CHECK(texts(b).back() == "alice:after restart");
}

TEST_CASE("sealed: hostile, truncated, oversized and unsealed frames get named errors") {
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  a.seal("bob", "x");
  const std::string good = a.sent[0].second;
  Bytes raw = *base64_decode(good);
  Bytes short_raw(raw.begin(), raw.begin() + kSealedOverheadBytes - 1);
  Bytes v2 = raw;
  v2[0] = 2;
  Bytes zero = raw;
  for (std::size_t i = 0; i < 8; ++i) zero[1 + 8 + 16 + i] = 0;
  b.open("alice", "not base64 !!");
  b.open("alice", base64_encode(ByteView(short_raw)));
  b.open("alice", base64_encode(ByteView(v2)));
  b.open("alice", base64_encode(ByteView(zero)));  // counter 0 is never sealed
  b.open("alice", R"({"v":1,"type":"dm"})");
  b.open("alice", std::string(256 * 1024 + 1, 'A'));
  b.open("alice", "");
  CHECK(refusals(b) == std::vector<std::string>{"malformed", "malformed", "unknown-version",
                                                "malformed", "unsealed", "too-big", "malformed"});
  b.open("alice", good);
  CHECK(texts(b) == std::vector<std::string>{"alice:x"});
  for (int e = 0; e < kSealedErrorKinds; ++e)
    CHECK(std::string(sealed_error_name(SealedError(e))) != "");
}

TEST_CASE("sealed: limits are enforced before work") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  CHECK(a.ch.max_plaintext() == sealed_max_plaintext(256 * 1024));
  CHECK(sealed_max_plaintext(256 * 1024) == 256 * 1024 / 4 * 3 - kSealedOverheadBytes);
  CHECK(a.seal("bob", std::string(a.ch.max_plaintext() + 1, 'x')) == SealedError::too_big);
  CHECK(a.seal("bob", std::string(a.ch.max_plaintext(), 'x')) == SealedError::none);
  // The sealed text of the largest plaintext fits the lane exactly.
  CHECK(a.sent.back().second.size() <= 256 * 1024);
  a.hold = true;
  std::size_t accepted = 0;
  while (a.seal("bob", "q") == SealedError::none) ++accepted;
  CHECK(accepted == kMaxSealedPending);
  CHECK(a.seal("bob", "q") == SealedError::busy);
  a.release_reversed();
  CHECK(a.seal("bob", "q") == SealedError::none);
  CHECK(sealed_secret_error(kMinSealedSecretBytes - 1).find("at least 16") != std::string::npos);
  CHECK(sealed_secret_error(kMinSealedSecretBytes).empty());
  CHECK(!sealed_secret_error(kMaxSealedSecretBytes + 1).empty());
  room::SealedChannel cold(sealed_options("lab", "z", 0));
  CHECK(cold.seal("bob", "early") == SealedError::not_ready);
}
