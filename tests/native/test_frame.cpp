// Data frames and control frames: the spec's worked example, the earlier implementation's
// vectors (fixtures/compat/dimos-v5), our golden vectors, and hostile input.
#include <catch2/catch.hpp>

#include <random>

#include "fixture_files.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"
#include "wire/stream_decoder.hpp"

using namespace tether;
using namespace tether::wire;
using namespace tether::testing;

namespace {

FrameHeader header_from(const Json& j) {
  FrameHeader h;
  h.ch = j["ch"].get<std::string>();
  h.seq = j["seq"].get<std::int64_t>();
  h.ts = j["ts"].get<double>();
  h.delivery = *delivery_from_name(j["delivery"].get<std::string>());
  if (j.contains("meta")) h.meta = j["meta"];
  return h;
}

void check_header(const FrameHeader& got, const Json& want) {
  CHECK(got.ch == want["ch"].get<std::string>());
  CHECK(got.seq == want["seq"].get<std::int64_t>());
  CHECK(got.ts == want["ts"].get<double>());
  CHECK(delivery_name(got.delivery) == want["delivery"].get<std::string>());
  CHECK(got.meta.has_value() == want.contains("meta"));
  if (got.meta && want.contains("meta")) CHECK(*got.meta == want["meta"]);
}

// Decodes `bytes` fed in pieces of the given sizes (cycled) and returns frames as strings.
std::vector<std::pair<FrameHeader, std::string>> decode_chunked(
    DataStreamDecoder& dec, const Bytes& bytes, const std::vector<std::size_t>& sizes) {
  std::vector<std::pair<FrameHeader, std::string>> out;
  std::size_t pos = 0, k = 0;
  while (pos < bytes.size()) {
    const std::size_t n = std::min(sizes[k++ % sizes.size()], bytes.size() - pos);
    Bytes chunk(bytes.begin() + std::ptrdiff_t(pos), bytes.begin() + std::ptrdiff_t(pos + n));
    dec.feed(ByteView(chunk), [&](const DataFrame& f) {
      out.emplace_back(f.header, std::string(f.payload.as_chars()));
    });
    pos += n;
  }
  return out;
}

}  // namespace

TEST_CASE(
    "the spec's worked example: odom seq 7 with 'payload' is 67 bytes, prefix 3400000007000000") {
  FrameHeader h{"odom", 7, 1.5, Delivery::reliable, std::nullopt};
  auto frame = encode_data_frame(h, ByteView(std::string_view("payload")));
  REQUIRE(frame);
  CHECK(frame->size() == 67);
  const Bytes prefix(frame->begin(), frame->begin() + 8);
  CHECK(prefix == Bytes{0x34, 0, 0, 0, 0x07, 0, 0, 0});
  auto back = decode_data_frame(ByteView(frame.value()));
  REQUIRE(back);
  CHECK(back->header.ch == "odom");
  CHECK(back->header.seq == 7);
  CHECK(back->payload.as_chars() == "payload");
}

TEST_CASE("compat: every dimos-v5 data frame decodes and re-encodes to identical bytes") {
  const Json file = compat("dimos-v5/data_frames.json");
  REQUIRE(file["vectors"].size() >= 5);
  for (const auto& v : file["vectors"]) {
    INFO(v["name"].get<std::string>());
    const Bytes frame = b64(v["frame_b64"]);
    auto decoded = decode_data_frame(ByteView(frame));
    REQUIRE(decoded);
    check_header(decoded->header, v["header"]);
    CHECK(decoded->payload.to_bytes() == b64(v["payload_b64"]));
    auto again = encode_data_frame(decoded->header, decoded->payload);
    REQUIRE(again);
    CHECK(again.value() == frame);
    // And from the vector's own header value, as a fresh encoder would.
    auto fresh = encode_data_frame(header_from(v["header"]), ByteView(b64(v["payload_b64"])));
    REQUIRE(fresh);
    CHECK(fresh.value() == frame);
  }
}

