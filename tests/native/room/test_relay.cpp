// Scripted tests of the room relay core, one TEST_CASE per rule of the room-relay spec.
// They drive src/room/relay.hpp directly (no JS) and assert on the exact wire text.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "room/envelope.hpp"
#include "room/limits.hpp"
#include "room/relay.hpp"

using namespace tether;
using namespace tether::room;

namespace {

// The host's policy: answers every question at once, as tether/relay's createRelay does.
struct Hooks {
  std::vector<std::string> calls;
  bool allow_root_for_agent = false;
  bool can_write(ConnId, std::string_view path, double seq) {
    calls.push_back("canWrite " + std::string(path) + " seq=" + std::to_string(int(seq)));
    return path != "[]" || seq == 0 || allow_root_for_agent;
  }
  bool validate(std::string_view op) { return op.find("\"forbidden\"") == std::string_view::npos; }
  bool can_bump(double epoch) { return epoch < 2; }
  bool acl_allow(ConnId conn, std::size_t rule) {
    calls.push_back("allow " + std::to_string(rule));
    return !(conn == 2 && rule == 1);  // connection 2 is "the agent": rule 1 refuses it
  }
  bool answer(const RoomAction& a) {
    switch (a.kind) {
      case RoomAction::Kind::ask_can_write: return can_write(a.conn, *a.text, a.seq);
      case RoomAction::Kind::ask_validate: return validate(*a.text);
      case RoomAction::Kind::ask_can_bump: return can_bump(a.epoch);
      case RoomAction::Kind::ask_acl: return acl_allow(a.conn, a.rule);
      default: return false;
    }
  }
};

// Drives the relay as web/glue/driver.js does (actions, then events) and records what each
// connection was sent, every close/commit action and every observer event.
struct Harness {
  explicit Harness(RoomRelayOptions o = {}) : relay(std::move(o)) {}
  Hooks hooks;
  RoomRelay relay;
  bool answer_at_once = true;  // false: questions wait in `questions` until answer()
  std::vector<RoomAction> questions;
  std::map<ConnId, std::vector<std::string>> inbox;
  std::vector<std::string> events;  // close/commit/drop/violation/reject/join/failed
  std::vector<std::uint64_t> tickets;
  std::vector<std::pair<double, std::string>> generations;  // per commit: its epoch, the instance
  std::vector<std::string> ephemeral;  // sends flagged ephemeral (a slow reader may lose them)
  TimeMs now = 1000;

  void collect() {
    for (;;) {
      if (auto a = relay.poll_action()) {
        switch (a->kind) {
          case RoomAction::Kind::send:
            inbox[a->conn].push_back(*a->text);
            if (a->ephemeral) ephemeral.push_back(*a->text);
            break;
          case RoomAction::Kind::close: events.push_back("close " + std::to_string(a->conn)); break;
          case RoomAction::Kind::read: {
            std::string n;
            append_number(n, a->seq);
            events.push_back("read " + std::to_string(a->conn) + " " + n);
            break;
          }
          case RoomAction::Kind::commit:
            tickets.push_back(a->token);
            generations.emplace_back(a->epoch, relay.room(*a->room)->instance);
            events.push_back("commit " + *a->room);
            break;
          default:
            if (answer_at_once)
              relay.handle_policy_verdict(a->token, hooks.answer(*a), now);
            else
              questions.push_back(*a);
            break;
        }
        continue;
      }
      auto e = relay.poll_event();
      if (!e) break;
      switch (e->kind) {
        case RoomEvent::Kind::drop: events.push_back(std::string("drop ") + e->reason); break;
        case RoomEvent::Kind::violation: events.push_back("violation " + e->text); break;
        case RoomEvent::Kind::reject: events.push_back(std::string("reject ") + e->reason); break;
        case RoomEvent::Kind::join: events.push_back("join " + e->text); break;
        case RoomEvent::Kind::durability_failed: events.push_back("failed " + e->text); break;
      }
    }
  }
  // Answers the oldest waiting question with the hooks' verdict (or `allow` when given).
  void answer(std::optional<bool> allow = std::nullopt) {
    REQUIRE(!questions.empty());
    RoomAction q = questions.front();
    questions.erase(questions.begin());
    relay.handle_policy_verdict(q.token, allow ? *allow : hooks.answer(q), now);
    collect();
  }
  // True when one of the last `back` recorded events contains `needle`.
  bool recent(const std::string& needle, std::size_t back = 4) const {
    for (std::size_t i = events.size() > back ? events.size() - back : 0; i < events.size(); ++i) {
      if (events[i].find(needle) != std::string::npos) return true;
    }
    return false;
  }
  ReceiveError rx(ConnId c, const std::string& text) {
    ReceiveError e = relay.handle_message(c, text, now);
    collect();
    return e;
  }
  void hello(ConnId c, const std::string& origin, const std::string& extra = "") {
    rx(c, R"({"t":"hello","room":"r","origin":")" + origin + R"(","proto":3,"policyVersion":0)" +
              extra + "}");
  }
  std::string instance() { return relay.room("r")->instance; }
  // A valid envelope from `origin` with one op; `ops` overrides the op list.
  std::string env(
      const std::string& origin, const std::string& writer, int version, int p,
      const std::string& ops = R"([{"kind":"set","path":["a"],"next":1,"cites":[],"epoch":0}])",
      const std::string& extra = "") {
    return R"({"t":"env","room":"r","env":{"proto":3,"instance":")" + instance() +
           R"(","origin":")" + origin + R"(","writer":")" + writer + R"(","version":)" +
           std::to_string(version) + R"(,"hlc":{"p":)" + std::to_string(p) +
           R"(,"l":0},"policyVersion":0,"ops":)" + ops + extra + "}}";
  }
  std::string last(ConnId c) { return inbox[c].empty() ? "" : inbox[c].back(); }
  std::size_t count(ConnId c) { return inbox[c].size(); }
};

