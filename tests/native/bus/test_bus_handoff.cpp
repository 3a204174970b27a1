// Confirmed handoffs (agent-bus-and-swarm.md § Delivery semantics, § Local state and CLI
// boundaries): bounds, expiry, the stored receipt, dedup and the sender's retry schedule.
#include <catch2/catch.hpp>

#include "harness.hpp"

using namespace bus_test;

namespace {

constexpr std::int64_t kT0 = 1'700'000'000'000;

struct Pair {
  Bus sender{config("S", false, 11)};
  Bus receiver{config("R", true, 12)};
  bool link_up = true;
  int dropped_to_sender = 0;  // receipts to lose on the way back

  Pair() {
    sender.handle_connection_open("toR", kT0);
    receiver.handle_connection_open("toS", kT0);
    exchange(kT0);
    drain_events(sender);
    drain_events(receiver);
  }
  // Moves traffic both ways until quiet.
  void exchange(std::int64_t now) {
    for (int round = 0; round < 6; ++round) {
      std::vector<std::string> to_r, to_s;
      pump(sender, [&](const std::string&, const std::string& t) {
        if (link_up) to_r.push_back(t);
        return link_up;
      });
      pump(receiver, [&](const std::string&, const std::string& t) {
        if (!link_up) return false;
        if (dropped_to_sender > 0 && parsed(t).type == MessageType::ack) {
          --dropped_to_sender;
          return true;  // accepted by the transport, lost on the path
        }
        to_s.push_back(t);
        return true;
      });
      if (to_r.empty() && to_s.empty()) return;
      for (auto& t : to_r) receiver.handle_text("toS", ByteView(std::string_view(t)), now);
      for (auto& t : to_s) sender.handle_text("toR", ByteView(std::string_view(t)), now);
    }
  }
};

}  // namespace

TEST_CASE("bus handoff: needs a current handoff-v1 announcement") {
  Bus s(config("S"));
  s.handle_connection_open("c", kT0);
  deliver(s, "c",
          env("a", MessageType::announce, ident("R"), std::nullopt,
              Json{{"skills", Json::array({"chat"})}}));
  auto r = s.handoff("R", "do it", kT0 + 1000, kT0);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == BusErrorCode::handoff_unsupported);
  deliver(s, "c",
          env("b", MessageType::announce, ident("R"), std::nullopt,
              Json{{"skills", Json::array({"handoff-v1"})}}));
  CHECK(s.handoff("R", "do it", kT0 + 1000, kT0).ok());
  // A restart (new instance) makes the old announcement stale until it announces again.
  s.handle_connection_closed("c", 0);
  s.handle_connection_open("c", kT0);
  deliver(s, "c", env("c1", MessageType::chat, ident("R", "i2"), std::nullopt));
  CHECK(s.handoff("R", "again", kT0 + 1000, kT0).error().code == BusErrorCode::handoff_unsupported);
}

TEST_CASE("bus handoff: request and expiry bounds") {
  Envelope e = env("h", MessageType::handoff, ident("S"), std::string("R"),
                   Json{{"request", "x"}, {"expiresAt", kT0 + 1}}, double(kT0));
  CHECK(check_handoff(e).ok());
  // Exactly 32,000 bytes as a JSON string (30 escaped newlines cost 2 bytes each).
  std::string at = std::string(32000 - 2 - 60, 'a') + std::string(30, '\n');
  REQUIRE(json_string_bytes(at) == 32000);
  e.payload["request"] = at;
  CHECK(check_handoff(e).ok());
  e.payload["request"] = at + "a";
  CHECK(check_handoff(e).error().code == BusErrorCode::handoff_too_large);
  e.payload["request"] = "x";
  e.payload["expiresAt"] = kT0 + kHandoffMaxTtlMs;
  CHECK(check_handoff(e).ok());
  e.payload["expiresAt"] = kT0 + kHandoffMaxTtlMs + 1;
  CHECK(check_handoff(e).error().code == BusErrorCode::handoff_expiry);
  e.payload["expiresAt"] = kT0;
  CHECK(check_handoff(e).error().code == BusErrorCode::handoff_expiry);
  e.payload["expiresAt"] = "tomorrow";
  CHECK(check_handoff(e).error().code == BusErrorCode::bad_payload);
  e.payload = Json{{"request", "x"}, {"expiresAt", kT0 + 1}, {"extra", 1}};
  CHECK(check_handoff(e).error().code == BusErrorCode::bad_payload);
  e.payload = Json{{"request", "x"}, {"expiresAt", kT0 + 1}};
  e.topic = "t";
  CHECK(check_handoff(e).error().field == "topic");
  e.topic.reset();
  e.to.reset();
  CHECK(check_handoff(e).error().field == "to");
}

