// The mailbox API's request parser (src/mailbox/request.hpp): every route and method, the ids in
// paths, strict percent-decoding, queries, bodies with unknown or missing fields, the size limits
// checked before anything is read, and the Authorization header.
#include <catch2/catch.hpp>

#include "common/json.hpp"
#include "mailbox/request.hpp"

using namespace tether;
using namespace tether::mailbox;

namespace {

const std::string kId = "0123456789abcdef0123456789abcdef";
const std::string kPair = "00112233aabbccdd";
const std::string kOwner = "Bearer mbo_" + std::string(64, 'a');
const std::string kSender = "Bearer mbs_" + std::string(64, 'b');

ErrorCode code_of(std::string_view method, std::string_view target, std::string_view body = "",
                  std::string_view auth = "") {
  auto r = parse_request(method, target, auth, ByteView(body));
  REQUIRE_FALSE(r.ok());
  return r.error().code;
}

ApiRequest parsed(std::string_view method, std::string_view target, std::string_view body = "",
                  std::string_view auth = "") {
  auto r = parse_request(method, target, auth, ByteView(body));
  if (!r) FAIL(error_body(r.error()));
  return r.value();
}

}  // namespace

TEST_CASE("mailbox request: every route with its method") {
  const std::string b = "/mailboxes/" + kId;
  CHECK(parsed("POST", "/mailboxes").where.route == Route::create);
  CHECK(parsed("GET", b).where.route == Route::info);
  CHECK(parsed("GET", b).where.mailbox == kId);
  CHECK(parsed("POST", b + "/codes").where.route == Route::issue_code);
  CHECK(parsed("POST", b + "/pairs", R"({"name":"bob"})").where.route == Route::pair);
  CHECK(parsed("GET", b + "/pairs").where.route == Route::list_pairs);
  CHECK(parsed("POST", b + "/pairs/" + kPair + "/accept").where.route == Route::accept_pair);
  CHECK(parsed("DELETE", b + "/pairs/" + kPair).where.pair == kPair);
  CHECK(parsed("POST", b + "/messages", R"({"id":"m1","text":"hi"})").where.route == Route::send);
  CHECK(parsed("GET", b + "/messages").where.route == Route::list);
  CHECK(parsed("POST", b + "/ack", R"({"seqs":[1],"status":"read"})").where.route == Route::ack);
  CHECK(parsed("GET", b + "/status/m%201").where.message_id == "m 1");
  CHECK(parsed("GET", b + "/stream?since=4").since == 4);
}

TEST_CASE("mailbox request: unknown routes are not_found, wrong methods method_not_allowed") {
  const std::string b = "/mailboxes/" + kId;
  CHECK(code_of("GET", "/") == ErrorCode::not_found);
  CHECK(code_of("GET", "/rooms/x") == ErrorCode::not_found);
  CHECK(code_of("GET", "mailboxes") == ErrorCode::not_found);
  CHECK(code_of("POST", "/mailboxes/") == ErrorCode::not_found);  // an empty segment
  CHECK(code_of("GET", b + "//pairs") == ErrorCode::not_found);
  CHECK(code_of("GET", b + "/nothing") == ErrorCode::not_found);
  CHECK(code_of("GET", b + "/messages/x/y/z") == ErrorCode::not_found);
  CHECK(code_of("GET", "/mailboxes") == ErrorCode::method_not_allowed);
  CHECK(code_of("PUT", b + "/messages") == ErrorCode::method_not_allowed);
  CHECK(code_of("POST", b + "/pairs/" + kPair) == ErrorCode::method_not_allowed);
  CHECK(code_of("head", b) == ErrorCode::method_not_allowed);  // methods are case-sensitive
  auto r = parse_request("PUT", b + "/messages", "", ByteView());
  CHECK(r.error().message.find("POST or GET") != std::string::npos);
}

