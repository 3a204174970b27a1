// Shared helpers: UTF-8 validation, base64, bounded JSON, the JS number format and the drive contract.
#include <catch2/catch.hpp>

#include "common/base64.hpp"
#include "common/drive.hpp"
#include "common/json.hpp"
#include "common/utf8.hpp"

#include <limits>

using namespace tether;

static bool utf8(std::string_view s) {
  return is_valid_utf8(ByteView(s));
}

TEST_CASE("UTF-8: accepts well-formed text of every length class") {
  CHECK(utf8(""));
  CHECK(utf8("plain ascii, longer than eight bytes"));
  CHECK(utf8("\xce\xb2"));          // U+03B2
  CHECK(utf8("\xe2\x98\x83"));      // U+2603
  CHECK(utf8("\xef\xbf\xbf"));      // U+FFFF
  CHECK(utf8("\xf0\x9f\x98\x80"));  // U+1F600
  CHECK(utf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF, the last code point
  CHECK(utf8("abcdefgh\xce\xb2ijklmnop"));
}

TEST_CASE("UTF-8: rejects overlongs, surrogates, out-of-range and truncated sequences") {
  CHECK_FALSE(utf8("\x80"));      // lone continuation
  CHECK_FALSE(utf8("\xc0\xaf"));  // overlong '/'
  CHECK_FALSE(utf8("\xc1\xbf"));
  CHECK_FALSE(utf8("\xe0\x80\xaf"));      // overlong, three bytes
  CHECK_FALSE(utf8("\xf0\x80\x80\xaf"));  // overlong, four bytes
  CHECK_FALSE(utf8("\xed\xa0\x80"));      // U+D800 surrogate
  CHECK_FALSE(utf8("\xed\xbf\xbf"));      // U+DFFF surrogate
  CHECK_FALSE(utf8("\xf4\x90\x80\x80"));  // U+110000
  CHECK_FALSE(utf8("\xf5\x80\x80\x80"));
  CHECK_FALSE(utf8("\xff"));
  CHECK_FALSE(utf8("\xce"));              // cut short
  CHECK_FALSE(utf8("abcdefgh\xe2\x98"));  // cut short after the fast path
  CHECK_FALSE(utf8("\xe2\x28\xa1"));      // bad continuation
}

TEST_CASE("UTF-8: counts code points, not bytes") {
  CHECK(utf8_code_points("abc") == 3);
  CHECK(utf8_code_points("\xce\xba\xce\xac") == 2);
  CHECK(utf8_code_points("\xf0\x9f\x98\x80") == 1);
}

TEST_CASE("base64 round-trips and refuses malformed text") {
  for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
    const auto enc = base64_encode(ByteView(s));
    auto dec = base64_decode(enc);
    REQUIRE(dec);
    CHECK(std::string(dec->begin(), dec->end()) == s);
  }
  CHECK(base64_encode(ByteView(std::string_view("foobar"))) == "Zm9vYmFy");
  CHECK(base64_encode(ByteView(std::string_view("fo"))) == "Zm8=");
  CHECK_FALSE(base64_decode("Zm9"));   // not a multiple of four
  CHECK_FALSE(base64_decode("Zm=v"));  // padding in the middle
  CHECK_FALSE(base64_decode("Zm9v!A=="));
  CHECK_FALSE(base64_decode("=AAA"));
}

