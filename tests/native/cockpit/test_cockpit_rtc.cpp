// Cockpit relay core: WebRTC brokering (cockpit-wire-protocol.md § WebRTC video;
// src/cockpit/rtc.hpp). Every rule as a script: rtc_ice on welcome and after each TURN refresh, the
// robot's offer, the viewer's offer, pulls as relay offers and their answers, stalls, failures with
// retries and backoff, call timeouts, session loss, the per-viewer robot switch, and the bounds.
#include "rtc_harness.hpp"

using namespace rtc_test;
using H = Harness;

namespace {

// The one SFU call of a batch, checked to be `op`.
SfuCall one_call(const std::vector<CockpitAction>& acts, SfuOp op) {
  auto calls = sfu_calls(acts);
  REQUIRE(calls.size() == 1);
  CHECK(sfu_op_name(calls[0].op) == sfu_op_name(op));
  return calls[0];
}

std::string robot_sfu(const RtcHarness& h) {
  for (const auto& c : h.sfu.seen)
    if (c.op == SfuOp::new_tracks && c.body["tracks"][0]["location"] == "local") return c.sfu;
  return "";
}

}  // namespace

// --- no SFU -------------------------------------------------------------------------------------

TEST_CASE(
    "rtc: a relay without an SFU sends no rtc_ice and refuses rtc messages, brokering nothing") {
  Harness h;
  SessionId v = h.viewer();
  auto acts = h.take();
  CHECK(H::of_type(H::messages(acts, v), "rtc_ice").empty());
  h.viewer_send(v, J(R"({"t":"rtc_offer","sdp":"v=0"})"));
  acts = h.take();
  CHECK(H::errors(acts, v) == std::vector<std::string>{"invalid_control"});
  CHECK(H::kind(acts, ActionKind::sfu_call).empty());
  CHECK(h.relay.stats()["dropped"]["rtc_without_sfu"] == 1);
  CHECK_FALSE(h.relay.stats().contains("rtc"));
}

// --- ICE ----------------------------------------------------------------------------------------

TEST_CASE("rtc: without a TURN key every peer gets rtc_ice with no servers right after welcome") {
  RtcHarness h;
  SessionId v = h.viewer();
  auto acts = h.take();
  auto ms = H::messages(acts, v);
  REQUIRE(ms.size() == 3);
  CHECK(ms[0]["t"] == "welcome");
  CHECK(ms[1]["t"] == "robots");
  CHECK(to_json(ms[2]) == R"({"t":"rtc_ice","iceServers":[]})");
  SessionId r = h.robot("r1", rtc_manifest());
  acts = h.take();
  ms = H::messages(acts, r);
  REQUIRE(ms.size() == 3);  // welcome (datagram), then subs and rtc_ice on the carrier
  CHECK(ms[1]["t"] == "subs");
  CHECK(to_json(ms[2]) == R"({"t":"rtc_ice","iceServers":[]})");
  CHECK(H::kind(acts, ActionKind::sfu_call).empty());
  CHECK_FALSE(h.relay.poll_timeout());
}

TEST_CASE("rtc: with a TURN key credentials are minted once for every peer and refreshed hourly") {
  RtcHarness h(true);
  SessionId v = h.viewer();
  auto acts = h.take();
  CHECK(H::of_type(H::messages(acts, v), "rtc_ice").empty());  // not before the credentials
  SfuCall mint = one_call(acts, SfuOp::generate_ice_servers);
  CHECK(to_json(mint.body) == R"({"ttl":7200})");
  CHECK(mint.session == 0);
  SessionId r = h.robot("r1", rtc_manifest());
  CHECK(H::kind(h.take(), ActionKind::sfu_call).empty());  // one mint in flight serves both
  h.result(mint.token, h.sfu.answer(mint));
  acts = h.take();
  auto iv = got(acts, v, "rtc_ice");
  auto ir = got(acts, r, "rtc_ice");
  REQUIRE(iv.size() == 1);
  REQUIRE(ir.size() == 1);
  CHECK(iv[0]["iceServers"][1]["username"] == "u1");
  CHECK(ir[0] == iv[0]);
  REQUIRE(h.relay.poll_timeout());
  CHECK(*h.relay.poll_timeout() == h.now + kTurnRefreshMs);
  CHECK(kTurnRefreshMs == 3600 * 1000);

  // A later peer gets the set at once.
  SessionId v2 = h.viewer();
  acts = h.take();
  CHECK(got(acts, v2, "rtc_ice").size() == 1);
  CHECK(H::kind(acts, ActionKind::sfu_call).empty());

  // At half the lifetime: new credentials, to everyone.
  h.advance(kTurnRefreshMs - 1);
  CHECK(H::kind(h.take(), ActionKind::sfu_call).empty());
  h.advance(1);
  mint = one_call(h.take(), SfuOp::generate_ice_servers);
  h.result(mint.token, h.sfu.answer(mint));
  acts = h.take();
  for (SessionId s : {v, v2, r}) {
    auto ice = got(acts, s, "rtc_ice");
    REQUIRE(ice.size() == 1);
    CHECK(ice[0]["iceServers"][1]["username"] == "u2");
  }
  CHECK(h.relay.stats()["rtc"]["iceSets"] == 2);
}

