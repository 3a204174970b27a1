// The one-pass envelope scanner (src/bus/scan.hpp) against the DOM path it stands in for. The
// property every case checks: when the scanner accepts, the DOM path accepts the same envelope
// (same header, same payload value, same canonical bytes), and parse_envelope's verdict, error
// code, field and detail are always the DOM path's.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "bus/envelope.hpp"
#include "bus/limits.hpp"
#include "bus/scan.hpp"
#include "harness.hpp"

using namespace bus_test;

namespace {

const std::string kFrom = R"("from":{"streamId":"s1","role":"agent","name":"A","instanceId":"i1"})";

std::string env(const std::string& payload, const std::string& extra = "") {
  return R"({"v":1,"id":"abc","type":"chat",)" + kFrom +
         R"(,"to":null,"topic":null,"ts":1700000000000)" + extra +
         (payload.empty() ? "" : ",\"payload\":" + payload) + "}";
}

ByteView bv(const std::string& s) {
  return ByteView(std::string_view(s));
}

// Checks the property on `text` and returns whether the scanner accepted it.
bool agree(const std::string& text) {
  auto scan = scan_envelope(bv(text));
  auto dom = parse_envelope_dom(bv(text));
  auto fast = parse_envelope(bv(text));
  REQUIRE(fast.ok() == dom.ok());
  if (!dom.ok()) {
    CHECK(fast.error().code == dom.error().code);
    CHECK(fast.error().field == dom.error().field);
    CHECK(fast.error().detail == dom.error().detail);
  } else {
    CHECK(serialize_envelope(fast.value()) == serialize_envelope(dom.value()));
  }
  if (!scan) return false;
  REQUIRE(dom.ok());
  // The glue's result text, parsed back, is the DOM path's result.
  std::string result;
  append_scanned_result(result, *scan);
  // nlohmann directly: the result nests two levels deeper than the envelope, which parse_json's
  // bound (meant for input) would refuse; JSON.parse has no such bound.
  Json parsed = Json::parse(result, nullptr, /*allow_exceptions=*/false);
  REQUIRE_FALSE(parsed.is_discarded());
  std::string got, want;
  append_json(got, parsed, JsonNumbers::js_double);
  append_json(want, Json{{"ok", true}, {"envelope", envelope_to_json(dom.value())}},
              JsonNumbers::js_double);
  CHECK(got == want);
  return true;
}

std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

}  // namespace

