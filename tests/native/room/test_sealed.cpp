// The sealed channel (src/room/sealed.hpp) with a real cipher under it (Mbed TLS, sealed_host.hpp):
// round trips, what the frame shows, the receiver-epoch handshake (a recorded session replayed to a
// restarted receiver, a withheld handshake, a restarted peer), and every refusal by name (wrong
// secret, tampered bytes, a replay, a reorder, a stale or retired session, a wrong epoch, hostile
// and oversized frames), each leaving the session able to carry the next frame.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/base64.hpp"
#include "room/sealed.hpp"
#include "room/sealed_host.hpp"

using namespace tether;
using namespace tether::room;
using tether::testing::link;
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
  link(a, b);
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
  CHECK(f.header.kind == SealedKind::text);
  CHECK(f.header.counter > 5);  // after the handshake's frames
  CHECK(f.header.session[0] == 1);
  CHECK(f.header.epoch == b.ch.options().session);  // bob's epoch, in the authenticated header
}

TEST_CASE("sealed: results the host finishes out of order still leave and arrive in order") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  link(a, b);
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
  link(a, b);
  CHECK(eve.seal("bob", "hi") == SealedError::no_epoch);
  eve.ch.greet("bob");
  eve.pump();
  b.open("alice", eve.sent.at(0).second);
  CHECK(refusals(b) == std::vector<std::string>{"wrong-secret"});
  CHECK(b.sent.empty());  // nothing answers a frame that did not authenticate
  a.seal("bob", "still here");
  b.open("alice", a.sent.at(0).second);
  CHECK(texts(b) == std::vector<std::string>{"alice:still here"});
}

TEST_CASE("sealed: tampered bytes, a changed sender, room or recipient are refused as tampered") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  SealedHost carol(kSecret, sealed_options("lab", "carol", 3));
  SealedHost other_room(kSecret, sealed_options("lab2", "bob", 2));  // bob's epoch, other room
  link(a, b);
  a.seal("bob", "one");
  a.seal("bob", "two");
  const std::string f1 = a.sent[0].second, f2 = a.sent[1].second;
  b.open("alice", flip(f1, kSealedHeaderBytes + 1));      // ciphertext
  b.open("alice", flip(f1, kSealedHeaderBytes + 3 + 5));  // the tag
  b.open("alice", flip(f1, kSealedCounterAt + 6));        // the counter (bound in the AAD)
  b.open("alice", flip(f1, kSealedSessionAt + 2));        // the session
  b.open("alice", flip(f1, kSealedEpochAt + 3));          // the epoch
  b.open("mallory", f1);                                  // the relay lies about the sender
  CHECK(refusals(b) == std::vector<std::string>{"tampered", "tampered", "tampered", "tampered",
                                                "tampered", "tampered"});
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
  link(a, b);
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
  link(a, b);
  a.seal("bob", "old 1");
  a.seal("bob", "old 2");
  b.open("alice", a.sent[0].second);
  const std::vector<std::string> before = texts(b);
  SealedHost a2(kSecret, sealed_options("lab", "alice", 50));  // restarted: counter 1 again
  CHECK(a2.seal("bob", "new 1") == SealedError::no_epoch);     // it must learn bob's epoch again
  link(a2, b);  // retires the old session (its key is let go)
  CHECK(b.released.size() == 1);
  a2.seal("bob", "new 1");
  b.open("alice", a2.sent[0].second);
  b.open("alice", a.sent[1].second);  // the old session, after the new one authenticated
  b.open("alice", a.sent[0].second);
  CHECK(before == std::vector<std::string>{"alice:old 1"});
  CHECK(texts(b) == std::vector<std::string>{"alice:new 1"});
  CHECK(refusals(b) == std::vector<std::string>{"stale", "stale"});
  CHECK(b.released.size() == 1);
}

TEST_CASE("sealed: forged sessions do not use up a sender's room for a real restart") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  link(a, b);
  a.seal("bob", "first");
  b.open("alice", a.sent[0].second);
  for (int i = 0; i < 20; ++i) {
    Bytes raw = *base64_decode(a.sent[0].second);
    raw[kSealedSessionAt] = std::uint8_t(100 + i);  // a fresh session id, same key id
    b.open("alice", base64_encode(ByteView(raw)));
  }
  CHECK(refusals(b).size() == 20);
  CHECK(refusals(b).back() == "tampered");
  SealedHost a2(kSecret, sealed_options("lab", "alice", 60));
  link(a2, b);
  a2.seal("bob", "after restart");
  b.open("alice", a2.sent[0].second);
  CHECK(texts(b).back() == "alice:after restart");
}

