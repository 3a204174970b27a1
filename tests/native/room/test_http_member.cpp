// The HTTP relay transport's cores (src/room/http_member.hpp): the relay's member sessions rule by
// rule, hostile and malformed requests, every bound, and the peer's link driven against them.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "room/http_member.hpp"

using namespace tether;
using namespace tether::room;

namespace {
Bytes random_bytes(std::uint8_t seed) {
  Bytes b(kHttpSessionBytes);
  for (std::size_t i = 0; i < b.size(); i++) b[i] = static_cast<std::uint8_t>(seed * 31 + i);
  return b;
}
std::vector<HttpAction> drain(HttpMembers& m) {
  std::vector<HttpAction> out;
  while (auto a = m.poll_action()) out.push_back(std::move(*a));
  return out;
}
const HttpAction* response(const std::vector<HttpAction>& as, std::uint32_t req) {
  for (const HttpAction& a : as)
    if (a.kind == HttpAction::Kind::respond && a.req == req) return &a;
  return nullptr;
}
Json body_json(const HttpAction* a) {
  REQUIRE(a);
  JsonParse p = parse_json(ByteView(std::string_view(a->body)));
  REQUIRE(p.ok());
  return p.value;
}
std::string open(HttpMembers& m, std::string_view room, std::uint8_t seed, TimeMs now = 0) {
  m.handle_open(1, room, random_bytes(seed), now);
  auto as = drain(m);
  REQUIRE(as.size() == 2);
  CHECK(as[0].kind == HttpAction::Kind::attach);
  CHECK(as[0].room == room);
  Json v = body_json(response(as, 1));
  CHECK(v["pollWaitMs"] == kHttpPollWaitMs);
  CHECK(v["idleMs"] == kHttpIdleMs);
  CHECK(v["maxBodyBytes"] == kMaxHttpBodyBytes);
  return v["session"].get<std::string>();
}
std::vector<HttpAction> req(HttpMembers& m, std::uint32_t id, std::string_view method,
                            std::string_view op, const std::string& query,
                            std::string_view body = "", TimeMs now = 0,
                            std::string_view room = "lab") {
  m.handle_request(id, method, room, op, query, ByteView(body), now);
  return drain(m);
}
std::string error_code(const HttpAction* a) {
  REQUIRE(a);
  return a->body.substr(0, a->body.find(':'));
}
}  // namespace

TEST_CASE("http member: open attaches a room connection and answers the session and bounds") {
  HttpMembers m;
  std::string s = open(m, "lab", 1);
  CHECK(s.size() == kHttpSessionBytes * 2);
  CHECK(m.members() == 1);
  CHECK(m.members_in("lab") == 1);
  CHECK(m.poll_timeout() == kHttpIdleMs);
}

TEST_CASE("http member: sends are delivered once and in order, by seq") {
  HttpMembers m;
  std::string s = open(m, "lab", 1);
  auto as = req(m, 2, "POST", "send", "session=" + s + "&seq=1", "hello");
  REQUIRE(as.size() == 2);
  CHECK(as[0].kind == HttpAction::Kind::deliver);
  CHECK(as[0].session == s);
  CHECK(as[0].text == "hello");
  CHECK(body_json(response(as, 2))["seq"] == 1);
  // A retried POST (its response was lost) is acknowledged and not delivered again.
  as = req(m, 3, "POST", "send", "session=" + s + "&seq=1", "hello");
  REQUIRE(as.size() == 1);
  CHECK(as[0].status == 200);
  // A skipped seq is refused: the frame before it never arrived.
  as = req(m, 4, "POST", "send", "session=" + s + "&seq=3", "x");
  CHECK(response(as, 4)->status == 409);
  CHECK(error_code(response(as, 4)) == "out_of_order");
  as = req(m, 5, "POST", "send", "session=" + s + "&seq=2", "two");
  CHECK(as[0].text == "two");
  CHECK(m.stats().delivered == 2);
}