TEST_CASE(
    "rtc: with nobody connected at the refresh no credentials are minted until a peer comes") {
  RtcHarness h(true);
  SessionId v = h.viewer();
  SfuCall mint = one_call(h.take(), SfuOp::generate_ice_servers);
  h.result(mint.token, h.sfu.answer(mint));
  h.relay.handle_session_closed(v, h.now);
  h.take();
  h.advance(kTurnRefreshMs);
  CHECK(H::kind(h.take(), ActionKind::sfu_call).empty());
  CHECK_FALSE(h.relay.poll_timeout());
  SessionId v2 = h.viewer();
  auto acts = h.take();
  CHECK(got(acts, v2, "rtc_ice").empty());
  one_call(acts, SfuOp::generate_ice_servers);
}

TEST_CASE(
    "rtc: a TURN mint that fails transiently is rtc_failed to waiting peers and retried with "
    "backoff") {
  RtcHarness h(true);
  SessionId v = h.viewer();
  SfuCall mint = one_call(h.take(), SfuOp::generate_ice_servers);
  h.result(mint.token, fail_result(503, "temporarily_unavailable_error"));
  auto acts = h.take();
  REQUIRE(H::errors(acts, v) == std::vector<std::string>{"rtc_failed"});
  CHECK(H::messages(acts, v)[0]["message"].get<std::string>().find("retries in 500 ms") !=
        std::string::npos);
  CHECK(*h.relay.poll_timeout() == h.now + 500);
  h.advance(500);
  mint = one_call(h.take(), SfuOp::generate_ice_servers);
  h.result(mint.token, fail_result(0, "network_error"));
  h.take();
  CHECK(*h.relay.poll_timeout() == h.now + 1000);
  h.advance(1000);
  mint = one_call(h.take(), SfuOp::generate_ice_servers);
  h.result(mint.token, h.sfu.answer(mint));
  CHECK(got(h.take(), v, "rtc_ice").size() == 1);
}

TEST_CASE("rtc: a TURN key the SFU refuses falls back to no servers and says what to fix") {
  RtcHarness h(true);
  SessionId v = h.viewer();
  SfuCall mint = one_call(h.take(), SfuOp::generate_ice_servers);
  h.result(mint.token, fail_result(401, "unauthorized"));
  auto acts = h.take();
  auto ms = H::messages(acts, v);
  REQUIRE(ms.size() == 2);
  CHECK(ms[0]["code"] == "rtc_failed");
  CHECK(ms[0]["message"].get<std::string>().find("turnKeyApiToken") != std::string::npos);
  CHECK(to_json(ms[1]) == R"({"t":"rtc_ice","iceServers":[]})");
  CHECK(*h.relay.poll_timeout() == h.now + kTurnRefreshMs);  // tried again at the refresh
}

TEST_CASE("rtc: an ICE answer that is no valid iceServers list is not passed on") {
  RtcHarness h(true);
  SessionId v = h.viewer();
  SfuCall mint = one_call(h.take(), SfuOp::generate_ice_servers);
  h.result(mint.token, ok_result(J(R"({"iceServers":[{"urls":5}]})"), 201));
  auto ms = H::messages(h.take(), v);
  REQUIRE(ms.size() == 2);
  CHECK(ms[0]["code"] == "rtc_failed");
  CHECK(to_json(ms[1]) == R"({"t":"rtc_ice","iceServers":[]})");
}

// --- the robot's offer --------------------------------------------------------------------------

TEST_CASE(
    "rtc: the robot's offer becomes an SFU session with its tracks published, answered on the "
    "carrier") {
  RtcHarness h;
  SessionId r = h.robot("r1", rtc_manifest());
  h.take();
  h.robot_offer(r, {"front", "rear"});
  auto acts = h.take();
  CHECK(H::kind(acts, ActionKind::reset_stream).size() == 1);  // the one-shot stream is done
  SfuCall made = one_call(acts, SfuOp::new_session);
  CHECK(to_json(made.body) == "{}");
  CHECK(made.session == r);
  h.result(made.token, h.sfu.answer(made));
  SfuCall pub = one_call(h.take(), SfuOp::new_tracks);
  CHECK(pub.sfu == "S1");
  CHECK(
      to_json(pub.body) ==
      R"({"sessionDescription":{"type":"offer","sdp":")"
      "v=0\\r\\no=- 1 2 IN IP4 127.0.0.1\\r\\ns=robot-offer\\r\\n"
      R"("},)"
      R"("tracks":[{"location":"local","mid":"0","trackName":"front"},{"location":"local","mid":"1","trackName":"rear"}]})");
  h.result(pub.token, h.sfu.answer(pub));
  acts = h.take();
  auto answers = got(acts, r, "rtc_answer");
  REQUIRE(answers.size() == 1);
  CHECK(answers[0]["sdp"] == sdp("publish-S1"));
  CHECK_FALSE(answers[0].contains("robotId"));
  CHECK(H::kind(acts, ActionKind::write_carrier, r).size() == 1);
  auto tracks = h.relay.stats()["robots"][0]["rtc"]["tracks"];
  CHECK(to_json(tracks) == R"({"front":{"active":true,"generation":1,"pulls":0},)"
                           R"("rear":{"active":true,"generation":1,"pulls":0}})");
}

