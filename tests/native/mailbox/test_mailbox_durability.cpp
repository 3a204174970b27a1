// Durability and the drive contract (src/mailbox/mailbox.hpp § Durability): storage always holds
// exactly the core's state, a restart rebuilds it with nothing lost, a response waits for the
// writes before it, a failed write answers storage_failed and keeps nothing, damaged records are
// skipped and left alone; readers get the backlog, `ready`, then live messages.
#include "mailbox/harness.hpp"

using namespace tether;
using namespace tether::mailbox;
using namespace tether::mailbox::test;

TEST_CASE("mailbox durability: a restart from storage loses no stored message") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  const std::string code = h.code(b);
  Reply pending = h.pair_request(b, "later");
  for (int i = 1; i <= 10; ++i) h.send(b, s, "m" + std::to_string(i), "text " + std::to_string(i));
  h.ack(b, {2}, "delivered");
  h.ack(b, {3}, "read");
  const Json before = h.list(b).body;
  const auto snapshot = h.core.snapshot();
  REQUIRE(h.storage_matches_core());
  h.restart();
  CHECK(h.core.snapshot() == snapshot);
  CHECK(h.list(b).body == before);
  CHECK(h.status(b, s, "m2").body["status"] == "delivered");
  CHECK(h.status(b, s, "m3").body["status"] == "read");
  CHECK(h.send(b, s, "m4", "text 4").body["duplicate"] == true);  // the id index came back
  CHECK(h.send(b, s, "m11", "new").body["seq"] == 11);            // and the seq
  CHECK(h.pair_request(b, "x", code).status == 201);              // the open code
  CHECK(h.call("POST", h.base(b) + "/pairs/" + pending.body["pair"].get<std::string>() + "/accept",
               b.owner)
            .status == 200);
  CHECK(h.call("GET", h.base(b), b.owner).status == 200);  // the owner key's hash
}

TEST_CASE("mailbox durability: a response waits for the writes before it") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  h.auto_persist = false;
  const RequestId send =
      h.submit("POST", h.base(b) + "/messages", s.auth, R"({"id":"m1","text":"x"})");
  CHECK_FALSE(h.reply_for(send));  // not before its write is durable
  // A read behind it waits too, so nobody sees what storage does not hold.
  const RequestId list = h.submit("GET", h.base(b) + "/messages", b.owner);
  CHECK_FALSE(h.reply_for(list));
  REQUIRE(h.pending.size() == 1);
  h.persist_one();
  CHECK(h.reply_for(send)->status == 201);
  CHECK(h.reply_for(list)->body["messages"].size() == 1);
}

TEST_CASE("mailbox durability: writes answered out of order release responses in order") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  h.auto_persist = false;
  const RequestId a = h.submit("POST", h.base(b) + "/messages", s.auth, R"({"id":"a","text":"x"})");
  const RequestId c = h.submit("POST", h.base(b) + "/messages", s.auth, R"({"id":"c","text":"y"})");
  REQUIRE(h.pending.size() == 2);
  Persist second = h.pending[1];
  h.pending.pop_back();
  h.apply(second);
  h.core.handle_persisted(second.token, true, h.now);
  h.drain();
  CHECK_FALSE(h.reply_for(a));
  CHECK_FALSE(h.reply_for(c));
  h.persist_one();
  CHECK(h.reply_for(a)->status == 201);
  CHECK(h.reply_for(c)->status == 201);
}

TEST_CASE(
    "mailbox durability: a failed write answers storage_failed, keeps nothing, and asks for a "
    "rebuild") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  h.send(b, s, "m1", "kept");
  const auto stored = h.store;
  h.fail_persists = true;
  Reply failed = h.send(b, s, "m2", "lost");
  CHECK(failed.status == 503);
  CHECK(failed.error() == "storage_failed");
  CHECK(failed.retry_after_ms > 0);
  CHECK(h.store == stored);
  REQUIRE_FALSE(h.events.empty());
  CHECK(h.events.back().kind == Event::Kind::storage_failed);
  CHECK(h.core.failed());
  CHECK_FALSE(h.core.poll_timeout());
  // Everything after answers storage_failed until the host rebuilds the core.
  CHECK(h.list(b).error() == "storage_failed");
  h.fail_persists = false;
  h.restart();
  CHECK(h.list(b).body["messages"].size() == 1);
  CHECK(h.send(b, s, "m2", "lost").status == 201);  // the retry succeeds, as a new message
}

TEST_CASE("mailbox durability: damaged records are skipped, reported and left on disk") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  h.send(b, s, "m1", "fine");
  h.store[message_key(2)] = "{not json";
  h.store[message_key(3)] = R"({"v":2,"seq":3})";
  h.store["msg/0000000000000009"] = h.store.at(message_key(1));  // key and content disagree
  h.store["other"] = "{}";
  h.restart();
  CHECK(h.events.size() == 4);
  for (const Event& e : h.events) CHECK(e.kind == Event::Kind::record_skipped);
  CHECK(h.list(b).body["messages"].size() == 1);
  CHECK(h.store.count(message_key(2)) == 1);  // untouched
  CHECK(h.send(b, s, "m2", "next").body["seq"] == 2);
  // Without its meta record the mailbox does not exist.
  Harness g;
  Box c = g.create();
  g.store.erase("meta");
  g.restart();
  CHECK_FALSE(g.core.exists());
  CHECK(g.call("GET", g.base(c), c.owner).error() == "unknown_mailbox");
}

