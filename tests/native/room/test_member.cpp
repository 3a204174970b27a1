// The room member (src/room/member.hpp), rule by rule, against scripted relay text.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "room/member.hpp"

using namespace tether;
using namespace tether::room;

namespace {
RoomMemberOptions lanes(std::uint64_t seed = 1) {
  RoomMemberOptions o;
  o.room = "lab";
  o.origin = "alice";
  o.lanes = true;
  o.seed = seed;
  return o;
}
std::vector<std::string> drain_events(RoomMember& m) {
  std::vector<std::string> out;
  while (auto e = m.poll_event()) {
    std::string s;
    switch (e->kind) {
      case MemberEvent::Kind::joined: s = "joined"; break;
      case MemberEvent::Kind::member:
        s = e->again ? "member-again " + e->origin : "member " + e->origin;
        break;
      case MemberEvent::Kind::left: s = "left " + e->origin; break;
      case MemberEvent::Kind::roster: s = "roster " + std::to_string(e->members.size()); break;
      case MemberEvent::Kind::lane_open: s = "open " + e->origin; break;
      case MemberEvent::Kind::lane_close: s = "close " + e->origin; break;
      case MemberEvent::Kind::text: s = "text " + e->origin + " " + e->text; break;
      case MemberEvent::Kind::signal: s = "signal " + e->origin + " " + e->text; break;
      case MemberEvent::Kind::down: s = "down"; break;
      case MemberEvent::Kind::refused:
        s = std::string(e->fatal ? "rejected " : "ejected ") + e->reason;
        break;
    }
    out.push_back(s);
  }
  return out;
}
std::vector<std::string> drain_actions(RoomMember& m) {
  std::vector<std::string> out;
  while (auto a = m.poll_action()) {
    if (a->kind == MemberAction::Kind::dial)
      out.push_back("dial " + std::to_string(a->attempt));
    else if (a->kind == MemberAction::Kind::hang_up)
      out.push_back("hang-up");
    else
      out.push_back(a->text);
  }
  return out;
}
const char* kWelcome =
    R"({"t":"welcome","room":"lab","seq":0,"instance":"g","schemaVersion":0,"mode":"up-to-date","peers":[],"members":["bob","alice"]})";
void join(RoomMember& m) {
  m.handle_start(0);
  m.handle_link_open(1);
  m.handle_link_message(kWelcome, 2);
  drain_actions(m);
  drain_events(m);
}
}  // namespace

TEST_CASE(
    "member: dials, says hello with the core's version, and opens lanes to the welcome's members") {
  RoomMember m(lanes());
  m.handle_start(0);
  CHECK(drain_actions(m) == std::vector<std::string>{"dial 1"});
  m.handle_link_open(1);
  CHECK(drain_actions(m) ==
        std::vector<std::string>{
            R"({"t":"hello","room":"lab","origin":"alice","proto":3,"policyVersion":1})"});
  CHECK(!m.joined());
  CHECK(m.send_text("bob", "x", 0) == LaneSend::not_open);
  m.handle_link_message(kWelcome, 2);
  CHECK(drain_events(m) == std::vector<std::string>{"joined", "roster 1", "open bob"});
  CHECK(m.roster() == std::vector<std::string>{"bob"});  // never ourselves
  CHECK(m.lane_open("bob"));
}

TEST_CASE("member: a known origin joining again is a restarted peer: its lane closes and reopens") {
  RoomMember m(lanes());
  join(m);
  m.handle_link_message(R"({"t":"member","room":"lab","origin":"bob"})", 3);
  CHECK(drain_events(m) == std::vector<std::string>{"member-again bob", "close bob", "open bob"});
  m.handle_link_message(R"({"t":"member","room":"lab","origin":"carol"})", 4);
  CHECK(drain_events(m) == std::vector<std::string>{"member carol", "roster 2", "open carol"});
  m.handle_link_message(R"({"t":"member","room":"lab","origin":"carol","gone":true})", 5);
  CHECK(drain_events(m) == std::vector<std::string>{"left carol", "close carol", "roster 1"});
  m.handle_link_message(R"({"t":"member","room":"lab","origin":"carol","gone":true})", 6);
  CHECK(drain_events(m).empty());  // not a member: nothing to say
}