TEST_CASE(
    "http member: a receive waits, then gets what the relay sent, and the cursor acknowledges") {
  HttpMembers m;
  std::string s = open(m, "lab", 1);
  auto as = req(m, 2, "GET", "recv", "session=" + s + "&cursor=0");
  CHECK(as.empty());  // parked
  CHECK(m.poll_timeout() == kHttpPollWaitMs);
  m.handle_outbound(s, "{\"type\":\"welcome\"}", 5);
  m.handle_outbound(s, "second", 5);
  as = drain(m);
  REQUIRE(as.size() == 1);
  Json v = body_json(response(as, 2));
  CHECK(v["cursor"] == 1);
  CHECK(v["frames"] == Json::array({"{\"type\":\"welcome\"}"}));
  CHECK(m.queued_bytes(s) == std::string("{\"type\":\"welcome\"}").size() + 6);
  // The response was lost: the same cursor gets the same frames again (and the one after).
  as = req(m, 3, "GET", "recv", "session=" + s + "&cursor=0");
  v = body_json(response(as, 3));
  CHECK(v["cursor"] == 2);
  CHECK(v["frames"].size() == 2);
  // Acknowledging them frees them.
  as = req(m, 4, "GET", "recv", "session=" + s + "&cursor=2");
  CHECK(as.empty());
  CHECK(m.queued_bytes(s) == 0);
  // A cursor behind what was dropped, and one past what was sent, are refused by name.
  as = req(m, 5, "GET", "recv", "session=" + s + "&cursor=1");
  CHECK(error_code(response(as, 5)) == "gone");
  CHECK(response(as, 5)->status == 410);
  as = req(m, 6, "GET", "recv", "session=" + s + "&cursor=9");
  CHECK(error_code(response(as, 6)) == "bad_cursor");
}

TEST_CASE("http member: a newer receive replaces a parked one, which answers empty") {
  HttpMembers m;
  std::string s = open(m, "lab", 1);
  req(m, 2, "GET", "recv", "session=" + s + "&cursor=0");
  auto as = req(m, 3, "GET", "recv", "session=" + s + "&cursor=0");
  REQUIRE(as.size() == 1);
  CHECK(as[0].req == 2);
  CHECK(body_json(&as[0])["frames"].empty());
  m.handle_outbound(s, "x", 1);
  as = drain(m);
  REQUIRE(as.size() == 1);
  CHECK(as[0].req == 3);
}

TEST_CASE("http member: the long-poll answers empty after kHttpPollWaitMs, then idle expiry") {
  HttpMembers m;
  std::string s = open(m, "lab", 1, 0);
  req(m, 2, "GET", "recv", "session=" + s + "&cursor=0", "", 1000);
  m.handle_timeout(1000 + kHttpPollWaitMs - 1);
  CHECK(drain(m).empty());
  m.handle_timeout(1000 + kHttpPollWaitMs);
  auto as = drain(m);
  REQUIRE(as.size() == 1);
  CHECK(body_json(&as[0])["cursor"] == 0);
  // No request for kHttpIdleMs: the session is gone and its room connection closed.
  TimeMs last = 1000 + kHttpPollWaitMs;
  CHECK(m.poll_timeout() == last + kHttpIdleMs);
  m.handle_timeout(last + kHttpIdleMs - 1);
  CHECK(m.members() == 1);
  m.handle_timeout(last + kHttpIdleMs);
  as = drain(m);
  REQUIRE(as.size() == 1);
  CHECK(as[0].kind == HttpAction::Kind::detach);
  CHECK(as[0].code == kHttpCloseIdle);
  CHECK(m.members() == 0);
  CHECK(m.stats().expired == 1);
  as = req(m, 3, "GET", "recv", "session=" + s + "&cursor=0", "", last + kHttpIdleMs);
  CHECK(error_code(response(as, 3)) == "unknown_session");
  CHECK(response(as, 3)->status == 404);
}