TEST_CASE("mailbox request: mailbox and pair ids are checked in the path") {
  CHECK(code_of("GET", "/mailboxes/0123") == ErrorCode::unknown_mailbox);
  CHECK(code_of("GET", "/mailboxes/" + std::string(32, 'A')) == ErrorCode::unknown_mailbox);
  CHECK(code_of("GET", "/mailboxes/" + std::string(33, 'a')) == ErrorCode::unknown_mailbox);
  CHECK(code_of("DELETE", "/mailboxes/" + kId + "/pairs/xyz") == ErrorCode::unknown_pair);
  CHECK(code_of("POST", "/mailboxes/" + kId + "/pairs/" + kPair + "0/accept") ==
        ErrorCode::unknown_pair);
  CHECK(is_mailbox_id(kId));
  CHECK_FALSE(is_mailbox_id(kId.substr(1)));
  CHECK(is_pair_id(kPair));
}

TEST_CASE("mailbox request: message ids in the path are strictly percent-decoded") {
  const std::string s = "/mailboxes/" + kId + "/status/";
  CHECK(parsed("GET", s + "%E2%98%83").where.message_id == "\xe2\x98\x83");
  CHECK(code_of("GET", s + "%") == ErrorCode::bad_request);
  CHECK(code_of("GET", s + "a%2") == ErrorCode::bad_request);
  CHECK(code_of("GET", s + "%zz") == ErrorCode::bad_request);
  CHECK(code_of("GET", s + "%ff%fe") == ErrorCode::bad_request);  // not UTF-8
  CHECK(code_of("GET", s + "%0a") == ErrorCode::bad_request);     // a control character
  CHECK(code_of("GET", s + std::string(kMaxMessageIdBytes + 1, 'x')) == ErrorCode::bad_request);
  CHECK(parsed("GET", s + std::string(kMaxMessageIdBytes, 'x')).where.message_id.size() ==
        kMaxMessageIdBytes);
}

TEST_CASE("mailbox request: since and limit, and nothing else, in queries") {
  const std::string m = "/mailboxes/" + kId + "/messages";
  auto r = parsed("GET", m + "?since=12&limit=3");
  CHECK(r.since == 12);
  CHECK(r.limit == 3);
  CHECK(parsed("GET", m).limit == kMaxListCount);
  CHECK(parsed("GET", m + "?").since == 0);
  CHECK(parsed("GET", m + "?limit=" + std::to_string(kMaxListCount)).limit == kMaxListCount);
  CHECK(code_of("GET", m + "?limit=" + std::to_string(kMaxListCount + 1)) ==
        ErrorCode::bad_request);
  CHECK(code_of("GET", m + "?limit=0") == ErrorCode::bad_request);
  CHECK(code_of("GET", m + "?since=-1") == ErrorCode::bad_request);
  CHECK(code_of("GET", m + "?since=1.5") == ErrorCode::bad_request);
  CHECK(code_of("GET", m + "?since=99999999999999999") == ErrorCode::bad_request);
  CHECK(code_of("GET", m + "?since=1&since=2") == ErrorCode::bad_request);
  CHECK(code_of("GET", m + "?sinse=1") == ErrorCode::bad_request);
  CHECK(code_of("GET", "/mailboxes/" + kId + "/pairs?since=1") == ErrorCode::bad_request);
  CHECK(code_of("GET", "/mailboxes/" + kId + "/stream?limit=1") == ErrorCode::bad_request);
}

