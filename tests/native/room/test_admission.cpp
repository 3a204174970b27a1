// The admission limits of a room endpoint (src/room/admission.hpp), one rule per case, with the
// close codes and HTTP answers docs/rooms.md § Limits documents.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "room/admission.hpp"

using namespace tether;
using namespace tether::room;

namespace {
// The host: a budget store, answered at once, as the SQL seam does.
struct Host {
  Admission adm;
  std::map<std::string, std::string> store;  // scope/writer -> state
  std::vector<std::string> log;
  explicit Host(AdmissionLimits l = {}) : adm(l) {}
  void drain(TimeMs now) {
    while (auto a = adm.poll_action()) {
      const std::string k = a->scope + "/" + a->writer;
      if (a->kind == AdmissionAction::Kind::save_budget) {
        store[k] = a->state;
        log.push_back("save " + k + " " + a->state);
      } else {
        log.push_back("load " + k);
        auto it = store.find(k);
        adm.handle_budget(a->scope, a->writer,
                          it == store.end() ? std::nullopt : parse_budget(it->second), now);
      }
    }
  }
  AttemptVerdict attempt(const std::string& scope, const std::string& writer, TimeMs now) {
    std::uint64_t token = adm.handle_attempt(scope, writer, now);
    drain(now);
    auto v = adm.poll_event();
    REQUIRE(v);
    CHECK(v->token == token);
    return *v;
  }
  std::uint64_t open(const std::string& scope, const std::string& writer, TimeMs now) {
    std::uint64_t c = adm.handle_opened(scope, writer, now);
    drain(now);
    return c;
  }
  FrameVerdict text(std::uint64_t c, const std::string& s, TimeMs now) {
    return adm.handle_frame(c, false, static_cast<double>(s.size()), -1, now);
  }
};
}  // namespace

TEST_CASE("admission: defaults are the docs' limits table, configuration is checked and named") {
  AdmissionLimits d;
  CHECK(d.max_frame_bytes == 256 * 1024);
  CHECK(d.connection_messages_per_second == 50);
  CHECK(d.connection_burst == 200);
  CHECK(d.principal_messages_per_second == 100);
  CHECK(d.principal_burst == 1000);
  CHECK(d.cooldown_ms == 30000);
  CHECK(d.max_connections_per_room == 256);
  CHECK(d.max_buffered_bytes == 4 * 1024 * 1024);
  CHECK(static_cast<int>(CloseCode::too_big) == 1009);
  CHECK(static_cast<int>(CloseCode::budget) == 4009);

  auto ok = parse_admission_limits(R"({"maxFrameBytes":4096,"cooldownMs":60000})");
  CHECK(ok.error.empty());
  CHECK(ok.limits.max_frame_bytes == 4096);
  CHECK(ok.limits.cooldown_ms == 60000);
  CHECK(ok.limits.connection_burst == 200);
  CHECK(parse_admission_limits("").error.empty());
  CHECK(parse_admission_limits(R"({"maxFrames":1})")
            .error.rfind("unknown limit \"maxFrames\"; known: maxFrameBytes,", 0) == 0);
  CHECK(parse_admission_limits(R"({"connectionBurst":0})").error ==
        "limit connectionBurst must be a positive number, not 0");
  CHECK(parse_admission_limits(R"({"connectionBurst":"9"})").error ==
        "limit connectionBurst must be a positive number, not \"9\"");
  CHECK(!parse_admission_limits("[1]").error.empty());
}