TEST_CASE("compat: every dimos-v5 control frame and datagram splits into its message") {
  for (const char* file : {"dimos-v5/control_frames.json", "dimos-v5/datagrams.json"}) {
    const bool prefixed = std::string(file).find("control") != std::string::npos;
    const Json vectors = compat(file)["vectors"];
    REQUIRE(vectors.size() >= 10);
    Bytes stream;
    std::vector<std::string> expected;
    for (const auto& v : vectors) {
      const Bytes bytes = b64(v["b64"]);
      const std::string text =
          prefixed ? as_string(Bytes(bytes.begin() + 4, bytes.end())) : as_string(bytes);
      expected.push_back(text);
      // The message inside is exactly the vector's message, and v5 messages still parse.
      auto parsed = parse_json(ByteView(std::string_view(text)));
      REQUIRE(parsed.ok());
      CHECK(parsed.value == v["message"]);
      if (prefixed) append(stream, ByteView(bytes));
    }
    if (!prefixed) continue;
    // All control frames back to back, one byte at a time: every message comes out whole.
    ControlStreamDecoder dec;
    std::vector<std::string> got;
    for (std::uint8_t b : stream) {
      dec.feed(ByteView(&b, 1), [&](ByteView m) { got.emplace_back(m.as_chars()); });
    }
    CHECK(got == expected);
    CHECK_FALSE(dec.finish());
  }
}

TEST_CASE("compat: a v5 hello parses, and the relay answers it with version_mismatch") {
  const Json vectors = compat("dimos-v5/datagrams.json")["vectors"];
  const Bytes hello = b64(vectors[0]["b64"]);
  auto m = parse_message(ByteView(hello), Sender::robot);
  REQUIRE(m);
  CHECK(check_hello(m.value(), Role::robot) == ErrorCode::version_mismatch);
}

TEST_CASE("golden: every data-frame vector encodes and decodes exactly") {
  const Json file = fixture("wire/data_frames.json");
  REQUIRE(file["vectors"].size() >= 10);
  for (const auto& v : file["vectors"]) {
    INFO(v["name"].get<std::string>());
    const Bytes frame = b64(v["frame_b64"]);
    auto enc = encode_data_frame(header_from(v["header"]), ByteView(b64(v["payload_b64"])));
    REQUIRE(enc);
    CHECK(enc.value() == frame);
    auto dec = decode_data_frame(ByteView(frame));
    REQUIRE(dec);
    check_header(dec->header, v["header"]);
    CHECK(dec->payload.to_bytes() == b64(v["payload_b64"]));
  }
}

TEST_CASE("golden: every invalid data frame fails with its expected error, in both decoders") {
  const Json file = fixture("wire/data_frames.json");
  REQUIRE(file["invalid"].size() >= 20);
  for (const auto& v : file["invalid"]) {
    const std::string want = v["error"].get<std::string>();
    INFO(v["name"].get<std::string>() << " expects " << want);
    const Bytes bytes = b64(v["frame_b64"]);
    auto dec = decode_data_frame(ByteView(bytes));
    REQUIRE_FALSE(dec);
    CHECK(frame_error_name(dec.error()) == want);
    // The stream decoder sees the same bytes; a trailing byte is simply the next frame's start,
    // so it surfaces as truncated at the end.
    DataStreamDecoder stream;
    int frames = 0;
    auto e = stream.feed(ByteView(bytes), [&](const DataFrame&) { ++frames; });
    if (!e) e = stream.finish();
    REQUIRE(e);
    CHECK(frame_error_name(*e) == (want == "trailing_bytes" ? "truncated" : want));
  }
}

TEST_CASE("stream decoder: any chunking gives the same frames, down to one byte at a time") {
  Bytes stream;
  std::vector<std::string> payloads;
  for (int i = 0; i < 40; ++i) {
    std::string payload(std::size_t(i * 37 % 300), char('a' + i % 26));
    payloads.push_back(payload);
    FrameHeader h{i % 3 ? "camera" : "@control", i, 0.5 * i,
                  i % 2 ? Delivery::latest : Delivery::reliable,
                  i % 5 ? std::nullopt : std::optional<Json>(Json{{"i", i}})};
    REQUIRE_FALSE(append_data_frame(stream, h, ByteView(std::string_view(payload))));
  }
  std::mt19937 rng(7);
  std::vector<std::vector<std::size_t>> chunkings = {{1}, {2, 3, 5}, {stream.size()}, {8}, {4096}};
  std::vector<std::size_t> random_sizes;
  for (int i = 0; i < 200; ++i) random_sizes.push_back(1 + rng() % 700);
  chunkings.push_back(random_sizes);
  for (const auto& sizes : chunkings) {
    DataStreamDecoder dec;
    auto frames = decode_chunked(dec, stream, sizes);
    REQUIRE(frames.size() == payloads.size());
    for (std::size_t i = 0; i < frames.size(); ++i) {
      CHECK(frames[i].first.seq == std::int64_t(i));
      CHECK(frames[i].second == payloads[i]);
      CHECK(frames[i].first.meta.has_value() == (i % 5 == 0));
    }
    CHECK_FALSE(dec.finish());
    CHECK(dec.buffered() == 0);
  }
}

