// The decode core: golden vectors, the earlier implementation's costmaps, the bomb guard, and
// the keep-last-good rule.
#include <zlib.h>

#include <catch2/catch.hpp>

#include "../fixture_files.hpp"
#include "decode/channel_decoder.hpp"
#include "decode/costmap.hpp"
#include "decode/inflate.hpp"
#include "decode/limits.hpp"
#include "decode/voxels.hpp"

using namespace tether;
using namespace tether::decode;
using namespace tether::testing;

namespace {

Bytes zlib(const Bytes& raw) {
  uLongf n = compressBound(uLong(raw.size()));
  Bytes out(n);
  REQUIRE(compress2(out.data(), &n, raw.data(), uLong(raw.size()), 9) == Z_OK);
  out.resize(n);
  return out;
}

Json meta(std::uint32_t w, std::uint32_t h) {
  return Json{{"w", w}, {"h", h}, {"res", 0.05}, {"origin", Json::array({0.0, 0.0, 0.0})}};
}

}  // namespace

TEST_CASE("compat: every dimos-v5 costmap inflates to its grid exactly") {
  const Json vectors = compat("dimos-v5/costmap_frames.json")["vectors"];
  REQUIRE(vectors.size() >= 3);
  for (const auto& v : vectors) {
    INFO(v["name"].get<std::string>());
    CostmapDecoder dec;
    REQUIRE_FALSE(dec.decode(v["meta"], ByteView(b64(v["payload_b64"]))));
    CHECK(dec.cells().to_bytes() == b64(v["grid_b64"]));
    CHECK(dec.meta().w == v["meta"]["w"].get<std::uint32_t>());
    CHECK(dec.meta().res == v["meta"]["res"].get<double>());
    CHECK(dec.meta().origin_yaw == v["meta"]["origin"][2].get<double>());
  }
}

TEST_CASE("golden: costmaps decode to their cells and north-up RGBA") {
  const Json file = fixture("decode/vectors.json");
  for (const auto& v : file["costmaps"]) {
    INFO(v["name"].get<std::string>());
    CostmapDecoder dec;
    REQUIRE_FALSE(dec.decode(v["meta"], ByteView(b64(v["payload_b64"]))));
    CHECK(dec.cells().to_bytes() == b64(v["cells_b64"]));
    CHECK(dec.rgba().to_bytes() == b64(v["rgba_b64"]));
  }
}

TEST_CASE("golden: voxels decode to Float32 centres and colours") {
  const Json file = fixture("decode/vectors.json");
  for (const auto& v : file["voxels"]) {
    INFO(v["name"].get<std::string>());
    VoxelDecoder dec;
    REQUIRE_FALSE(dec.decode(v["meta"], ByteView(b64(v["payload_b64"]))));
    REQUIRE(dec.positions().size() == v["positions"].size());
    for (std::size_t i = 0; i < dec.positions().size(); ++i) {
      CHECK(dec.positions()[i] == float(v["positions"][i].get<double>()));
      CHECK(dec.colours()[i] == float(v["colours"][i].get<double>()));
    }
  }
}

TEST_CASE("golden: invalid frames fail with their error") {
  const Json file = fixture("decode/vectors.json");
  REQUIRE(file["invalid"].size() >= 15);
  for (const auto& v : file["invalid"]) {
    INFO(v["name"].get<std::string>());
    ChannelDecoder dec(v["encoding"].get<std::string>());
    auto e = dec.decode(v["meta"], ByteView(b64(v["payload_b64"])));
    REQUIRE(e);
    CHECK(decode_error_name(*e) == v["error"].get<std::string>());
    CHECK(dec.errors() == 1);
    CHECK_FALSE(dec.has_value());
  }
}

TEST_CASE("palette: unknown, free, graded cost and lethal are distinct, row 0 is world max-y") {
  const Palette& p = costmap_palette();
  CHECK(p[255] != p[0]);
  CHECK(p[255] != p[50]);
  CHECK(p[255] != p[100]);
  CHECK(p[0] != p[1]);
  CHECK(p[1] != p[99]);
  CHECK(p[99] != p[100]);
  // A 1x2 map: cell row 0 (min-y) free, row 1 lethal; the image shows lethal on top.
  const std::uint8_t cells[2] = {0, 100};
  std::uint8_t rgba[8];
  colourise_costmap(cells, 1, 2, rgba);
  CHECK(std::memcmp(rgba, &p[100], 4) == 0);
  CHECK(std::memcmp(rgba + 4, &p[0], 4) == 0);
}

TEST_CASE("bomb guard: a tiny payload that inflates to 64 MiB is stopped at w*h") {
  const Bytes bomb = zlib(Bytes(64u << 20, 0));
  CHECK(bomb.size() < 100 * 1024);
  CostmapDecoder dec;
  CHECK(dec.decode(meta(16, 16), ByteView(bomb)) == DecodeError::too_much_data);
  // The guard is exact: one cell more or less fails, the exact size succeeds.
  CHECK(dec.decode(meta(16, 16), ByteView(zlib(Bytes(257, 1)))) == DecodeError::too_much_data);
  CHECK(dec.decode(meta(16, 16), ByteView(zlib(Bytes(255, 1)))) == DecodeError::too_little_data);
  CHECK_FALSE(dec.decode(meta(16, 16), ByteView(zlib(Bytes(256, 1)))));
}