// The deployment switch (docs/rooms.md § The slow-reader rule): on unless configured off, a
// boolean and nothing else, named among the known keys when a key is misspelt.
TEST_CASE("admission: requireReadAck is on by default, a boolean, and named in the errors") {
  CHECK(AdmissionLimits{}.require_read_ack);
  CHECK(kDefaultRequireReadAck);
  CHECK(parse_admission_limits("").limits.require_read_ack);
  CHECK(parse_admission_limits("{}").limits.require_read_ack);
  auto off = parse_admission_limits(R"({"requireReadAck":false,"maxBufferedBytes":2048})");
  CHECK(off.error.empty());
  CHECK_FALSE(off.limits.require_read_ack);
  CHECK(off.limits.max_buffered_bytes == 2048);
  CHECK(parse_admission_limits(R"({"requireReadAck":true})").limits.require_read_ack);
  CHECK(parse_admission_limits(R"({"requireReadAck":1})").error ==
        "requireReadAck must be true or false, not 1");
  CHECK(parse_admission_limits(R"({"requireReadAck":"false"})").error ==
        "requireReadAck must be true or false, not \"false\"");
  CHECK(parse_admission_limits(R"({"requireReadAck":null})").error ==
        "requireReadAck must be true or false, not null");
  const std::string unknown = parse_admission_limits(R"({"requireReadAcks":true})").error;
  CHECK(unknown.rfind("unknown limit \"requireReadAcks\"; known: ", 0) == 0);
  CHECK(unknown.size() > std::string(", requireReadAck").size());
  CHECK(unknown.substr(unknown.size() - std::string(", requireReadAck").size()) ==
        ", requireReadAck");
  // A number is still a positive number, whatever the switch says.
  CHECK(parse_admission_limits(R"({"requireReadAck":false,"maxFrameBytes":0})").error ==
        "limit maxFrameBytes must be a positive number, not 0");
}

TEST_CASE("admission: an attempt waits for the writer's saved budget, a full room answers 503") {
  AdmissionLimits l;
  l.max_connections_per_room = 2;
  Host h(l);
  std::uint64_t token = h.adm.handle_attempt("r", "ann", 0);
  CHECK(!h.adm.poll_event());  // the budget is not known yet
  auto load = h.adm.poll_action();
  REQUIRE(load);
  CHECK(load->kind == AdmissionAction::Kind::load_budget);
  CHECK(load->scope == "r");
  CHECK(load->writer == "ann");
  h.adm.handle_budget("r", "ann", std::nullopt, 0);
  auto v = h.adm.poll_event();
  REQUIRE(v);
  CHECK(v->token == token);
  CHECK(v->status == 0);
  h.open("r", "ann", 0);
  h.open("r", "bob", 0);
  auto full = h.attempt("r", "cy", 1);
  CHECK(full.status == 503);
  CHECK(full.message == "the room holds its maximum of 2 connections");
  CHECK(full.retry_after_s == 10);
  CHECK(h.attempt("other", "cy", 1).status == 0);  // rooms are separate scopes
}

TEST_CASE("admission: frames: binary 1003, oversize 1009 by length or by measured bytes") {
  AdmissionLimits l;
  l.max_frame_bytes = 4096;
  Host h(l);
  auto c = h.open("r", "w", 0);
  auto bin = h.adm.handle_frame(c, true, 3, -1, 0);
  CHECK(bin.kind == FrameVerdict::Kind::close);
  CHECK(bin.code == CloseCode::binary);
  auto big = h.text(c, std::string(5000, 'x'), 0);
  CHECK(big.code == CloseCode::too_big);
  CHECK(big.reason == "frame larger than 4096 bytes; split the write");
  CHECK(h.text(c, std::string(1365, 'x'), 0).kind == FrameVerdict::Kind::pass);  // 3 x 1365 <= 4096
  // 1500 UTF-16 units may be 1500 or 4500 bytes: the core asks, and counts nothing until it knows.
  auto ask = h.adm.handle_frame(c, false, 1500, -1, 0);
  CHECK(ask.kind == FrameVerdict::Kind::measure);
  CHECK(h.adm.handle_frame(c, false, 1500, 4500, 0).code == CloseCode::too_big);
  CHECK(h.adm.handle_frame(c, false, 1500, 1500, 0).kind == FrameVerdict::Kind::pass);
}

