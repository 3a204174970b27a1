// Messages, hello checks and error codes against the golden vectors, plus rules worth stating
// on their own.
#include <catch2/catch.hpp>

#include <set>

#include "fixture_files.hpp"
#include "wire/errors.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"

using namespace tether;
using namespace tether::wire;
using namespace tether::testing;

namespace {

Sender sender_of(const Json& v) {
  const auto s = v["sender"].get<std::string>();
  return s == "robot" ? Sender::robot : s == "viewer" ? Sender::viewer : Sender::relay;
}

Result<Message, Drop> parse(std::string_view text, Sender from) {
  return parse_message(ByteView(text), from);
}

}  // namespace

TEST_CASE("golden: valid messages parse to their type, canonical JSON and control frame") {
  const Json file = fixture("wire/messages.json");
  REQUIRE(file["valid"].size() >= 30);
  std::set<std::string> types;
  for (const auto& v : file["valid"]) {
    INFO(v["name"].get<std::string>());
    auto m = parse_message(ByteView(b64(v["text_b64"])), sender_of(v));
    REQUIRE(m);
    CHECK(message_type_name(m->type) == v["type"].get<std::string>());
    CHECK(encode_message(m.value()) == v["json"].get<std::string>());
    auto frame = encode_control_frame(encode_message(m.value()));
    REQUIRE(frame);
    CHECK(frame.value() == b64(v["control_frame_b64"]));
    types.insert(v["type"].get<std::string>());
  }
  CHECK(types.size() == kMessageTypeCount);  // every v7 message type has a vector
}

TEST_CASE("golden: invalid messages are dropped with their reason and field") {
  const Json file = fixture("wire/messages.json");
  REQUIRE(file["invalid"].size() >= 25);
  for (const auto& v : file["invalid"]) {
    INFO(v["name"].get<std::string>());
    auto m = parse_message(ByteView(b64(v["text_b64"])), sender_of(v));
    REQUIRE_FALSE(m);
    CHECK(drop_reason_name(m.error().reason) == v["reason"].get<std::string>());
    CHECK(m.error().field == v["field"].get<std::string>());
    CHECK_FALSE(m.error().detail.empty());
  }
}

TEST_CASE("golden: hello checks give the spec's codes") {
  const Json file = fixture("wire/messages.json");
  REQUIRE(file["hello_checks"].size() >= 8);
  for (const auto& v : file["hello_checks"]) {
    INFO(v["name"].get<std::string>());
    const bool robot = v["endpoint"].get<std::string>() == "robot";
    auto m = parse(v["text"].get<std::string>(), robot ? Sender::robot : Sender::viewer);
    REQUIRE(m);
    auto e = check_hello(m.value(), robot ? Role::robot : Role::viewer);
    if (v["error"].is_null()) {
      CHECK_FALSE(e);
    } else {
      REQUIRE(e);
      CHECK(error_name(*e) == v["error"].get<std::string>());
    }
  }
}

TEST_CASE("the relay never trusts a viewer's teleop gen, and always stamps its own") {
  auto from_viewer = parse(R"({"t":"stop","seq":1,"ts":1,"gen":42})", Sender::viewer);
  REQUIRE(from_viewer);
  CHECK_FALSE(from_viewer->body.contains("gen"));
  CHECK_FALSE(parse(R"({"t":"stop","seq":1,"ts":1})", Sender::relay));
  auto stamped = parse(R"({"t":"stop","seq":1,"ts":1,"gen":42})", Sender::relay);
  REQUIRE(stamped);
  CHECK(stamped->body["gen"] == 42);
}

TEST_CASE("canonical JSON puts t first whatever order the sender used") {
  auto m = parse(R"({"ch":"camera","t":"sub"})", Sender::viewer);
  REQUIRE(m);
  CHECK(encode_message(m.value()) == R"({"t":"sub","ch":"camera"})");
}