bool has(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("relay: envelope validation names the first malformed field") {
  struct Case {
    const char* env;
    const char* reason;
  };
  const Case cases[] = {
      {R"(5)", "envelope"},
      {R"({"instance":7})", "instance"},
      {R"({"instance":"a\u0001"})", "instance"},
      {R"({"instance":"i","origin":""})", "origin"},
      {R"({"instance":"i","origin":"o","writer":"w\n"})", "writer"},
      {R"({"instance":"i","origin":"o","writer":"w","hlc":{"p":1}})", "hlc"},
      {R"({"instance":"i","origin":"o","writer":"w","hlc":[1,2]})", "hlc"},
      {R"({"instance":"i","origin":"o","writer":"w","hlc":{"p":1,"l":0},"version":1.5})",
       "version"},
      {R"({"instance":"i","origin":"o","writer":"w","hlc":{"p":1,"l":0},"version":0})", "version"},
      {R"({"instance":"i","origin":"o","writer":"w","hlc":{"p":1,"l":0},"version":1,"ops":{}})",
       "ops"},
      {R"({"instance":"i","origin":"o","writer":"w","hlc":{"p":1,"l":0},"version":1,"ops":[3]})",
       "op"},
      {R"({"instance":"i","origin":"o","writer":"w","hlc":{"p":1,"l":0},"version":1,"ops":[[]]})",
       "kind"},
      {R"({"instance":"i","origin":"o","writer":"w","hlc":{"p":1,"l":0},"version":1,"ops":[{"kind":"move"}]})",
       "kind"},
      {R"({"instance":"i","origin":"o","writer":"w","hlc":{"p":1,"l":0},"version":1,"ops":[{"kind":"set","path":"a"}]})",
       "path"},
      {R"({"instance":"i","origin":"o","writer":"w","hlc":{"p":1,"l":0},"version":1,"ops":[{"kind":"set","path":["a\u001f"]}]})",
       "path-control"},
      {R"({"instance":"i","origin":"o","writer":"w","hlc":{"p":1,"l":0},"version":1,"ops":[{"kind":"set","path":["__proto__"]}]})",
       "path-proto"},
      {R"({"instance":"i","origin":"o","writer":"w","hlc":{"p":1,"l":0},"version":1,"ops":[{"kind":"clear","path":[]}]})",
       "root-op"},
      {R"({"instance":"i","origin":"o","writer":"w","hlc":{"p":1,"l":0},"version":1,"ops":[{"kind":"set","path":[],"epoch":-1}]})",
       "epoch"},
      {R"({"instance":"i","origin":"o","writer":"w","hlc":{"p":1,"l":0},"version":1,"ops":[{"kind":"set","path":[],"epoch":0,"cites":[{"origin":"x"}]}]})",
       "cites"},
      {R"({"instance":"i","origin":"o","writer":"w","hlc":{"p":1,"l":0},"version":1,"ops":[{"kind":"set","path":[1],"epoch":0,"cites":[]},{"kind":"clear","path":["1"],"epoch":0,"cites":[]}]})",
       "dup-path"},
  };
  for (const auto& c : cases) {
    JsonScan scan;
    REQUIRE(scan.parse(c.env, 64));
    EnvelopeView view;
    const char* reason = validate_envelope(scan, 0, view);
    INFO(c.env);
    REQUIRE(reason != nullptr);
    CHECK(std::string(reason) == c.reason);
  }
  JsonScan scan;
  REQUIRE(scan.parse(
      R"({"instance":"","origin":"o","writer":"w","hlc":{"p":1,"l":0},"version":1,"ops":[{"kind":"set","path":[],"epoch":0.5,"cites":[]}]})",
      64));
  EnvelopeView view;
  CHECK(validate_envelope(scan, 0, view) == nullptr);
  std::string long_id(600, 'x');
  std::string bounds = R"({"instance":"","origin":")" + long_id +
                       R"(","writer":"w","hlc":{"p":1,"l":0},"version":1,"ops":[]})";
  REQUIRE(scan.parse(bounds, 64));
  CHECK(std::string(validate_envelope(scan, 0, view)) == "bounds");
}

TEST_CASE("relay: the JSON scanner accepts exactly JSON and reads escaped keys and strings") {
  JsonScan scan;
  for (const char* bad : {"", "{", "[1,]", "{\"a\":}", "01", "1.", "-", "\"\\x\"", "\"\\ud800\"",
                          "\"\\udc00x\"", "tru", "{\"a\" 1}", "[1] 2", "\"a\nb\"", "\"\xff\""}) {
    INFO(bad);
    CHECK(!scan.parse(bad, 64));
  }
  CHECK(!scan.parse(std::string(65, '[') + std::string(65, ']'), 64));
  REQUIRE(scan.parse(
      " {\"\\u0074\":\"h\\u00e9\\ud83d\\ude00\", \"n\" : -1.5e2 , \"t\":[true,null]} ", 64));
  std::string scratch;
  CHECK(scan.node(scan.field(0, "t")).type == JsonScan::Type::array);  // the last "t" wins
  CHECK(scan.number(scan.field(0, "n")) == -150);
  CHECK(scan.raw(scan.field(0, "n")) == "-1.5e2");
  REQUIRE(scan.parse("{\"k\":\"h\\u00e9\\ud83d\\ude00\"}", 64));
  CHECK(scan.str(scan.field(0, "k"), scratch) == "h\xc3\xa9\xf0\x9f\x98\x80");
}

TEST_CASE("relay: the JSON scanner reads every number as strtod does, bit for bit") {
  // number() reads the common shapes without strtod (src/room/json_scan.cpp): the same doubles.
  std::vector<std::string> texts = {"0",
                                    "-0",
                                    "1",
                                    "-1",
                                    "0.5",
                                    "-0.0",
                                    "0.1",
                                    "0.3",
                                    "123.456",
                                    "1e3",
                                    "-2E-2",
                                    "1.5e300",
                                    "9007199254740993",
                                    "123456789012345",
                                    "1234567890123456",
                                    "0.000000000000000000001",
                                    "0.0000000000000000000001",
                                    "0.1234567890123456789012",
                                    "00.5"};
  std::uint64_t x = 88172645463325252ull;  // xorshift: numbers of every length and shape
  for (int n = 0; n < 20000; ++n) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    std::string t = (x & 1) ? "-" : "";
    const int whole = 1 + static_cast<int>((x >> 1) % 18);
    const int frac = static_cast<int>((x >> 6) % 24);
    std::uint64_t d = x;
    for (int k = 0; k < whole + frac; ++k) {
      if (k == whole) t += '.';
      d = d * 6364136223846793005ull + 1442695040888963407ull;
      char c = static_cast<char>('0' + (d >> 60) % 10);
      if (k == 0 && whole > 1 && c == '0') c = '1';
      t += c;
    }
    if (t.back() == '.') t.pop_back();
    texts.push_back(t);
  }
  JsonScan scan;
  for (const std::string& t : texts) {
    if (t == "00.5") continue;  // not JSON: the parser refuses it before number() could run
    INFO(t);
    const std::string doc = "[" + t + "]";  // the scanner reads it in place
    REQUIRE(scan.parse(doc, 64));
    const double got = scan.number(scan.node(0).first);
    const double want = std::strtod(t.c_str(), nullptr);
    CHECK(std::memcmp(&got, &want, sizeof got) == 0);
  }
}

TEST_CASE("relay: sequencing echoes to every member with a room-scoped seq") {
  Harness h;
  ConnId a = h.relay.connect("w1"), b = h.relay.connect("w2");
  h.hello(a, "oa");
  CHECK(has(h.last(a), R"("mode":"up-to-date")"));
  h.hello(b, "ob");
  CHECK(h.last(a) == R"({"t":"member","room":"r","origin":"ob"})");
  CHECK(has(h.last(b), R"("members":["oa"])"));
  h.rx(a, h.env("oa", "w1", 1, 10));
  CHECK(has(h.last(a), R"("version":1)"));
  CHECK(has(h.last(a), R"("seq":1}})"));
  CHECK(h.last(a) == h.last(b));
  h.rx(b, h.env("ob", "w2", 1, 11));
  CHECK(has(h.last(a), R"("seq":2}})"));
  CHECK(h.relay.room("r")->seq == 2);
}