TEST_CASE("stream decoder: views stay valid until the next feed") {
  Bytes stream;
  append_data_frame(stream, {"a", 1, 1, Delivery::latest, std::nullopt},
                    ByteView(std::string_view("first")));
  append_data_frame(stream, {"a", 2, 1, Delivery::latest, std::nullopt},
                    ByteView(std::string_view("second")));
  Bytes tail(stream.end() - 3, stream.end());
  stream.resize(stream.size() - 3);
  DataStreamDecoder dec;
  std::vector<ByteView> views;
  dec.feed(ByteView(stream), [&](const DataFrame& f) { views.push_back(f.payload); });
  REQUIRE(views.size() == 1);
  CHECK(views[0].as_chars() == "first");  // read after the callback returned
  std::string second;
  dec.feed(ByteView(tail), [&](const DataFrame& f) { second = std::string(f.payload.as_chars()); });
  CHECK(second == "second");
}

TEST_CASE("stream decoder: an absurd length fails at the prefix, before anything is allocated") {
  DataStreamDecoder dec;
  const Bytes prefix = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
  auto e = dec.feed(ByteView(prefix), [](const DataFrame&) { FAIL("no frame expected"); });
  REQUIRE(e);
  CHECK(*e == FrameError::header_too_large);
  CHECK(dec.buffered() == 0);
  // Sticky: more bytes are ignored and the error stays.
  const Bytes more(1000, 'x');
  CHECK(dec.feed(ByteView(more), [](const DataFrame&) { FAIL("no frame expected"); }) ==
        FrameError::header_too_large);
  CHECK(dec.buffered() == 0);

  DataStreamDecoder big;
  const Bytes big_prefix = {16, 0, 0, 0, 0xf9, 0xff, 0xff, 0x03};  // 64 MiB - 7 + 16 + 8 > 64 MiB
  CHECK(big.feed(ByteView(big_prefix), [](const DataFrame&) {}) == FrameError::frame_too_large);

  ControlStreamDecoder control;
  const Bytes control_prefix = {0x01, 0x00, 0x01, 0x00};  // 65537
  CHECK(control.feed(ByteView(control_prefix), [](ByteView) {}) == FrameError::control_too_large);
  CHECK(frame_error_code(FrameError::control_too_large) == ErrorCode::control_too_large);
}

TEST_CASE("stream decoder: a frame at exactly the bounds is accepted") {
  FrameHeader h{"c", 1, 1, Delivery::latest, std::nullopt};
  std::string header;
  append_header_json(header, h);
  const std::size_t payload = kMaxFrameBytes - kDataPrefixBytes - header.size();
  Bytes big(payload, 0x5a);
  auto frame = encode_data_frame(h, ByteView(big));
  REQUIRE(frame);
  CHECK(frame->size() == kMaxFrameBytes);
  DataStreamDecoder dec;
  std::size_t got = 0;
  CHECK_FALSE(dec.feed(ByteView(frame.value()), [&](const DataFrame& f) { got = f.payload.size; }));
  CHECK(got == payload);
  big.push_back(0);
  CHECK(encode_data_frame(h, ByteView(big)).error() == FrameError::frame_too_large);
  // A header at exactly 64 KiB is fine; one byte more is not.
  FrameHeader fat{"c", 1, 1, Delivery::latest, Json{{"pad", std::string()}}};
  std::string base;
  append_header_json(base, fat);
  fat.meta = Json{{"pad", std::string(kMaxHeaderBytes - base.size(), 'p')}};
  CHECK(encode_data_frame(fat, ByteView()).ok());
  fat.meta = Json{{"pad", std::string(kMaxHeaderBytes - base.size() + 1, 'p')}};
  CHECK(encode_data_frame(fat, ByteView()).error() == FrameError::header_too_large);
}

TEST_CASE("stream decoder: a reset mid-frame reports truncated, a clean end does not") {
  auto frame = encode_data_frame({"odom", 1, 1, Delivery::latest, std::nullopt},
                                 ByteView(std::string_view("abcdef")));
  REQUIRE(frame);
  for (std::size_t cut = 1; cut < frame->size(); ++cut) {
    DataStreamDecoder dec;
    int frames = 0;
    dec.feed(ByteView(frame->data(), cut), [&](const DataFrame&) { ++frames; });
    CHECK(frames == 0);
    CHECK(dec.finish() == FrameError::truncated);
  }
  DataStreamDecoder whole;
  whole.feed(ByteView(frame.value()), [](const DataFrame&) {});
  CHECK_FALSE(whole.finish());
}

