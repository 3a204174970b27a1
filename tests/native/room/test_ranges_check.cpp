// The reference's standalone exports as the room core runs them: an origin's admission evidence
// (room/ranges.hpp) and the policy check of one envelope (room/check.hpp). tether/relay's
// createRanges, recordAdmission and checkEnvelope are these; tests/node/relay-differential
// compares them with the reference's over seeded inputs.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "room/check.hpp"
#include "room/ranges.hpp"

using namespace tether::room;

TEST_CASE("ranges: duplicate, order and the first contiguous run") {
  VersionRanges r;
  CHECK(r.max() == 0);
  CHECK(r.prefix() == 0);
  CHECK(record_admission(r, 1));
  CHECK(record_admission(r, 2));
  CHECK(!record_admission(r, 4));  // a hole: the run (and so the settled stamp) stays at 2
  CHECK(r.has(4));
  CHECK(!r.has(3));
  CHECK(r.max() == 4);
  CHECK(r.prefix() == 2);
  CHECK(!r.add(2));               // held: the resend is the acknowledgement
  CHECK(record_admission(r, 3));  // the hole fills: the run reaches 4
  CHECK(r.list() == std::vector<VersionRanges::Range>{{1, 4}});
}

TEST_CASE("ranges: handed-in ranges are ordered by start and merged only by the next add") {
  VersionRanges r({{5, 6}, {1, 10}, {2, 3}});
  CHECK(r.list() == std::vector<VersionRanges::Range>{{1, 10}, {2, 3}, {5, 6}});
  CHECK(r.max() == 6);  // the end of the last range, as the reference reads it
  CHECK(r.has(8));
  CHECK(!r.has(11));
  CHECK(r.add(12));
  CHECK(r.list() == std::vector<VersionRanges::Range>{{1, 10}, {12, 12}});
}

TEST_CASE("check: the writer first, then canWrite and validate per op, the first refusal wins") {
  const std::string env =
      R"({"writer":"w","ops":[{"kind":"set","path":["a"]},{"kind":"clear","path":["b"]}]})";
  {
    EnvelopeCheck c(env, R"("x")", true, true, true);
    CHECK(c.done());
    CHECK(c.reason() == "writer-mismatch");
  }
  {
    EnvelopeCheck c(env, R"("w")", false, true, true);  // no policy: only the writer
    CHECK(c.done());
    CHECK(c.reason().empty());
  }
  EnvelopeCheck c(env, R"("w")", true, true, true);
  using K = EnvelopeCheck::Question::Kind;
  std::vector<std::pair<K, std::size_t>> asked;
  while (auto q = c.poll_question()) {
    asked.emplace_back(q->kind, q->op);
    c.handle_verdict(!(q->kind == K::validate && q->op == 1));
  }
  CHECK(asked == std::vector<std::pair<K, std::size_t>>{
                     {K::can_write, 0}, {K::validate, 0}, {K::can_write, 1}, {K::validate, 1}});
  CHECK(c.reason() == "validate");
  CHECK(c.op() == 1);
  // Only validate: canWrite is never asked.
  EnvelopeCheck v(env, R"("w")", true, false, true);
  REQUIRE(v.poll_question());
  CHECK(v.poll_question()->kind == K::validate);
  // Unreadable input is named, not guessed at.
  CHECK(EnvelopeCheck("{", R"("w")", true, true, true).unreadable());
  CHECK(EnvelopeCheck(R"({"writer":"w","ops":"x"})", R"("w")", true, true, true).unreadable());
}