TEST_CASE("sealed: hostile, truncated, oversized and unsealed frames get named errors") {
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  link(a, b);
  a.seal("bob", "x");
  const std::string good = a.sent[0].second;
  Bytes raw = *base64_decode(good);
  Bytes short_raw(raw.begin(), raw.begin() + kSealedOverheadBytes - 1);
  Bytes v1 = raw;
  v1[0] = 1;  // the version before receiver epochs
  Bytes zero = raw;
  for (std::size_t i = 0; i < 8; ++i) zero[kSealedCounterAt + i] = 0;
  Bytes kind = raw;
  kind[kSealedKindAt] = kSealedKinds;
  Bytes hello_body = raw;  // a hello carries its header and tag only
  hello_body[kSealedKindAt] = static_cast<std::uint8_t>(SealedKind::hello);
  b.open("alice", "not base64 !!");
  b.open("alice", base64_encode(ByteView(short_raw)));
  b.open("alice", base64_encode(ByteView(v1)));
  b.open("alice", base64_encode(ByteView(zero)));  // counter 0 is never sealed
  b.open("alice", base64_encode(ByteView(kind)));
  b.open("alice", base64_encode(ByteView(hello_body)));
  b.open("alice", R"({"v":1,"type":"dm"})");
  b.open("alice", std::string(256 * 1024 + 1, 'A'));
  b.open("alice", "");
  CHECK(refusals(b) == std::vector<std::string>{"malformed", "malformed", "unknown-version",
                                                "malformed", "malformed", "malformed", "unsealed",
                                                "too-big", "malformed"});
  CHECK(b.sent.empty());
  b.open("alice", good);
  CHECK(texts(b) == std::vector<std::string>{"alice:x"});
  for (int e = 0; e < kSealedErrorKinds; ++e)
    CHECK(std::string(sealed_error_name(SealedError(e))) != "");
}

TEST_CASE("sealed: limits are enforced before work") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  link(a, b);
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
  CHECK(cold.greet("bob") == SealedError::not_ready);
}

TEST_CASE("sealed epochs: a recorded session replayed to a restarted receiver is refused whole") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  link(a, b);
  for (int i = 0; i < 6; ++i) a.seal("bob", "recorded " + std::to_string(i));
  const auto recorded = a.sent;  // what a relay kept
  for (const auto& [to, frame] : recorded) b.open("alice", frame);
  REQUIRE(texts(b).size() == 6);
  SealedHost b2(kSecret, sealed_options("lab", "bob", 70));  // bob restarted: a new epoch
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& [to, frame] : recorded) b2.open("alice", frame);
  CHECK(texts(b2).empty());
  CHECK(refusals(b2) == std::vector<std::string>(12, "wrong-epoch"));
  // Alice is told bob's new epoch once (a hello bound to the session the frames came from), not
  // once per replayed frame.
  REQUIRE(b2.sent.size() == 1);
  CHECK(b2.sent_kinds[0] == SealedKind::hello);
  CHECK(!b2.ch.linked("alice"));
  CHECK(b2.seal("alice", "not yet") == SealedError::no_epoch);
  // The live alice picks the new epoch up from that hello, answers, and traffic goes on.
  a.sent.clear();
  a.sent_kinds.clear();
  a.open("bob", b2.sent[0].second);
  REQUIRE(a.sent.size() == 1);
  CHECK(a.sent_kinds[0] == SealedKind::answer);
  b2.open("alice", a.sent[0].second);
  CHECK(b2.ch.linked("alice"));
  CHECK(b2.events.back().kind == SealedEvent::Kind::linked);
  a.seal("bob", "live");
  b2.open("alice", a.sent.back().second);
  CHECK(texts(b2) == std::vector<std::string>{"alice:live"});
  CHECK(parse_sealed_frame(a.sent.back().second, 1 << 20).header.epoch == b2.ch.options().session);
}

