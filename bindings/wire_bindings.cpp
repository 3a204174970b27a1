// Embind surface of the wire core. Marshalling only (DESIGN.md rule 4): bytes move through a
// staging buffer in WASM memory and come back as typed-memory views; every decision is made by
// src/wire. The JS wrapper with the public API is web/glue/wire.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>
#include <vector>

#include "common/json.hpp"
#include "wire/errors.hpp"
#include "wire/frame.hpp"
#include "wire/manifest.hpp"
#include "wire/messages.hpp"
#include "wire/stream_decoder.hpp"

namespace tether::wire::bindings {
namespace {

using emscripten::val;

val view(const std::uint8_t* p, std::size_t n) {
  return val(emscripten::typed_memory_view(n, p));
}

// A growable buffer in WASM memory that JS fills through a view before a call.
class Staging {
 public:
  val reserve(std::size_t n) {
    bytes_.resize(n);
    return view(bytes_.data(), n);
  }
  ByteView get(std::size_t n) const { return ByteView(bytes_.data(), std::min(n, bytes_.size())); }

 private:
  Bytes bytes_;
};

std::optional<Sender> sender_from(const std::string& name) {
  if (name == "robot") return Sender::robot;
  if (name == "viewer") return Sender::viewer;
  if (name == "relay") return Sender::relay;
  return std::nullopt;
}

val drop_value(const Drop& d) {
  val o = val::object();
  o.set("ok", false);
  o.set("reason", std::string(drop_reason_name(d.reason)));
  o.set("field", d.field);
  o.set("detail", d.detail);
  return o;
}

// Whole-frame encoder and decoder with reusable buffers. Returned views stay valid until the next call.
class Encoder {
 public:
  val input(std::size_t n) { return staging_.reserve(n); }

  // `meta_json` is "" for no meta. Returns a view of the frame, or the error name as a string.
  val data_frame(const std::string& ch, double seq, double ts, const std::string& delivery,
                 const std::string& meta_json, std::size_t payload_len) {
    FrameHeader h;
    auto d = delivery_from_name(delivery);
    if (!d) return val(std::string(frame_error_name(FrameError::invalid_header)));
    h.ch = ch;
    if (!(seq >= 0 && seq <= double(kMaxSafeInteger)) || seq != double(std::int64_t(seq)))
      return val(std::string(frame_error_name(FrameError::invalid_header)));
    h.seq = std::int64_t(seq);
    h.ts = ts;
    h.delivery = *d;
    if (!meta_json.empty()) {
      JsonParse meta = parse_json(ByteView(std::string_view(meta_json)));
      if (!meta.ok() || !meta.value.is_object())
        return val(std::string(frame_error_name(FrameError::invalid_header)));
      h.meta = std::move(meta.value);
    }
    out_.clear();
    if (auto e = append_data_frame(out_, h, staging_.get(payload_len)))
      return val(std::string(frame_error_name(*e)));
    return view(out_.data(), out_.size());
  }

  // Decodes a buffer holding exactly one data frame (one WebSocket message). Returns
  // [headerAddr, headerLen, payloadAddr, payloadLen] into the staged input, or the error name.
  val decode_frame(std::size_t n) {
    auto r = decode_data_frame(staging_.get(n));
    if (!r) return val(std::string(frame_error_name(r.error())));
    spans_[0] = std::uint32_t(reinterpret_cast<std::uintptr_t>(r->header_json.data));
    spans_[1] = std::uint32_t(r->header_json.size);
    spans_[2] = std::uint32_t(reinterpret_cast<std::uintptr_t>(r->payload.data));
    spans_[3] = std::uint32_t(r->payload.size);
    return val(emscripten::typed_memory_view(4, spans_));
  }

  val control_frame(const std::string& json) {
    out_.clear();
    if (auto e = append_control_frame(out_, json)) return val(std::string(frame_error_name(*e)));
    return view(out_.data(), out_.size());
  }