TEST_CASE(
    "rtc: a robot offer naming no tracks, an undeclared or non-track channel, or a mid twice is "
    "refused") {
  RtcHarness h;
  SessionId r = h.robot("r1", rtc_manifest());
  h.take();
  std::vector<std::string> bodies = {
      R"({"t":"rtc_offer","sdp":"v=0"})",
      R"({"t":"rtc_offer","sdp":"v=0","tracks":[]})",
      R"({"t":"rtc_offer","sdp":"v=0","tracks":[{"mid":"0","ch":"ghost"}]})",
      R"({"t":"rtc_offer","sdp":"v=0","tracks":[{"mid":"0","ch":"cam"}]})",
      R"({"t":"rtc_offer","sdp":"v=0","tracks":[{"mid":"0","ch":"front"},{"mid":"0","ch":"rear"}]})",
      R"({"t":"rtc_offer","sdp":"v=0","tracks":[{"mid":"0","ch":"front"},{"mid":"1","ch":"front"}]})",
  };
  for (const auto& b : bodies) {
    INFO(b);
    h.robot_stream(r, control_data_frame(J(b)));
    auto acts = h.take();
    CHECK(H::errors(acts, r) == std::vector<std::string>{"invalid_control"});
    CHECK(H::kind(acts, ActionKind::sfu_call).empty());
  }
  CHECK(h.relay.stats()["dropped"]["rtc_refused"] == bodies.size());
}

TEST_CASE("rtc: MAX_SDP_LEN and MAX_RTC_TRACKS are enforced before any SFU call") {
  RtcHarness h;
  SessionId r = h.robot("r1", rtc_manifest());
  SessionId v = h.viewer();
  h.take();
  // 48 KiB of SDP passes, one byte more is dropped.
  const std::string big(wire::kMaxSdpBytes, 'a');
  Json ok = J(R"({"t":"rtc_offer"})");
  ok["sdp"] = big;
  h.viewer_send(v, ok);
  one_call(h.take(), SfuOp::new_session);
  Json over = J(R"({"t":"rtc_offer"})");
  over["sdp"] = big + "a";
  SessionId v2 = h.viewer();
  h.take();
  h.viewer_send(v2, over);
  auto acts = h.take();
  CHECK(H::errors(acts, v2) == std::vector<std::string>{"invalid_control"});
  CHECK(H::kind(acts, ActionKind::sfu_call).empty());
  CHECK(h.relay.stats()["dropped"]["too_large"] == 1);
  // Nine tracks are dropped; the message never reaches the broker.
  Json nine = J(R"({"t":"rtc_offer","sdp":"v=0","tracks":[]})");
  for (int i = 0; i < 9; ++i) nine["tracks"].push_back(J(R"({"mid":"0","ch":"front"})"));
  h.robot_stream(r, control_data_frame(nine));
  acts = h.take();
  CHECK(H::errors(acts, r) == std::vector<std::string>{"invalid_control"});
  CHECK(H::kind(acts, ActionKind::sfu_call).empty());
  CHECK(h.relay.stats()["dropped"].value("rtc_refused", 0) == 0);
}

TEST_CASE(
    "rtc: frames a robot sends on a track channel are dropped and counted in rtc.framesOnTrack") {
  RtcHarness h;
  SessionId r = h.rtc_robot("r1");
  SessionId v = h.rtc_viewer("r1");
  h.settle();
  h.robot_frame(r, "front", 1, "not video");
  h.robot_frame(r, "front", 2, "not video");
  auto acts = h.take();
  CHECK(H::kind(acts, ActionKind::open_stream, v).empty());
  CHECK(h.relay.stats()["robots"][0]["rtc"]["framesOnTrack"] == 2);
}

// --- the viewer's offer and pulls ---------------------------------------------------------------

TEST_CASE(
    "rtc: the viewer's offer is answered, and a subscribed track arrives as a relay offer it "
    "answers") {
  RtcHarness h;
  SessionId r = h.rtc_robot("r1");
  h.settle();
  SessionId v = h.watcher("r1");
  h.take();
  h.viewer_offer(v);
  SfuCall made = one_call(h.take(), SfuOp::new_session);
  CHECK(made.body["sessionDescription"]["type"] == "offer");
  CHECK(made.body["sessionDescription"]["sdp"] == sdp("viewer-offer"));
  h.result(made.token, h.sfu.answer(made));
  auto acts = h.take();
  auto answers = got(acts, v, "rtc_answer");
  REQUIRE(answers.size() == 1);
  CHECK(answers[0]["sdp"] == sdp("answer-S2"));
  CHECK(sfu_calls(acts).empty());  // nothing subscribed yet

  h.sub(v, "front");
  SfuCall pull = one_call(h.take(), SfuOp::new_tracks);
  CHECK(pull.sfu == "S2");
  CHECK(to_json(pull.body) ==
        R"({"tracks":[{"location":"remote","sessionId":"S1","trackName":"front"}]})");
  h.result(pull.token, h.sfu.answer(pull));
  acts = h.take();
  auto offers = got(acts, v, "rtc_offer");
  REQUIRE(offers.size() == 1);
  CHECK(offers[0]["sdp"] == sdp("pull-S2-1"));
  CHECK(to_json(offers[0]["tracks"]) == R"([{"mid":"1","ch":"front"}])");
  CHECK(offers[0]["robotId"] == "r1");
  CHECK(sfu_calls(acts).empty());  // nothing else while the offer waits

  h.viewer_answer(v);
  SfuCall reneg = one_call(h.take(), SfuOp::renegotiate);
  CHECK(reneg.sfu == "S2");
  CHECK(to_json(reneg.body) == R"({"sessionDescription":{"type":"answer","sdp":")"
                               "v=0\\r\\no=- 1 2 IN IP4 127.0.0.1\\r\\ns=viewer-answer\\r\\n"
                               R"("}})");
  h.result(reneg.token, h.sfu.answer(reneg));
  CHECK(sfu_calls(h.take()).empty());
  CHECK(h.relay.stats()["robots"][0]["rtc"]["tracks"]["front"]["pulls"] == 1);
  CHECK(H::kind(h.take(), ActionKind::sfu_call, r).empty());
}