TEST_CASE("bus handoff: stored once, acked only after the app confirms storage") {
  Pair p;
  auto h = p.sender.handoff("R", "review PR 12", kT0 + 60'000, kT0);
  REQUIRE(h.ok());
  CHECK(h->attempts == 1);
  p.exchange(kT0);
  auto arrived = events_of(drain_events(p.receiver), EventKind::handoff);
  REQUIRE(arrived.size() == 1);
  CHECK(arrived[0].envelope->payload["request"] == "review PR 12");
  CHECK(arrived[0].key == handoff_key_text(HandoffKey{"S", "i1", h->id}));
  // No receipt yet: the sender still holds it.
  CHECK(events_of(drain_events(p.sender), EventKind::handoff_stored).empty());
  CHECK(p.sender.pending_handoffs().size() == 1);
  REQUIRE(p.receiver.confirm_handoff(arrived[0].key, kT0 + 5).ok());
  p.exchange(kT0 + 5);
  auto stored = events_of(drain_events(p.sender), EventKind::handoff_stored);
  REQUIRE(stored.size() == 1);
  CHECK(stored[0].message_id == h->id);
  CHECK(stored[0].envelope->payload == handoff_receipt_payload(h->envelope));
  CHECK(p.sender.pending_handoffs().empty());
  CHECK_FALSE(p.sender.poll_timeout());
}

TEST_CASE(
    "bus handoff: a lost receipt makes the sender retry, and the receiver re-acks without "
    "redelivery") {
  Pair p;
  p.dropped_to_sender = 1;
  auto h = p.sender.handoff("R", "task", kT0 + 600'000, kT0);
  REQUIRE(h.ok());
  p.exchange(kT0);
  auto first = events_of(drain_events(p.receiver), EventKind::handoff);
  REQUIRE(first.size() == 1);
  REQUIRE(p.receiver.confirm_handoff(first[0].key, kT0 + 1).ok());
  p.exchange(kT0 + 1);  // the receipt is lost
  CHECK(p.sender.pending_handoffs().size() == 1);
  auto wake = p.sender.poll_timeout();
  REQUIRE(wake);
  CHECK(*wake == kT0 + kHandoffRetryInitialMs);
  p.sender.handle_timeout(*wake);
  p.exchange(*wake);
  CHECK(events_of(drain_events(p.receiver), EventKind::handoff).empty());  // deduplicated
  CHECK(events_of(drain_events(p.sender), EventKind::handoff_stored).size() == 1);
}

TEST_CASE("bus handoff: backoff doubles to a cap while the receiver is away, then expiry") {
  Pair p;
  p.link_up = false;
  auto h = p.sender.handoff("R", "task", kT0 + 10 * 60'000, kT0);
  REQUIRE(h.ok());
  std::vector<std::int64_t> gaps;
  std::int64_t last = kT0;
  for (int i = 0; i < 12; ++i) {
    auto w = p.sender.poll_timeout();
    REQUIRE(w);
    p.sender.handle_timeout(*w);
    pump_none(p.sender);
    gaps.push_back(*w - last);
    last = *w;
  }
  CHECK(gaps[0] == 2'000);
  CHECK(gaps[1] == 4'000);
  CHECK(gaps[2] == 8'000);
  CHECK(gaps[5] == 60'000);
  CHECK(gaps[8] == 60'000);
  // Expiry fires at expiresAt exactly, once.
  p.sender.handle_timeout(kT0 + 10 * 60'000);
  auto expired = events_of(drain_events(p.sender), EventKind::handoff_expired);
  REQUIRE(expired.size() == 1);
  CHECK(expired[0].message_id == h->id);
  CHECK(p.sender.pending_handoffs().empty());
}

TEST_CASE("bus handoff: survives the receiver restarting and is stored exactly once") {
  Pair p;
  auto h = p.sender.handoff("R", "task", kT0 + 600'000, kT0);
  REQUIRE(h.ok());
  p.exchange(kT0);
  auto got = events_of(drain_events(p.receiver), EventKind::handoff);
  REQUIRE(got.size() == 1);
  const std::string key = got[0].key;
  // The receiver stores it, then crashes before acking; it restarts as a new instance that
  // remembers its stored keys (the sidecar's persistent receiver records).
  p.receiver = Bus(BusConfig{Identity{"R", "agent", "R", "i2"}, 13, true, nullptr});
  p.sender.handle_connection_closed("toR", 0);
  p.sender.handle_connection_open("toR", kT0 + 100);
  p.receiver.handle_connection_open("toS", kT0 + 100);
  p.receiver.remember_handoff(*parse_handoff_key(key));
  p.exchange(kT0 + 100);
  CHECK(events_of(drain_events(p.receiver), EventKind::handoff).empty());
  CHECK(events_of(drain_events(p.sender), EventKind::handoff_stored).size() == 1);
}

TEST_CASE(
    "bus handoff: distinct ids with identical text stay distinct work, and hostile handoffs are "
    "refused") {
  Pair p;
  auto a = p.sender.handoff("R", "same", kT0 + 60'000, kT0);
  auto b = p.sender.handoff("R", "same", kT0 + 60'000, kT0);
  REQUIRE((a.ok() && b.ok()));
  p.exchange(kT0);
  CHECK(events_of(drain_events(p.receiver), EventKind::handoff).size() == 2);

  Bus r(config("R", true));
  r.handle_connection_open("c", kT0);
  auto rej = [&](Envelope e, BusErrorCode code) {
    deliver(r, "c", e, kT0);
    auto ev = events_of(drain_events(r), EventKind::rejected);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].error.code == code);
  };
  Json ok_payload = Json{{"request", "x"}, {"expiresAt", kT0 + 1000}};
  rej(env("h1", MessageType::handoff, ident("S"), std::string("R"),
          Json{{"request", "x"}, {"expiresAt", kT0 - 1}}, double(kT0 - 5000)),
      BusErrorCode::handoff_expired);
  rej(env("h2", MessageType::handoff, ident("S"), std::string("R"),
          Json{{"request", "x"}, {"expiresAt", kT0 + kHandoffMaxTtlMs + 5}}, double(kT0)),
      BusErrorCode::handoff_expiry);
  Envelope bc = env("h3", MessageType::handoff, ident("S"), std::nullopt, ok_payload, double(kT0));
  rej(bc, BusErrorCode::bad_field);
  // A bus that does not store handoffs refuses them instead of acking.
  Bus no(config("N", false));
  no.handle_connection_open("c", kT0);
  deliver(no, "c",
          env("h4", MessageType::handoff, ident("S"), std::string("N"), ok_payload, double(kT0)),
          kT0);
  auto ev = drain_events(no);
  REQUIRE(events_of(ev, EventKind::rejected).size() == 1);
  CHECK(of_type(pump_all(no), MessageType::ack).empty());
}

TEST_CASE("bus handoff: a forged receipt (wrong peer or instance) does not complete it") {
  Pair p;
  auto h = p.sender.handoff("R", "task", kT0 + 60'000, kT0);
  REQUIRE(h.ok());
  Json wrong_instance = handoff_receipt_payload(h->envelope);
  wrong_instance["senderInstanceId"] = "other";
  deliver(p.sender, "toR",
          env("k1", MessageType::ack, ident("R"), std::string("S"), wrong_instance), kT0);
  CHECK(events_of(drain_events(p.sender), EventKind::handoff_stored).empty());
  CHECK(p.sender.pending_handoffs().size() == 1);
  p.sender.handle_connection_open("c3", kT0);
  deliver(p.sender, "c3",
          env("k2", MessageType::ack, ident("X"), std::string("S"),
              handoff_receipt_payload(h->envelope)),
          kT0);
  CHECK(events_of(drain_events(p.sender), EventKind::handoff_stored).empty());
  // resume_handoff after a restart keeps the same envelope (id and original instance).
  Bus again(config("S", false, 99));
  auto resumed = again.resume_handoff(h->envelope, kT0 + 10);
  REQUIRE(resumed.ok());
  CHECK(resumed->envelope.from.instance_id == "i1");
  CHECK(*resumed->text == *h->text);
  CHECK_FALSE(resumed->next_attempt_ms);  // waits for R's handoff-v1 announce
  CHECK(again.resume_handoff(h->envelope, kT0 + 60'000).error().code ==
        BusErrorCode::handoff_expired);
}

TEST_CASE("bus handoff: unconfirmed incoming handoffs are bounded and freed when they expire") {
  Bus r(config("R", true));
  r.handle_connection_open("c", kT0);
  for (std::size_t i = 0; i < kMaxUnconfirmedHandoffs; ++i)
    deliver(r, "c",
            env("h" + std::to_string(i), MessageType::handoff, ident("S"), std::string("R"),
                Json{{"request", "x"}, {"expiresAt", kT0 + 1000}}, double(kT0)),
            kT0);
  CHECK(events_of(drain_events(r), EventKind::handoff).size() == kMaxUnconfirmedHandoffs);
  deliver(r, "c",
          env("late", MessageType::handoff, ident("S"), std::string("R"),
              Json{{"request", "x"}, {"expiresAt", kT0 + 5000}}, double(kT0)),
          kT0);
  auto full = events_of(drain_events(r), EventKind::rejected);
  REQUIRE(full.size() == 1);
  CHECK(full[0].error.code == BusErrorCode::queue_full);
  // Once the first batch has expired, the slots are free again.
  deliver(r, "c",
          env("later", MessageType::handoff, ident("S"), std::string("R"),
              Json{{"request", "x"}, {"expiresAt", kT0 + 5000}}, double(kT0)),
          kT0 + 2000);
  CHECK(events_of(drain_events(r), EventKind::handoff).size() == 1);
}
