// Pairing gates deposits (docs/mailbox.md § Pairing): a code from the owner pairs at once and
// works once within a day; a pair request waits for the owner; only active pairings send; a
// revoked one is refused with a clear error; keys are checked by kind and by hash.
#include "mailbox/harness.hpp"

using namespace tether;
using namespace tether::mailbox;
using namespace tether::mailbox::test;

TEST_CASE("mailbox: create makes an unguessable id and an owner key, and stores only its hash") {
  Harness h;
  Box b = h.create();
  CHECK(is_mailbox_id(b.id));
  CHECK(b.owner.size() == std::string("Bearer mbo_").size() + 2 * kKeyBytes);
  // The id is the first 16 entropy bytes the host supplied, which the host can compute too.
  const std::string key = b.owner.substr(7);
  for (const auto& [k, v] : h.store) CHECK(v.find(key) == std::string::npos);
  CHECK(h.store.at("meta").find(to_hex(sha256(ByteView(std::string_view(key))))) !=
        std::string::npos);
  CHECK(h.call("GET", h.base(b), b.owner).status == 200);
  // A second mailbox from other entropy has another id and key.
  Harness h2;
  h2.rng = SeededRng(8);
  Box c = h2.create();
  CHECK(c.id != b.id);
  CHECK(c.owner != b.owner);
}

TEST_CASE("mailbox: create's id is mailbox_id_for(entropy), so a host can route before it asks") {
  Mailbox core;
  Bytes e(kEntropyBytes, 0x5a);
  core.handle_request(1, "POST", "/mailboxes", "", ByteView(), ByteView(e), 1);
  std::optional<Action> a;
  std::string body;
  while ((a = core.poll_action())) {
    if (auto* p = std::get_if<Persist>(&*a)) core.handle_persisted(p->token, true, 1);
    if (auto* r = std::get_if<Respond>(&*a)) body = r->body;
  }
  CHECK(core.id() == mailbox_id_for(ByteView(e)));
  CHECK(body.find(mailbox_id_for(ByteView(e))) != std::string::npos);
  Mailbox starved;
  starved.handle_request(1, "POST", "/mailboxes", "", ByteView(), ByteView(e.data(), 8), 1);
  auto r = starved.poll_action();
  REQUIRE(r);
  CHECK(std::get<Respond>(*r).status == 500);
  CHECK_FALSE(starved.exists());
}

TEST_CASE("mailbox: only paired senders deposit") {
  Harness h;
  Box b = h.create();
  const std::string body = R"({"id":"m1","text":"hello"})";
  // No key at all: unpaired.
  Reply none = h.call("POST", h.base(b) + "/messages", "", body);
  CHECK(none.status == 403);
  CHECK(none.error() == "unpaired_sender");
  CHECK(none.body["fix"].get<std::string>().find("pair") != std::string::npos);
  // A well-formed sender key this mailbox never issued: bad key.
  Reply stranger =
      h.call("POST", h.base(b) + "/messages", bearer("mbs_" + std::string(64, 'c')), body);
  CHECK(stranger.status == 401);
  CHECK(stranger.error() == "bad_key");
  // The owner key does not send.
  Reply owner = h.call("POST", h.base(b) + "/messages", b.owner, body);
  CHECK(owner.error() == "bad_key");
  CHECK(owner.body["message"].get<std::string>().find("owner key") != std::string::npos);
  // A pair request is pending until the owner accepts it.
  Reply req = h.pair_request(b, "bob");
  REQUIRE(req.status == 201);
  CHECK(req.body["state"] == "pending");
  Sender bob{req.body["pair"].get<std::string>(), bearer(req.body["senderKey"].get<std::string>())};
  Reply waiting = h.send(b, bob, "m1", "hello");
  CHECK(waiting.status == 403);
  CHECK(waiting.error() == "unpaired_sender");
  CHECK(waiting.body["message"].get<std::string>().find("waiting") != std::string::npos);
  CHECK(h.list(b).body["messages"].empty());
  // Accepted: it sends.
  Reply ok = h.call("POST", h.base(b) + "/pairs/" + bob.pair + "/accept", b.owner);
  CHECK(ok.status == 200);
  CHECK(ok.body["pair"]["state"] == "active");
  CHECK(h.send(b, bob, "m1", "hello").status == 201);
  // Revoked: refused again, with its own message, and the text already stored stays.
  CHECK(h.call("DELETE", h.base(b) + "/pairs/" + bob.pair, b.owner).body["pair"]["state"] ==
        "revoked");
  Reply revoked = h.send(b, bob, "m2", "again");
  CHECK(revoked.status == 403);
  CHECK(revoked.error() == "unpaired_sender");
  CHECK(revoked.body["message"].get<std::string>().find("revoked") != std::string::npos);
  CHECK(h.list(b).body["messages"].size() == 1);
  CHECK(h.storage_matches_core());
}

TEST_CASE("mailbox: a pairing code pairs at once, works once, and lapses after a day") {
  Harness h;
  Box b = h.create();
  const std::string code = h.code(b);
  CHECK(code.rfind("mbc_", 0) == 0);
  Reply first = h.pair_request(b, "alice", code);
  CHECK(first.status == 201);
  CHECK(first.body["state"] == "active");
  Reply again = h.pair_request(b, "mallory", code);
  CHECK(again.status == 403);
  CHECK(again.error() == "bad_code");
  CHECK(h.pair_request(b, "x", "mbc_" + std::string(32, '0')).error() == "bad_code");
  // The code is stored as a hash only.
  const std::string late = h.code(b);
  for (const auto& [k, v] : h.store) CHECK((k + v).find(late) == std::string::npos);
  h.advance(kCodeTtlMs - 1);
  const std::string later = h.code(b);
  h.advance(1);
  CHECK(h.pair_request(b, "y", late).error() == "bad_code");
  CHECK(h.pair_request(b, "z", later).status == 201);
  CHECK(h.storage_matches_core());
}