 private:
  Staging staging_;
  Bytes out_;
  std::uint32_t spans_[4] = {};
};

// Incremental data-frame decoder. feed() returns how many frames completed, or -1 when the
// stream failed. For frame i, spans()[4i..4i+3] are the addresses and lengths of its header JSON
// and payload in WASM memory (HEAPU8 offsets), valid until the next feed().
class DataStream {
 public:
  val input(std::size_t n) { return staging_.reserve(n); }

  int feed(std::size_t n) {
    spans_.clear();
    auto e = decoder_.feed(staging_.get(n), [this](const DataFrame& f) {
      spans_.push_back(std::uint32_t(reinterpret_cast<std::uintptr_t>(f.header_json.data)));
      spans_.push_back(std::uint32_t(f.header_json.size));
      spans_.push_back(std::uint32_t(reinterpret_cast<std::uintptr_t>(f.payload.data)));
      spans_.push_back(std::uint32_t(f.payload.size));
    });
    return e ? -1 : int(spans_.size() / 4);
  }
  val spans() const { return val(emscripten::typed_memory_view(spans_.size(), spans_.data())); }
  std::string error() const {
    return decoder_.error() ? std::string(frame_error_name(*decoder_.error())) : std::string();
  }
  // Reports a frame cut off by the stream's end or reset.
  std::string finish() {
    auto e = decoder_.finish();
    return e ? std::string(frame_error_name(*e)) : std::string();
  }
  double buffered() const { return double(decoder_.buffered()); }

 private:
  Staging staging_;
  DataStreamDecoder decoder_;
  std::vector<std::uint32_t> spans_;
};

// Incremental control-stream decoder; spans()[2i..2i+1] locate message i's JSON text.
class ControlStream {
 public:
  val input(std::size_t n) { return staging_.reserve(n); }
  int feed(std::size_t n) {
    spans_.clear();
    auto e = decoder_.feed(staging_.get(n), [this](ByteView m) {
      spans_.push_back(std::uint32_t(reinterpret_cast<std::uintptr_t>(m.data)));
      spans_.push_back(std::uint32_t(m.size));
    });
    return e ? -1 : int(spans_.size() / 2);
  }
  val spans() const { return val(emscripten::typed_memory_view(spans_.size(), spans_.data())); }
  std::string error() const {
    return decoder_.error() ? std::string(frame_error_name(*decoder_.error())) : std::string();
  }
  std::string finish() {
    auto e = decoder_.finish();
    return e ? std::string(frame_error_name(*e)) : std::string();
  }
  double buffered() const { return double(decoder_.buffered()); }