TEST_CASE("mailbox request: bodies are JSON objects with exactly their fields") {
  const std::string b = "/mailboxes/" + kId;
  CHECK(code_of("POST", b + "/messages") == ErrorCode::bad_request);
  CHECK(code_of("POST", b + "/messages", "[1]") == ErrorCode::bad_request);
  CHECK(code_of("POST", b + "/messages", R"({"id":"m1","text":"x")") == ErrorCode::bad_request);
  CHECK(code_of("POST", b + "/messages", "{\"id\":\"m1\",\"text\":\"\xff\"}") ==
        ErrorCode::bad_request);
  CHECK(code_of("POST", b + "/messages", R"({"id":"m1"})") == ErrorCode::bad_request);
  CHECK(code_of("POST", b + "/messages", R"({"id":"m1","text":""})") == ErrorCode::bad_request);
  CHECK(code_of("POST", b + "/messages", R"({"id":"m1","text":7})") == ErrorCode::bad_request);
  CHECK(code_of("POST", b + "/messages", R"({"id":"","text":"x"})") == ErrorCode::bad_request);
  CHECK(code_of("POST", b + "/messages", R"({"id":"a\u0001","text":"x"})") ==
        ErrorCode::bad_request);
  CHECK(code_of("POST", b + "/messages", R"({"id":"m1","txt":"x"})") == ErrorCode::bad_request);
  auto typo = parse_request("POST", b + "/messages", "",
                            ByteView(std::string_view(R"({"id":"m","txt":"x"})")));
  CHECK(typo.error().message.find("\"txt\"") != std::string::npos);
  CHECK(code_of("POST", b + "/pairs", R"({})") == ErrorCode::bad_request);
  CHECK(code_of("POST", b + "/pairs", R"({"name":"b","code":5})") == ErrorCode::bad_request);
  CHECK(code_of("POST", b + "/pairs", R"({"name":"b","role":"x"})") == ErrorCode::bad_request);
  CHECK(code_of("POST", "/mailboxes", R"({"name":"x"})") == ErrorCode::bad_request);
  CHECK(parsed("POST", "/mailboxes", "{}").where.route == Route::create);
  CHECK(code_of("POST", b + "/ack", R"({"seqs":[],"status":"read"})") == ErrorCode::bad_request);
  CHECK(code_of("POST", b + "/ack", R"({"seqs":[0],"status":"read"})") == ErrorCode::bad_request);
  CHECK(code_of("POST", b + "/ack", R"({"seqs":[1.5],"status":"read"})") == ErrorCode::bad_request);
  CHECK(code_of("POST", b + "/ack", R"({"seqs":[1],"status":"stored"})") == ErrorCode::bad_request);
  CHECK(code_of("POST", b + "/ack", R"({"seqs":[1],"status":"expired"})") ==
        ErrorCode::bad_request);
  std::string many = "[";
  for (std::size_t i = 0; i <= kMaxAckBatch; ++i) many += (i ? "," : "") + std::to_string(i + 1);
  CHECK(code_of("POST", b + "/ack", R"({"status":"read","seqs":)" + many + "]}") ==
        ErrorCode::bad_request);
  auto ack = parsed("POST", b + "/ack", R"({"seqs":[3,1],"status":"delivered"})");
  CHECK(ack.seqs == std::vector<std::int64_t>{3, 1});
  CHECK(ack.ack_status == Status::delivered);
  // A hostile nesting depth is refused before the parser builds it.
  CHECK(code_of("POST", b + "/messages", std::string(100, '[') + std::string(100, ']')) ==
        ErrorCode::bad_request);
}

TEST_CASE("mailbox request: text and body sizes are bounded, text at exactly its limit passes") {
  const std::string m = "/mailboxes/" + kId + "/messages";
  const std::string at = to_json(Json{{"id", "m"}, {"text", std::string(kMaxTextBytes, 'x')}});
  CHECK(parsed("POST", m, at).text.size() == kMaxTextBytes);
  const std::string over =
      to_json(Json{{"id", "m"}, {"text", std::string(kMaxTextBytes + 1, 'x')}});
  auto r = parse_request("POST", m, "", ByteView(std::string_view(over)));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == ErrorCode::oversize);
  CHECK(r.error().limit == static_cast<std::int64_t>(kMaxTextBytes));
  // Multi-byte text counts its UTF-8 bytes: 21846 snowmen are 65538 bytes.
  std::string snow;
  for (int i = 0; i < 21846; ++i) snow += "\xe2\x98\x83";
  CHECK(code_of("POST", m, to_json(Json{{"id", "m"}, {"text", snow}})) == ErrorCode::oversize);
  // A body over the request limit is refused without being parsed.
  const std::string huge(kMaxRequestBytes + 1, ' ');
  CHECK(code_of("POST", m, huge) == ErrorCode::oversize);
  // The worst-case escaping of a text at its limit still fits a request.
  std::string escaped = "{\"id\":\"m\",\"text\":\"";
  for (std::size_t i = 0; i < kMaxTextBytes; ++i) escaped += "\\u0001";
  escaped += "\"}";
  CHECK(escaped.size() <= kMaxRequestBytes);
  CHECK(parsed("POST", m, escaped).text.size() == kMaxTextBytes);
  CHECK(code_of("GET", "/mailboxes/" + kId + "/status/" + std::string(kMaxTargetBytes, 'x')) ==
        ErrorCode::bad_request);
}