TEST_CASE("JSON: invalid UTF-8, depth and syntax come back as values") {
  CHECK(parse_json(ByteView(std::string_view("{\"a\":\"\xff\"}"))).error ==
        JsonError::invalid_utf8);
  CHECK(parse_json(ByteView(std::string_view("{\"a\":"))).error == JsonError::invalid_json);
  CHECK(parse_json(ByteView(std::string_view(""))).error == JsonError::invalid_json);
  CHECK(parse_json(ByteView()).error ==
        JsonError::invalid_json);  // null data, zero size (found by fuzzing)
  // nlohmann stops at a NUL; JSON.parse refuses it. We refuse it too, wherever it is.
  CHECK(parse_json(ByteView(std::string_view("{\"a\":1}\0garbage", 16))).error ==
        JsonError::invalid_json);
  CHECK(parse_json(ByteView(std::string_view("[\"a\0b\"]", 7))).error == JsonError::invalid_json);
  const std::string deep = std::string(65, '[') + std::string(65, ']');
  CHECK(parse_json(ByteView(std::string_view(deep))).error == JsonError::too_deep);
  const std::string ok_depth = std::string(64, '[') + std::string(64, ']');
  CHECK(parse_json(ByteView(std::string_view(ok_depth))).ok());
  // Brackets inside strings do not count as nesting.
  const std::string in_string = "[\"" + std::string(100, '[') + "\\\"" + "\"]";
  CHECK(parse_json(ByteView(std::string_view(in_string))).ok());
}

TEST_CASE("JSON: a number beyond a double's range is refused, and named") {
  // nlohmann refuses it ("number overflow"); JSON.parse would read Infinity, which no JSON text
  // can carry on. The error says so when that is the only thing wrong with the text.
  for (const char* text :
       {"1e400", "[-1e309]", "{\"a\":66665E666666666}", "[1.5e+99999999999999999999]"})
    CHECK(parse_json(ByteView(std::string_view(text))).error == JsonError::number_out_of_range);
  const std::string digits = "[" + std::string(310, '9') + "]";
  CHECK(parse_json(ByteView(std::string_view(digits))).error == JsonError::number_out_of_range);
  // 309 digits, as many as DBL_MAX has, can be beyond it too (fuzz_json_differential found it).
  const std::string just_over = "[" + std::string(309, '9') + "]";
  CHECK(parse_json(ByteView(std::string_view(just_over))).error == JsonError::number_out_of_range);
  const std::string just_under = "[1" + std::string(308, '0') + "]";
  CHECK(parse_json(ByteView(std::string_view(just_under))).ok());
  CHECK(std::string(json_error_name(JsonError::number_out_of_range)) == "number_out_of_range");
  // Something else wrong as well: plain invalid_json. Not a JSON number token either (a second
  // exponent, a leading zero, a bare point), even when strtod would read Infinity from it; the
  // first was found by fuzz_json_differential.
  for (const char* text : {"[1e400,]", "{\"a\":1e9991e999}", "[01e999]", "[1.e999]", "[-.5e999]"})
    CHECK(parse_json(ByteView(std::string_view(text))).error == JsonError::invalid_json);
  // In range: the largest double, and underflow to zero, as JSON.parse reads them.
  auto max = parse_json(ByteView(std::string_view("[1.7976931348623157e308,1e-400,-1e-400]")));
  REQUIRE(max.ok());
  CHECK(max.value[0].get<double>() == 1.7976931348623157e308);
  CHECK(max.value[1].get<double>() == 0.0);
  // The rewrite JSON.stringify(JSON.parse(text)) does; tokens in strings are left alone.
  std::string out;
  CHECK(json_overflow_as_null(R"({"1e400":[1e400,-2E+999,1e308,"1e999"],"b":1e-999})", out));
  CHECK(out == R"({"1e400":[null,null,1e308,"1e999"],"b":1e-999})");
  CHECK(json_overflow_as_null(R"(["\"",1e999])", out));
  CHECK(out == R"(["\"",null])");
  CHECK_FALSE(json_overflow_as_null("[1e308,0.5e-7,12345]", out));
}