TEST_CASE(
    "admission: one socket's flood closes 4008, the principal's spread flood 4009, then 429") {
  AdmissionLimits l;
  l.connection_messages_per_second = 5;
  l.connection_burst = 20;
  l.principal_messages_per_second = 5;
  l.principal_burst = 30;
  l.cooldown_ms = 60000;
  Host h(l);
  auto a = h.open("r", "greedy", 0);
  int passed = 0;
  FrameVerdict v;
  while ((v = h.text(a, "{}", 0)).kind == FrameVerdict::Kind::pass) ++passed;
  CHECK(passed == 20);
  CHECK(v.code == CloseCode::rate);
  CHECK(v.reason == "more than 5 messages/s on one connection");
  h.adm.handle_closed(a, 0);
  h.drain(0);
  // A second and third socket each stay under their own rate but spend the writer's 30 together.
  auto b = h.open("r", "greedy", 0);
  for (int i = 0; i < 10; ++i) REQUIRE(h.text(b, "{}", 0).kind == FrameVerdict::Kind::pass);
  auto spent = h.text(b, "{}", 0);
  CHECK(spent.code == CloseCode::budget);
  CHECK(spent.reason == "writer spent its message budget; cooling down 60 s");
  h.drain(0);
  CHECK(h.log.back() == R"(save r/greedy {"tokens":0,"at":0,"cooldownUntil":60000})");
  h.adm.handle_closed(b, 0);
  h.drain(0);
  auto refused = h.attempt("r", "greedy", 1000);
  CHECK(refused.status == 429);
  CHECK(refused.message == "writer greedy spent its message budget; retry after 59 s");
  CHECK(refused.retry_after_s == 59);
  CHECK(h.attempt("r", "greedy", 60000).status == 0);
}

TEST_CASE("admission: a budget survives the last socket and a restart through the host's store") {
  AdmissionLimits l;
  l.principal_messages_per_second = 10;
  l.principal_burst = 10;
  Host h(l);
  auto a = h.open("r", "w", 0);
  for (int i = 0; i < 10; ++i) REQUIRE(h.text(a, "{}", 0).kind == FrameVerdict::Kind::pass);
  h.adm.handle_closed(a, 0);  // saved with 0 tokens; forgotten in memory
  h.drain(0);
  CHECK(h.log.back() == R"(save r/w {"tokens":0,"at":0,"cooldownUntil":0})");
  // A new Admission (a restarted process) asks the store again and refills from the saved time.
  Host again(l);
  again.store = h.store;
  auto b = again.open("r", "w", 500);  // half a second later: 5 tokens
  CHECK(again.log.front() == "load r/w");
  int passed = 0;
  while (again.text(b, "{}", 500).kind == FrameVerdict::Kind::pass) ++passed;
  CHECK(passed == 5);
}

TEST_CASE("admission: a slow reader without bufferedAmount: presence goes first, then 4010") {
  AdmissionLimits l;
  l.require_read_ack = false;  // the pace model: what a reader is held to with the switch off
  l.max_buffered_bytes = 1000;
  l.reader_bytes_per_second = 100;  // the pace a reader is assumed to drain at
  CHECK(AdmissionLimits{}.reader_bytes_per_second == 1024 * 1024);
  Host h(l);
  std::uint64_t c = h.open("r", "w", 0);
  using K = SendVerdict::Kind;
  // Presence fills the modelled queue only to half the bound.
  for (int i = 0; i < 4; ++i) CHECK(h.adm.handle_send(c, 100, true, -1, 0).kind == K::send);
  CHECK(h.adm.handle_send(c, 100, true, -1, 0).kind == K::send);  // 500: at the share
  CHECK(h.adm.handle_send(c, 100, true, -1, 0).kind == K::drop);  // would pass it: dropped
  CHECK(h.adm.dropped_ephemeral() == 1);
  // The frames that carry the room still fit in the other half...
  CHECK(h.adm.handle_send(c, 400, false, -1, 0).kind == K::send);  // 900
  // ...and one that would pass the bound closes the reader.
  SendVerdict v = h.adm.handle_send(c, 200, false, -1, 0);
  CHECK(v.kind == K::close);
  CHECK(static_cast<int>(v.code) == 4010);
  CHECK(v.reason == "more than 1000 bytes queued for this reader; read faster, reconnect");
  CHECK(v.reason.size() <= 123);
  // A reader keeping the assumed pace drains the model: 5 s at 100 B/s frees 500 bytes.
  CHECK(h.adm.handle_send(c, 600, false, -1, 5000).kind == K::send);
  CHECK(h.adm.handle_send(c, 1, false, -1, 5000).kind == K::close);
}