TEST_CASE("corrupt framing fails only its own stream") {
  auto good = encode_data_frame({"odom", 1, 1, Delivery::latest, std::nullopt},
                                ByteView(std::string_view("ok")));
  REQUIRE(good);
  Bytes corrupt = {3, 0, 0, 0, 0, 0, 0, 0, 'x', 'y', 'z'};
  DataStreamDecoder a, b;
  int a_frames = 0, b_frames = 0;
  CHECK(a.feed(ByteView(corrupt), [&](const DataFrame&) { ++a_frames; }) ==
        FrameError::invalid_json);
  CHECK_FALSE(b.feed(ByteView(good.value()), [&](const DataFrame&) { ++b_frames; }));
  CHECK(a_frames == 0);
  CHECK(b_frames == 1);
  // Frames before the corruption on the same stream were delivered.
  DataStreamDecoder c;
  Bytes mixed = good.value();
  append(mixed, ByteView(corrupt));
  int c_frames = 0;
  CHECK(c.feed(ByteView(mixed), [&](const DataFrame&) { ++c_frames; }) == FrameError::invalid_json);
  CHECK(c_frames == 1);
}

TEST_CASE("control frames: encode, bounds, and an empty message that is dropped, not fatal") {
  auto f = encode_control_frame(R"({"t":"teleop_start"})");
  REQUIRE(f);
  CHECK(f->size() == 24);
  CHECK(encode_control_frame("").error() == FrameError::empty_message);
  CHECK(encode_control_frame(std::string(kMaxControlBytes, ' ')).ok());
  CHECK(encode_control_frame(std::string(kMaxControlBytes + 1, ' ')).error() ==
        FrameError::control_too_large);
  ControlStreamDecoder dec;
  Bytes stream = {0, 0, 0, 0};
  append(stream, ByteView(f.value()));
  std::vector<std::string> got;
  CHECK_FALSE(dec.feed(ByteView(stream), [&](ByteView m) { got.emplace_back(m.as_chars()); }));
  REQUIRE(got.size() == 2);
  CHECK(got[0].empty());
  CHECK_FALSE(parse_message(ByteView(std::string_view(got[0])), Sender::viewer));
  CHECK(got[1] == R"({"t":"teleop_start"})");
}

TEST_CASE("header checks before encoding") {
  CHECK(check_header({"", 1, 1, Delivery::latest, std::nullopt}) == FrameError::invalid_header);
  CHECK(check_header({std::string(65, 'c'), 1, 1, Delivery::latest, std::nullopt}) ==
        FrameError::invalid_header);
  CHECK_FALSE(check_header({std::string(64, 'c'), 1, 1, Delivery::latest, std::nullopt}));
  // 64 characters, more than 64 bytes: the bound counts characters.
  std::string greek;
  for (int i = 0; i < 64; ++i) greek += "\xce\xb2";
  CHECK_FALSE(check_header({greek, 1, 1, Delivery::latest, std::nullopt}));
  CHECK(check_header({"c", -1, 1, Delivery::latest, std::nullopt}) == FrameError::invalid_header);
  CHECK(check_header({"c", kMaxSafeInteger + 1, 1, Delivery::latest, std::nullopt}) ==
        FrameError::invalid_header);
  CHECK(check_header({"c", 1, std::numeric_limits<double>::quiet_NaN(), Delivery::latest,
                      std::nullopt}) == FrameError::invalid_header);
  CHECK(check_header({"c", 1, 1, Delivery::latest, Json::array()}) == FrameError::invalid_header);
  CHECK(check_header({"\xff", 1, 1, Delivery::latest, std::nullopt}) == FrameError::invalid_header);
  CHECK(is_reserved_channel("@control"));
  CHECK_FALSE(is_reserved_channel("control@"));
}

TEST_CASE("the encoder never writes a header its decoder refuses: meta strings must be UTF-8") {
  FrameHeader h{"cam", 1, 1, Delivery::latest, Json{{"note", std::string("\xed\xa0\x80", 3)}}};
  auto r = encode_data_frame(h, ByteView(std::string_view("x")));
  REQUIRE_FALSE(r);
  CHECK(r.error() == FrameError::invalid_utf8);
  h.meta = Json{{"note", "naïve"}};
  auto ok = encode_data_frame(h, ByteView(std::string_view("x")));
  REQUIRE(ok);
  CHECK(decode_data_frame(ByteView(ok.value())));
}