TEST_CASE("relay: drops go to the submitter only: duplicate, order, generation, schema") {
  Harness h;
  ConnId a = h.relay.connect("w1"), b = h.relay.connect("w2");
  h.hello(a, "oa");
  h.hello(b, "ob");
  h.rx(a, h.env("oa", "w1", 1, 10));
  h.rx(a, h.env("oa", "w1", 3, 12));
  std::size_t seen_by_b = h.count(b);
  h.rx(a, h.env("oa", "w1", 1, 10));
  CHECK(h.last(a) == R"({"t":"drop","room":"r","origin":"oa","version":1,"reason":"duplicate"})");
  h.rx(a, h.env("oa", "w1", 2, 11));
  CHECK(h.last(a) == R"({"t":"drop","room":"r","origin":"oa","version":2,"reason":"order"})");
  std::string wrong_gen = h.env("oa", "w1", 4, 13);
  wrong_gen.replace(wrong_gen.find(h.instance()), h.instance().size(), "old-generation");
  h.rx(a, wrong_gen);
  CHECK(h.last(a) == R"({"t":"drop","room":"r","origin":"oa","version":4,"reason":"generation"})");
  CHECK(h.count(b) == seen_by_b);
  CHECK(h.events.back() == "drop generation");
  CHECK(h.relay.room("r")->seq == 2);
}

TEST_CASE("relay: welcome is up-to-date, delta within the journal, snapshot beyond it") {
  RoomRelayOptions o;
  o.journal_limit = 3;
  Harness h(o);
  ConnId a = h.relay.connect("w1");
  h.hello(a, "oa");
  for (int v = 1; v <= 5; ++v) h.rx(a, h.env("oa", "w1", v, 10 + v));
  CHECK(h.relay.room("r")->journal == 3);  // bounded by journalLimit
  ConnId b = h.relay.connect("w2");
  h.hello(b, "ob", R"(,"seq":5)");
  CHECK(has(h.last(b), R"("mode":"up-to-date")"));
  h.hello(b, "ob", R"(,"seq":2)");  // journal holds 3..5; seq 2 is journal[0]-1
  CHECK(has(h.last(b), R"("mode":"delta","envs":[{)"));
  CHECK(has(h.last(b), R"("seq":3})"));
  CHECK(!has(h.last(b), R"("seq":2})"));
  h.hello(b, "ob", R"(,"seq":1)");
  CHECK(has(
      h.last(b),
      R"("mode":"snapshot","registers":[{"path":["a"],"siblings":[{"kind":"set","writer":"w1","origin":"oa","hlc":{"p":15,"l":0},"epoch":0,"value":1}],"water":{}}],"wm":{"oa":5})"));
}

TEST_CASE(
    "relay: registers keep one sibling per origin, cites supersede, GC on trim keeps epochs") {
  RoomRelayOptions o;
  o.journal_limit = 1;
  Harness h(o);
  ConnId a = h.relay.connect("w1"), b = h.relay.connect("w2");
  h.hello(a, "oa");
  h.hello(b, "ob");
  // Two concurrent writers at ["k"]: both retained as siblings.
  h.rx(a, h.env("oa", "w1", 1, 10,
                R"([{"kind":"set","path":["k"],"next":"A","cites":[],"epoch":0}])"));
  h.rx(b, h.env("ob", "w2", 1, 11,
                R"([{"kind":"set","path":["k"],"next":"B","cites":[],"epoch":2}])"));
  std::string cp = h.relay.checkpoint_json("r");
  CHECK(has(cp, R"("origin":"oa")"));
  CHECK(has(cp, R"("origin":"ob")"));
  // oa cites ob's write: a water mark for ob; oa's own older sibling is replaced.
  h.rx(
      a,
      h.env(
          "oa", "w1", 2, 12,
          R"([{"kind":"delete","path":["k"],"prev":"B","cites":[{"origin":"ob","hlc":{"p":11,"l":0}}],"epoch":2}])"));
  cp = h.relay.checkpoint_json("r");
  CHECK(has(
      cp,
      R"({"kind":"delete","writer":"w1","origin":"oa","hlc":{"p":12,"l":0},"epoch":2,"prev":"B"})"));
  // The journal trimmed on every commit with settled {oa:12, ob:11}: ob's superseded sibling
  // and its mark are collected; the tombstone (oa's delete) and the epoch baseline stay.
  CHECK(has(h.last(a),
            R"({"t":"settled","room":"r","settled":{"oa":{"p":12,"l":0},"ob":{"p":11,"l":0}}})"));
  CHECK(
      cp ==
      R"([{"path":["k"],"siblings":[{"kind":"delete","writer":"w1","origin":"oa","hlc":{"p":12,"l":0},"epoch":2,"prev":"B"}],"water":{},"epoch":2}])");
  CHECK(h.relay.register_count() == 1);
}

TEST_CASE("relay: an emptied register leaves its epoch baseline behind") {
  RoomRelayOptions o;
  o.journal_limit = 1;
  Harness h(o);
  ConnId a = h.relay.connect("w1");
  h.hello(a, "oa");
  h.rx(a,
       h.env("oa", "w1", 1, 10, R"([{"kind":"set","path":["k"],"next":1,"cites":[],"epoch":3}])"));
  // A clear at ["k"] that cites itself keeps its own sibling; a later cite from oa elsewhere
  // supersedes ["k"] via a water mark at ["k"] citing oa@10.
  h.rx(
      a,
      h.env(
          "oa", "w1", 2, 11,
          R"([{"kind":"set","path":["k"],"next":2,"cites":[{"origin":"oa","hlc":{"p":10,"l":0}}],"epoch":3}])"));
  h.rx(a,
       h.env("oa", "w1", 3, 12, R"([{"kind":"set","path":["j"],"next":2,"cites":[],"epoch":0}])"));
  std::string cp = h.relay.checkpoint_json("r");
  CHECK(
      cp ==
      R"([{"path":["k"],"siblings":[{"kind":"set","writer":"w1","origin":"oa","hlc":{"p":11,"l":0},"epoch":3,"value":2}],"water":{},"epoch":3},{"path":["j"],"siblings":[{"kind":"set","writer":"w1","origin":"oa","hlc":{"p":12,"l":0},"epoch":0,"value":2}],"water":{}}])");
}