TEST_CASE("admission: handle_send queues nothing, whatever it decides (hosts skip the drain)") {
  AdmissionLimits l;
  l.max_buffered_bytes = 1000;
  Host h(l);
  std::uint64_t c = h.open("r", "w", 0);
  h.drain(0);
  while (h.adm.poll_event()) {
  }
  using K = SendVerdict::Kind;
  const auto quiet = [&] { return !h.adm.poll_action() && !h.adm.poll_event(); };
  CHECK(h.adm.handle_send(c, 400, false, -1, 0).kind == K::send);
  CHECK(quiet());
  CHECK(h.adm.handle_send(c, 400, true, -1, 0).kind == K::drop);
  CHECK(quiet());
  CHECK(h.adm.handle_send(c, 900, false, -1, 0).kind == K::close);
  CHECK(quiet());
  CHECK(h.adm.handle_send(c + 99, 1, false, -1, 0).kind == K::send);  // unknown: closing
  CHECK(quiet());
}

TEST_CASE("admission: a slow reader with bufferedAmount: what the socket says decides") {
  AdmissionLimits l;
  l.require_read_ack = false;
  l.max_buffered_bytes = 1000;
  Host h(l);
  std::uint64_t c = h.open("r", "w", 0);
  using K = SendVerdict::Kind;
  // A reader that keeps up reports an empty buffer whatever was sent: never throttled.
  for (int i = 0; i < 100; ++i) CHECK(h.adm.handle_send(c, 400, i % 2 == 0, 0, 0).kind == K::send);
  CHECK(h.adm.handle_send(c, 100, true, 450, 0).kind == K::drop);
  CHECK(h.adm.handle_send(c, 100, false, 450, 0).kind == K::send);
  CHECK(h.adm.handle_send(c, 100, false, 950, 0).kind == K::close);
  CHECK(h.adm.handle_send(c + 99, 100, false, 950, 0).kind == K::send);  // unknown: closing
}

