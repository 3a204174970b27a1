// Messages (docs/mailbox.md § Messages): idempotent ids, status stored -> delivered -> read as the
// sender sees it, listing since a cursor in bounded pages, the per-mailbox count and byte limits,
// the record limit, and the flood bound per sender that leaves other senders alone.
#include "mailbox/harness.hpp"

using namespace tether;
using namespace tether::mailbox;
using namespace tether::mailbox::test;

TEST_CASE("mailbox: a resend with the same id stores one message, new text under it conflicts") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  Reply first = h.send(b, s, "m1", "hello");
  CHECK(first.status == 201);
  CHECK(first.body["duplicate"] == false);
  CHECK(first.body["status"] == "stored");
  const std::size_t records = h.store.size();
  Reply again = h.send(b, s, "m1", "hello");
  CHECK(again.status == 200);
  CHECK(again.body["duplicate"] == true);
  CHECK(again.body["seq"] == first.body["seq"]);
  CHECK(h.store.size() == records);
  CHECK(h.list(b).body["messages"].size() == 1);
  Reply conflict = h.send(b, s, "m1", "something else");
  CHECK(conflict.status == 409);
  CHECK(conflict.error() == "id_conflict");
  // Ids belong to their sender: another sender's "m1" is its own message.
  Sender t = h.paired(b, "tom");
  CHECK(h.send(b, t, "m1", "hello").status == 201);
  CHECK(h.list(b).body["messages"].size() == 2);
  // Still a duplicate after the text was read and dropped, and across a restart.
  h.ack(b, {first.body["seq"].get<std::int64_t>()}, "read");
  h.restart();
  Reply late = h.send(b, s, "m1", "hello");
  CHECK(late.body["duplicate"] == true);
  CHECK(late.body["status"] == "read");
  CHECK(h.send(b, s, "m1", "other").error() == "id_conflict");
}

TEST_CASE("mailbox: status moves stored, delivered, read, and never back") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  const std::int64_t seq = h.send(b, s, "m1", "hello").body["seq"].get<std::int64_t>();
  Reply st = h.status(b, s, "m1");
  CHECK(st.body["status"] == "stored");
  CHECK_FALSE(st.body.contains("deliveredAt"));
  CHECK(st.body["expiresAt"] == Harness::kStart + kRetentionMs);
  h.now += 5;
  Reply d = h.ack(b, {seq}, "delivered");
  CHECK(d.body["updated"] == Json::array({seq}));
  st = h.status(b, s, "m1");
  CHECK(st.body["status"] == "delivered");
  CHECK(st.body["deliveredAt"] == Harness::kStart + 5);
  // Delivered text is still listed (the owner has not read it).
  CHECK(h.list(b).body["messages"][0]["status"] == "delivered");
  h.now += 5;
  CHECK(h.ack(b, {seq}, "read").body["updated"] == Json::array({seq}));
  st = h.status(b, s, "m1");
  CHECK(st.body["status"] == "read");
  CHECK(st.body["readAt"] == Harness::kStart + 10);
  // Read text is gone from the mailbox; the status record stays.
  CHECK(h.list(b).body["messages"].empty());
  CHECK(h.core.stored_bytes() == 0);
  CHECK(h.store.at(message_key(seq)).find("hello") == std::string::npos);
  Reply back = h.ack(b, {seq}, "delivered");
  CHECK(back.body["unchanged"] == Json::array({seq}));
  CHECK(h.status(b, s, "m1").body["status"] == "read");
  // Read straight from stored also stamps delivered.
  h.send(b, s, "m2", "x");
  h.ack(b, {2}, "read");
  CHECK(h.status(b, s, "m2").body["deliveredAt"] == h.status(b, s, "m2").body["readAt"]);
  CHECK(h.ack(b, {99}, "read").body["unknown"] == Json::array({99}));
  // A sender sees only its own messages.
  Sender t = h.paired(b, "tom");
  CHECK(h.status(b, t, "m1").error() == "unknown_message");
  CHECK(h.ack(b, {seq}, "read").status == 200);
  CHECK(h.call("POST", h.base(b) + "/ack", s.auth, R"({"seqs":[1],"status":"read"})").error() ==
        "bad_key");
  CHECK(h.storage_matches_core());
}

TEST_CASE("mailbox: listing since a cursor, in pages bounded by count and bytes") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  for (int i = 1; i <= 5; ++i) h.send(b, s, "m" + std::to_string(i), "text " + std::to_string(i));
  Reply page = h.list(b, 0, "&limit=2");
  REQUIRE(page.body["messages"].size() == 2);
  CHECK(page.body["messages"][0]["seq"] == 1);
  CHECK(page.body["messages"][0]["from"]["name"] == "bob");
  CHECK(page.body["messages"][0]["from"]["pair"] == s.pair);
  CHECK(page.body["messages"][1]["text"] == "text 2");
  CHECK(page.body["cursor"] == 2);
  CHECK(page.body["more"] == true);
  Reply rest = h.list(b, 2);
  CHECK(rest.body["messages"].size() == 3);
  CHECK(rest.body["more"] == false);
  CHECK(rest.body["cursor"] == 5);
  Reply empty = h.list(b, 5);
  CHECK(empty.body["messages"].empty());
  CHECK(empty.body["cursor"] == 5);
  // Bytes: pages stop before kMaxListBytes, yet always carry one message.
  Harness big;
  Box c = big.create();
  Sender t = big.paired(c, "t");
  const std::size_t per = kMaxTextBytes;
  const std::size_t n = kMaxListBytes / per + 2;
  for (std::size_t i = 0; i < n; ++i)
    big.send(c, t, "b" + std::to_string(i), std::string(per, 'x'));
  Reply p1 = big.list(c);
  CHECK(p1.body["messages"].size() == kMaxListBytes / per);
  CHECK(p1.body["more"] == true);
}