TEST_CASE("messages built in code are validated like received ones") {
  Json twist = {{"t", "twist"}, {"vx", 0.5}, {"vy", 0}, {"wz", 0},
                {"seq", 1},     {"ts", 2.5}, {"gen", 3}};
  auto m = validate_message(twist, Sender::relay);
  REQUIRE(m);
  CHECK(encode_message(m.value()) ==
        R"({"t":"twist","vx":0.5,"vy":0,"wz":0,"seq":1,"ts":2.5,"gen":3})");
  CHECK_FALSE(validate_message(Json::array(), Sender::relay));
  CHECK(validate_message(Json{{"t", "welcome"}, {"v", 7}}, Sender::robot).error().reason ==
        DropReason::wrong_sender);
}

TEST_CASE("every message type round-trips through its name") {
  for (std::size_t i = 0; i < kMessageTypeCount; ++i) {
    const auto t = static_cast<MessageType>(i);
    CHECK(message_type_from_name(message_type_name(t)) == t);
  }
  CHECK_FALSE(message_type_from_name("nope"));
}

TEST_CASE("every error code of the spec is an enumerated constant with its flags") {
  const char* spec_codes[] = {
      "hello_required",    "version_mismatch",  "role_mismatch",      "missing_robot_id",
      "auth_failed",       "invalid_manifest",  "rtc_unavailable",    "hello_mismatch",
      "robot_id_conflict", "invalid_control",   "control_too_large",  "carrier_failed",
      "unknown_robot",     "unknown_channel",   "no_watch",           "teleop_held",
      "duplicate_request", "publish_too_large", "not_publishable",    "pending_limit",
      "rate_limited",      "publish_timeout",   "robot_disconnected", "rtc_failed",
      "rtc_session_gone"};
  CHECK(std::size(spec_codes) == kErrorCodeCount);
  for (const char* name : spec_codes) {
    INFO(name);
    auto code = error_code_from_name(name);
    REQUIRE(code);
    CHECK(error_name(*code) == name);
    CHECK_FALSE(error_info(*code).fix.empty());
  }
  CHECK(is_terminal(ErrorCode::auth_failed));
  CHECK(error_info(ErrorCode::auth_failed).final_for_client);
  CHECK(is_terminal(ErrorCode::version_mismatch));
  CHECK(is_terminal(ErrorCode::carrier_failed));
  CHECK_FALSE(is_terminal(ErrorCode::invalid_control));
  CHECK_FALSE(is_terminal(ErrorCode::teleop_held));
  CHECK_FALSE(is_terminal(ErrorCode::rtc_failed));
  CHECK_FALSE(error_code_from_name("kaput"));
}

TEST_CASE("hostile messages: huge arrays, deep nesting and odd numbers are dropped, not fatal") {
  std::string many = R"({"t":"subs","n":1,"chs":[)";
  for (int i = 0; i < 1100; ++i) many += (i ? ",\"c" : "\"c") + std::to_string(i) + "\"";
  many += "]}";
  auto m = parse(many, Sender::relay);
  REQUIRE_FALSE(m);
  CHECK(m.error().reason == DropReason::out_of_range);
  CHECK(parse(R"({"t":"ping","n":1e400,"ts":1})", Sender::robot).error().reason ==
        DropReason::invalid_json);
  CHECK(parse(R"({"t":"ping","n":1,"ts":1,"t":"ping"})", Sender::robot)
            .ok());  // last duplicate wins, as in JSON.parse
  CHECK(parse("\xef\xbb\xbf{\"t\":\"teleop_start\"}", Sender::viewer).error().reason ==
        DropReason::invalid_json);
  CHECK(parse(R"({"t":"twist","vx":0,"vy":0,"wz":0,"seq":1,"ts":1,"gen":-1})", Sender::relay)
            .error()
            .reason == DropReason::wrong_type);
}

TEST_CASE("a message built in code with a string that is not UTF-8 is refused, never sent") {
  // Found by fuzz_cockpit_robot: a pub_ack whose id came from the application as raw bytes.
  Json ack = {{"t", "pub_ack"}, {"ch", "say"}, {"id", std::string("a\xff", 2)}};
  auto m = validate_message(ack, Sender::robot);
  REQUIRE_FALSE(m);
  CHECK(m.error().reason == DropReason::invalid_utf8);
  CHECK(m.error().field == "id");
  Json answer = {{"t", "rtc_answer"}, {"sdp", std::string("v=0\xc0\xaf", 5)}};
  CHECK(validate_message(answer, Sender::viewer).error().reason == DropReason::invalid_utf8);
}