TEST_CASE("relay: hello rejects proto, policy-version, schema and ejected writers") {
  RoomRelayOptions o;
  o.policy_version = 2;
  Harness h(o);
  ConnId a = h.relay.connect("w1");
  h.rx(a, R"({"t":"hello","room":"r","origin":"oa","proto":2,"policyVersion":2})");
  CHECK(h.last(a) == R"({"t":"reject","room":"r","reason":"proto","expected":3})");
  CHECK(!h.relay.room("r"));  // the empty room was evicted
  h.rx(a, R"({"t":"hello","room":"r","origin":"oa","proto":3,"policyVersion":1})");
  CHECK(h.last(a) == R"({"t":"reject","room":"r","reason":"policy-version","expected":2})");
  CHECK(h.events.back() == "reject policy-version");
  CHECK(h.rx(a, R"({"t":"hello","room":"r","origin":"","proto":3,"policyVersion":2})") ==
        ReceiveError::bad_hello);
  CHECK(h.rx(a, R"({"t":"hello","room":5})") == ReceiveError::bad_room);
  CHECK(h.rx(a, R"([1,2])") == ReceiveError::not_an_object);
  CHECK(h.rx(a, R"({"t":"hel)") == ReceiveError::unparseable);
}

TEST_CASE(
    "relay: writer ejection blacklists the writer, connection ejection closes one connection") {
  for (bool connection_scope : {false, true}) {
    RoomRelayOptions o;
    o.eject_connection = connection_scope;
    Harness h(o);
    ConnId a1 = h.relay.connect("w1"), a2 = h.relay.connect("w1"), b = h.relay.connect("w2");
    h.hello(a1, "o1");
    h.hello(a2, "o2");
    h.hello(b, "ob");
    h.rx(a1, h.env("o1", "someone-else", 1, 10));  // writer mismatch: the tripwire
    CHECK(h.recent(R"("reason":"writer-mismatch")"));
    CHECK(h.relay.room("r")->members == (connection_scope ? 2u : 1u));
    CHECK(has(h.inbox[a1].back(), R"("t":"eject")"));
    h.hello(a1, "o1");
    CHECK(h.last(a1) == R"({"t":"reject","room":"r","reason":"unauthorized"})");
    ConnId fresh = h.relay.connect("w1");
    h.hello(fresh, "o1");
    CHECK(has(h.last(fresh), connection_scope ? R"("t":"welcome")" : R"("reason":"unauthorized")"));
  }
}

TEST_CASE("relay: the token bucket allows a burst of twice the rate and survives reconnects") {
  RoomRelayOptions o;
  o.max_envelopes_per_second = 2;
  o.eject_connection = true;
  Harness h(o);
  ConnId a = h.relay.connect("w1");
  h.hello(a, "oa");
  for (int v = 1; v <= 4; ++v) h.rx(a, h.env("oa", "w1", v, 10 + v));
  CHECK(h.relay.room("r")->seq == 4);
  h.relay.handle_disconnect(a);
  ConnId again = h.relay.connect("w1");
  h.hello(again, "oa");
  h.rx(again, h.env("oa", "w1", 5, 20));  // the bucket is empty: same writer, same room
  CHECK(h.recent(R"("reason":"rate")"));
  h.now += 1000;  // two tokens back
  ConnId third = h.relay.connect("w1");
  h.hello(third, "oa");
  h.rx(third, h.env("oa", "w1", 5, 21));
  CHECK(h.relay.room("r")->seq == 5);
}

TEST_CASE("relay: a pending commit holds its echo, settled notice and welcomes, drops pass") {
  RoomRelayOptions o;
  o.durable = true;
  Harness h(o);
  ConnId a = h.relay.connect("w1"), b = h.relay.connect("w2");
  h.hello(a, "oa");
  h.rx(a, h.env("oa", "w1", 1, 10));
  REQUIRE(h.tickets.size() == 1);
  std::size_t before = h.count(a);
  h.relay.handle_commit_result(h.tickets[0], RoomRelay::Verdict::pending);
  h.collect();
  CHECK(h.count(a) == before);  // echo held
  h.hello(b, "ob");
  CHECK(h.count(b) == 0);  // welcome held behind it
  h.rx(a, h.env("oa", "w1", 1, 10));
  CHECK(h.last(a) == R"({"t":"drop","room":"r","origin":"oa","version":1,"reason":"duplicate"})");
  CHECK(!h.relay.unload("r", true));  // pending is not the adapter's to discard
  h.relay.handle_commit_result(h.tickets[0], RoomRelay::Verdict::ok);
  h.collect();
  CHECK(has(h.last(a), R"("seq":1}})"));  // after the drop, which was never held
  CHECK(has(h.last(b), R"("t":"welcome")"));
}

TEST_CASE("relay: a failed commit stalls the room once, unload discards only a stalled queue") {
  RoomRelayOptions o;
  o.durable = true;
  Harness h(o);
  ConnId a = h.relay.connect("w1");
  h.hello(a, "oa");
  h.rx(a, h.env("oa", "w1", 1, 10));
  h.rx(a, h.env("oa", "w1", 2, 11));
  REQUIRE(h.tickets.size() == 2);
  h.relay.handle_commit_result(h.tickets[1], RoomRelay::Verdict::failed);  // behind a pending head
  h.collect();
  CHECK(!h.relay.room("r")->stalled);
  h.relay.handle_commit_result(h.tickets[0], RoomRelay::Verdict::failed);
  h.collect();
  CHECK(h.relay.room("r")->stalled);
  CHECK(std::count_if(h.events.begin(), h.events.end(),
                      [](const std::string& e) { return has(e, "failed"); }) == 1);
  CHECK(!h.relay.unload("r", true));  // members present
  h.relay.handle_disconnect(a);
  h.collect();
  CHECK(!h.relay.unload("r", false));
  CHECK(h.relay.unload("r", true));
  CHECK(!h.relay.room("r"));
}

TEST_CASE("relay: hydrate restores a room before anyone joins and refuses a live one") {
  Harness h;
  std::string snap =
      R"({"seq":7,"instance":"inst-1","schemaVersion":1,"registers":[{"path":["a"],"siblings":[{"kind":"set","writer":"w","origin":"o","hlc":{"p":5,"l":0},"epoch":0,"value":1}],"water":{}}],"ranges":{"o":[[1,7]]},"settled":{"o":{"p":5,"l":0}},"journal":[{"seq":7,"proto":3},{"seq":6,"proto":3},{"seq":9}]})";
  CHECK(h.relay.hydrate("r", snap, 0));
  auto info = h.relay.room("r");
  CHECK(info->seq == 7);
  CHECK(info->instance == "inst-1");
  CHECK(info->journal == 2);
  CHECK(!h.relay.hydrate("r", snap, 0));
  CHECK(!h.relay.hydrate("q", "{\"seq\":\"x\"}", 0));
  ConnId a = h.relay.connect("w");
  h.rx(
      a,
      R"({"t":"hello","room":"r","origin":"o","proto":3,"policyVersion":0,"seq":5,"schemaVersion":1})");
  CHECK(has(h.last(a), R"("mode":"delta","envs":[{"seq":6,"proto":3},{"seq":7,"proto":3}])"));
  h.rx(a, R"({"t":"hello","room":"r","origin":"o","proto":3,"policyVersion":0,"schemaVersion":0})");
  CHECK(h.last(a) == R"({"t":"reject","room":"r","reason":"schema","expected":1})");
  CHECK(
      h.relay.state_json("r") ==
      R"({"seq":7,"instance":"inst-1","wm":{"o":7},"ranges":{"o":[[1,7]]},"settled":{"o":{"p":5,"l":0}},"schemaVersion":1})");
}

TEST_CASE("relay: a migration mints a generation, drops evidence and re-welcomes every member") {
  Harness h;
  ConnId a = h.relay.connect("w1"), b = h.relay.connect("w2");
  h.hello(a, "oa");
  h.hello(b, "ob");
  h.rx(a, h.env("oa", "w1", 1, 10));
  std::string old = h.instance();
  h.rx(a, h.env("oa", "w1", 2, 11, R"([{"kind":"set","path":[],"next":{},"cites":[],"epoch":0}])",
                R"(,"schemaVersion":1)"));
  CHECK(h.instance() != old);
  CHECK(has(h.last(b), R"("t":"welcome")"));
  CHECK(has(h.last(b), R"("schemaVersion":1,"mode":"snapshot")"));
  CHECK(has(h.last(b), R"("wm":{})"));  // the cut is not admission evidence of the new generation
  h.rx(b, h.env("ob", "w2", 1, 12, R"([{"kind":"set","path":["x"],"next":1,"cites":[],"epoch":0}])",
                R"(,"schemaVersion":0)"));
  CHECK(h.last(b) == R"({"t":"drop","room":"r","origin":"ob","version":1,"reason":"schema"})");
}

TEST_CASE("relay: a commit names its generation: a new epoch exactly when the instance changes") {
  // web/glue/relay.js keeps the instance it read until a commit's epoch changes: the epoch must
  // change with every new instance (a migration here) and with nothing else.
  RoomRelayOptions o;
  o.durable = true;
  Harness h(o);
  ConnId a = h.relay.connect("w1");
  h.hello(a, "oa");
  auto commit = [&](const std::string& env) {
    h.rx(a, env);
    h.relay.handle_commit_result(h.tickets.back(), RoomRelay::Verdict::ok);
    h.collect();
  };
  commit(h.env("oa", "w1", 1, 10));
  commit(h.env("oa", "w1", 2, 11));
  commit(h.env("oa", "w1", 3, 12, R"([{"kind":"set","path":[],"next":{},"cites":[],"epoch":0}])",
               R"(,"schemaVersion":2)"));
  commit(h.env("oa", "w1", 4, 13, R"([{"kind":"set","path":["a"],"next":1,"cites":[],"epoch":0}])",
               R"(,"schemaVersion":2)"));
  REQUIRE(h.generations.size() == 4);
  CHECK(h.generations[1] == h.generations[0]);
  CHECK(h.generations[2].second != h.generations[0].second);  // the migration's new instance
  CHECK(h.generations[2].first != h.generations[0].first);    // and a new epoch with it
  CHECK(h.generations[3] == h.generations[2]);
}

TEST_CASE("relay: a schema raised to Infinity is written as null and hydrates back") {
  // docs/rooms.md, "Numbers out of range": an envelope's schemaVersion of 1e999 compares as
  // Infinity (the reference's JSON.parse reads that), so it raises the room's schema; the state
  // writes it as JSON.stringify does, and hydrate reads that null back as Infinity.
  Harness h;
  ConnId a = h.relay.connect("w1");
  h.hello(a, "oa");
  h.rx(a, h.env("oa", "w1", 1, 10,
                R"([{"kind":"set","path":["x"],"next":1e999,"cites":[],"epoch":0}])",
                R"(,"schemaVersion":1e999)"));
  CHECK(has(h.last(a), R"("schemaVersion":null,"mode":"snapshot")"));
  CHECK(has(h.last(a), R"("value":null)"));
  const std::string state = h.relay.state_json("r");
  CHECK(has(state, R"("schemaVersion":null)"));
  CHECK(parse_json(ByteView(std::string_view(state))).ok());
  Harness again;
  REQUIRE(again.relay.hydrate("r", state, 0));
  CHECK(again.relay.state_json("r") == state);
  ConnId b = again.relay.connect("w2");
  again.rx(
      b, R"({"t":"hello","room":"r","origin":"ob","proto":3,"policyVersion":0,"schemaVersion":5})");
  CHECK(again.last(b) == R"({"t":"reject","room":"r","reason":"schema","expected":null})");
}

TEST_CASE("relay: presence, gone, signal routing and membership") {
  Harness h;
  ConnId a = h.relay.connect("w1"), b = h.relay.connect("w2");
  h.hello(a, "oa");
  h.hello(b, "ob");
  h.rx(a, R"({"t":"presence","room":"r","data":{"cursor":[1,2]}})");
  CHECK(
      h.last(b) ==
      R"({"t":"presence","room":"r","peer":{"origin":"oa","writer":"w1","data":{"cursor":[1,2]}}})");
  h.rx(b, R"({"t":"signal","room":"r","to":"oa","data":{"sdp":"x"}})");
  CHECK(h.last(a) == R"({"t":"signal","room":"r","from":"ob","data":{"sdp":"x"}})");
  ConnId c = h.relay.connect("w3");
  h.hello(c, "oc");
  CHECK(has(
      h.last(c),
      R"("peers":[{"origin":"oa","writer":"w1","data":{"cursor":[1,2]}}],"members":["oa","ob"])"));
  h.relay.handle_disconnect(a);
  h.collect();
  CHECK(
      h.inbox[b][h.count(b) - 2] ==
      R"({"t":"presence","room":"r","peer":{"origin":"oa","writer":"w1","data":{"cursor":[1,2]}},"gone":true})");
  CHECK(h.last(b) == R"({"t":"member","room":"r","origin":"oa","gone":true})");
  // A second hello under the same origin replaces the first connection's member and closes it.
  ConnId b2 = h.relay.connect("w2");
  h.hello(b2, "ob");
  CHECK(h.events.back() == "join ob");
  CHECK(std::find(h.events.begin(), h.events.end(), "close " + std::to_string(b)) !=
        h.events.end());
}

TEST_CASE(
    "relay: policy hooks see the room's seq, the native path ACL asks allow once per member") {
  RoomRelayOptions o;
  o.has_policy = true;
  o.has_can_write = true;
  o.has_validate = true;
  Harness h(o);
  ConnId a = h.relay.connect("w1");
  h.hello(a, "oa");
  h.rx(a, h.env("oa", "w1", 1, 10, R"([{"kind":"set","path":[],"next":{},"cites":[],"epoch":0}])"));
  CHECK(h.hooks.calls.back() == "canWrite [] seq=0");
  h.rx(a, h.env("oa", "w1", 2, 11,
                R"([{"kind":"set","path":["a"],"next":"forbidden","cites":[],"epoch":0}])"));
  CHECK(h.recent(R"({"writer":"w1","reason":"validate","path":["a"]})"));

  RoomRelayOptions acl;
  acl.has_policy = true;
  acl.native_acl = true;
  acl.acl = {AclRule{{"notes"}}, AclRule{{"cases", "*", "plan"}}};
  Harness g(acl);
  ConnId human = g.relay.connect("h"), agent = g.relay.connect("agent");
  g.hello(human, "o1");
  g.hello(agent, "o2");
  g.rx(human, g.env("o1", "h", 1, 10,
                    R"([{"kind":"set","path":["cases",3,"plan"],"next":1,"cites":[],"epoch":0}])"));
  g.rx(human,
       g.env("o1", "h", 2, 11,
             R"([{"kind":"set","path":["cases","4","plan","x"],"next":1,"cites":[],"epoch":0}])"));
  CHECK(g.relay.room("r")->seq == 2);
  CHECK(std::count(g.hooks.calls.begin(), g.hooks.calls.end(), "allow 1") == 1);  // remembered
  g.rx(agent, g.env("o2", "agent", 1, 12,
                    R"([{"kind":"set","path":["notes","n"],"next":1,"cites":[],"epoch":0}])"));
  CHECK(g.relay.room("r")->seq == 3);
  g.rx(agent, g.env("o2", "agent", 2, 13,
                    R"([{"kind":"set","path":["cases",1,"plan"],"next":1,"cites":[],"epoch":0}])"));
  CHECK(std::any_of(g.events.begin(), g.events.end(), [](const std::string& e) {
    return has(e, R"("reason":"can-write","path":["cases",1,"plan"])");
  }));
  g.rx(human, g.env("o1", "h", 3, 14,
                    R"([{"kind":"set","path":["other"],"next":1,"cites":[],"epoch":0}])"));
  CHECK(g.relay.room("r")->seq == 3);  // deny by default once rules exist
  // The root matches no rule, even right after a deeper path filled the segment scratch.
  ConnId third = g.relay.connect("h2");
  g.hello(third, "o3");
  g.rx(third, g.env("o3", "h2", 1, 15,
                    R"([{"kind":"set","path":["cases",5,"plan"],"next":1,"cites":[],"epoch":0}])"));
  CHECK(g.relay.room("r")->seq == 4);
  g.rx(third,
       g.env("o3", "h2", 2, 16, R"([{"kind":"set","path":[],"next":{},"cites":[],"epoch":0}])"));
  CHECK(g.relay.room("r")->seq == 4);
  CHECK(has(g.inbox[third].back(), R"("reason":"can-write")"));
}

TEST_CASE("relay: epoch bumps need canBump, citations must be known when verified") {
  RoomRelayOptions o;
  o.has_policy = true;
  o.has_can_bump = true;
  o.verify_citations = true;
  o.eject_connection = true;
  Harness h(o);
  ConnId a = h.relay.connect("w1");
  h.hello(a, "oa");
  h.rx(a,
       h.env("oa", "w1", 1, 10, R"([{"kind":"set","path":["k"],"next":1,"cites":[],"epoch":1}])"));
  CHECK(h.relay.room("r")->seq == 1);
  h.rx(
      a,
      h.env(
          "oa", "w1", 2, 11,
          R"([{"kind":"set","path":["k"],"next":1,"cites":[{"origin":"ghost","hlc":{"p":1,"l":0}}],"epoch":1}])"));
  CHECK(h.recent(
      R"({"writer":"w1","reason":"unknown-citation","detail":"cites ghost@1.0","path":["k"]})"));
  ConnId b = h.relay.connect("w1");
  h.hello(b, "oa");
  h.rx(
      b,
      h.env(
          "oa", "w1", 2, 12,
          R"([{"kind":"set","path":["k"],"next":1,"cites":[{"origin":"oa","hlc":{"p":10,"l":0}}],"epoch":5}])"));
  CHECK(h.recent(R"("reason":"epoch-bump","detail":"epoch 5 > observed 1")"));
}

TEST_CASE("relay: a connection bound to one room cannot name another (adapter tickets)") {
  Harness h;
  ConnId bound = h.relay.connect("w1", "r");
  h.hello(bound, "o1");
  REQUIRE(has(h.last(bound), R"("t":"welcome")"));
  // Another room: refused before it exists, so it can neither be read nor created.
  ReceiveError e =
      h.rx(bound, R"({"t":"hello","room":"other","origin":"o1","proto":3,"policyVersion":0})");
  CHECK(e == ReceiveError::other_room);
  CHECK(std::string(receive_error_name(e)) == "other-room");
  CHECK_FALSE(h.relay.room("other").has_value());
  CHECK(h.rx(bound, R"({"t":"presence","room":"other","data":1})") == ReceiveError::other_room);
  // Its own room still works, and an unbound connection may name any room.
  CHECK(h.rx(bound, h.env("o1", "w1", 1, 5)) == ReceiveError::none);
  CHECK(has(h.last(bound), R"("seq":1)"));
  ConnId free = h.relay.connect("w2");
  CHECK(h.rx(free, R"({"t":"hello","room":"other","origin":"o2","proto":3,"policyVersion":0})") ==
        ReceiveError::none);
  CHECK(h.relay.room("other").has_value());
}

// A host rebuilding a room from its own journal (docs/rooms.md § Durability at the edge) feeds
// back envelopes this relay, or the one before a restart, already accepted: they carry the
// policy version they were written under, and the rules, rate and op limit may have changed
// since. A replay connection skips those judgements; a live one is judged as always.
TEST_CASE("relay: a journal replay connection skips the pins and the policy, a live one does not") {
  RoomRelayOptions o;
  o.policy_version = 2;  // the envelopes below were written under 0 (Harness::env)
  o.has_policy = true;
  o.has_can_write = true;
  o.has_validate = true;
  o.has_can_bump = true;
  o.verify_citations = true;
  o.max_ops_per_envelope = 1;
  o.max_envelopes_per_second = 1;  // a burst of two
  o.eject_connection = true;
  Harness h(o);
  ConnId replay = h.relay.connect("w1", "r", /*replay=*/true);
  // Even a hello under the old pins: the host's own connection, not a client's.
  h.rx(replay, R"({"t":"hello","room":"r","origin":"oa","proto":3,"policyVersion":0})");
  REQUIRE(has(h.last(replay), R"("t":"welcome")"));
  const std::vector<std::string> ops = {
      R"([{"kind":"set","path":["k"],"next":"forbidden","cites":[],"epoch":0}])",  // validate
      R"([{"kind":"set","path":[],"next":{},"cites":[],"epoch":0}])",              // can-write
      R"([{"kind":"set","path":["k"],"next":1,"cites":[],"epoch":5}])",            // epoch-bump
      R"([{"kind":"set","path":["k"],"next":2,"cites":[{"origin":"ghost","hlc":{"p":1,"l":0}}],"epoch":5}])",
      R"([{"kind":"set","path":["a"],"next":1,"cites":[],"epoch":0},{"kind":"set","path":["b"],"next":1,"cites":[],"epoch":0}])",
  };
  for (std::size_t v = 0; v < ops.size(); ++v) {
    CHECK(h.rx(replay, h.env("oa", "w1", int(v) + 1, 10 + int(v), ops[v])) == ReceiveError::none);
  }
  CHECK(h.relay.room("r")->seq == double(ops.size()));
  CHECK(h.hooks.calls.empty());  // not one policy question
  CHECK_FALSE(h.recent("violation", h.events.size()));
  // The room's journal is still its own: a replayed envelope it already holds is a duplicate.
  h.rx(replay, h.env("oa", "w1", 1, 10));
  CHECK(h.recent("drop duplicate"));

  // A live client under the old version is refused at its hello, and its envelope is a proto
  // violation even after a hello under the new one.
  ConnId live = h.relay.connect("w2", "r");
  h.rx(live, R"({"t":"hello","room":"r","origin":"ob","proto":3,"policyVersion":0})");
  CHECK(h.last(live) == R"({"t":"reject","room":"r","reason":"policy-version","expected":2})");
  h.rx(live, R"({"t":"hello","room":"r","origin":"ob","proto":3,"policyVersion":2})");
  REQUIRE(has(h.last(live), R"("t":"welcome")"));
  h.rx(live, h.env("ob", "w2", 1, 20));
  CHECK(h.recent(R"({"writer":"w2","reason":"proto"})"));
  CHECK(h.relay.room("r")->seq == double(ops.size()));
}

// ---- policy questions (common/drive.hpp: a host decision is an action answered by an input) ----

TEST_CASE("relay: a policy question holds its envelope and everything its connection sends next") {
  RoomRelayOptions o;
  o.has_policy = true;
  o.has_can_write = true;
  Harness h(o);
  h.answer_at_once = false;
  ConnId a = h.relay.connect("w1"), b = h.relay.connect("w2");
  h.hello(a, "oa");
  h.hello(b, "ob");
  h.rx(a, h.env("oa", "w1", 1, 10));
  REQUIRE(h.questions.size() == 1);
  CHECK(h.questions[0].kind == RoomAction::Kind::ask_can_write);
  CHECK(*h.questions[0].text == R"(["a"])");
  CHECK(*h.questions[0].room == "r");
  CHECK(h.questions[0].seq == 0);
  // a's presence waits behind its envelope; b is not held up.
  std::size_t b_before = h.count(b);
  CHECK(h.rx(a, R"({"t":"presence","room":"r","data":1})") == ReceiveError::none);
  CHECK(h.count(b) == b_before);
  h.rx(b, R"({"t":"presence","room":"r","data":2})");
  CHECK(has(h.last(a), R"("data":2)"));
  CHECK(h.relay.room("r")->seq == 0);
  // The verdict: the envelope commits, then the presence follows, in the order a sent them.
  h.answer(true);
  CHECK(h.relay.room("r")->seq == 1);
  REQUIRE(h.count(b) >= b_before + 2);
  CHECK(has(h.inbox[b][b_before], R"("t":"env")"));
  CHECK(has(h.inbox[b][b_before + 1], R"("t":"presence")"));
  CHECK(has(h.inbox[b][b_before + 1], R"("data":1)"));
  // A refusal ejects as a synchronous one would; a stale token changes nothing.
  h.rx(a, h.env("oa", "w1", 2, 11, R"([{"kind":"set","path":[],"next":{},"cites":[],"epoch":0}])"));
  REQUIRE(h.questions.size() == 1);
  std::uint64_t token = h.questions[0].token;
  h.answer(false);
  CHECK(h.recent(R"("reason":"can-write","path":[])"));
  CHECK(h.relay.room("r")->seq == 1);
  h.relay.handle_policy_verdict(token, true, h.now);
  h.collect();
  CHECK(h.relay.room("r")->seq == 1);
}

TEST_CASE("relay: can_write_root_only asks about root ops alone, with the same verdicts") {
  RoomRelayOptions o;
  o.has_policy = true;
  o.has_can_write = true;
  o.can_write_root_only = true;
  Harness h(o);
  h.answer_at_once = false;
  ConnId a = h.relay.connect("w1");
  h.hello(a, "oa");
  // A path below the root: committed with no question.
  h.rx(a, h.env("oa", "w1", 1, 10));
  CHECK(h.questions.empty());
  CHECK(h.relay.room("r")->seq == 1);
  // The root: asked, and a refusal ejects as before.
  h.rx(a, h.env("oa", "w1", 2, 11, R"([{"kind":"set","path":[],"next":{},"cites":[],"epoch":0}])"));
  REQUIRE(h.questions.size() == 1);
  CHECK(*h.questions[0].text == "[]");
  h.answer(false);
  CHECK(h.recent(R"("reason":"can-write","path":[])"));
  CHECK(h.relay.room("r")->seq == 1);
}

TEST_CASE("relay: a host tag stays with its connection") {
  RoomRelay relay{RoomRelayOptions{}};
  ConnId a = relay.connect("w1"), b = relay.connect("w2");
  CHECK(relay.host_tag(a) == 0);
  relay.set_host_tag(a, 42);
  CHECK(relay.host_tag(a) == 42);
  CHECK(relay.host_tag(b) == 0);
  relay.set_host_tag(999, 7);  // no such connection: nothing to keep
  CHECK(relay.host_tag(999) == 0);
  relay.handle_disconnect(a);
  CHECK(relay.host_tag(a) == 0);
}

TEST_CASE("relay: released work runs only once what is queued before it has been polled") {
  // onCommit reads the room live: a commit action must see the room as of its own envelope, so the
  // backlog a verdict releases runs after that commit has been polled, not within the verdict.
  RoomRelayOptions o;
  o.has_policy = true;
  o.has_validate = true;
  o.durable = true;
  RoomRelay relay(o);
  ConnId a = relay.connect("w1");
  relay.handle_message(a, R"({"t":"hello","room":"r","origin":"oa","proto":3,"policyVersion":0})",
                       0);
  while (relay.poll_action()) {
  }
  std::string inst = relay.room("r")->instance;
  auto env = [&](int v) {
    return R"({"t":"env","room":"r","env":{"proto":3,"instance":")" + inst +
           R"(","origin":"oa","writer":"w1","version":)" + std::to_string(v) + R"(,"hlc":{"p":)" +
           std::to_string(10 + v) +
           R"(,"l":0},"policyVersion":0,"ops":[{"kind":"set","path":["a"],"next":1,"cites":[],"epoch":0}]}})";
  };
  relay.handle_message(a, env(1), 1);
  auto q1 = relay.poll_action();
  REQUIRE(q1);
  REQUIRE(q1->kind == RoomAction::Kind::ask_validate);
  CHECK(!relay.poll_action());
  relay.handle_message(a, env(2), 2);
  CHECK(!relay.poll_action());  // waits behind the first
  relay.handle_policy_verdict(q1->token, true, 3);
  auto c1 = relay.poll_action();
  REQUIRE(c1);
  CHECK(c1->kind == RoomAction::Kind::commit);
  CHECK(relay.room("r")->seq == 1);  // the second has not run yet
  CHECK(has(relay.state_json("r"), R"("seq":1,)"));
  relay.handle_commit_result(c1->token, RoomRelay::Verdict::ok);
  std::vector<RoomAction::Kind> rest;
  while (auto x = relay.poll_action()) {
    rest.push_back(x->kind);
    if (x->kind == RoomAction::Kind::ask_validate) relay.handle_policy_verdict(x->token, true, 4);
    if (x->kind == RoomAction::Kind::commit)
      relay.handle_commit_result(x->token, RoomRelay::Verdict::ok);
  }
  CHECK(rest == std::vector<RoomAction::Kind>{RoomAction::Kind::send,
                                              RoomAction::Kind::ask_validate,
                                              RoomAction::Kind::commit, RoomAction::Kind::send});
  CHECK(relay.room("r")->seq == 2);
}