TEST_CASE("http member: a relay close reaches the receiver after the frames before it") {
  HttpMembers m;
  std::string s = open(m, "lab", 1);
  m.handle_outbound(s, "last words", 0);
  m.handle_relay_close(s, 4001, "ejected", 0);
  auto as = drain(m);
  REQUIRE(as.size() == 1);
  CHECK(as[0].kind == HttpAction::Kind::detach);
  m.handle_outbound(s, "after close", 0);  // nothing follows a close
  as = req(m, 2, "GET", "recv", "session=" + s + "&cursor=0");
  Json v = body_json(response(as, 2));
  CHECK(v["frames"] == Json::array({"last words"}));
  CHECK(!v.contains("closed"));
  as = req(m, 3, "GET", "recv", "session=" + s + "&cursor=1");
  v = body_json(response(as, 3));
  CHECK(v["closed"]["code"] == 4001);
  CHECK(v["closed"]["reason"] == "ejected");
  CHECK(m.members() == 0);
}

TEST_CASE("http member: close ends the session and answers a parked receive") {
  HttpMembers m;
  std::string s = open(m, "lab", 1);
  req(m, 2, "GET", "recv", "session=" + s + "&cursor=0");
  auto as = req(m, 3, "POST", "close", "session=" + s);
  REQUIRE(as.size() == 3);
  CHECK(body_json(response(as, 2))["closed"]["code"] == 1000);
  CHECK(as[1].kind == HttpAction::Kind::detach);
  CHECK(response(as, 3)->status == 200);
  CHECK(m.members() == 0);
  CHECK(m.members_in("lab") == 0);
}

TEST_CASE("http member: malformed, hostile and oversized requests are refused by name") {
  HttpMembers m;
  std::string s = open(m, "lab", 1);
  const std::string q = "session=" + s;
  struct Case {
    std::string method, op, query, body, code;
  };
  std::vector<Case> cases = {
      {"POST", "send", q + "&seq=1", std::string(kMaxHttpBodyBytes + 1, 'x'), "too_large"},
      {"POST", "send", q, "x", "bad_request"},             // no seq
      {"POST", "send", q + "&seq=0", "x", "bad_request"},  // seqs start at 1
      {"POST", "send", q + "&seq=1", "", "bad_request"},   // an empty frame
      {"POST", "send", q + "&seq=-1", "x", "bad_request"},
      {"POST", "send", q + "&seq=1x", "x", "bad_request"},
      {"POST", "send", q + "&seq=99999999999999999", "x", "bad_request"},  // past 2^53
      {"POST", "send", q + "&seq=1&seq=1", "x", "bad_request"},            // duplicate key
      {"POST", "send", q + "&" + q + "&seq=1", "x", "bad_request"},
      {"POST", "send", "session=" + s.substr(1) + "&seq=1", "x", "bad_request"},  // truncated
      {"POST", "send", "session=" + std::string(32, 'G') + "&seq=1", "x", "bad_request"},
      {"POST", "send", "session&seq=1", "x", "bad_request"},
      {"POST", "send", q + "&seq=1&" + std::string(kMaxHttpQueryBytes, 'a'), "x", "bad_request"},
      {"POST", "send", "session=" + std::string(32, 'a') + "&seq=1", "x", "unknown_session"},
      {"GET", "send", q + "&seq=1", "x", "method"},
      {"POST", "recv", q + "&cursor=0", "", "method"},
      {"PUT", "close", q, "", "method"},
      {"GET", "recv", q, "", "bad_request"},    // no cursor
      {"POST", "open", "", "", "bad_request"},  // open goes through handle_open (a ticket)
      {"POST", "../etc", q, "", "bad_request"},
      {"POST", "", q, "", "bad_request"},
  };
  std::uint32_t id = 10;
  for (const Case& c : cases) {
    INFO(c.method << " " << c.op << "?" << c.query.substr(0, 80));
    auto as = req(m, id, c.method, c.op, c.query, c.body);
    REQUIRE(as.size() == 1);
    CHECK(as[0].kind == HttpAction::Kind::respond);
    CHECK(error_code(&as[0]) == c.code);
    CHECK(as[0].body.size() > c.code.size() + 20);  // the fix is named
    id++;
  }
  // A session of one room does not exist in another (a token is bound to its room).
  auto as = req(m, 99, "POST", "send", q + "&seq=1", "x", 0, "other");
  CHECK(error_code(response(as, 99)) == "unknown_session");
  // A host that hands the wrong number of random bytes is told so.
  m.handle_open(100, "lab", Bytes(3), 0);
  as = drain(m);
  CHECK(error_code(response(as, 100)) == "bad_request");
  // None of it lost the session.
  as = req(m, 101, "POST", "send", q + "&seq=1", "still here");
  CHECK(as[0].text == "still here");
  CHECK(m.members() == 1);
}