TEST_CASE("member: lane text is unescaped, foreign signals, other rooms and garbage are ignored") {
  RoomMember m(lanes());
  join(m);
  m.handle_link_message(
      R"({"t":"signal","room":"lab","from":"bob","data":{"k":"tether-env","text":"a\"b\\c\n"}})",
      3);
  CHECK(drain_events(m) == std::vector<std::string>{"text bob a\"b\\c\n"});
  for (const char* bad :
       {R"({"t":"signal","room":"lab","from":"bob","data":{"type":"offer"}})",
        R"({"t":"signal","room":"lab","from":"bob","data":{"k":"tether-env","text":1}})",
        R"({"t":"signal","room":"lab","data":{"k":"tether-env","text":"x"}})"}) {
    m.handle_link_message(bad, 4);
  }
  m.handle_link_message(
      R"({"t":"signal","room":"other","from":"bob","data":{"k":"tether-env","text":"x"}})", 4);
  m.handle_link_message("{", 4);
  m.handle_link_message(std::string(kMaxServerMessageBytes + 1, ' '), 4);
  CHECK(drain_events(m).empty());
  CHECK(m.stats().ignored == 3);
  CHECK(m.stats().received == 1);
}

TEST_CASE("member: a lane send refuses what would be lost, and escapes into the frame") {
  RoomMemberOptions o = lanes();
  o.max_message_bytes = 100;
  o.max_frame_bytes = 120;
  o.max_buffered_bytes = 1000;
  RoomMember m(o);
  join(m);
  CHECK(m.send_text("bob", "hi \"you\"", 0) == LaneSend::accepted);
  CHECK(
      drain_actions(m) ==
      std::vector<std::string>{
          R"({"t":"signal","room":"lab","to":"bob","data":{"k":"tether-env","text":"hi \"you\""}})"});
  CHECK(m.send_text("bob", std::string(101, 'x'), 0) == LaneSend::too_big);
  CHECK(m.send_text("bob", "x", 1001) == LaneSend::backpressure);
  CHECK(m.send_text("bob", std::string(60, '"'), 0) ==
        LaneSend::frame_too_big);  // 120 escaped + the frame
  CHECK(m.send_text("carol", "x", 0) == LaneSend::not_open);
  CHECK(m.send_text("bob", std::string("a\xed\xa0\x80") + "b", 0) ==
        LaneSend::not_utf8);  // a lone surrogate
  CHECK(m.stats().refused == 4);
  CHECK(drain_actions(m).empty());
}

TEST_CASE(
    "member: a lost link closes every lane and redials with capped, jittered, seeded backoff") {
  RoomMemberOptions o = lanes(42);
  o.reconnect_min_ms = 100;
  o.reconnect_max_ms = 1000;
  RoomMember m(o);
  join(m);
  m.handle_link_closed(1000);
  CHECK(drain_events(m) == std::vector<std::string>{"close bob", "down"});
  std::vector<TimeMs> delays;
  TimeMs now = 1000;
  for (int i = 0; i < 8; ++i) {
    REQUIRE(m.poll_timeout());
    delays.push_back(*m.poll_timeout() - now);
    now = *m.poll_timeout();
    m.handle_timeout(now - 1);  // early: nothing
    CHECK(drain_actions(m).empty());
    m.handle_timeout(now);
    CHECK(drain_actions(m) == std::vector<std::string>{"dial " + std::to_string(i + 2)});
    m.handle_link_closed(now);  // that dial failed too
  }
  for (std::size_t i = 0; i < delays.size(); ++i) {
    const double base = std::min(1000.0, 100.0 * (1 << i));
    INFO("attempt " << i << " waited " << delays[i]);
    CHECK(delays[i] >= base / 2);
    CHECK(delays[i] <= base);
  }
  // The same seed draws the same delays; another draws others.
  RoomMember same(o), other(lanes(43));
  join(same);
  join(other);
  same.handle_link_closed(1000);
  other.handle_link_closed(1000);
  CHECK(*same.poll_timeout() - 1000 == delays[0]);
  // A welcome resets the backoff.
  m.handle_timeout(*m.poll_timeout());
  drain_actions(m);
  m.handle_link_open(now + 5000);
  m.handle_link_message(kWelcome, now + 5001);
  CHECK(m.stats().reconnects == 1);
  m.handle_link_closed(now + 6000);
  CHECK(*m.poll_timeout() - (now + 6000) <= 100);
}

TEST_CASE("member: a rejected hello stops dialing, an ejection does not, close hangs up for good") {
  RoomMember m(lanes());
  join(m);
  m.handle_link_message(R"({"t":"eject","room":"lab","writer":"alice","reason":"rate"})", 3);
  CHECK(drain_events(m) == std::vector<std::string>{"ejected rate"});
  m.handle_link_closed(4);
  drain_events(m);
  REQUIRE(m.poll_timeout());
  m.handle_timeout(*m.poll_timeout());
  CHECK(drain_actions(m) ==
        std::vector<std::string>{"dial 2"});  // the second dial since the welcome
  m.handle_link_open(5000);
  drain_actions(m);
  m.handle_link_message(R"({"t":"reject","room":"lab","reason":"policy-version","expected":2})",
                        5001);
  auto e = m.poll_event();
  REQUIRE(e);
  CHECK(e->fatal);
  CHECK(e->expected == 2);
  CHECK(e->text ==
        "the relay rejected our hello (policy-version, expected 2); check the policyVersion option "
        "against the relay");
  m.handle_link_closed(5002);
  CHECK(!m.poll_timeout());
  m.handle_close();
  CHECK(drain_actions(m).empty());  // the link was already down
  RoomMember n(lanes());
  join(n);
  n.handle_close();
  CHECK(drain_actions(n) == std::vector<std::string>{"hang-up"});
  CHECK(drain_events(n) == std::vector<std::string>{"close bob", "down"});
  n.handle_link_closed(10);
  CHECK(!n.poll_timeout());
}