TEST_CASE(
    "relay: a disconnect waits behind its connection's parked envelope, an ejected member's is "
    "dropped") {
  RoomRelayOptions o;
  o.has_policy = true;
  o.has_can_write = true;
  Harness h(o);
  h.answer_at_once = false;
  ConnId a = h.relay.connect("w1"), b = h.relay.connect("w2");
  h.hello(a, "oa");
  h.hello(b, "ob");
  h.rx(a, h.env("oa", "w1", 1, 10));
  h.relay.handle_disconnect(a);
  h.collect();
  CHECK(h.relay.room("r")->members == 2);  // still in the room: its envelope is undecided
  CHECK(h.relay.handle_message(a, R"({"t":"presence","room":"r","data":1})", h.now) ==
        ReceiveError::unknown_connection);
  h.answer(true);
  CHECK(h.relay.room("r")->seq == 1);
  CHECK(h.relay.room("r")->members == 1);
  CHECK(h.last(b) == R"({"t":"member","room":"r","origin":"oa","gone":true})");

  // Writer-scope ejection through another connection while an envelope waits: it is not the
  // room's any more, and its verdict changes nothing.
  ConnId c1 = h.relay.connect("w3"), c2 = h.relay.connect("w3");
  h.hello(c1, "o1");
  h.hello(c2, "o2");
  h.rx(c1, h.env("o1", "w3", 1, 20));
  REQUIRE(h.questions.size() == 1);
  h.rx(c2, h.env("o2", "someone-else", 1, 21));  // writer-mismatch: ejects writer w3
  CHECK(h.recent(R"("reason":"writer-mismatch")"));
  h.answer(true);
  CHECK(h.relay.room("r")->seq == 1);
}