TEST_CASE("bounds: payload over 8 MiB is refused before inflating, 2048x2048 is the largest map") {
  CostmapDecoder dec;
  CHECK(dec.decode(meta(8, 8), ByteView(Bytes(kMaxCompressedBytes + 1, 0))) ==
        DecodeError::payload_too_large);
  CHECK(dec.decode(meta(2049, 1), ByteView(zlib(Bytes(2049, 0)))) == DecodeError::bad_meta);
  Bytes big(std::size_t(kMaxCostmapSide) * kMaxCostmapSide, 100);
  REQUIRE_FALSE(dec.decode(meta(2048, 2048), ByteView(zlib(big))));
  CHECK(dec.rgba().size == big.size() * 4);
  VoxelDecoder vox;
  CHECK(vox.decode(Json{{"n", 1}, {"res", 0.1}, {"origin", {0, 0, 0}}},
                   ByteView(Bytes(kMaxCompressedBytes + 1, 0))) == DecodeError::payload_too_large);
}

TEST_CASE("a failed frame keeps the last good map and counts the error") {
  ChannelDecoder dec("costmap.zlib.v1");
  Bytes cells(16, 0);
  cells[3] = 100;
  REQUIRE_FALSE(dec.decode(meta(4, 4), ByteView(zlib(cells))));
  const Bytes good_rgba = dec.costmap().rgba().to_bytes();
  CHECK(dec.decode(meta(4, 4), ByteView(std::string_view("garbage"))) == DecodeError::not_zlib);
  CHECK(dec.decode(meta(8, 8), ByteView(zlib(cells))) == DecodeError::too_little_data);
  CHECK(dec.costmap().rgba().to_bytes() == good_rgba);
  CHECK(dec.costmap().meta().w == 4);
  CHECK(dec.frames() == 3);
  CHECK(dec.errors() == 2);
  CHECK(dec.last_error() == DecodeError::too_little_data);
  CHECK(dec.has_value());
}

TEST_CASE("encodings: known kinds, *.json.vN as JSON, and unknown ones never fail") {
  CHECK(encoding_kind("jpeg.v1") == EncodingKind::jpeg);
  CHECK(encoding_kind("costmap.zlib.v1") == EncodingKind::costmap);
  CHECK(encoding_kind("voxels.zlib.v1") == EncodingKind::voxels);
  CHECK(encoding_kind("pose.json.v1") == EncodingKind::pose);
  CHECK(encoding_kind("stats.json.v1") == EncodingKind::json);
  CHECK(encoding_kind("json.v1") == EncodingKind::json);
  CHECK(encoding_kind("battery.json.v12") == EncodingKind::json);
  CHECK(encoding_kind("video.webrtc.v1") == EncodingKind::track);
  CHECK(encoding_kind("json.vx") == EncodingKind::unsupported);
  CHECK(encoding_kind("xjson.v1") == EncodingKind::unsupported);
  CHECK(encoding_kind("pointcloud.v9") == EncodingKind::unsupported);
  ChannelDecoder unknown("pointcloud.v9");
  CHECK_FALSE(unknown.decode(Json(nullptr), ByteView(std::string_view("\xff\x00 anything"))));
  CHECK(unknown.frames() == 1);
  CHECK(unknown.errors() == 0);
}

TEST_CASE("pose and JSON payloads") {
  ChannelDecoder pose("pose.json.v1");
  REQUIRE_FALSE(pose.decode(
      Json(nullptr), ByteView(std::string_view(R"({"x":1.5,"y":-2,"yaw":0.25,"ts":10.5})"))));
  CHECK(pose.pose().x == 1.5);
  CHECK(pose.pose().y == -2);
  CHECK(pose.pose().z == 0);
  CHECK(pose.pose().ts == 10.5);
  CHECK(pose.decode(Json(nullptr), ByteView(std::string_view(R"({"x":"1","y":0,"yaw":0})"))) ==
        DecodeError::bad_shape);
  CHECK(pose.pose().x == 1.5);  // kept
  ChannelDecoder stats("stats.json.v1");
  REQUIRE_FALSE(
      stats.decode(Json(nullptr), ByteView(std::string_view(R"({"cpu":0.5,"temp":{"c":40}})"))));
  CHECK(stats.json()["temp"]["c"] == 40);
  CHECK(stats.decode(Json(nullptr), ByteView(Bytes(kMaxJsonPayloadBytes + 1, ' '))) ==
        DecodeError::payload_too_large);
  JpegMeta jm;
  CHECK_FALSE(
      check_jpeg(Json{{"w", 320}, {"h", 240}}, ByteView(Bytes{0xff, 0xd8, 0xff, 0xe0}), jm));
  CHECK(jm.w == 320);
}
