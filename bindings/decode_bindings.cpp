// Embind surface of the decode core. Marshalling only: payloads come in through a staging
// buffer, results go out as typed-memory views of the decoder's own buffers (no copies). A view
// stays valid until the next call into the module (memory growth detaches it). The JS wrapper is
// web/glue/decode.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>

#include "common/json.hpp"
#include "decode/channel_decoder.hpp"

namespace tether::decode::bindings {
namespace {

using emscripten::val;

class DecodeChannel {
 public:
  explicit DecodeChannel(const std::string& encoding) : dec_(encoding) {}

  val input(std::size_t n) {
    staging_.resize(n);
    return val(emscripten::typed_memory_view(n, staging_.data()));
  }

  // `meta_json` is "" when the frame has no meta. Returns "" or the error name.
  std::string decode(const std::string& meta_json, std::size_t n) {
    Json meta;
    if (!meta_json.empty()) {
      JsonParse parsed = parse_json(ByteView(std::string_view(meta_json)));
      if (parsed.ok()) meta = std::move(parsed.value);
    }
    auto e = dec_.decode(meta, ByteView(staging_.data(), std::min(n, staging_.size())));
    return e ? std::string(decode_error_name(*e)) : std::string();
  }

  std::string kind() const { return std::string(encoding_kind_name(dec_.kind())); }
  double frames() const { return double(dec_.frames()); }
  double errors() const { return double(dec_.errors()); }
  bool has_value() const { return dec_.has_value(); }
  std::string last_error() const {
    return dec_.last_error() ? std::string(decode_error_name(*dec_.last_error())) : std::string();
  }

  val rgba() const { return view(dec_.costmap().rgba()); }
  val cells() const { return view(dec_.costmap().cells()); }
  val costmap_meta() const {
    const auto& m = dec_.costmap().meta();
    val o = val::object();
    o.set("w", m.w);
    o.set("h", m.h);
    o.set("res", m.res);
    val origin = val::array();
    origin.call<void>("push", m.origin_x);
    origin.call<void>("push", m.origin_y);
    origin.call<void>("push", m.origin_yaw);
    o.set("origin", origin);
    return o;
  }
  val positions() const {
    const auto& p = dec_.voxels().positions();
    return val(emscripten::typed_memory_view(p.size(), p.data()));
  }
  val colours() const {
    const auto& c = dec_.voxels().colours();
    return val(emscripten::typed_memory_view(c.size(), c.data()));
  }
  std::string json() const { return to_json(dec_.json()); }
  val jpeg() const { return view(dec_.jpeg()); }
  val jpeg_meta() const {
    val o = val::object();
    o.set("w", dec_.jpeg_meta().w);
    o.set("h", dec_.jpeg_meta().h);
    return o;
  }

 private:
  static val view(ByteView b) { return val(emscripten::typed_memory_view(b.size, b.data)); }

  ChannelDecoder dec_;
  Bytes staging_;
};

std::string kind_of(const std::string& encoding) {
  return std::string(encoding_kind_name(encoding_kind(encoding)));
}

val error_texts() {
  val o = val::object();
  for (int i = 0; i <= int(DecodeError::bad_shape); ++i) {
    const auto e = static_cast<DecodeError>(i);
    o.set(std::string(decode_error_name(e)), std::string(decode_error_text(e)));
  }
  return o;
}

}  // namespace

EMSCRIPTEN_BINDINGS(tether_decode) {
  using namespace emscripten;
  class_<DecodeChannel>("DecodeChannel")
      .constructor<std::string>()
      .function("input", &DecodeChannel::input)
      .function("decode", &DecodeChannel::decode)
      .function("kind", &DecodeChannel::kind)
      .function("frames", &DecodeChannel::frames)
      .function("errors", &DecodeChannel::errors)
      .function("hasValue", &DecodeChannel::has_value)
      .function("lastError", &DecodeChannel::last_error)
      .function("rgba", &DecodeChannel::rgba)
      .function("cells", &DecodeChannel::cells)
      .function("costmapMeta", &DecodeChannel::costmap_meta)
      .function("positions", &DecodeChannel::positions)
      .function("colours", &DecodeChannel::colours)
      .function("json", &DecodeChannel::json)
      .function("jpeg", &DecodeChannel::jpeg)
      .function("jpegMeta", &DecodeChannel::jpeg_meta);
  function("decodeEncodingKind", &kind_of);
  function("decodeErrorTexts", &error_texts);
}

}  // namespace tether::decode::bindings