TEST_CASE("bus scan: the common shapes are accepted in one pass") {
  CHECK(agree(env(R"({"text":"hi"})")));
  CHECK(agree(env("")));  // no payload: null
  CHECK(agree(env("null")));
  CHECK(agree(env(R"([1,-2,3.25,0,0.0,-0.5,true,false,null,"",{},[]])")));
  CHECK(agree(
      env(R"({"a":{"b":[{"c":"d"}]},"e":"\"\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude00\u0000"})")));
  CHECK(agree(
      env(R"({"a":1,"a":2})")));  // payload duplicates: last wins in both JSON.parse and the DOM
  CHECK(agree(env(R"("caf\u00e9 \u2028 😀 é")")));
  CHECK(agree(" \t\r\n" + env("1") + " \n"));
  CHECK(agree(
      R"({ "payload" : 7 , "ts" : 5 , "type" : "ping" , "from" : { "instanceId" : "i" , "name" : "n" , "role" : "r" , "streamId" : "s" } , "id" : "x" , "v" : 1 })"));
  CHECK(agree(R"({"v":1,"id":"x","type":"ping",)" + kFrom + R"(,"ts":5})"));  // to/topic absent
  CHECK(agree(R"({"v":1,"id":"x","type":"event",)" + kFrom +
              R"(,"to":"me","topic":"builds","ts":-12.5,"payload":{}})"));
  CHECK(agree(
      R"({"v":1,"id":"ünïcødé-😀","type":"chat","from":{"streamId":"流","role":"ロール","name":"名前","instanceId":"é"},"ts":0.001})"));
  for (const char* ts :
       {"0", "1", "0.1", "123456789012345", "12345678901234.5", "0.000000000000001", "-1", "-0.1",
        "1700000000000.123", "9007199254740992", "0.123456789012345", "1.000000000000002"})
    CHECK(agree(R"({"v":1,"id":"x","type":"chat",)" + kFrom + R"(,"ts":)" + ts + "}"));
}

TEST_CASE("bus scan: header strings are bounded in UTF-16 units, as JavaScript counts them") {
  const std::string id_of = R"({"v":1,"type":"chat",)" + kFrom + R"(,"ts":1,"id":")";
  CHECK(agree(id_of + std::string(kMaxIdChars, 'i') + "\"}"));
  CHECK_FALSE(agree(id_of + std::string(kMaxIdChars + 1, 'i') + "\"}"));
  CHECK(agree(id_of + repeat("é", kMaxIdChars) + "\"}"));  // 2 bytes, 1 unit
  CHECK_FALSE(agree(id_of + repeat("é", kMaxIdChars + 1) + "\"}"));
  CHECK(agree(id_of + repeat("€", kMaxIdChars) + "\"}"));      // 3 bytes, 1 unit
  CHECK(agree(id_of + repeat("😀", kMaxIdChars / 2) + "\"}"));  // 4 bytes, 2 units
  CHECK_FALSE(agree(id_of + repeat("😀", kMaxIdChars / 2) + "i\"}"));
  // Every field at and past its bound.
  struct F {
    std::string key;
    std::size_t max;
  };
  for (const F& f : {F{"role", kMaxRoleChars}, F{"name", kMaxNameChars},
                     F{"streamId", kMaxStreamIdChars}, F{"instanceId", kMaxInstanceIdChars}}) {
    auto with_len = [&](std::size_t n) {
      std::string from = R"("from":{"streamId":"s","role":"r","name":"n","instanceId":"i"})";
      const std::string needle = "\"" + f.key + "\":\"";
      auto at = from.find(needle) + needle.size();
      from.replace(at, 1, std::string(n, 'x'));
      return R"({"v":1,"id":"x","type":"chat",)" + from + R"(,"ts":1})";
    };
    CHECK(agree(with_len(f.max)));
    CHECK_FALSE(agree(with_len(f.max + 1)));
    CHECK_FALSE(agree(with_len(0)));
  }
  CHECK_FALSE(agree(R"({"v":1,"id":"x","type":"chat",)" + kFrom + R"(,"to":")" +
                    std::string(kMaxToChars + 1, 't') + R"(","ts":1})"));
  CHECK(agree(R"({"v":1,"id":"x","type":"chat",)" + kFrom + R"(,"to":")" +
              std::string(kMaxToChars, 't') + R"(","ts":1})"));
  CHECK(agree(R"({"v":1,"id":"x","type":"chat",)" + kFrom + R"(,"topic":")" +
              std::string(kMaxTopicChars, 't') + R"(","ts":1})"));
  CHECK_FALSE(agree(R"({"v":1,"id":"x","type":"chat",)" + kFrom + R"(,"topic":")" +
                    std::string(kMaxTopicChars + 1, 't') + R"(","ts":1})"));
  CHECK_FALSE(agree(R"({"v":1,"id":"x","type":"chat",)" + kFrom + R"(,"topic":"","ts":1})"));
}