TEST_CASE("mailbox front door: declared length and the stream's upgrade before any body") {
  const std::string b = "/mailboxes/" + kId;
  CHECK(front_door("POST", b + "/messages", kMaxRequestBytes, false).ok());
  auto big = front_door("POST", b + "/messages", kMaxRequestBytes + 1, false);
  REQUIRE_FALSE(big.ok());
  CHECK(big.error().code == ErrorCode::oversize);
  CHECK(front_door("POST", b + "/messages", -1, false).ok());
  auto plain = front_door("GET", b + "/stream", -1, false);
  REQUIRE_FALSE(plain.ok());
  CHECK(plain.error().code == ErrorCode::upgrade_required);
  CHECK(front_door("GET", b + "/stream", -1, true).value().mailbox == kId);
  CHECK(front_door("GET", "/elsewhere", -1, false).error().code == ErrorCode::not_found);
}

TEST_CASE("mailbox request: the Authorization header names an owner or a sender key") {
  CHECK(parse_authorization("").kind == KeyKind::none);
  CHECK(parse_authorization(kOwner).kind == KeyKind::owner);
  CHECK(parse_authorization("bearer  mbo_" + std::string(64, 'a') + " ").kind == KeyKind::owner);
  CHECK(parse_authorization(kSender).kind == KeyKind::sender);
  CHECK(parse_authorization(kSender).key == "mbs_" + std::string(64, 'b'));
  CHECK(parse_authorization("Basic abc").kind == KeyKind::malformed);
  CHECK(parse_authorization("Bearer mbo_" + std::string(63, 'a')).kind == KeyKind::malformed);
  CHECK(parse_authorization("Bearer mbo_" + std::string(64, 'A')).kind == KeyKind::malformed);
  CHECK(parse_authorization("Bearer mbx_" + std::string(64, 'a')).kind == KeyKind::malformed);
  CHECK(parse_authorization("Bearer " + std::string(kMaxAuthorizationBytes, 'a')).kind ==
        KeyKind::malformed);
}

TEST_CASE("mailbox errors: every code has a name, a status and a fix, bodies are JSON") {
  for (int i = 0; i < kErrorCodeCount; ++i) {
    const auto c = static_cast<ErrorCode>(i);
    CHECK_FALSE(error_name(c).empty());
    CHECK(error_status(c) >= 400);
    CHECK_FALSE(error_fix(c).empty());
  }
  ApiError e = api_error(ErrorCode::flood, "too fast \"now\"", 30);
  e.retry_after_ms = 250;
  JsonParse p = parse_json(ByteView(std::string_view(error_body(e))));
  REQUIRE(p.ok());
  CHECK(p.value["ok"] == false);
  CHECK(p.value["error"] == "flood");
  CHECK(p.value["message"] == "too fast \"now\"");
  CHECK(p.value["limit"] == 30);
  CHECK(p.value["retryAfterMs"] == 250);
  CHECK(error_status(ErrorCode::oversize) == 413);
  CHECK(error_status(ErrorCode::unknown_mailbox) == 404);
  CHECK(error_status(ErrorCode::unpaired_sender) == 403);
  CHECK(error_status(ErrorCode::bad_key) == 401);
  CHECK(error_status(ErrorCode::flood) == 429);
}

TEST_CASE("mailbox errors: client text echoed in a message is escaped, so bodies stay JSON") {
  // Found by fuzz_mailbox_request: a path with a byte that is not UTF-8 made the body invalid.
  auto r = parse_request("POST", "/ma\xfblboxes/\x01\"x", "", ByteView());
  REQUIRE_FALSE(r.ok());
  const std::string body = error_body(r.error());
  JsonParse p = parse_json(ByteView(std::string_view(body)));
  REQUIRE(p.ok());
  CHECK(p.value["message"].get<std::string>().find("\\xfb") != std::string::npos);
  CHECK(shown(std::string(100, 'a')).size() == 64 + 5);
  CHECK(shown("a\"b\\c") == R"("a\x22b\x5cc")");
}
