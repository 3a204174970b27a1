// Cockpit relay core: viewer publishes (cockpit-wire-v7-notes.md § Publishing).
#include "cockpit_harness.hpp"

using namespace cockpit_test;
using H = Harness;

namespace {
std::string nack_code(const std::vector<CockpitAction>& acts, SessionId v) {
  auto ns = H::of_type(H::messages(acts, v), "pub_nack");
  REQUIRE(ns.size() == 1);
  return ns[0]["code"].get<std::string>();
}
}  // namespace

TEST_CASE("cockpit publish: a tx frame goes to the robot's carrier with a relay request id") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1");
  h.take();
  h.viewer_publish(v, "say", "req-1", R"({"text":"hi"})");
  auto acts = h.take();
  std::vector<std::string> payloads;
  auto frames = H::carrier_frames(acts, r, &payloads);
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].ch == "say");
  CHECK(frames[0].delivery == wire::Delivery::reliable);
  CHECK(payloads[0] == R"({"text":"hi"})");
  const std::string rid = (*frames[0].meta)["id"].get<std::string>();
  CHECK(rid != "req-1");
  // The robot acks on an @control frame; the viewer gets its own id back.
  Json ack = J(R"({"t":"pub_ack","ch":"say"})");
  ack["id"] = rid;
  h.robot_stream(r, control_data_frame(ack));
  auto ms = H::messages(h.take(), v);
  REQUIRE(ms.size() == 1);
  CHECK(to_json(ms[0]) == R"({"t":"pub_ack","ch":"say","id":"req-1"})");
  // A second answer for the same request goes nowhere.
  h.robot_stream(r, control_data_frame(ack));
  CHECK(H::messages(h.take(), v).empty());
}

TEST_CASE("cockpit publish: a robot's pub_nack reaches the publisher with its code") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1");
  h.take();
  h.viewer_publish(v, "say", "q", "{}");
  auto frames = H::carrier_frames(h.take(), r);
  Json nack = J(R"({"t":"pub_nack","ch":"say","id":"","code":"busy","message":"later"})");
  nack["id"] = (*frames.at(0).meta)["id"];
  h.robot_datagram(r, nack);
  auto ms = H::messages(h.take(), v);
  REQUIRE(ms.size() == 1);
  CHECK(to_json(ms[0]) ==
        R"({"t":"pub_nack","ch":"say","id":"q","code":"busy","message":"later"})");
}

TEST_CASE("cockpit publish: two viewers with the same request id never collide") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId a = h.watcher("r1");
  SessionId b = h.watcher("r1");
  h.take();
  h.viewer_publish(a, "say", "1", "{}");
  h.viewer_publish(b, "say", "1", "{}");
  auto frames = H::carrier_frames(h.take(), r);
  REQUIRE(frames.size() == 2);
  CHECK((*frames[0].meta)["id"] != (*frames[1].meta)["id"]);
  Json ack = J(R"({"t":"pub_ack","ch":"say"})");
  ack["id"] = (*frames[1].meta)["id"];
  h.robot_stream(r, control_data_frame(ack));
  auto acts = h.take();
  CHECK(H::messages(acts, a).empty());
  CHECK(H::of_type(H::messages(acts, b), "pub_ack").size() == 1);
}

TEST_CASE("cockpit publish: not_publishable for rx, undeclared and publish:false channels") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1");
  h.take();
  for (const char* ch : {"cam", "nope", "drive"}) {
    INFO(ch);
    h.viewer_publish(v, ch, "x", "{}");
    auto acts = h.take();
    CHECK(nack_code(acts, v) == "not_publishable");
    CHECK(H::carrier_frames(acts, r).empty());
  }
}