TEST_CASE("http member: kMaxHttpMembersPerRoom per room, kMaxHttpMembers per host") {
  HttpMembers m;
  for (std::size_t i = 0; i < kMaxHttpMembersPerRoom; i++) {
    m.handle_open(1, "lab", random_bytes(static_cast<std::uint8_t>(i)), 0);
    drain(m);
  }
  m.handle_open(2, "lab", random_bytes(200), 0);
  auto as = drain(m);
  REQUIRE(as.size() == 1);
  CHECK(as[0].status == 429);
  CHECK(error_code(&as[0]) == "room_full");
  // Another room still opens.
  open(m, "other", 201);
  CHECK(m.members() == kMaxHttpMembersPerRoom + 1);
  // A colliding token (a broken random source) is refused, not shared.
  m.handle_open(3, "third", random_bytes(201), 0);
  as = drain(m);
  CHECK(error_code(response(as, 3)) == "host_full");
}

TEST_CASE("http member: a receiver that never fetches is closed at kMaxHttpQueueBytes") {
  HttpMembers m;
  std::string s = open(m, "lab", 1);
  std::string frame(64 * 1024, 'f');
  std::size_t fits = kMaxHttpQueueBytes / frame.size();
  for (std::size_t i = 0; i < fits; i++) m.handle_outbound(s, frame, 0);
  CHECK(drain(m).empty());
  CHECK(m.queued_bytes(s) == fits * frame.size());
  m.handle_outbound(s, frame, 0);
  auto as = drain(m);
  REQUIRE(as.size() == 1);
  CHECK(as[0].kind == HttpAction::Kind::detach);
  CHECK(as[0].code == kHttpCloseSlow);
  // What was queued is still fetched (bounded by kMaxHttpPollBytes per response), then closed.
  as = req(m, 2, "GET", "recv", "session=" + s + "&cursor=0");
  Json v = body_json(response(as, 2));
  CHECK(v["frames"].size() == kMaxHttpPollBytes / frame.size());
  CHECK(!v.contains("closed"));
}

// --- the link against the sessions --------------------------------------------------------------

namespace {
// Carries a link's requests to the sessions and their answers back, optionally losing some.
struct Wire {
  HttpMembers relay;
  HttpLink link;
  std::vector<std::string> delivered;  // what reached the room
  std::vector<std::string> received;   // what the link handed up
  std::vector<HttpLinkEvent> closed;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> parked;  // link req -> relay req
  std::uint32_t next = 1;
  int drop_next_response = 0;  // answers lost on the way back (status 0 to the link)
  std::string session;
  TimeMs now = 0;

  void pump() {
    for (int round = 0; round < 100; round++) {
      bool moved = false;
      while (auto r = link.poll_action()) {
        moved = true;
        std::uint32_t id = next++;
        if (r->op == "open")
          relay.handle_open(id, "lab", random_bytes(7), now);
        else
          relay.handle_request(id, r->method, "lab", r->op, r->query, ByteView(r->body), now);
        parked.emplace_back(r->req, id);
      }
      while (auto a = relay.poll_action()) {
        moved = true;
        if (a->kind == HttpAction::Kind::attach) session = a->session;
        if (a->kind == HttpAction::Kind::deliver) delivered.push_back(a->text);
        if (a->kind != HttpAction::Kind::respond) continue;
        for (auto it = parked.begin(); it != parked.end(); ++it) {
          if (it->second != a->req) continue;
          std::uint32_t lreq = it->first;
          parked.erase(it);
          if (drop_next_response > 0) {
            drop_next_response--;
            link.handle_response(lreq, 0, "", now);
          } else {
            link.handle_response(lreq, a->status, a->body, now);
          }
          break;
        }
      }
      while (auto e = link.poll_event()) {
        moved = true;
        if (e->kind == HttpLinkEvent::Kind::message) received.push_back(e->text);
        if (e->kind == HttpLinkEvent::Kind::closed) closed.push_back(*e);
      }
      if (!moved) return;
    }
  }
  void advance(TimeMs to) {
    now = to;
    link.handle_timeout(now);
    relay.handle_timeout(now);
    pump();
  }
};
}  // namespace