TEST_CASE("rtc: a subscription made before either offer is pulled once both sides are ready") {
  RtcHarness h;
  SessionId r = h.robot("r1", rtc_manifest());
  SessionId v = h.watcher("r1");
  h.sub(v, "front");
  h.sub(v, "rear");
  auto acts = h.settle();
  CHECK(sfu_calls(acts).empty());  // neither has an SFU session
  h.viewer_offer(v);
  acts = h.settle();
  CHECK(got(acts, v, "rtc_answer").size() == 1);
  CHECK(got(acts, v, "rtc_offer").empty());  // the robot has published nothing
  h.robot_offer(r, {"front", "rear"});
  acts = h.settle();
  auto offers = got(acts, v, "rtc_offer");
  REQUIRE(offers.size() == 1);  // both tracks in one pull
  CHECK(to_json(offers[0]["tracks"]) == R"([{"mid":"1","ch":"front"},{"mid":"2","ch":"rear"}])");
}

TEST_CASE("rtc: a viewer's offer with tracks and an answer nobody asked for are refused") {
  RtcHarness h;
  SessionId v = h.viewer();
  h.take();
  h.viewer_send(v, J(R"({"t":"rtc_offer","sdp":"v=0","tracks":[{"mid":"0","ch":"front"}]})"));
  auto acts = h.take();
  CHECK(H::errors(acts, v) == std::vector<std::string>{"invalid_control"});
  CHECK(sfu_calls(acts).empty());
  h.viewer_answer(v);
  acts = h.take();
  CHECK(H::errors(acts, v) == std::vector<std::string>{"invalid_control"});
  CHECK(sfu_calls(acts).empty());
}

TEST_CASE(
    "rtc: unsubscribing closes the pull without an SDP exchange, and subscribing again pulls "
    "anew") {
  RtcHarness h;
  h.rtc_robot("r1");
  SessionId v = h.video_viewer("r1");
  h.unsub(v, "front");
  SfuCall close = one_call(h.take(), SfuOp::close_tracks);
  CHECK(close.sfu == "S2");
  CHECK(to_json(close.body) == R"({"tracks":[{"mid":"1"}],"force":true})");
  h.result(close.token, h.sfu.answer(close));
  CHECK(sfu_calls(h.take()).empty());
  h.sub(v, "front");
  auto acts = h.settle();
  auto offers = got(acts, v, "rtc_offer");
  REQUIRE(offers.size() == 1);
  CHECK(to_json(offers[0]["tracks"]) == R"([{"mid":"2","ch":"front"}])");
}

// --- stalls -------------------------------------------------------------------------------------

TEST_CASE(
    "rtc: rtc_stalled closes the track's pulls, declares it again and pulls it onto every viewer") {
  RtcHarness h;
  SessionId r = h.rtc_robot("r1");
  SessionId a = h.rtc_viewer("r1", {"front", "rear"});
  SessionId b = h.rtc_viewer("r1", {"front"});
  h.settle();
  h.viewer_answer(a);
  h.viewer_answer(b);
  h.settle();
  h.sfu.collect("S1", "front");  // no media for the window: the SFU collected it
  h.sfu.seen.clear();

  h.robot_stalled(r, "front");
  auto acts = h.settle();
  // The robot's session declares the track again, without an SDP exchange.
  std::vector<SfuCall> declares;
  std::map<std::string, std::vector<SfuOp>> by_session;
  for (const auto& c : h.sfu.seen) {
    by_session[c.sfu].push_back(c.op);
    if (c.sfu == "S1") declares.push_back(c);
  }
  REQUIRE(declares.size() == 1);
  CHECK(to_json(declares[0].body) ==
        R"({"tracks":[{"location":"local","mid":"0","trackName":"front"}]})");
  // Each viewer closes its old pull of front, then pulls the new generation (a keeps rear).
  for (const auto& s : {"S2", "S3"}) {
    INFO(s);
    REQUIRE(by_session[s].size() == 2);
    CHECK(by_session[s][0] == SfuOp::close_tracks);
    CHECK(by_session[s][1] == SfuOp::new_tracks);
  }
  for (SessionId v : {a, b}) {
    auto offers = got(acts, v, "rtc_offer");
    REQUIRE(offers.size() == 1);
    REQUIRE(offers[0]["tracks"].size() == 1);
    CHECK(offers[0]["tracks"][0]["ch"] == "front");
  }
  CHECK(h.relay.stats()["rtc"]["stalls"] == 1);
  CHECK(h.relay.stats()["robots"][0]["rtc"]["tracks"]["front"]["generation"] == 2);
}