TEST_CASE("relay: a connection that floods while its envelope waits is refused with backlog-full") {
  RoomRelayOptions o;
  o.has_policy = true;
  o.has_can_write = true;
  Harness h(o);
  h.answer_at_once = false;
  ConnId a = h.relay.connect("w1");
  h.hello(a, "oa");
  h.rx(a, h.env("oa", "w1", 1, 10));
  const std::string presence = R"({"t":"presence","room":"r","data":0})";
  for (std::size_t i = 0; i < kMaxBacklogMessages; ++i)
    REQUIRE(h.rx(a, presence) == ReceiveError::none);
  CHECK(h.rx(a, presence) == ReceiveError::backlog_full);
  CHECK(std::string(receive_error_name(ReceiveError::backlog_full)) == "backlog-full");
  // A malformed message is refused at once, not queued.
  CHECK(h.rx(a, "{") == ReceiveError::unparseable);
  h.answer(true);
  CHECK(h.relay.room("r")->seq == 1);
  CHECK(h.rx(a, presence) == ReceiveError::none);  // the backlog drained
}

TEST_CASE("relay: only presence updates are flagged ephemeral for the slow-reader rule") {
  Harness h;
  ConnId a = h.relay.connect("w1"), b = h.relay.connect("w2");
  h.hello(a, "oa");
  h.hello(b, "ob");
  h.rx(a, R"({"t":"presence","room":"r","data":1})");
  h.rx(a, R"({"t":"signal","room":"r","to":"ob","data":2})");
  h.rx(
      a,
      R"({"t":"env","room":"r","env":{"proto":3,"instance":")" + h.relay.room("r")->instance +
          R"(","origin":"oa","writer":"w1","version":1,"hlc":{"p":1,"l":0},"policyVersion":0,"ops":[{"kind":"set","path":["k"],"next":1,"cites":[],"epoch":0}]}})");
  h.relay.handle_disconnect(a);
  h.collect();
  CHECK(h.ephemeral ==
        std::vector<std::string>{
            R"({"t":"presence","room":"r","peer":{"origin":"oa","writer":"w1","data":1}})"});
  CHECK(h.count(b) >= 5);  // welcome, member, presence, signal, env, gone...: the rest is not
}