// The slow-reader rule over read acknowledgements (room/read_ack.hpp, docs/rooms.md § The
// slow-reader rule): where the runtime cannot say what a socket holds, a reader that says it
// counts what it reads is held to what it has not acknowledged, whatever time passes.
TEST_CASE("admission: a reader that acknowledges is held to its unacknowledged bytes") {
  AdmissionLimits l;
  l.max_buffered_bytes = 8192;
  l.reader_bytes_per_second = 1e9;  // a pace model this generous would bound nothing
  Host h(l);
  CHECK(h.adm.read_ack_bytes() == 2048);  // kReadAckShare of the bound
  CHECK(Admission(AdmissionLimits{}).read_ack_bytes() == 1024 * 1024);
  std::uint64_t c = h.open("r", "w", 0);
  using K = SendVerdict::Kind;
  CHECK(h.adm.handle_read(c, 0));                                   // the claim
  CHECK(h.adm.handle_send(c, 1000, false, -1, 0).kind == K::send);  // 1000
  CHECK(h.adm.handle_send(c, 1000, false, -1, 0).kind == K::send);  // 2000
  CHECK(h.adm.handle_send(c, 1000, false, -1, 0).kind == K::send);  // 3000: crosses 2048, a mark
  // Only a mark is credited: not the multiple itself, not a frame end short of it, nothing
  // beyond what was sent, nothing that is not a count.
  CHECK_FALSE(h.adm.handle_read(c, 2048));
  CHECK_FALSE(h.adm.handle_read(c, 2000));
  CHECK_FALSE(h.adm.handle_read(c, 5000));
  CHECK_FALSE(h.adm.handle_read(c, 1.5));
  CHECK_FALSE(h.adm.handle_read(c, -3000));
  CHECK_FALSE(h.adm.handle_read(c + 99, 3000));  // an unknown socket
  CHECK(h.adm.handle_read(c, 3000));
  CHECK_FALSE(h.adm.handle_read(c, 3000));  // once: a mark is spent when it is credited
  // Nothing unacknowledged now. Time does not drain what the reader has not acknowledged:
  // presence fills half the bound and is then dropped, a minute later as at once.
  for (int i = 0; i < 4; ++i)
    CHECK(h.adm.handle_send(c, 1000, true, -1, 60'000).kind == K::send);  // sent 7000
  CHECK(h.adm.handle_send(c, 1000, true, -1, 120'000).kind == K::drop);
  CHECK(h.adm.dropped_ephemeral() == 1);
  CHECK(h.adm.handle_send(c, 4000, false, -1, 180'000).kind == K::send);  // 8000 unacknowledged
  SendVerdict v = h.adm.handle_send(c, 1000, false, -1, 240'000);
  CHECK(v.kind == K::close);
  CHECK(static_cast<int>(v.code) == 4010);
  // Marks so far: 3000 (spent), 5000, 7000, 11000. Acknowledging 7000 frees what came before it
  // and spends the earlier marks.
  CHECK(h.adm.handle_read(c, 7000));
  CHECK_FALSE(h.adm.handle_read(c, 5000));
  CHECK(h.adm.handle_send(c, 1000, false, -1, 240'000).kind == K::send);  // 5000 unacknowledged
  CHECK(h.adm.handle_send(c, 1000, true, -1, 240'000).kind == K::drop);   // past half: presence
  // What the socket reports still counts when it says more.
  CHECK(h.adm.handle_send(c, 100, false, 8150, 240'000).kind == K::close);
  CHECK(h.adm.handle_read(c, 11000));
  CHECK(h.adm.handle_send(c, 100, false, 0, 240'000).kind == K::send);
}

TEST_CASE(
    "admission: with the switch off, a reader that never acknowledges keeps the pace model, one "
    "resumed without its read state too") {
  AdmissionLimits l;
  l.require_read_ack = false;
  l.max_buffered_bytes = 8192;
  l.reader_bytes_per_second = 1000;
  Host h(l);
  using K = SendVerdict::Kind;
  std::uint64_t silent = h.open("r", "a", 0);
  OpenedSocket woke;
  woke.resumed = true;  // and no read state kept
  std::uint64_t resumed = h.adm.handle_opened("r", "b", 0, woke);
  h.drain(0);
  CHECK(h.adm.read_state(resumed).empty());
  // A socket that survived a hibernation blind: its reader's count is not ours, nothing it says
  // counts.
  CHECK_FALSE(h.adm.handle_read(resumed, 0));
  for (std::uint64_t c : {silent, resumed}) {
    CHECK(h.adm.handle_send(c, 8000, false, -1, 0).kind == K::send);
    CHECK(h.adm.handle_send(c, 1000, false, -1, 0).kind == K::close);
    // The model drains at the assumed pace: 5 s free 5000 bytes, acknowledged or not.
    CHECK(h.adm.handle_send(c, 5000, false, -1, 5000).kind == K::send);
  }
  CHECK_FALSE(h.adm.handle_read(resumed, 8192));
  // The first acknowledgement ends the model for good: a reader that claimed and then stopped is
  // held to what it acknowledged, however long it waits.
  CHECK(h.adm.handle_read(silent, 0));
  CHECK(h.adm.handle_send(silent, 1, false, -1, 600'000).kind == K::close);
  CHECK(h.adm.handle_send(resumed, 8000, false, -1, 600'000).kind == K::send);
}

// The switch on (the default): every socket whose runtime cannot count what its reader has not
// taken is held to its acknowledgements from its first frame, so a reader that never sends `read`
// loses presence past half the bound and is closed 4010 past it, however generous the pace model
// and however much time passes; bufferedAmount counts too when it says more. A socket whose
// bufferedAmount is exact (an HTTP member) is held to that alone.
TEST_CASE(
    "admission: requireReadAck holds a reader that never acknowledges to what it was handed") {
  AdmissionLimits l;
  l.max_buffered_bytes = 8192;
  l.reader_bytes_per_second = 1e12;  // a pace model that bounds nothing
  Host h(l);
  using K = SendVerdict::Kind;
  std::uint64_t workerd = h.open("r", "a", 0);  // no bufferedAmount
  std::uint64_t deno = h.open("r", "b", 0);     // bufferedAmount, which excludes kernel buffers
  OpenedSocket exact;
  exact.buffered_is_exact = true;
  std::uint64_t http = h.adm.handle_opened("r", "c", 0, exact);
  h.drain(0);
  for (int i = 0; i < 4; ++i) {
    CHECK(h.adm.handle_send(workerd, 1000, true, -1, i * 60'000).kind == K::send);
    CHECK(h.adm.handle_send(deno, 1000, true, 0, i * 60'000).kind == K::send);
    CHECK(h.adm.handle_send(http, 1000, true, 0, i * 60'000).kind == K::send);
  }
  // 4000 handed, none acknowledged: presence would pass half the bound, an hour later as at once.
  CHECK(h.adm.handle_send(workerd, 1000, true, -1, 3'600'000).kind == K::drop);
  CHECK(h.adm.handle_send(deno, 1000, true, 0, 3'600'000).kind == K::drop);
  CHECK(h.adm.handle_send(http, 1000, true, 0, 3'600'000).kind == K::send);       // it took them
  CHECK(h.adm.handle_send(workerd, 4000, false, -1, 3'600'000).kind == K::send);  // 8000
  CHECK(h.adm.handle_send(deno, 4000, false, 0, 3'600'000).kind == K::send);
  SendVerdict v = h.adm.handle_send(workerd, 200, false, -1, 3'600'000);
  CHECK(v.kind == K::close);
  CHECK(v.code == CloseCode::slow_reader);
  CHECK(h.adm.handle_send(deno, 200, false, 0, 3'600'000).code == CloseCode::slow_reader);
  // The HTTP member's exact count decides for it: an empty queue takes anything, a full one not.
  CHECK(h.adm.handle_send(http, 5000, false, 0, 3'600'000).kind == K::send);
  CHECK(h.adm.handle_send(http, 200, false, 8100, 3'600'000).code == CloseCode::slow_reader);
  // A reader that acknowledges is credited as before, claim or no claim: the marks are recorded
  // for every socket.
  std::uint64_t acks = h.open("r", "d", 0);
  CHECK(h.adm.handle_send(acks, 3000, false, -1, 0).kind == K::send);  // crosses 2048: a mark
  CHECK(h.adm.handle_read(acks, 3000));
  CHECK(h.adm.handle_send(acks, 8000, false, -1, 0).kind == K::send);
  // What bufferedAmount says counts when it says more than the acknowledgements.
  CHECK(h.adm.handle_send(acks, 100, false, 8150, 0).code == CloseCode::slow_reader);
}

// The read state a host keeps through a hibernation: the woken core counts on exactly where the
// old one stopped, so the reader's marks still match (its acknowledgements are credited) and
// what it had not acknowledged still counts against the bound.
// One frame larger than the bound (a welcome holds the whole room or the delta) goes to a socket
// that holds nothing unsent, whatever the evidence; what it leaves unread then counts against the
// frames after it (docs/rooms.md § Limits, the slow-reader rule). Refused, it would be refused
// again after every reconnect.
TEST_CASE("admission: a frame past the bound goes to a socket that holds nothing, then counts") {
  AdmissionLimits l;
  l.max_buffered_bytes = 8192;
  using K = SendVerdict::Kind;
  SECTION("read acknowledgements required (the default)") {
    Host h(l);
    std::uint64_t c = h.open("r", "w", 0);
    CHECK(h.adm.handle_send(c, 20'000, false, -1, 0).kind == K::send);  // the welcome
    CHECK(h.adm.handle_send(c, 10, true, -1, 0).kind == K::drop);       // 20000 unacknowledged
    CHECK(h.adm.handle_send(c, 10, false, -1, 0).code == CloseCode::slow_reader);
    Host again(l);
    std::uint64_t d = again.open("r", "w", 0);
    CHECK(again.adm.handle_send(d, 20'000, false, -1, 0).kind == K::send);
    CHECK(again.adm.handle_read(d, 0));       // the claim
    CHECK(again.adm.handle_read(d, 20'000));  // the mark at the welcome's end
    CHECK(again.adm.handle_send(d, 20'000, false, -1, 0).kind == K::send);  // nothing held again
    CHECK(again.adm.handle_send(d, 1, false, -1, 0).code == CloseCode::slow_reader);
  }
  SECTION("bufferedAmount") {
    l.require_read_ack = false;
    Host h(l);
    std::uint64_t c = h.open("r", "w", 0);
    CHECK(h.adm.handle_send(c, 20'000, false, 0, 0).kind == K::send);
    CHECK(h.adm.handle_send(c, 10, false, 20'000, 0).code == CloseCode::slow_reader);
  }
  SECTION("the pace model") {
    l.require_read_ack = false;
    l.reader_bytes_per_second = 1000;
    Host h(l);
    std::uint64_t c = h.open("r", "w", 0);
    CHECK(h.adm.handle_send(c, 20'000, false, -1, 0).kind == K::send);
    CHECK(h.adm.handle_send(c, 10, false, -1, 1000).code == CloseCode::slow_reader);  // 19000 left
    Host later(l);
    std::uint64_t d = later.open("r", "w", 0);
    CHECK(later.adm.handle_send(d, 20'000, false, -1, 0).kind == K::send);
    CHECK(later.adm.handle_send(d, 20'000, true, -1, 20'000).kind == K::send);  // drained: empty
  }
  SECTION("a socket resumed without its read state is still taken as full") {
    Host h(l);
    OpenedSocket how;
    how.resumed = true;
    std::uint64_t c = h.adm.handle_opened("r", "w", 0, how);
    h.drain(0);
    CHECK(h.adm.handle_send(c, 20'000, false, -1, 0).code == CloseCode::slow_reader);
  }
}

TEST_CASE("admission: a socket resumed with its read state counts on exactly") {
  AdmissionLimits l;
  l.max_buffered_bytes = 8192;  // marks every 2048
  using K = SendVerdict::Kind;
  for (bool require : {true, false}) {
    l.require_read_ack = require;
    Host before(l);
    std::uint64_t c = before.open("r", "w", 0);
    CHECK(before.adm.handle_read(c, 0));  // the claim
    for (double bytes : {1500.0, 1500.0, 1500.0, 1500.0, 700.0})
      REQUIRE(before.adm.handle_send(c, bytes, false, -1, 0).kind == K::send);
    // Marks at 3000, 4500 and 6700; the reader acknowledged the first.
    CHECK(before.adm.handle_read(c, 3000));
    const std::string kept = before.adm.read_state(c);
    CHECK(kept == R"({"sent":6700,"acked":3000,"claimed":true,"marks":[4500,6700]})");

    Host woke(l);  // the object's memory is gone; the socket and its attachment are not
    OpenedSocket how;
    how.resumed = true;
    how.read_state = kept;
    std::uint64_t r = woke.adm.handle_opened("r", "w", 0, how);
    woke.drain(0);
    CHECK(woke.adm.read_state(r) == kept);
    CHECK_FALSE(woke.adm.handle_read(r, 3000));  // spent before the wake
    CHECK_FALSE(woke.adm.handle_read(r, 6000));  // never a mark
    // 3700 unacknowledged: the bound is where it was, however much time passed.
    CHECK(woke.adm.handle_send(r, 4400, false, -1, 600'000).kind == K::send);  // 8100
    CHECK(woke.adm.handle_send(r, 100, false, -1, 600'000).code == CloseCode::slow_reader);
    // The reader's next acknowledgement matches: everything up to 6700 is read.
    CHECK(woke.adm.handle_read(r, 6700));
    CHECK(woke.adm.handle_send(r, 100, false, -1, 600'000).kind == K::send);
    CHECK(woke.adm.read_state(r) ==
          R"({"sent":11200,"acked":6700,"claimed":true,"marks":[11100]})");
  }
}

// A socket resumed blind (no read state kept, or one that does not parse): its count was lost
// with the host's memory, so with the switch on it is taken to hold the whole bound: presence is
// dropped, its next other frame closes it 4010 and it reconnects; nothing it acknowledges counts.
TEST_CASE("admission: requireReadAck: a socket resumed without its read state is taken as full") {
  AdmissionLimits l;
  l.max_buffered_bytes = 8192;
  using K = SendVerdict::Kind;
  for (const char* state : {"", "{}", R"({"sent":10,"acked":20,"claimed":true,"marks":[]})"}) {
    Host h(l);
    OpenedSocket how;
    how.resumed = true;
    how.read_state = state;
    std::uint64_t c = h.adm.handle_opened("r", "w", 0, how);
    h.drain(0);
    CHECK(h.adm.read_state(c).empty());
    CHECK_FALSE(h.adm.handle_read(c, 0));
    CHECK(h.adm.handle_send(c, 10, true, -1, 0).kind == K::drop);
    CHECK(h.adm.handle_send(c, 10, false, -1, 0).code == CloseCode::slow_reader);
  }
}

TEST_CASE("admission: read state: the shape round-trips, anything else is refused") {
  ReadState s{9000, 2048, true, {4100, 8200}};
  auto back = parse_read_state(read_state_json(s));
  REQUIRE(back);
  CHECK(back->sent == 9000);
  CHECK(back->acked == 2048);
  CHECK(back->claimed);
  CHECK(back->marks == std::vector<double>{4100, 8200});
  CHECK(parse_read_state(R"({"sent":0,"acked":0,"claimed":false,"marks":[]})"));
  CHECK(parse_read_state(R"({"sent":9007199254740991,"acked":0,"claimed":false,"marks":[]})"));
  const char* bad[] = {
      "",
      "null",
      "[]",
      R"({"sent":9000,"acked":2048,"claimed":true,"marks":[4100,8200])",  // truncated
      R"({"sent":9000,"acked":2048,"claimed":true})",
      R"({"sent":9000,"acked":2048,"claimed":true,"marks":[],"x":1})",
      R"({"sent":-1,"acked":0,"claimed":true,"marks":[]})",
      R"({"sent":1.5,"acked":0,"claimed":true,"marks":[]})",
      R"({"sent":9007199254740992,"acked":0,"claimed":true,"marks":[]})",
      R"({"sent":"9","acked":0,"claimed":true,"marks":[]})",
      R"({"sent":10,"acked":20,"claimed":true,"marks":[]})",    // acked past sent
      R"({"sent":10,"acked":0,"claimed":1,"marks":[]})",        // claimed not a boolean
      R"({"sent":10,"acked":0,"claimed":true,"marks":{}})",     // marks not an array
      R"({"sent":10,"acked":0,"claimed":true,"marks":[5,5]})",  // not ascending
      R"({"sent":10,"acked":0,"claimed":true,"marks":[7,5]})",  // not ascending
      R"({"sent":10,"acked":5,"claimed":true,"marks":[5]})",    // not past acked
      R"({"sent":10,"acked":0,"claimed":true,"marks":[11]})",   // past sent
      R"({"sent":10,"acked":0,"claimed":true,"marks":["5"]})",  // not a count
      R"({"sent":100,"acked":0,"claimed":true,"marks":[1,2,3,4,5,6,7,8,9]})",  // too many
  };
  for (const char* b : bad) {
    INFO(b);
    CHECK_FALSE(parse_read_state(b));
  }
}