TEST_CASE("mailbox: pairings are listed and revoked by the owner only") {
  Harness h;
  Box b = h.create();
  Sender a = h.paired(b, "alice");
  Reply req = h.pair_request(b, "bob");
  Reply list = h.call("GET", h.base(b) + "/pairs", b.owner);
  REQUIRE(list.status == 200);
  REQUIRE(list.body["pairs"].size() == 2);
  bool saw_pending = false, saw_active = false;
  for (const auto& p : list.body["pairs"]) {
    saw_active = saw_active || (p["name"] == "alice" && p["state"] == "active");
    saw_pending =
        saw_pending || (p["name"] == "bob" && p["state"] == "pending" && p.contains("expiresAt"));
    CHECK_FALSE(p.contains("senderKey"));
  }
  CHECK(saw_active);
  CHECK(saw_pending);
  CHECK(h.call("GET", h.base(b) + "/pairs", a.auth).error() == "bad_key");
  CHECK(h.call("GET", h.base(b) + "/pairs").error() == "bad_key");
  CHECK(h.call("DELETE", h.base(b) + "/pairs/" + a.pair, a.auth).error() == "bad_key");
  CHECK(h.call("DELETE", h.base(b) + "/pairs/0000000000000000", b.owner).error() == "unknown_pair");
  // Declining a request is revoking it; revoking twice is harmless.
  const std::string bob = req.body["pair"].get<std::string>();
  CHECK(h.call("DELETE", h.base(b) + "/pairs/" + bob, b.owner).status == 200);
  CHECK(h.call("DELETE", h.base(b) + "/pairs/" + bob, b.owner).status == 200);
  CHECK(h.call("POST", h.base(b) + "/pairs/" + bob + "/accept", b.owner).error() == "unknown_pair");
  // A wrong owner key of the right shape.
  CHECK(h.call("GET", h.base(b) + "/pairs", bearer("mbo_" + std::string(64, '1'))).error() ==
        "bad_key");
  CHECK(h.call("GET", h.base(b) + "/pairs", "Basic xyz").error() == "bad_key");
}

TEST_CASE("mailbox: pairings, pair requests and codes are bounded") {
  Harness h;
  Box b = h.create();
  for (std::size_t i = 0; i < kMaxPendingPairs; ++i) REQUIRE(h.pair_request(b, "p").status == 201);
  Reply more = h.pair_request(b, "p");
  CHECK(more.status == 429);
  CHECK(more.error() == "too_many_pairs");
  CHECK(more.body["limit"] == kMaxPendingPairs);
  // A code still pairs while requests are at their limit, up to kMaxPairs in all.
  for (std::size_t i = kMaxPendingPairs; i < kMaxPairs; ++i) h.paired(b, "s");
  const std::string code = h.code(b);
  CHECK(h.pair_request(b, "one more", code).error() == "too_many_pairs");
  Harness h2;
  Box c = h2.create();
  for (std::size_t i = 0; i < kMaxOpenCodes; ++i) h2.code(c);
  CHECK(h2.call("POST", h2.base(c) + "/codes", c.owner).error() == "too_many_pairs");
}

TEST_CASE(
    "mailbox: an unanswered pair request lapses after a day; a revoked pairing is forgotten after "
    "a week") {
  Harness h;
  Box b = h.create();
  Reply req = h.pair_request(b, "late");
  Sender s = h.paired(b, "gone");
  h.call("DELETE", h.base(b) + "/pairs/" + s.pair, b.owner);
  CHECK(h.core.poll_timeout() == Harness::kStart + kPendingPairTtlMs);
  h.advance(kPendingPairTtlMs);
  const std::string pair = req.body["pair"].get<std::string>();
  CHECK(h.store.count(pair_key(pair)) == 0);
  CHECK(h.call("POST", h.base(b) + "/pairs/" + pair + "/accept", b.owner).error() ==
        "unknown_pair");
  // Still revoked (a clear error) until the week is up, then an unknown key.
  CHECK(h.send(b, s, "x", "y").error() == "unpaired_sender");
  h.advance(kRevokedRetentionMs - kPendingPairTtlMs);
  CHECK(h.send(b, s, "x", "y").error() == "bad_key");
  CHECK(h.storage_matches_core());
}

TEST_CASE("mailbox: requests for another mailbox, or before one exists, are unknown_mailbox") {
  Harness h;
  const std::string other = "/mailboxes/" + std::string(32, 'e');
  Reply before = h.call("GET", other, bearer("mbo_" + std::string(64, 'a')));
  CHECK(before.status == 404);
  CHECK(before.error() == "unknown_mailbox");
  Box b = h.create();
  CHECK(h.call("POST", other + "/pairs", "", R"({"name":"x"})").error() == "unknown_mailbox");
  CHECK(h.call("POST", "/mailboxes").error() == "mailbox_exists");
  CHECK(h.call("GET", h.base(b), b.owner).status == 200);
}