// tether's extension for the edge's slow-reader rule (docs/rooms.md § The slow-reader rule): off
// by default, so the wire is the reference's; on, the welcome advertises readAck and a client's
// read message is handed to the host as a read action, touching no room state.
TEST_CASE("relay: read acknowledgements are advertised and carried only when configured") {
  SECTION("off (the drop-in): no readAck, and a read message is an envelope without one") {
    Harness h;
    ConnId c = h.relay.connect("w");
    h.hello(c, "o1");
    CHECK_FALSE(has(h.last(c), "readAck"));
    h.rx(c, R"({"t":"read","room":"r","bytes":0})");
    CHECK(h.recent("violation"));
    CHECK_FALSE(h.recent("read "));
  }
  SECTION("on: advertised in every welcome, counts become read actions, the rest is ignored") {
    RoomRelayOptions o;
    o.read_ack_bytes = 4096;
    Harness h(o);
    ConnId c = h.relay.connect("w");
    ConnId d = h.relay.connect("v");
    h.hello(c, "o1");
    CHECK(has(h.last(c), R"("schemaVersion":0,"readAck":4096,"mode":"up-to-date")"));
    const std::size_t before = h.events.size();
    CHECK(h.rx(d, R"({"t":"read","room":"r","bytes":0})") == ReceiveError::none);  // no hello yet
    h.rx(c, R"({"t":"read","room":"r","bytes":8192})");
    for (const char* bad : {"-1", "0.5", "\"1\"", "null", "1e999", "9007199254740992"})
      h.rx(c, std::string(R"({"t":"read","room":"r","bytes":)") + bad + "}");
    h.rx(c, R"({"t":"read","room":"r"})");
    CHECK(std::vector<std::string>(h.events.begin() + static_cast<std::ptrdiff_t>(before),
                                   h.events.end()) ==
          std::vector<std::string>{"read " + std::to_string(d) + " 0",
                                   "read " + std::to_string(c) + " 8192"});
    CHECK(h.relay.room("r")->members == 1);  // a read joins nobody
    CHECK(h.count(d) == 0);
    h.hello(d, "o2");
    CHECK(has(h.last(d), R"("readAck":4096)"));
  }
}