TEST_CASE("sealed epochs: nothing is sealed before the handshake, and a withheld answer stops it") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  CHECK(a.seal("bob", "too early") == SealedError::no_epoch);
  CHECK(a.ch.greet("bob") == SealedError::none);
  a.pump();
  REQUIRE(a.sent.size() == 1);
  CHECK(a.sent_kinds[0] == SealedKind::hello);
  const ParsedSealedFrame h = parse_sealed_frame(a.sent[0].second, 1 << 20);
  CHECK(h.header.kind == SealedKind::hello);
  CHECK(h.header.epoch == std::array<std::uint8_t, kSealedEpochBytes>{});  // bob's is not known
  b.open("alice", a.sent[0].second);
  CHECK(texts(b).empty());
  CHECK(refusals(b).empty());  // a handshake frame is not an error
  CHECK(b.ch.stats().hellos_opened == 1);
  REQUIRE(b.sent.size() == 1);  // bob's hello back, bound to alice's session
  // The relay withholds it: alice stays unlinked, and every seal to bob is refused, never sent.
  for (int i = 0; i < 3; ++i) CHECK(a.seal("bob", "held back") == SealedError::no_epoch);
  CHECK(a.sent.size() == 1);
  CHECK(!a.ch.linked("bob"));
  // Replaying alice's hello gets no second answer; it does not link bob either.
  b.open("alice", a.sent[0].second);
  CHECK(b.sent.size() == 1);
  CHECK(!b.ch.linked("alice"));
  // Once it is let through, both sides link.
  a.open("bob", b.sent[0].second);
  CHECK(a.ch.linked("bob"));
  b.open("alice", a.sent.back().second);
  CHECK(b.ch.linked("alice"));
  CHECK(a.seal("bob", "now") == SealedError::none);
  b.open("alice", a.sent.back().second);
  CHECK(texts(b) == std::vector<std::string>{"alice:now"});
}

TEST_CASE("sealed epochs: a lane that reopens on a restarted peer relinks to its new epoch") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  link(a, b);
  SealedHost b2(kSecret, sealed_options("lab", "bob", 80));
  a.ch.greet("bob");  // the lane reset on bob's restart
  a.pump();
  CHECK(!a.ch.linked("bob"));
  CHECK(a.seal("bob", "to whom?") == SealedError::no_epoch);
  link(a, b2);
  CHECK(a.ch.linked("bob"));
  a.seal("bob", "to the new bob");
  b2.open("alice", a.sent.back().second);
  CHECK(texts(b2) == std::vector<std::string>{"alice:to the new bob"});
  // The old bob (say the relay still holds its socket) cannot read what is sealed for the new one.
  b.open("alice", a.sent.back().second);
  CHECK(refusals(b) == std::vector<std::string>{"wrong-epoch"});
  // The old bob's hello is of a retired session: alice stays linked to the new one.
  b.ch.greet("alice");
  b.pump();
  a.open("bob", b.sent.back().second);
  CHECK(refusals(a) == std::vector<std::string>{"stale"});
  CHECK(a.ch.linked("bob"));
}

TEST_CASE("sealed epochs: replayed old sessions do not crowd a real restart out") {
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  // Greetings of many earlier runs of alice, as a relay could have kept them.
  for (int i = 0; i < 10; ++i) {
    SealedHost old(kSecret, sealed_options("lab", "alice", std::uint8_t(100 + i * 3)));
    old.ch.greet("bob");
    old.pump();
    b.open("alice", old.sent.at(0).second);
  }
  CHECK(refusals(b).empty());
  CHECK(b.sent.size() == 10);  // each told bob's epoch once
  CHECK(!b.ch.linked("alice"));
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  link(a, b);
  CHECK(b.ch.linked("alice"));
  a.seal("bob", "the real one");
  b.open("alice", a.sent.back().second);
  CHECK(texts(b) == std::vector<std::string>{"alice:the real one"});
}

TEST_CASE("sealed epochs: a text bound to no epoch or to another is refused, the hello answered") {
  SealedHost a(kSecret, sealed_options("lab", "alice", 1));
  SealedHost b(kSecret, sealed_options("lab", "bob", 2));
  SealedHost c(kSecret, sealed_options("lab", "bob", 3));  // another run of bob
  link(a, c);
  a.seal("bob", "for the other run");
  b.open("alice", a.sent.back().second);
  CHECK(refusals(b) == std::vector<std::string>{"wrong-epoch"});
  CHECK(b.sent_kinds == std::vector<SealedKind>{SealedKind::hello});
  CHECK(b.ch.stats().opened == 0);
  CHECK(b.ch.stats().refused == 1);
}
