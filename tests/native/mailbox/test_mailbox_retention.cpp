// Retention (docs/mailbox.md § Retention): text is deleted by the service itself seven days after
// it was stored (kept one millisecond before), a message nobody fetched becomes `expired`, the
// status record lasts another week, and poll_timeout names each of those moments.
#include "mailbox/harness.hpp"

using namespace tether;
using namespace tether::mailbox;
using namespace tether::mailbox::test;

TEST_CASE("mailbox retention: text is deleted at seven days, not before") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  h.send(b, s, "m1", "keep me");
  h.now += 1000;
  h.send(b, s, "m2", "and me");
  // Codes and pair requests are gone by now; the next deadline is the first text's.
  h.advance(kDayMs);
  CHECK(h.core.poll_timeout() == Harness::kStart + kRetentionMs);
  h.advance(Harness::kStart + kRetentionMs - 1 - h.now);
  CHECK(h.list(b).body["messages"].size() == 2);
  CHECK(h.store.at(message_key(1)).find("keep me") != std::string::npos);
  h.advance(1);
  Reply left = h.list(b);
  REQUIRE(left.body["messages"].size() == 1);
  CHECK(left.body["messages"][0]["id"] == "m2");
  CHECK(h.store.at(message_key(1)).find("keep me") == std::string::npos);  // deleted from storage
  CHECK(h.status(b, s, "m1").body["status"] == "expired");
  CHECK(h.core.poll_timeout() == Harness::kStart + 1000 + kRetentionMs);
  CHECK(h.storage_matches_core());
}

TEST_CASE(
    "mailbox retention: the sweep is the service's own; a request between timers sees it too") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  h.send(b, s, "m1", "x");
  // No handle_timeout at all: a request after the deadline still finds the text gone.
  h.now += kRetentionMs;
  CHECK(h.list(b).body["messages"].empty());
  CHECK(h.status(b, s, "m1").body["status"] == "expired");
}

TEST_CASE("mailbox retention: delivered and read keep their status, only unfetched text expires") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  h.send(b, s, "stored", "a");
  h.send(b, s, "delivered", "b");
  h.send(b, s, "read", "c");
  h.ack(b, {2}, "delivered");
  h.ack(b, {3}, "read");
  h.advance(kRetentionMs);
  CHECK(h.status(b, s, "stored").body["status"] == "expired");
  CHECK(h.status(b, s, "delivered").body["status"] == "delivered");
  CHECK(h.status(b, s, "read").body["status"] == "read");
  CHECK(h.core.stored_bytes() == 0);
  CHECK(h.list(b).body["messages"].empty());
  // A late ack of the expired message changes nothing.
  CHECK(h.ack(b, {1}, "read").body["unchanged"] == Json::array({1}));
  // A resend of an expired id reports it, and stores nothing new.
  Reply resend = h.send(b, s, "stored", "a");
  CHECK(resend.body["duplicate"] == true);
  CHECK(resend.body["status"] == "expired");
  CHECK(h.core.stored_messages() == 0);
  CHECK(h.storage_matches_core());
}

TEST_CASE("mailbox retention: the status record is forgotten a week after the text") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  h.send(b, s, "m1", "x");
  h.advance(kRetentionMs);
  CHECK(h.core.poll_timeout() == Harness::kStart + kRetentionMs + kStatusRetentionMs);
  h.advance(kStatusRetentionMs - 1);
  CHECK(h.status(b, s, "m1").body["status"] == "expired");
  h.advance(1);
  CHECK(h.status(b, s, "m1").error() == "unknown_message");
  CHECK(h.store.count(message_key(1)) == 0);
  CHECK(h.core.records() == 0);
  CHECK_FALSE(h.core.poll_timeout().has_value());
  // Seqs never repeat, even with every message gone.
  CHECK(h.send(b, s, "m2", "y").body["seq"] == 2);
}

TEST_CASE("mailbox retention: a core rebuilt after downtime purges what expired meanwhile") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  h.send(b, s, "m1", "x");
  h.now += kRetentionMs + 5;  // the host was down across the deadline
  h.restart();
  CHECK(h.store.at(message_key(1)).find("\"text\"") == std::string::npos);
  CHECK(h.status(b, s, "m1").body["status"] == "expired");
  CHECK(h.storage_matches_core());
}

TEST_CASE("mailbox retention: a clock that steps back never un-expires or reorders") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  h.send(b, s, "m1", "x");
  h.now -= 60'000;  // the host's clock jumped back a minute
  Reply r = h.send(b, s, "m2", "y");
  CHECK(r.body["storedAt"] == Harness::kStart);  // not before m1
  h.now = Harness::kStart + kRetentionMs;
  h.core.handle_timeout(h.now);
  h.drain();
  CHECK(h.list(b).body["messages"].empty());
}