TEST_CASE("http link: opens, sends in order, receives, and survives lost responses by resuming") {
  Wire w;
  w.link.handle_start(0);
  w.pump();
  REQUIRE(w.link.is_open());
  CHECK(w.link.send("one"));
  CHECK(w.link.send("two"));
  CHECK(w.link.send("three"));
  w.pump();
  CHECK(w.delivered == std::vector<std::string>{"one", "two", "three"});
  w.relay.handle_outbound(w.session, "a", 0);
  w.pump();
  CHECK(w.received == std::vector<std::string>{"a"});

  // The next receive's response is lost: the link retries with the same cursor after
  // kHttpRetryMs and gets the frame once.
  w.drop_next_response = 1;
  w.relay.handle_outbound(w.session, "b", 0);
  w.pump();
  CHECK(w.received.size() == 1);
  w.advance(kHttpRetryMs);
  CHECK(w.received == std::vector<std::string>{"a", "b"});

  // A send whose response is lost goes again with the same seq: the room gets it once.
  w.drop_next_response = 1;
  CHECK(w.link.send("four"));
  w.pump();
  w.advance(2 * kHttpRetryMs);
  CHECK(w.delivered == std::vector<std::string>{"one", "two", "three", "four"});
  CHECK(w.closed.empty());
  CHECK(w.link.buffered_bytes() == 0);
}

TEST_CASE("http link: a relay close, or failures past kHttpMaxRetries, close the link") {
  Wire w;
  w.link.handle_start(0);
  w.pump();
  w.relay.handle_relay_close(w.session, 4010, "slow", 0);
  w.pump();
  REQUIRE(w.closed.size() == 1);
  CHECK(w.closed[0].code == 4010);
  CHECK(w.closed[0].text == "slow");
  CHECK(!w.link.send("x"));

  Wire v;
  v.link.handle_start(0);
  v.drop_next_response = kHttpMaxRetries + 1;
  v.pump();
  for (int i = 1; i <= kHttpMaxRetries; i++) v.advance(i * kHttpRetryMs);
  REQUIRE(v.closed.size() == 1);
  CHECK(v.closed[0].code == 1006);
}

TEST_CASE("http link: refuses hostile receive responses and a send past its queue bound") {
  HttpLink link;
  link.handle_start(0);
  auto open = link.poll_action();
  REQUIRE(open);
  link.handle_response(open->req, 200, "{\"session\":\"" + std::string(32, 'a') + "\"}", 0);
  REQUIRE(link.poll_event()->kind == HttpLinkEvent::Kind::open);
  auto recv = link.poll_action();
  REQUIRE(recv);
  CHECK(recv->query == "session=" + std::string(32, 'a') + "&cursor=0");
  CHECK(!link.send(std::string(kMaxHttpBodyBytes + 1, 'x')));
  std::string big(kMaxHttpBodyBytes, 'x');
  std::size_t n = 0;
  while (link.send(big)) n++;
  CHECK(n == kMaxHttpLinkQueueBytes / kMaxHttpBodyBytes);
  // A response that skips frames (cursor 5 with one frame) is not believed.
  link.handle_response(recv->req, 200, "{\"cursor\":5,\"frames\":[\"x\"]}", 0);
  auto e = link.poll_event();
  REQUIRE(e);
  CHECK(e->kind == HttpLinkEvent::Kind::closed);
  CHECK(e->code == 1002);
  CHECK(!link.poll_event());

  for (std::string bad :
       {"", "[]", "{\"cursor\":0}", "{\"cursor\":0,\"frames\":[1]}",
        "{\"cursor\":-1,\"frames\":[]}", "not json", "{\"cursor\":1e400,\"frames\":[]}"}) {
    INFO(bad);
    HttpLink l;
    l.handle_start(0);
    auto o = l.poll_action();
    l.handle_response(o->req, 200, "{\"session\":\"" + std::string(32, 'b') + "\"}", 0);
    l.poll_event();
    auto r = l.poll_action();
    l.handle_response(r->req, 200, bad, 0);
    auto ev = l.poll_event();
    REQUIRE(ev);
    CHECK(ev->kind == HttpLinkEvent::Kind::closed);
    CHECK(ev->code == 1002);
  }
  // An open answered with no session, or a refusal, says so.
  HttpLink l;
  l.handle_start(0);
  auto o = l.poll_action();
  l.handle_response(o->req, 401, "signature: the ticket's signature does not verify\n", 0);
  auto ev = l.poll_event();
  REQUIRE(ev);
  CHECK(ev->code == 401);
  CHECK(ev->text.find("signature") != std::string::npos);
}