TEST_CASE(
    "rtc: a viewer that pulled a collected track waits for the stall, without pulling in a loop") {
  RtcHarness h;
  SessionId r = h.rtc_robot("r1");
  h.settle();
  h.sfu.collect("S1", "front");
  SessionId v = h.rtc_viewer("r1");
  auto acts = h.settle();
  CHECK(got(acts, v, "rtc_offer").empty());
  CHECK(H::errors(acts, v).empty());  // not found is no failure: the robot will say when it is back
  h.advance(60'000);
  CHECK(sfu_calls(h.settle()).empty());
  h.robot_stalled(r, "front");
  acts = h.settle();
  CHECK(got(acts, v, "rtc_offer").size() == 1);
}

TEST_CASE("rtc: rtc_stalled for a track that was never published is refused") {
  RtcHarness h;
  SessionId r = h.robot("r1", rtc_manifest());
  h.take();
  h.robot_stalled(r, "front");  // before any offer
  CHECK(H::errors(h.take(), r) == std::vector<std::string>{"invalid_control"});
  h.robot_offer(r, {"front"});
  h.settle();
  h.robot_stalled(r, "rear");  // declared but not offered
  auto acts = h.take();
  CHECK(H::errors(acts, r) == std::vector<std::string>{"invalid_control"});
  CHECK(sfu_calls(acts).empty());
}

// --- failures, retries, timeouts ----------------------------------------------------------------

TEST_CASE(
    "rtc: a failed pull is rtc_failed to the viewer and retried with growing backoff until it "
    "works") {
  RtcHarness h;
  h.rtc_robot("r1");
  SessionId v = h.rtc_viewer("r1", {});
  h.settle();
  h.sub(v, "front");
  SfuCall pull = one_call(h.take(), SfuOp::new_tracks);
  for (TimeMs delay : {500, 1000, 2000, 4000}) {
    h.result(pull.token, fail_result(503, "temporarily_unavailable_error", "busy"));
    auto acts = h.take();
    auto ms = H::messages(acts, v);
    REQUIRE(ms.size() == 1);
    CHECK(ms[0]["code"] == "rtc_failed");
    CHECK(ms[0]["message"] ==
          "the SFU call pulling tracks failed (503 "
          "temporarily_unavailable_error: busy); the relay retries in " +
              std::to_string(delay) + " ms");
    CHECK(*h.relay.poll_timeout() == h.now + delay);
    h.advance(delay - 1);
    CHECK(sfu_calls(h.take()).empty());
    h.advance(1);
    pull = one_call(h.take(), SfuOp::new_tracks);
  }
  h.result(pull.token, h.sfu.answer(pull));
  CHECK(got(h.take(), v, "rtc_offer").size() == 1);
  h.viewer_answer(v);
  // A success resets the backoff: the next failure waits 500 ms again.
  SfuCall reneg = one_call(h.take(), SfuOp::renegotiate);
  h.result(reneg.token, fail_result(502, "http_502"));
  h.take();
  CHECK(*h.relay.poll_timeout() == h.now + 500);
  CHECK(kRtcRetryMs.back() == 30'000);
}

TEST_CASE("rtc: the backoff stops growing at its last step") {
  RtcHarness h;
  SessionId v = h.viewer();
  h.take();
  h.viewer_offer(v);
  SfuCall c = one_call(h.take(), SfuOp::new_session);
  for (std::size_t i = 0; i < kRtcRetryMs.size() + 3; ++i) {
    h.result(c.token, fail_result(500, "internal_error"));
    h.take();
    const TimeMs expected = kRtcRetryMs[std::min(i, kRtcRetryMs.size() - 1)];
    REQUIRE(*h.relay.poll_timeout() == h.now + expected);
    h.advance(expected);
    c = one_call(h.take(), SfuOp::new_session);
  }
}

TEST_CASE(
    "rtc: a call unanswered for 15 s is cancelled and retried, and its late result is ignored") {
  RtcHarness h;
  SessionId v = h.viewer();
  h.take();
  h.viewer_offer(v);
  SfuCall c = one_call(h.take(), SfuOp::new_session);
  CHECK(*h.relay.poll_timeout() == h.now + kSfuCallTimeoutMs);
  h.advance(kSfuCallTimeoutMs);
  auto acts = h.take();
  CHECK(cancels(acts) == std::vector<std::uint64_t>{c.token});
  auto ms = H::messages(acts, v);
  REQUIRE(ms.size() == 1);
  CHECK(ms[0]["code"] == "rtc_failed");
  CHECK(ms[0]["message"].get<std::string>().find("timeout") != std::string::npos);
  h.result(c.token, h.sfu.answer(c));  // too late
  CHECK(h.take().empty());
  CHECK(h.relay.stats()["dropped"]["sfu_result_unknown"] == 1);
  h.advance(500);
  SfuCall again = one_call(h.take(), SfuOp::new_session);
  CHECK(again.token != c.token);
  h.result(again.token, h.sfu.answer(again));
  CHECK(got(h.take(), v, "rtc_answer").size() == 1);
  CHECK(h.relay.stats()["rtc"]["timedOut"] == 1);
}

TEST_CASE("rtc: an offer the SFU refuses is rtc_failed, dropped and not retried") {
  RtcHarness h;
  SessionId v = h.viewer();
  h.take();
  h.viewer_offer(v);
  SfuCall c = one_call(h.take(), SfuOp::new_session);
  h.result(c.token, fail_result(406, "invalid_session_description", "no H.264"));
  auto acts = h.take();
  auto ms = H::messages(acts, v);
  REQUIRE(ms.size() == 1);
  CHECK(ms[0]["code"] == "rtc_failed");
  CHECK(ms[0]["message"].get<std::string>().find("send a new rtc_offer") != std::string::npos);
  CHECK_FALSE(h.relay.poll_timeout());
  h.advance(60'000);
  CHECK(sfu_calls(h.take()).empty());
  h.viewer_offer(v, "better-offer");  // a new offer starts again
  one_call(h.take(), SfuOp::new_session);
}

TEST_CASE("rtc: a robot publish that fails transiently is retried and then answered") {
  RtcHarness h;
  SessionId r = h.robot("r1", rtc_manifest());
  h.take();
  h.sfu.fail_next(SfuOp::new_tracks, fail_result(503, "temporarily_unavailable_error"), "local");
  h.robot_offer(r, {"front"});
  auto acts = h.settle();
  CHECK(H::errors(acts, r) == std::vector<std::string>{"rtc_failed"});  // on the carrier
  CHECK(H::kind(acts, ActionKind::send_datagram, r).empty());
  CHECK(got(acts, r, "rtc_answer").empty());
  h.advance(500);
  acts = h.settle();
  CHECK(got(acts, r, "rtc_answer").size() == 1);
}

TEST_CASE("rtc: an SFU answer with an oversized or missing SDP is not passed on") {
  RtcHarness h;
  SessionId v = h.viewer();
  h.take();
  h.viewer_offer(v);
  SfuCall c = one_call(h.take(), SfuOp::new_session);
  Json body = J(R"({"sessionId":"S9","sessionDescription":{"type":"answer"}})");
  body["sessionDescription"]["sdp"] = std::string(wire::kMaxSdpBytes + 1, 'x');
  h.result(c.token, ok_result(body, 201));
  auto ms = H::messages(h.take(), v);
  REQUIRE(ms.size() == 1);
  CHECK(ms[0]["code"] == "rtc_failed");
  // An SDP within 48 KiB whose JSON escaping would pass the 64 KiB control bound is refused too.
  h.viewer_offer(v);
  c = one_call(h.take(), SfuOp::new_session);
  body["sessionDescription"]["sdp"] = std::string(wire::kMaxSdpBytes, '\x01');
  h.result(c.token, ok_result(body, 201));
  ms = H::messages(h.take(), v);
  REQUIRE(ms.size() == 1);
  CHECK(ms[0]["code"] == "rtc_failed");
}

TEST_CASE("rtc: results that are not the client's shape never crash the broker") {
  RtcHarness h;
  SessionId v = h.viewer();
  h.take();
  for (const char* text : {"", "null", "[]", "{}", R"({"ok":"yes"})", "{\"ok\":true,\"body\":7}",
                           R"({"ok":true,"status":200,"body":{"sessionId":7}})",
                           R"({"ok":false,"status":"x","errorCode":[]})", "\xff\xfe"}) {
    INFO(text);
    h.viewer_offer(v);
    SfuCall c = one_call(h.take(), SfuOp::new_session);
    h.relay.handle_sfu_result(c.token, ByteView(std::string_view(text)), h.now);
    auto ms = H::messages(h.take(), v);
    REQUIRE(ms.size() == 1);
    CHECK(ms[0]["code"] == "rtc_failed");
  }
}

// --- session loss -------------------------------------------------------------------------------

TEST_CASE(
    "rtc: a viewer session the SFU lost is rtc_session_gone, and the viewer's new offer brings the "
    "video back") {
  RtcHarness h;
  h.rtc_robot("r1");
  SessionId v = h.video_viewer("r1");
  h.sfu.lose("S2");
  h.unsub(v, "front");  // the next call on the lost session
  auto acts = h.settle();
  auto ms = H::messages(acts, v);
  REQUIRE(ms.size() == 1);
  CHECK(ms[0]["code"] == "rtc_session_gone");
  CHECK(ms[0]["message"].get<std::string>().find("send a new rtc_offer") != std::string::npos);
  CHECK_FALSE(h.relay.poll_timeout());  // nothing retried: the viewer offers again
  h.sub(v, "front");
  CHECK(sfu_calls(h.settle()).empty());  // no session to pull onto
  h.viewer_offer(v, "fresh");
  acts = h.settle();
  CHECK(got(acts, v, "rtc_answer").size() == 1);
  auto offers = got(acts, v, "rtc_offer");
  REQUIRE(offers.size() == 1);
  CHECK(offers[0]["sdp"] == sdp("pull-S3-1"));
  CHECK(h.relay.stats()["rtc"]["sessionsGone"] == 1);
}

TEST_CASE(
    "rtc: a robot session the SFU lost is rtc_session_gone to the robot, and its new offer "
    "republishes") {
  RtcHarness h;
  SessionId r = h.rtc_robot("r1");
  SessionId v = h.video_viewer("r1");
  h.sfu.lose("S1");
  h.robot_stalled(r, "front");  // the declare meets the lost session
  auto acts = h.settle();
  CHECK(H::errors(acts, r) == std::vector<std::string>{"rtc_session_gone"});
  // The viewer's pulls of the lost tracks close.
  bool closed = false;
  for (const auto& c : h.sfu.seen) closed |= c.op == SfuOp::close_tracks && c.sfu == "S2";
  CHECK(closed);
  h.robot_offer(r, {"front"}, "-again");
  acts = h.settle();
  CHECK(got(acts, r, "rtc_answer").size() == 1);
  auto offers = got(acts, v, "rtc_offer");
  REQUIRE(offers.size() == 1);
  CHECK(offers[0]["tracks"][0]["ch"] == "front");
}

TEST_CASE("rtc: a viewer session is retired after kMaxPullsPerRtcSession pulls") {
  RtcHarness h;
  SessionId r = h.rtc_robot("r1", {"front"});
  SessionId v = h.video_viewer("r1");
  std::size_t offers = 1;
  for (;;) {
    h.sfu.collect("S1", "front");
    h.robot_stalled(r, "front");
    auto acts = h.settle();
    if (!H::errors(acts, v).empty()) {
      CHECK(H::errors(acts, v) == std::vector<std::string>{"rtc_session_gone"});
      break;
    }
    REQUIRE(got(acts, v, "rtc_offer").size() == 1);
    ++offers;
    h.viewer_answer(v);
    h.settle();
    REQUIRE(offers <= kMaxPullsPerRtcSession);
  }
  CHECK(offers == kMaxPullsPerRtcSession);
}

// --- robots and viewers coming and going
// ----------------------------------------------------------

TEST_CASE(
    "rtc: a viewer that switched robots answers the old robot's offer, then gets the new robot's") {
  RtcHarness h;
  h.rtc_robot("r1");
  h.rtc_robot("r2");
  SessionId v = h.rtc_viewer("r1");
  auto acts = h.settle();
  auto offers = got(acts, v, "rtc_offer");
  REQUIRE(offers.size() == 1);
  CHECK(offers[0]["robotId"] == "r1");
  h.watch(v, "r2");  // switched while r1's offer waits for its answer
  h.sub(v, "front");
  CHECK(sfu_calls(h.take()).empty());  // the SFU takes nothing while its offer waits
  h.viewer_answer(v, "answer-for-r1");
  h.pump();
  acts = h.take();
  // renegotiate (r1's pull), close it, then pull r2's front.
  std::vector<SfuOp> ops;
  for (std::size_t i = h.sfu.seen.size() - 3; i < h.sfu.seen.size(); ++i)
    ops.push_back(h.sfu.seen[i].op);
  CHECK(ops == std::vector<SfuOp>{SfuOp::renegotiate, SfuOp::close_tracks, SfuOp::new_tracks});
  offers = got(acts, v, "rtc_offer");
  REQUIRE(offers.size() == 1);
  CHECK(offers[0]["robotId"] == "r2");
  CHECK(h.sfu.seen.back().body["tracks"][0]["sessionId"] == "S2");  // r2's SFU session
  CHECK(h.sfu.seen.back().sfu == "S3");                             // onto the viewer's
}

TEST_CASE(
    "rtc: a robot that leaves takes its tracks from its viewers, and one that comes back is pulled "
    "again") {
  RtcHarness h;
  SessionId r = h.rtc_robot("r1");
  SessionId v = h.video_viewer("r1");
  h.relay.handle_session_closed(r, h.now);
  h.settle();
  CHECK(h.sfu.seen.back().op == SfuOp::close_tracks);
  CHECK(h.sfu.seen.back().sfu == "S2");
  SessionId r2 = h.rtc_robot("r1");  // the robot reconnects: its viewer still subscribes
  auto acts = h.settle();
  CHECK(got(acts, r2, "rtc_answer").size() == 1);
  auto offers = got(acts, v, "rtc_offer");
  REQUIRE(offers.size() == 1);
  CHECK(offers[0]["robotId"] == "r1");
  CHECK(h.sfu.seen.back().body["tracks"][0]["sessionId"] == "S3");
}

TEST_CASE("rtc: a robot's new offer replaces its tracks, and its viewers move to them") {
  RtcHarness h;
  SessionId r = h.rtc_robot("r1");
  SessionId v = h.video_viewer("r1");
  h.robot_offer(r, {"front"}, "-2");
  auto acts = h.settle();
  CHECK(got(acts, r, "rtc_answer").size() == 1);
  auto offers = got(acts, v, "rtc_offer");
  REQUIRE(offers.size() == 1);
  CHECK(h.sfu.seen.back().body["tracks"][0]["sessionId"] == "S3");
}

TEST_CASE("rtc: a session that leaves with a call in flight cancels it") {
  RtcHarness h;
  SessionId v = h.viewer();
  h.take();
  h.viewer_offer(v);
  SfuCall c = one_call(h.take(), SfuOp::new_session);
  h.relay.handle_session_closed(v, h.now);
  auto acts = h.take();
  CHECK(cancels(acts) == std::vector<std::uint64_t>{c.token});
  CHECK_FALSE(h.relay.poll_timeout());
  h.result(c.token, h.sfu.answer(c));
  CHECK(h.take().empty());
}

TEST_CASE("rtc: a viewer's new offer replaces its session, cancelling the call in flight") {
  RtcHarness h;
  h.rtc_robot("r1");
  SessionId v = h.rtc_viewer("r1");
  h.settle();
  h.viewer_answer(v);
  SfuCall reneg = one_call(h.take(), SfuOp::renegotiate);
  h.viewer_offer(v, "second");
  auto acts = h.take();
  CHECK(cancels(acts) == std::vector<std::uint64_t>{reneg.token});
  SfuCall made = one_call(acts, SfuOp::new_session);
  h.result(made.token, h.sfu.answer(made));
  acts = h.settle();
  CHECK(got(acts, v, "rtc_answer").size() == 1);
  CHECK(got(acts, v, "rtc_offer").size() == 1);  // its subscriptions are pulled onto the new one
}

TEST_CASE("rtc: stats show each robot's published tracks, their pulls, and the broker's counters") {
  RtcHarness h;
  h.rtc_robot("r1");
  SessionId a = h.rtc_viewer("r1", {"front"});
  SessionId b = h.rtc_viewer("r1", {"front", "rear"});
  h.settle();
  h.viewer_answer(a);
  h.viewer_answer(b);
  h.settle();
  Json s = h.relay.stats();
  CHECK(to_json(s["robots"][0]["rtc"]) ==
        R"({"framesOnTrack":0,"tracks":{"front":{"active":true,"generation":1,"pulls":2},)"
        R"("rear":{"active":true,"generation":1,"pulls":1}}})");
  CHECK(s["rtc"]["calls"] ==
        8);  // robot: session, publish; each viewer: session, pull, renegotiate
  CHECK(s["rtc"]["failed"] == 0);
}

TEST_CASE(
    "rtc: a track the SFU refuses in a pull is rtc_failed and pulled again after the backoff") {
  RtcHarness h;
  h.rtc_robot("r1");
  SessionId v = h.rtc_viewer("r1", {});
  h.settle();
  h.sub(v, "front");
  SfuCall pull = one_call(h.take(), SfuOp::new_tracks);
  Json refused = J(R"({"requiresImmediateRenegotiation":false,"tracks":[{"trackName":"front",
    "sessionId":"S1","errorCode":"internal_error","errorDescription":"try later"}]})");
  h.result(pull.token, ok_result(refused));
  auto ms = H::messages(h.take(), v);
  REQUIRE(ms.size() == 1);
  CHECK(ms[0]["code"] == "rtc_failed");
  CHECK(ms[0]["message"] ==
        "the SFU refused tracks while pulling tracks (front: internal_error: try later); the "
        "relay retries in 500 ms");
  h.advance(500);
  pull = one_call(h.take(), SfuOp::new_tracks);
  h.result(pull.token, h.sfu.answer(pull));
  CHECK(got(h.take(), v, "rtc_offer").size() == 1);
}