TEST_CASE("bus scan: what it leaves to the DOM path still gets the DOM path's verdict") {
  const std::string g = env(R"({"text":"hi"})");
  auto swap = [&](const std::string& a, const std::string& b) {
    std::string s = g;
    auto at = s.find(a);
    REQUIRE(at != std::string::npos);
    return s.replace(at, a.size(), b);
  };
  // Escapes in header strings and keys (valid ones: the DOM path accepts them).
  CHECK_FALSE(agree(swap(R"("id":"abc")", R"("id":"a\u0062c")")));
  CHECK_FALSE(agree(swap(R"("id":"abc")", R"("\u0069d":"abc")")));
  CHECK_FALSE(agree(swap(R"("name":"A")", R"("name":"\"A\"")")));
  CHECK_FALSE(agree(swap(R"("streamId":"s1")", R"("streamId":"s\u00001")")));  // nul_in_string
  // Keys: unknown, repeated, missing.
  CHECK_FALSE(agree(swap(R"("v":1,)", R"("v":1,"admin":true,)")));
  CHECK_FALSE(agree(swap(R"("v":1,)", R"("v":1,"v":1,)")));
  CHECK_FALSE(agree(swap(R"("id":"abc",)", R"("id":"abc","id":"abd",)")));
  CHECK_FALSE(agree(swap(R"("role":"agent",)", R"("role":"agent","role":"x",)")));
  CHECK_FALSE(agree(swap(R"("role":"agent",)", R"("role":"agent","admin":"x",)")));
  CHECK_FALSE(agree(swap(R"(,"instanceId":"i1")", "")));
  CHECK_FALSE(agree(swap(R"("v":1,)", "")));
  CHECK_FALSE(agree(swap(R"(,"ts":1700000000000)", "")));
  CHECK_FALSE(agree("{}"));
  CHECK_FALSE(agree(swap(kFrom, R"("from":{})")));
  CHECK_FALSE(agree(swap(kFrom, R"("from":"s1")")));
  CHECK_FALSE(agree(swap(kFrom, R"("from":null)")));
  // Version and type.
  for (const char* v : {"1.0", "1e0", "10", "2", "0", "-1", "\"1\"", "true", "null", "01"})
    CHECK_FALSE(agree(swap(R"("v":1)", std::string("\"v\":") + v)));
  CHECK_FALSE(agree(swap(R"("type":"chat")", R"("type":"shell")")));
  CHECK_FALSE(agree(swap(R"("type":"chat")", R"("type":"")")));
  CHECK_FALSE(agree(swap(R"("type":"chat")", R"("type":1)")));
  CHECK_FALSE(agree(swap(R"("to":null)", R"("to":1)")));
  CHECK_FALSE(agree(swap(R"("to":null)", R"("to":"")")));
  CHECK_FALSE(agree(swap(R"("to":null)", R"("to":nul)")));
  CHECK_FALSE(agree(swap(R"("topic":null)", R"("topic":[])")));
  // ts: everything but short plain decimals goes to the DOM path, whatever its verdict.
  for (const char* ts : {"-0",
                         "-0.0",
                         "1.0000000000000002",
                         "1e3",
                         "1E3",
                         "1.5e2",
                         "9007199254740993",
                         "12345678901234567890",
                         "0.12345678901234567890",
                         "01",
                         "1.",
                         ".5",
                         "-",
                         "+1",
                         "\"1\"",
                         "null",
                         "1e400",
                         "-1e400",
                         "NaN",
                         "Infinity",
                         "0x10",
                         "1.5.5"})
    CHECK_FALSE(agree(swap("1700000000000", ts)));
  // Payload numbers whose value JSON.parse and the canonical writer could disagree on.
  for (const char* n : {"-0", "-0.0", "-0.000", "1e2", "1E-7", "-1e400", "1e400", "01", "1.", "-",
                        "+1", ".5", "0x1", "NaN"})
    CHECK_FALSE(agree(env(std::string("[") + n + "]")));
  CHECK(agree(env("[" + std::string(300, '9') + "]")));
  CHECK_FALSE(agree(env("[" + std::string(301, '9') + "]")));
  CHECK(agree(env("[0." + std::string(298, '0') + "1]")));
  CHECK_FALSE(agree(env("[-0." + std::string(400, '0') + "1]")));
}

TEST_CASE("bus scan: hostile bytes are never accepted") {
  const std::string g = env(R"({"text":"hi"})");
  // Every truncation.
  for (std::size_t n = 0; n < g.size(); ++n) CHECK_FALSE(agree(g.substr(0, n)));
  // Trailing bytes, raw NUL anywhere, a byte-order mark.
  CHECK_FALSE(agree(g + "x"));
  CHECK_FALSE(agree(g + "{}"));
  CHECK_FALSE(agree(g + std::string(1, '\0')));
  CHECK_FALSE(agree(g + std::string(1, '\0') + "garbage"));
  CHECK_FALSE(agree(std::string(1, '\0') + g));
  CHECK_FALSE(agree(env("\"a" + std::string(1, '\0') + "b\"")));
  CHECK_FALSE(agree("\xEF\xBB\xBF" + g));
  // Raw control characters inside strings.
  for (char c : {'\x01', '\n', '\t', '\x1f'}) {
    CHECK_FALSE(agree(env(std::string("\"a") + c + "b\"")));
    std::string s = g;
    s.replace(s.find("abc"), 3, std::string("a") + c + "c");
    CHECK_FALSE(agree(s));
  }
  // Bad escapes and lone surrogates (JSON.parse takes them; the DOM path does not).
  for (const char* esc :
       {R"(\x)", R"(\u12)", R"(\u12g4)", R"(\ud800)", R"(\udc00)", R"(\ud800\u0041)", R"(\ud800x)",
        R"(\ud800\ud800)", R"(\udbff)", R"(\)", R"(\U0041)", R"(\')"})
    CHECK_FALSE(agree(env(std::string("\"a") + esc + "\"")));
  CHECK(agree(env(R"("\udbff\udfff")")));
  // Ill-formed UTF-8, in the payload and in header strings.
  for (const char* bad :
       {"\xC0\x80", "\xC1\xBF", "\xE0\x80\x80", "\xE0\x9F\xBF", "\xED\xA0\x80", "\xED\xBF\xBF",
        "\xF0\x80\x80\x80", "\xF0\x8F\xBF\xBF", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF",
        "\x80", "\xC3", "\xE2\x82", "\xF0\x9F\x98", "\xC3\x28", "\xE2\x28\xA1"}) {
    CHECK_FALSE(agree(env(std::string("\"a") + bad + "b\"")));
    CHECK_FALSE(agree(env(std::string("\"a") + bad)));
    std::string s = g;
    s.replace(s.find("abc"), 3, std::string("a") + bad + "c");
    CHECK_FALSE(agree(s));
    CHECK_FALSE(agree(env(std::string("[1,") + bad + "]")));  // outside a string
  }
  // Structure.
  for (const char* p : {"[1,]", "[,1]", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{a:1}", "{\"a\" 1}",
                        "[1 2]", "tru", "nul", "falsey", "[", "{", "]", "'a'", "[1]]"})
    CHECK_FALSE(agree(env(p)));
  CHECK_FALSE(agree("[" + g + "]"));
  CHECK_FALSE(agree("\"" + g + "\""));
}

TEST_CASE("bus scan: payload nesting is bounded exactly where parse_json bounds it") {
  // The envelope object is depth 1, so a payload may nest kMaxJsonDepth - 1 deep.
  const std::size_t ok = kMaxJsonDepth - 1;
  CHECK(agree(env(std::string(ok, '[') + std::string(ok, ']'))));
  CHECK_FALSE(agree(env(std::string(ok + 1, '[') + std::string(ok + 1, ']'))));
  CHECK(agree(env(repeat("{\"a\":", ok - 1) + "{}" + std::string(ok - 1, '}'))));
  CHECK_FALSE(agree(env(repeat("{\"a\":", ok) + "{}" + std::string(ok, '}'))));
  CHECK_FALSE(agree(env(std::string(100000, '['))));
  // Brackets inside strings do not count.
  CHECK(agree(env("\"" + std::string(1000, '[') + "\"")));
}

TEST_CASE("bus scan: size bounds hold before anything is scanned") {
  CHECK_FALSE(agree(""));
  // Every type but file_chunk: kMaxEnvelopeBytes.
  const std::string head = R"({"v":1,"id":"x","type":"chat",)" + kFrom + R"(,"ts":1,"payload":")";
  const std::size_t room = kMaxEnvelopeBytes - head.size() - 2;
  CHECK(agree(head + std::string(room, 'A') + "\"}"));
  CHECK_FALSE(agree(head + std::string(room + 1, 'A') + "\"}"));  // too_large, from the DOM path
  auto r = parse_envelope(bv(head + std::string(room + 1, 'A') + "\"}"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == BusErrorCode::too_large);
  // A file_chunk carries one-to-one chunks of up to 1 MiB: kMaxFileChunkEnvelopeBytes.
  const std::string fhead =
      R"({"v":1,"id":"x","type":"file_chunk",)" + kFrom + R"(,"ts":1,"payload":")";
  const std::size_t froom = kMaxFileChunkEnvelopeBytes - fhead.size() - 2;
  CHECK(froom > kMaxEnvelopeBytes);
  CHECK(agree(fhead + std::string(froom, 'A') + "\"}"));
  CHECK_FALSE(agree(fhead + std::string(froom + 1, 'A') + "\"}"));
  auto f = parse_envelope(bv(fhead + std::string(froom + 1, 'A') + "\"}"));
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().code == BusErrorCode::too_large);
}

TEST_CASE("bus scan: every single-byte change of an envelope gets the DOM path's verdict") {
  const std::vector<std::string> bases = {
      env(R"({"text":"hi","n":[1,2.5,-3],"ok":true,"e":"\u00e9\n"})"),
      R"({"v":1,"id":"é😀","type":"swarm_have","from":{"streamId":"s","role":"r","name":"n","instanceId":"i"},"to":"me","topic":"t","ts":12.5,"payload":{"fileId":"ab","indexes":[1,2,3]}})",
  };
  const char replacements[] = {'\0', '"', '\\', '{', '}',        '[',        ']',
                               ',',  ':', ' ',  '0', '1',        '-',        '.',
                               'e',  'n', 'u',  'x', char(0x80), char(0xC3), char(0xFF)};
  int accepted = 0;
  for (const std::string& base : bases) {
    for (std::size_t i = 0; i < base.size(); ++i) {
      for (char c : replacements) {
        std::string s = base;
        s[i] = c;
        accepted += agree(s) ? 1 : 0;
      }
      std::string cut = base;
      cut.erase(i, 1);
      accepted += agree(cut) ? 1 : 0;
    }
  }
  CHECK(accepted > 0);  // some changes keep a valid envelope (a digit, a name byte)
}

namespace {

// What ends a plain run, byte by byte: the definition the vector and eight-byte loops stand in for.
const std::uint8_t* plain_run_end(const std::uint8_t* p, const std::uint8_t* end) {
  while (p != end && *p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x80) ++p;
  return p;
}

}  // namespace

TEST_CASE("bus scan: the SIMD-128 string runs stop exactly where the byte loop stops") {
  // Every byte value at every position of runs up to 80 bytes long, at 16 alignments: each of the
  // vector loop, the eight-byte loop and the byte loop names the same byte, and none reads past
  // the end it was given (the buffer past `end` holds a quote that would stop a loop that did).
  std::vector<std::uint8_t> buf(128);
  int stops = 0;
  for (std::size_t align = 0; align < 16; ++align) {
    for (std::size_t len = 0; len <= 80; len += (len < 40 ? 1 : 7)) {
      for (std::size_t at = 0; at <= len; ++at) {
        for (int b = 0; b < 256; b += (at == len ? 256 : 1)) {
          std::fill(buf.begin(), buf.end(), std::uint8_t('"'));
          std::uint8_t* p = buf.data() + align;
          std::fill(p, p + len, std::uint8_t('a'));
          if (at < len) p[at] = std::uint8_t(b);
          const std::uint8_t* want = plain_run_end(p, p + len);
          const std::uint8_t* vec = detail::skip_plain(p, p + len);
          const std::uint8_t* scalar = detail::skip_plain_scalar(p, p + len);
          if (vec != want || scalar != want) {
            INFO("align " << align << " len " << len << " at " << at << " byte " << b);
            CHECK(vec - p == want - p);
            CHECK(scalar - p == want - p);
          }
          stops += want != p + len;
        }
      }
    }
  }
  CHECK(stops > 0);
}

TEST_CASE("bus scan: a special byte on either side of a sixteen-byte block gets the DOM verdict") {
  // Escapes, DEL (plain in JSON), UTF-8 of two to four bytes, and bytes that must be refused, at
  // every offset of a payload string, a payload key and a header string: the vector loop hands
  // each to the same checks the byte loop did. agree() checks the verdict against the DOM path
  // and says whether the scanner took the envelope itself.
  struct Special {
    std::string bytes;
    bool valid;    // the DOM path accepts it inside a string
    bool escaped;  // a header string with it is left to the DOM path
  };
  const std::vector<Special> specials = {{"\\\"", true, true},
                                         {"\\n", true, true},
                                         {"\\u00e9", true, true},
                                         {"\x7f", true, false},
                                         {"\xC3\xA9", true, false},
                                         {"\xE2\x82\xAC", true, false},
                                         {"\xF0\x9F\x98\x80", true, false},
                                         {"\n", false, false},
                                         {"\x01", false, false},
                                         {"\xC3", false, false},
                                         {"\xED\xA0\x80", false, false},
                                         {"\x80", false, false}};
  for (const Special& x : specials) {
    for (std::size_t k = 0; k <= 40; ++k) {
      INFO("special " << x.bytes << " after " << k << " bytes");
      const std::string s = std::string(k, 'a') + x.bytes + std::string(40 - k, 'b');
      CHECK(agree(env("\"" + s + "\"")) == x.valid);
      CHECK(agree(env("{\"" + s + "\":[\"" + s + "\"]}")) == x.valid);
      std::string h = env(R"({"text":"hi"})");
      h.replace(h.find("\"abc\""), 5, "\"" + s + "\"");
      CHECK(agree(h) == (x.valid && !x.escaped));
    }
  }
  // The id bound in UTF-16 units, with a multi-byte character at every offset.
  for (const std::string& ch : {std::string("\xC3\xA9"), std::string("\xF0\x9F\x98\x80")}) {
    const std::size_t units = ch.size() == 4 ? 2 : 1;
    for (std::size_t k = 0; k + units <= kMaxIdChars; ++k) {
      INFO("character of " << ch.size() << " bytes after " << k);
      std::string h = env(R"({"text":"hi"})");
      const std::string id = std::string(k, 'a') + ch + std::string(kMaxIdChars - units - k, 'b');
      h.replace(h.find("\"abc\""), 5, "\"" + id + "\"");
      CHECK(agree(h));
      h.insert(h.find(ch), "z");
      CHECK_FALSE(agree(h));  // one unit over: the DOM path's bad_field
    }
  }
}
