// The room golden vectors (fixtures/room/): every ticket, member session and relay transcript the
// generator wrote is replayed against the native core and must come out byte for byte the same
// (tests/node/room-fixtures.test.mjs replays the same files through the WASM build).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "../../fixtures/room_script.hpp"
#include "fixture_files.hpp"
#include "room/member.hpp"
#include "room/relay.hpp"
#include "room/ticket.hpp"

using namespace tether;
using namespace tether::room;
using tether::testing::fixture;

TEST_CASE("room fixtures: tickets mint to the pinned bytes and verify to the pinned verdicts") {
  const Json f = fixture("room/tickets.json");
  REQUIRE(f["mint"].size() >= 8);
  for (const auto& m : f["mint"]) {
    MintedTicket t = mint_ticket(m["secret"].get<std::string>(), m["writer"].get<std::string>(),
                                 m["kind"].get<std::string>(), m["room"].get<std::string>(),
                                 m["ttlSeconds"].get<double>(), m["nowMs"].get<TimeMs>());
    INFO(m.dump());
    if (m.contains("ticket"))
      CHECK(t.ticket == m["ticket"].get<std::string>());
    else
      CHECK(t.error == m["error"].get<std::string>());
  }
  for (const auto& v : f["verify"]) {
    std::optional<std::string> room;
    if (v.contains("room")) room = v["room"].get<std::string>();
    TicketVerdict r = verify_ticket(v["secret"].get<std::string>(), v["ticket"].get<std::string>(),
                                    room ? std::optional<std::string_view>(*room) : std::nullopt,
                                    v["nowMs"].get<TimeMs>());
    INFO(v["name"].get<std::string>());
    const Json& want = v["result"];
    CHECK(r.ok == want["ok"].get<bool>());
    if (r.ok) {
      CHECK(r.claims.writer == want["writer"].get<std::string>());
      CHECK(r.claims.exp == want["exp"].get<double>());
    } else {
      CHECK(r.reason == want["reason"].get<std::string>());
      CHECK(r.message == want["message"].get<std::string>());
    }
  }
}

TEST_CASE("room fixtures: every member session replays step by step") {
  const Json f = fixture("room/member.json");
  REQUIRE(f["sessions"].size() >= 3);
  for (const auto& s : f["sessions"]) {
    RoomMember m(fixtures::member_options(s["options"]));
    std::size_t k = 0;
    for (const auto& step : s["steps"]) {
      INFO(s["name"].get<std::string>() << " step " << k++ << ": " << step["input"].dump());
      Json result = fixtures::member_apply(m, step["input"]);
      Json out = fixtures::member_drain(m);
      CHECK(result == (step.contains("result") ? step["result"] : Json(nullptr)));
      CHECK(out["actions"] == step["actions"]);
      CHECK(out["events"] == step["events"]);
      CHECK(out["timeout"] == step["timeout"]);
    }
  }
}

namespace {
// Replays a relay transcript (room "doc") and checks every step's sends, events and result.
std::size_t replay_transcript(const Json& f) {
  RoomRelayOptions o;
  o.policy_version = f["options"]["policyVersion"].get<double>();
  o.journal_limit = f["options"]["journalLimit"].get<double>();
  o.durable = f["options"]["durable"].get<bool>();
  o.read_ack_bytes = f["options"].value("readAckBytes", 0.0);
  RoomRelay relay(o);
  std::vector<ConnId> conns;
  std::size_t k = 0;
  for (const auto& step : f["steps"]) {
    const Json& in = step["input"];
    INFO("step " << k++ << ": " << in.dump());
    auto info = relay.room("doc");
    std::string inst = info ? info->instance : std::string();
    Json result = nullptr;
    if (in.contains("connect")) {
      conns.push_back(
          relay.connect(in["connect"].get<std::string>(), in["room"].get<std::string>()));
    } else if (in.contains("disconnect")) {
      relay.handle_disconnect(conns[in["disconnect"].get<std::size_t>()]);
    } else {
      ReceiveError e =
          relay.handle_message(conns[in["from"].get<std::size_t>()],
                               fixtures::replace_all(in["text"].get<std::string>(), "$I", inst),
                               in["now"].get<TimeMs>());
      if (e != ReceiveError::none) result = receive_error_name(e);
    }
    info = relay.room("doc");
    inst = info ? info->instance : inst;
    Json out = fixtures::relay_drain(relay, conns, inst);
    const Json& sent = out["sent"];
    const Json& events = out["events"];
    CHECK(sent == step["sent"]);
    CHECK(events == step["events"]);
    CHECK(result == (step.contains("result") ? step["result"] : Json(nullptr)));
  }
  return k;
}
}  // namespace

TEST_CASE("room fixtures: the relay transcript replays message for message") {
  CHECK(replay_transcript(fixture("room/messages.json")) > 15);
}

TEST_CASE("room fixtures: read acknowledgements replay, advertised and carried as read actions") {
  const Json f = fixture("room/read_ack.json");
  CHECK(replay_transcript(f) > 10);
  // Said plainly: the welcome advertises the interval, and only counts become read actions.
  std::vector<double> reads;
  bool advertised = false;
  for (const auto& step : f["steps"])
    for (const auto& s : step["sent"]) {
      if (s.contains("read")) reads.push_back(s["bytes"].get<double>());
      if (s.contains("text") &&
          s["text"].get<std::string>().find("\"readAck\":1024") != std::string::npos)
        advertised = true;
    }
  CHECK(advertised);
  CHECK(reads == std::vector<double>{0, 2048, 9007199254740991.0});
}

TEST_CASE("room fixtures: numbers beyond a double's range are read as Infinity and sent as null") {
  const Json f = fixture("room/numbers.json");
  CHECK(replay_transcript(f) > 10);
  // What the transcript pins, said plainly: nothing the relay sent holds such a number, every
  // text parses with nlohmann, and the echo of the first value carries null.
  bool echoed_null = false;
  for (const auto& step : f["steps"])
    for (const auto& s : step["sent"]) {
      const std::string text = s.contains("text")     ? s["text"].get<std::string>()
                               : s.contains("commit") ? s["commit"].get<std::string>()
                                                      : std::string("null");
      CHECK(text.find("666666666") == std::string::npos);
      CHECK(text.find("e999") == std::string::npos);
      CHECK(parse_json(ByteView(std::string_view(text))).ok());
      echoed_null |= text.find(R"("path":["k"],"next":null)") != std::string::npos;
    }
  CHECK(echoed_null);
}