TEST_CASE("cockpit publish: requiredScope is checked against the token's scopes") {
  auto table = AuthTable::parse(ByteView(std::string_view(
      R"({"tokens":[{"token":"robot-token-0123456789","roles":["robot"]},
                    {"token":"armed-token-0123456789","scopes":["arm"]},
                    {"token":"plain-token-0123456789"}]})")));
  REQUIRE(table.ok());
  RelayConfig c;
  c.auth = table.value();
  Harness h(c);
  SessionId r = h.robot("r1", demo_manifest(), std::string("robot-token-0123456789"));
  SessionId plain = h.viewer(std::string("plain-token-0123456789"));
  SessionId armed = h.viewer(std::string("armed-token-0123456789"));
  h.viewer_send(plain, J(R"({"t":"watch","robotId":"r1"})"));
  h.viewer_send(armed, J(R"({"t":"watch","robotId":"r1"})"));
  h.take();
  h.viewer_publish(plain, "arm", "1", "{}");
  auto acts = h.take();
  CHECK(nack_code(acts, plain) == "not_publishable");
  CHECK(H::carrier_frames(acts, r).empty());
  h.viewer_publish(armed, "arm", "1", "{}");
  CHECK(H::carrier_frames(h.take(), r).size() == 1);
}

TEST_CASE("cockpit publish: over 32 KiB is publish_too_large, refused before the payload") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1");
  h.take();
  Json meta = J(R"({"id":"big"})");
  Bytes frame = data_frame("say", 1, std::string(wire::kMaxPublishBytes + 1, 'x'),
                           wire::Delivery::reliable, meta);
  const std::size_t header_end = 8 + read_u32_le(frame.data());
  StreamId st = h.relay.handle_incoming_open(v, h.now);
  // The prefix and header alone earn the nack.
  h.relay.handle_incoming_data(st, ByteView(frame.data(), header_end), h.now);
  auto acts = h.take();
  CHECK(nack_code(acts, v) == "publish_too_large");
  // The payload is never read: the stream is stopped.
  auto resets = H::kind(acts, ActionKind::reset_stream, v);
  REQUIRE(resets.size() == 1);
  CHECK(resets[0].stream == st);
  h.relay.handle_incoming_data(st, ByteView(frame.data() + header_end, frame.size() - header_end),
                               h.now);
  CHECK(H::carrier_frames(h.take(), r).empty());
  // Exactly 32 KiB is fine.
  h.viewer_publish(v, "say", "edge", std::string(wire::kMaxPublishBytes, 'x'));
  CHECK(H::carrier_frames(h.take(), r).size() == 1);
}

TEST_CASE("cockpit publish: duplicate_request for an id still pending") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1");
  h.viewer_publish(v, "say", "same", "{}");
  h.take();
  h.viewer_publish(v, "say", "same", "{}");
  auto acts = h.take();
  CHECK(nack_code(acts, v) == "duplicate_request");
  CHECK(H::carrier_frames(acts, r).empty());
}

TEST_CASE("cockpit publish: pending_limit after 8 unanswered publishes") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1");
  h.take();
  for (std::size_t i = 0; i < kMaxPendingPublishes; ++i)
    h.viewer_publish(v, "say", std::to_string(i), "{}");
  CHECK(H::carrier_frames(h.take(), r).size() == kMaxPendingPublishes);
  h.viewer_publish(v, "say", "one-more", "{}");
  CHECK(nack_code(h.take(), v) == "pending_limit");
}

TEST_CASE("cockpit publish: rate_limited past the token bucket, refilled by time") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1");
  h.take();
  int forwarded = 0;
  for (int i = 0; i < int(kPublishBurst); ++i) {
    h.viewer_publish(v, "say", "id" + std::to_string(i), "{}");
    auto frames = H::carrier_frames(h.take(), r);
    forwarded += int(frames.size());
    for (auto& f : frames) {  // answer at once so pending_limit stays out of the way
      Json ack = J(R"({"t":"pub_ack","ch":"say"})");
      ack["id"] = (*f.meta)["id"];
      h.robot_datagram(r, ack);
    }
    h.take();
  }
  CHECK(forwarded == int(kPublishBurst));
  h.viewer_publish(v, "say", "over", "{}");
  CHECK(nack_code(h.take(), v) == "rate_limited");
  h.now += 1000;
  h.viewer_publish(v, "say", "later", "{}");
  CHECK(H::carrier_frames(h.take(), r).size() == 1);
}