TEST_CASE("JSON numbers are written as JavaScript's JSON.stringify writes them") {
  auto js = [](double v) {
    std::string s;
    append_js_number(s, v);
    return s;
  };
  CHECK(js(0) == "0");
  CHECK(js(-0.0) == "0");
  CHECK(js(1) == "1");
  CHECK(js(2.0) == "2");
  CHECK(js(-7) == "-7");
  CHECK(js(1.5) == "1.5");
  CHECK(js(1752576000.5) == "1752576000.5");
  CHECK(js(0.1) == "0.1");
  CHECK(js(1.0 / 3) == "0.3333333333333333");
  CHECK(js(0.000001) == "0.000001");
  CHECK(js(1e-7) == "1e-7");
  CHECK(js(1.5e-10) == "1.5e-10");
  CHECK(js(9007199254740992.0) == "9007199254740992");
  CHECK(js(1e20) == "100000000000000000000");
  CHECK(js(1e21) == "1e+21");
  CHECK(js(1.2345e25) == "1.2345e+25");
  CHECK(js(-2.5e-8) == "-2.5e-8");
  CHECK(js(123456789.125) == "123456789.125");
  CHECK(js(std::numeric_limits<double>::infinity()) == "null");
}

TEST_CASE("JSON: serialisation keeps key order and escapes like JSON.stringify") {
  auto parsed =
      parse_json(ByteView(std::string_view(R"({"z":1,"a":[true,null,"\u0001\n\"é"],"m":2.50})")));
  REQUIRE(parsed.ok());
  CHECK(to_json(parsed.value) ==
        "{\"z\":1,\"a\":[true,null,\"\\u0001\\n\\\"\xc3\xa9\"],\"m\":2.5}");
}

TEST_CASE("JSON numbers as JS doubles: integers past 2^53 round the way JavaScript rounds them") {
  auto parsed = parse_json(ByteView(std::string_view(R"({"a":9007199254740993,"b":[12,1.5]})")));
  REQUIRE(parsed.ok());
  std::string exact, js;
  append_json(exact, parsed.value);
  append_json(js, parsed.value, JsonNumbers::js_double);
  CHECK(exact == R"({"a":9007199254740993,"b":[12,1.5]})");
  CHECK(js == R"({"a":9007199254740992,"b":[12,1.5]})");
}

TEST_CASE("JSON integers: accepts 12 and 12.0, refuses fractions and unsafe integers") {
  auto num = [](const char* t) { return parse_json(ByteView(std::string_view(t))).value; };
  CHECK(json_integer(num("12"), 0, 100) == 12);
  CHECK(json_integer(num("12.0"), 0, 100) == 12);
  CHECK_FALSE(json_integer(num("12.5"), 0, 100));
  CHECK_FALSE(json_integer(num("-1"), 0, 100));
  CHECK_FALSE(json_integer(num("101"), 0, 100));
  CHECK_FALSE(json_integer(num("9007199254740992"), 0, kMaxSafeInteger));
  CHECK(json_integer(num("9007199254740991"), 0, kMaxSafeInteger) == kMaxSafeInteger);
  CHECK_FALSE(json_integer(num("\"1\""), 0, 100));
}

TEST_CASE("drive: PollQueue hands items out once each, in push order") {
  tether::PollQueue<int> q;
  CHECK_FALSE(q.poll().has_value());
  q.push(1);
  q.emplace(2);
  q.push(3);
  CHECK(q.size() == 3);
  CHECK(*q.poll() == 1);
  CHECK(*q.poll() == 2);
  q.push(4);
  CHECK(*q.poll() == 3);
  CHECK(*q.poll() == 4);
  CHECK(q.empty());
  CHECK_FALSE(q.poll().has_value());
}

TEST_CASE("drive: earliest of two deadlines, either absent") {
  using tether::earliest;
  using tether::Timeout;
  CHECK_FALSE(earliest(Timeout{}, Timeout{}).has_value());
  CHECK(*earliest(Timeout{5}, Timeout{}) == 5);
  CHECK(*earliest(Timeout{}, Timeout{7}) == 7);
  CHECK(*earliest(Timeout{9}, Timeout{3}) == 3);
  CHECK(*earliest(Timeout{-2}, Timeout{3}) == -2);
}
