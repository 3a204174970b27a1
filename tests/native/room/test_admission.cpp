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