TEST_CASE("mailbox: the message count and bytes per mailbox are bounded, reading makes room") {
  Harness h;
  Box b = h.create();
  std::vector<Sender> senders;
  // Senders rotate so the flood bound (per sender) does not interfere.
  for (int i = 0; i < 40; ++i) senders.push_back(h.paired(b, "s" + std::to_string(i)));
  for (std::size_t i = 0; i < kMaxStoredMessages; ++i) {
    REQUIRE(h.send(b, senders[i % senders.size()], "m" + std::to_string(i), "x").status == 201);
  }
  Reply full = h.send(b, senders[0], "over", "x");
  CHECK(full.status == 507);
  CHECK(full.error() == "mailbox_full");
  CHECK(full.body["limit"] == kMaxStoredMessages);
  h.ack(b, {1}, "read");
  CHECK(h.send(b, senders[0], "over", "x").status == 201);

  Harness g;
  Box c = g.create();
  std::vector<Sender> ss;
  for (int i = 0; i < 8; ++i) ss.push_back(g.paired(c, "s"));
  const std::size_t n = kMaxStoredBytes / kMaxTextBytes;
  for (std::size_t i = 0; i < n; ++i) {
    REQUIRE(g.send(c, ss[i % ss.size()], "m" + std::to_string(i), std::string(kMaxTextBytes, 'y'))
                .status == 201);
  }
  CHECK(g.core.stored_bytes() == kMaxStoredBytes);
  Reply bytes = g.send(c, ss[0], "one byte", "z");
  CHECK(bytes.error() == "mailbox_full");
  CHECK(bytes.body["limit"] == kMaxStoredBytes);
  CHECK(g.storage_matches_core());
}

TEST_CASE("mailbox: at the record limit the oldest record without text is forgotten") {
  Harness h;
  Box b = h.create();
  std::vector<Sender> ss;
  for (int i = 0; i < 40; ++i) ss.push_back(h.paired(b, "s"));
  std::int64_t seq = 0;
  for (std::size_t i = 0; i < kMaxRecords; ++i) {
    Reply r = h.send(b, ss[i % ss.size()], "m" + std::to_string(i), "x");
    REQUIRE(r.status == 201);
    seq = r.body["seq"].get<std::int64_t>();
    h.ack(b, {seq}, "read");
    if (i % 200 == 0) h.now += 60'000;  // keep the flood buckets filled
  }
  CHECK(h.core.records() == kMaxRecords);
  h.now += 60'000;
  CHECK(h.send(b, ss[1], "next", "x").status == 201);
  CHECK(h.core.records() == kMaxRecords);
  CHECK(h.status(b, ss[0], "m0").error() == "unknown_message");  // the oldest went
  CHECK(h.status(b, ss[1], "m1").body["status"] == "read");      // the next stayed
  CHECK(h.storage_matches_core());
}

TEST_CASE("mailbox: a flooding sender is refused with retryAfterMs, others keep sending") {
  Harness h;
  Box b = h.create();
  Sender fast = h.paired(b, "fast");
  Sender calm = h.paired(b, "calm");
  for (std::uint32_t i = 0; i < kFloodBurst; ++i) {
    REQUIRE(h.send(b, fast, "f" + std::to_string(i), "x").status == 201);
  }
  Reply flood = h.send(b, fast, "f-over", "x");
  CHECK(flood.status == 429);
  CHECK(flood.error() == "flood");
  CHECK(flood.retry_after_ms == kFloodRefillMs);
  CHECK(flood.body["retryAfterMs"] == kFloodRefillMs);
  CHECK(h.status(b, fast, "f-over").error() == "unknown_message");  // nothing stored
  CHECK(h.send(b, calm, "c1", "x").status == 201);
  h.now += kFloodRefillMs - 1;
  CHECK(h.send(b, fast, "f-over", "x").error() == "flood");
  h.now += 1;
  CHECK(h.send(b, fast, "f-over", "x").status == 201);
  CHECK(h.send(b, fast, "f-2", "x").error() == "flood");
  // A long pause refills the bucket to its burst, never beyond.
  h.now += 1000 * kFloodRefillMs;
  for (std::uint32_t i = 0; i < kFloodBurst; ++i) {
    REQUIRE(h.send(b, fast, "g" + std::to_string(i), "x").status == 201);
  }
  CHECK(h.send(b, fast, "g-over", "x").error() == "flood");
}

TEST_CASE("mailbox: info counts what the mailbox holds") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  h.pair_request(b, "pending");
  h.send(b, s, "a", "abc");
  h.send(b, s, "b", "de");
  Reply info = h.call("GET", h.base(b), b.owner);
  CHECK(info.body["storedMessages"] == 2);
  CHECK(info.body["storedBytes"] == 5);
  CHECK(info.body["pairs"] == 1);
  CHECK(info.body["pendingPairs"] == 1);
  CHECK(info.body["cursor"] == 2);
  CHECK(h.call("GET", h.base(b), s.auth).error() == "bad_key");
}