 private:
  Staging staging_;
  ControlStreamDecoder decoder_;
  std::vector<std::uint32_t> spans_;
};

// Validates one message. Returns {ok: true, type, json} with the normalised JSON text, or a drop.
val parse_message_text(const std::string& text, const std::string& sender) {
  auto from = sender_from(sender);
  if (!from) {
    val o = val::object();
    o.set("ok", false);
    o.set("reason", std::string("bad_sender"));
    o.set("field", std::string());
    o.set("detail", "sender must be \"robot\", \"viewer\" or \"relay\", not \"" + sender + "\"");
    return o;
  }
  auto r = parse_message(ByteView(std::string_view(text)), *from);
  if (!r) return drop_value(r.error());
  val o = val::object();
  o.set("ok", true);
  o.set("type", std::string(message_type_name(r->type)));
  o.set("json", encode_message(r.value()));
  return o;
}

// Session-level hello checks: returns "" or the error code name.
std::string check_hello_text(const std::string& text, const std::string& endpoint) {
  auto from = endpoint == "robot" ? Sender::robot : Sender::viewer;
  auto r = parse_message(ByteView(std::string_view(text)), from);
  if (!r) return std::string(error_name(ErrorCode::invalid_control));
  auto e = check_hello(r.value(), endpoint == "robot" ? Role::robot : Role::viewer);
  return e ? std::string(error_name(*e)) : std::string();
}

// Returns {ok: true, json} with the normal form, or {ok: false, errors: [{code, path, message}]}.
val validate_manifest_text(const std::string& text) {
  val o = val::object();
  JsonParse parsed = parse_json(ByteView(std::string_view(text)));
  if (!parsed.ok()) {
    val errors = val::array();
    val e = val::object();
    e.set("code", std::string("not_an_object"));
    e.set("path", std::string());
    e.set("message", std::string("the manifest is not JSON: ") + json_error_name(parsed.error));
    errors.call<void>("push", e);
    o.set("ok", false);
    o.set("errors", errors);
    return o;
  }
  auto r = validate_manifest(parsed.value);
  if (!r) {
    val errors = val::array();
    for (const auto& m : r.error()) {
      val e = val::object();
      e.set("code", std::string(manifest_error_name(m.code)));
      e.set("path", m.path);
      e.set("message", m.message);
      errors.call<void>("push", e);
    }
    o.set("ok", false);
    o.set("errors", errors);
    return o;
  }
  o.set("ok", true);
  o.set("json", to_json(r.value()));
  return o;
}

val error_codes() {
  val list = val::array();
  for (std::size_t i = 0; i < kErrorCodeCount; ++i) {
    const auto& info = error_info(static_cast<ErrorCode>(i));
    val e = val::object();
    e.set("code", std::string(info.name));
    e.set("terminal", info.terminal);
    e.set("finalForClient", info.final_for_client);
    e.set("fix", std::string(info.fix));
    list.call<void>("push", e);
  }
  return list;
}

val frame_errors() {
  val o = val::object();
  for (std::size_t i = 0; i < kFrameErrorCount; ++i) {
    const auto e = static_cast<FrameError>(i);
    val info = val::object();
    info.set("message", std::string(frame_error_text(e)));
    info.set("code", std::string(error_name(frame_error_code(e))));
    o.set(std::string(frame_error_name(e)), info);
  }
  return o;
}

val limits() {
  val o = val::object();
  o.set("protocolVersion", kProtocolVersion);
  o.set("manifestVersion", kManifestVersion);
  o.set("maxHeaderBytes", double(kMaxHeaderBytes));
  o.set("maxFrameBytes", double(kMaxFrameBytes));
  o.set("maxControlBytes", double(kMaxControlBytes));
  o.set("maxPublishBytes", double(kMaxPublishBytes));
  o.set("maxChannelIdChars", double(kMaxChannelIdChars));
  o.set("maxSdpBytes", double(kMaxSdpBytes));
  o.set("maxRtcTracks", double(kMaxRtcTracks));
  return o;
}

}  // namespace

EMSCRIPTEN_BINDINGS(tether_wire) {
  using namespace emscripten;
  class_<Encoder>("WireCodec")
      .constructor<>()
      .function("input", &Encoder::input)
      .function("dataFrame", &Encoder::data_frame)
      .function("decodeFrame", &Encoder::decode_frame)
      .function("controlFrame", &Encoder::control_frame);
  class_<DataStream>("WireDataStream")
      .constructor<>()
      .function("input", &DataStream::input)
      .function("feed", &DataStream::feed)
      .function("spans", &DataStream::spans)
      .function("error", &DataStream::error)
      .function("finish", &DataStream::finish)
      .function("buffered", &DataStream::buffered);
  class_<ControlStream>("WireControlStream")
      .constructor<>()
      .function("input", &ControlStream::input)
      .function("feed", &ControlStream::feed)
      .function("spans", &ControlStream::spans)
      .function("error", &ControlStream::error)
      .function("finish", &ControlStream::finish)
      .function("buffered", &ControlStream::buffered);
  function("wireParseMessage", &parse_message_text);
  function("wireCheckHello", &check_hello_text);
  function("wireValidateManifest", &validate_manifest_text);
  function("wireErrorCodes", &error_codes);
  function("wireLimits", &limits);
  function("wireFrameErrors", &frame_errors);
}

}  // namespace tether::wire::bindings