TEST_CASE(
    "rtc: a track the SFU does not publish is answered anyway and declared again after the "
    "backoff") {
  RtcHarness h;
  SessionId r = h.robot("r1", rtc_manifest());
  h.take();
  h.robot_offer(r, {"front", "rear"});
  SfuCall made = one_call(h.take(), SfuOp::new_session);
  h.result(made.token, h.sfu.answer(made));
  SfuCall pub = one_call(h.take(), SfuOp::new_tracks);
  Json body = h.sfu.answer(pub)["body"];
  body["tracks"][1]["errorCode"] = "invalid_track";
  body["tracks"][1].erase("mid");
  h.result(pub.token, ok_result(body));
  auto acts = h.take();
  CHECK(got(acts, r, "rtc_answer").size() == 1);
  CHECK(H::errors(acts, r) == std::vector<std::string>{"rtc_failed"});
  auto tracks = h.relay.stats()["robots"][0]["rtc"]["tracks"];
  CHECK(tracks["front"]["active"] == true);
  CHECK(tracks["rear"]["active"] == false);
  h.advance(500);
  SfuCall declare = one_call(h.take(), SfuOp::new_tracks);
  CHECK(to_json(declare.body) ==
        R"({"tracks":[{"location":"local","mid":"1","trackName":"rear"}]})");
  h.result(declare.token, h.sfu.answer(declare));
  h.take();
  CHECK(h.relay.stats()["robots"][0]["rtc"]["tracks"]["rear"]["active"] == true);
}