TEST_CASE("http member: a session ends with its ticket, and serves only its ticket's writer") {
  HttpMembers m;
  const TimeMs expires = 10'000;  // the open's ticket's expiry, before a long-poll's end
  m.handle_open(1, "lab", random_bytes(1), 0, "alice", expires);
  std::string s = body_json(response(drain(m), 1))["session"].get<std::string>();
  // The idle expiry would come later: the ticket's end is the session's first deadline.
  CHECK(m.poll_timeout() == expires);
  const std::string q = "session=" + s;
  // Another writer's ticket with alice's session: refused, and alice's session goes on.
  m.handle_request(2, "POST", "lab", "send", q + "&seq=1", ByteView(std::string_view("x")), 10,
                   "mallory", expires);
  auto as = drain(m);
  CHECK(error_code(response(as, 2)) == "wrong_writer");
  CHECK(response(as, 2)->status == 403);
  CHECK(m.members() == 1);
  m.handle_request(3, "POST", "lab", "send", q + "&seq=1", ByteView(std::string_view("x")), 10,
                   "alice", expires);
  as = drain(m);
  REQUIRE(response(as, 3));
  CHECK(response(as, 3)->status == 200);
  // A parked receive when the ticket runs out is told the session closed, and why.
  m.handle_request(4, "GET", "lab", "recv", q + "&cursor=0", ByteView(), 20, "alice", expires);
  CHECK(drain(m).empty());
  m.handle_timeout(expires - 1);
  CHECK(drain(m).empty());
  m.handle_timeout(expires);
  as = drain(m);
  Json v = body_json(response(as, 4));
  CHECK(v["closed"]["code"] == kHttpCloseTicket);
  bool detached = false;
  for (const auto& a : as)
    detached |= a.kind == HttpAction::Kind::detach && a.code == kHttpCloseTicket;
  CHECK(detached);
  CHECK(m.members() == 0);
}

TEST_CASE("http member: a call after the ticket expired ends the session, a later ticket extends") {
  HttpMembers m;
  m.handle_open(1, "lab", random_bytes(1), 0, "alice", 1'000);
  std::string a = body_json(response(drain(m), 1))["session"].get<std::string>();
  m.handle_open(2, "lab", random_bytes(2), 0, "bob", 1'000);
  std::string b = body_json(response(drain(m), 2))["session"].get<std::string>();
  // Bob's call carries a fresh ticket: his session now lives until its expiry.
  m.handle_request(3, "POST", "lab", "send", "session=" + b + "&seq=1",
                   ByteView(std::string_view("x")), 500, "bob", 90'000);
  CHECK(response(drain(m), 3)->status == 200);
  // Alice's call comes after her ticket's end (before the timer ran): refused, session over.
  m.handle_request(4, "POST", "lab", "send", "session=" + a + "&seq=1",
                   ByteView(std::string_view("x")), 1'000, "alice", 1'000);
  auto as = drain(m);
  CHECK(error_code(response(as, 4)) == "ticket_expired");
  CHECK(response(as, 4)->status == 401);
  CHECK(m.members() == 1);
  m.handle_timeout(1'000);
  CHECK(m.members() == 1);  // bob's was extended
  // An open with a ticket already expired is refused.
  m.handle_open(5, "lab", random_bytes(3), 5'000, "carol", 4'000);
  CHECK(error_code(response(drain(m), 5)) == "ticket_expired");
  CHECK(m.members() == 1);
  m.handle_timeout(90'000);
  CHECK(m.members() == 0);
}