TEST_CASE("mailbox durability: a hostile store cannot grow the core past its limits") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  h.send(b, s, "m0", "x");
  const std::string tmpl = h.store.at(message_key(1));
  for (std::size_t i = 2; i <= kMaxStoredMessages + 10; ++i) {
    std::string rec = tmpl;
    const std::string seq = "\"seq\":1,";
    rec.replace(rec.find(seq), seq.size(), "\"seq\":" + std::to_string(i) + ",");
    const std::string id = "\"id\":\"m0\"";
    rec.replace(rec.find(id), id.size(), "\"id\":\"m" + std::to_string(i) + "\"");
    h.store[message_key(static_cast<std::int64_t>(i))] = rec;
  }
  h.restart();
  CHECK(h.core.stored_messages() == kMaxStoredMessages);
  CHECK(h.events.size() == 10);
}

TEST_CASE("mailbox readers: backlog after the cursor, ready, then live messages once stored") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  h.send(b, s, "m1", "one");
  h.send(b, s, "m2", "two");
  CHECK(h.call("GET", h.base(b) + "/stream", s.auth).error() == "bad_key");
  const RequestId open = h.submit("GET", h.base(b) + "/stream?since=1", b.owner);
  REQUIRE(h.accepts.size() == 1);
  CHECK(h.accepts[0].request == open);
  const ReaderId reader = h.accepts[0].reader;
  REQUIRE(h.pushes.size() == 2);
  CHECK(h.pushes[0].text.find("\"text\":\"two\"") != std::string::npos);
  CHECK(h.pushes[1].text == R"({"t":"ready","cursor":2})");
  h.auto_persist = false;
  const RequestId send =
      h.submit("POST", h.base(b) + "/messages", s.auth, R"({"id":"m3","text":"three"})");
  CHECK(h.pushes.size() == 2);  // not pushed before it is stored
  h.persist_one();
  REQUIRE(h.pushes.size() == 3);
  CHECK(h.pushes[2].reader == reader);
  JsonParse p = parse_json(ByteView(std::string_view(h.pushes[2].text)));
  REQUIRE(p.ok());
  CHECK(p.value["t"] == "message");
  CHECK(p.value["message"]["seq"] == 3);
  CHECK(p.value["message"]["from"]["name"] == "bob");
  CHECK(h.reply_for(send)->status == 201);
  h.auto_persist = true;
  h.core.handle_reader_closed(reader, h.now);
  h.send(b, s, "m4", "four");
  CHECK(h.pushes.size() == 3);
}

TEST_CASE("mailbox readers: bounded, and restored after a restart") {
  Harness h;
  Box b = h.create();
  for (std::size_t i = 0; i < kMaxReaders; ++i) h.submit("GET", h.base(b) + "/stream", b.owner);
  CHECK(h.accepts.size() == kMaxReaders);
  CHECK(h.call("GET", h.base(b) + "/stream", b.owner).error() == "too_many_readers");
  h.restart();
  Sender s = h.paired(b, "bob");
  const ReaderId r = h.core.restore_reader(h.now);
  CHECK(r != 0);
  h.pushes.clear();
  h.send(b, s, "m1", "x");
  REQUIRE(h.pushes.size() == 1);
  CHECK(h.pushes[0].reader == r);
}

TEST_CASE("mailbox: a storage failure closes readers and fails their pending accept") {
  Harness h;
  Box b = h.create();
  h.submit("GET", h.base(b) + "/stream", b.owner);
  REQUIRE(h.accepts.size() == 1);
  Sender s = h.paired(b, "bob");
  h.fail_persists = true;
  h.send(b, s, "m1", "x");
  REQUIRE(h.closes.size() == 1);
  CHECK(h.closes[0].reader == h.accepts[0].reader);
  CHECK(h.closes[0].code == 1011);
}

TEST_CASE("mailbox: a host that stops answering persists gets busy, not unbounded memory") {
  Harness h;
  Box b = h.create();
  h.auto_persist = false;
  for (std::size_t i = 0; i < kMaxHeldOutputs; ++i) h.submit("GET", h.base(b), b.owner);
  // Those waited behind nothing (all earlier writes were answered), so they left at once.
  CHECK(h.responses.size() >= kMaxHeldOutputs);
  Sender s;
  h.auto_persist = true;
  s = h.paired(b, "bob");
  h.auto_persist = false;
  h.submit("POST", h.base(b) + "/messages", s.auth, R"({"id":"w","text":"x"})");
  const std::size_t before = h.responses.size();
  // The send's own response waits, and this many more beside it.
  for (std::size_t i = 1; i < kMaxHeldOutputs; ++i) h.submit("GET", h.base(b), b.owner);
  CHECK(h.responses.size() == before);  // all held behind the unanswered write
  const RequestId over = h.submit("GET", h.base(b), b.owner);
  auto r = h.reply_for(over);
  REQUIRE(r);
  CHECK(r->status == 503);
  CHECK(r->error() == "busy");
}

TEST_CASE("mailbox durability: writes queued behind a failed one are withdrawn, never applied") {
  Harness h;
  Box b = h.create();
  Sender s = h.paired(b, "bob");
  h.send(b, s, "m1", "old");
  // One request, two writes: the expiry sweep of m1, then m2 itself.
  h.now += kRetentionMs;
  h.fail_persists = true;
  const std::size_t before = h.persists;
  CHECK(h.send(b, s, "m2", "new").error() == "storage_failed");
  CHECK(h.persists == before + 1);  // the second write never left the core
}