TEST_CASE("member: options are checked and name what to fix") {
  CHECK(parse_member_options(R"({"room":"lab","selfId":"a"})").error.empty());
  CHECK(parse_member_options(R"({"room":"","selfId":"a"})")
            .error.rfind("room must be a non-empty string", 0) == 0);
  CHECK(parse_member_options(R"({"room":"lab","selfId":")" + std::string(129, 'x') + "\"}")
            .error.rfind("selfId must be a non-empty string of at most 128 bytes", 0) == 0);
  CHECK(parse_member_options(R"({"room":"lab","selfId":"a","reconnectMinMs":0})").error ==
        "reconnectMinMs must be an integer from 1 to 600000 (got 0)");
  CHECK(parse_member_options(
            R"({"room":"lab","selfId":"a","reconnectMinMs":500,"reconnectMaxMs":100})")
            .error == "reconnectMaxMs must be an integer from 500 to 3600000 (got 100)");
  CHECK(parse_member_options(R"({"room":"lab","selfId":"a","maxFrameBytes":10})").error ==
        "maxFrameBytes must be an integer from 64 to 67108864 (got 10)");
  CHECK(!parse_member_options("[]").error.empty());
}

TEST_CASE(
    "member: signals (not lanes) carry their data as JSON text both ways, only while joined") {
  RoomMemberOptions o;
  o.room = "lab";
  o.origin = "bob";
  RoomMember m(o);
  m.handle_start(0);
  m.handle_link_open(1);
  drain_actions(m);
  CHECK(!m.send_signal("alice", R"({"k":"renegotiate"})"));
  m.handle_link_message(
      R"({"t":"welcome","room":"lab","seq":0,"instance":"g","schemaVersion":0,"mode":"up-to-date","peers":[],"members":["alice"]})",
      2);
  drain_events(m);
  CHECK(m.send_signal("alice", R"({"k":"renegotiate"})"));
  CHECK(!m.send_signal("alice", "{oops"));
  CHECK(drain_actions(m) ==
        std::vector<std::string>{
            R"({"t":"signal","room":"lab","to":"alice","data":{"k":"renegotiate"}})"});
  m.handle_link_message(
      R"({"t":"signal","room":"lab","from":"alice","data":{"k":"offer","gen":"x.1","sdp":"v=0"}})",
      3);
  CHECK(drain_events(m) ==
        std::vector<std::string>{R"(signal alice {"k":"offer","gen":"x.1","sdp":"v=0"})"});
}

// docs/rooms.md § Policy and the tripwire: under ejection 'writer' the relay broadcasts the eject
// to every member, so only one naming our writer is ours.
TEST_CASE("member: an eject naming another writer is not ours, one naming ours is") {
  RoomMemberOptions o = lanes();
  o.writer = "w-alice";
  RoomMember m(o);
  join(m);
  m.handle_link_message(R"({"t":"eject","room":"lab","writer":"w-mallory","reason":"rate"})", 3);
  CHECK(drain_events(m).empty());
  CHECK(m.stats().ignored == 1);
  CHECK(m.joined());
  m.handle_link_message(R"({"t":"eject","room":"lab","writer":"w-alice","reason":"rate"})", 4);
  auto e = m.poll_event();
  REQUIRE(e);
  CHECK(e->kind == MemberEvent::Kind::refused);
  CHECK(!e->fatal);
  CHECK(e->writer == "w-alice");
  CHECK(e->text == "the relay ejected us (rate)");
  // Without the writer option the member cannot tell: it reports the eject and claims nothing.
  RoomMember n(lanes());
  join(n);
  n.handle_link_message(R"({"t":"eject","room":"lab","writer":"w-mallory","reason":"rate"})", 3);
  auto f = n.poll_event();
  REQUIRE(f);
  CHECK(f->writer == "w-mallory");
  CHECK(f->text ==
        "the relay ejected writer 'w-mallory' (rate); pass the writer option to tell whether it "
        "was us");
  CHECK(parse_member_options(R"({"room":"lab","selfId":"a","writer":"w"})").options.writer == "w");
  CHECK(parse_member_options(R"({"room":"lab","selfId":"a","writer":""})").error.find("writer") !=
        std::string::npos);
}