TEST_CASE("cockpit publish: publish_timeout when the robot does not answer in time") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1");
  const TimeMs sent = h.now;
  h.viewer_publish(v, "say", "slow", "{}");
  auto frames = H::carrier_frames(h.take(), r);
  CHECK(h.relay.poll_timeout() == Timeout(sent + kPublishTimeoutMs));  // the real deadline
  h.now += kPublishTimeoutMs - 1;
  h.relay.handle_timeout(h.now);
  CHECK(H::messages(h.take(), v).empty());
  h.now += 1;
  h.relay.handle_timeout(h.now);
  CHECK(nack_code(h.take(), v) == "publish_timeout");
  CHECK_FALSE(h.relay.poll_timeout());
  // The late answer is ignored, and the id is free again.
  Json ack = J(R"({"t":"pub_ack","ch":"say"})");
  ack["id"] = (*frames.at(0).meta)["id"];
  h.robot_datagram(r, ack);
  CHECK(H::messages(h.take(), v).empty());
  h.viewer_publish(v, "say", "slow", "{}");
  CHECK(H::carrier_frames(h.take(), r).size() == 1);
}

TEST_CASE("cockpit publish: robot_disconnected for pending publishes and absent robots") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1");
  h.viewer_publish(v, "say", "p", "{}");
  h.take();
  h.relay.handle_session_closed(r, h.now);
  CHECK(nack_code(h.take(), v) == "robot_disconnected");
  h.viewer_publish(v, "say", "q", "{}");
  CHECK(nack_code(h.take(), v) == "robot_disconnected");
}

TEST_CASE("cockpit publish: no_watch, and a publish without meta.id is invalid_control") {
  Harness h;
  h.robot("r1");
  SessionId v = h.viewer();
  h.take();
  h.viewer_publish(v, "say", "x", "{}");
  CHECK(nack_code(h.take(), v) == "no_watch");
  Bytes frame = data_frame("say", 1, "{}", wire::Delivery::reliable);
  StreamId st = h.relay.handle_incoming_open(v, h.now);
  h.relay.handle_incoming_data(st, ByteView(frame), h.now);
  CHECK(H::errors(h.take(), v) == std::vector<std::string>{"invalid_control"});
}

TEST_CASE("cockpit: a terminal error from a frame on a viewer's one-shot stream ends cleanly") {
  // Found by fuzz_cockpit_relay: a hello on a publish stream that closed the session.
  Harness h;
  SessionId v = h.viewer_session();
  Bytes frame = control_data_frame(J(R"({"t":"hello","v":6,"role":"viewer"})"));
  StreamId st = h.relay.handle_incoming_open(v, h.now);
  h.relay.handle_incoming_data(st, ByteView(frame), h.now);
  auto acts = h.take();
  CHECK(H::errors(acts, v) == std::vector<std::string>{"version_mismatch"});
  CHECK(H::closed(acts, v));
  CHECK(h.relay.session_count() == 0);
}

TEST_CASE("cockpit publish: a publish on a reserved @ channel is dropped without any answer") {
  // Found by fuzz_cockpit_relay: a pub_nack naming "@co" was a message the relay may not send.
  Harness h;
  h.robot("r1");
  SessionId v = h.viewer();
  h.take();
  h.viewer_publish(v, "@co", "a", "{}");
  h.viewer_publish(v, "@x", "b", "{}");
  auto acts = h.take();
  CHECK(H::messages(acts, v).empty());
  CHECK(h.relay.stats()["dropped"]["reserved_channel"] == 2);
}

TEST_CASE("cockpit publish: an answered publish leaves no deadline behind") {
  Harness h;
  SessionId r = h.robot("r1");
  SessionId v = h.watcher("r1");
  h.viewer_publish(v, "say", "a", "{}");
  h.now += 10;
  h.viewer_publish(v, "say", "b", "{}");
  auto frames = H::carrier_frames(h.take(), r);
  REQUIRE(frames.size() == 2);
  const TimeMs first = h.now - 10 + kPublishTimeoutMs;
  CHECK(h.relay.poll_timeout() == Timeout(first));
  Json ack = J(R"({"t":"pub_ack","ch":"say"})");
  ack["id"] = (*frames[0].meta)["id"];
  h.robot_stream(r, control_data_frame(ack));
  CHECK(h.relay.poll_timeout() == Timeout(first + 10));  // only b's deadline is left
  ack["id"] = (*frames[1].meta)["id"];
  h.robot_stream(r, control_data_frame(ack));
  CHECK_FALSE(h.relay.poll_timeout());
}
