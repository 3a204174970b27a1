// Embind surface of the wire core. Marshalling only (DESIGN.md rule 4): every decision is made by
// src/wire. The JS wrapper with the public API is web/glue/wire.js.
//
// The data-frame path is shaped by what an Embind call costs here. This module is built with
// DYNAMIC_EXECUTION=0 (workerd forbids eval), so every call goes through Embind's generic invoker:
// a few hundred ns, more with a std::string argument or a `val` result, against tens of ns for the
// C++ work on a small frame (bench/README.md). So the hot path makes one call per frame, or one
// per stream chunk, with numbers in and an int out:
// - bytes in: each object owns a staging buffer; JS learns its address from reserve() and copies
//   into HEAPU8 itself, calling reserve() again only when a bigger buffer is needed;
// - results out: written to a fixed `outbox` of doubles that JS reads through a Float64Array.
//   A decoded frame is a record of doubles (layout: wireFrameRecordLayout()) with the header's
//   fields as the core parsed them, so JS never parses the header JSON a second time;
// - channel ids are numbered per decoder, so JS makes each one a string once, not once per frame;
// - errors: the call returns -1 and error() names the reason.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/json.hpp"
#include "staging.hpp"
#include "wire/errors.hpp"
#include "wire/frame.hpp"
#include "wire/manifest.hpp"
#include "wire/messages.hpp"
#include "wire/stream_decoder.hpp"

namespace tether::wire::bindings {
namespace {

using emscripten::val;

using tether::bindings::address_of;
using tether::bindings::Staging;

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

// Channel ids one decoder has seen, numbered in order of first sight. Bounded so that a peer
// inventing ids cannot grow it; past the bound, frames carry no number and JS reads their header
// text instead.
class ChannelNames {
 public:
  static constexpr std::size_t kMaxNamed = 256;
  // Reserved once, so the strings never move and the map's keys can view them.
  ChannelNames() { names_.reserve(kMaxNamed); }
  double id_of(const std::string& ch) {
    if (auto it = ids_.find(ch); it != ids_.end()) return it->second;
    if (names_.size() == kMaxNamed) return -1;
    names_.push_back(ch);
    const double id = double(names_.size() - 1);
    ids_.emplace(names_.back(), id);
    return id;
  }
  double count() const { return double(names_.size()); }
  std::string name(std::size_t id) const { return id < names_.size() ? names_[id] : std::string(); }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string_view, double> ids_;
};

// One decoded data frame as JS reads it. Addresses are HEAPU8 offsets. kChannel is -1 when JS
// must build the header from its text: it has meta, or its channel id is not numbered.
enum RecordField : std::size_t {
  kHeaderAddr,
  kHeaderLen,
  kPayloadAddr,
  kPayloadLen,
  kSeq,
  kTs,
  kDelivery,  // the Delivery value; wireDeliveryNames() names it
  kChannel,
  kRecordSize
};

void append_record(std::vector<double>& out, const DataFrame& f, ChannelNames& names) {
  const std::size_t at = out.size();
  out.resize(at + kRecordSize);
  double* r = out.data() + at;
  r[kHeaderAddr] = address_of(f.header_json.data);
  r[kHeaderLen] = double(f.header_json.size);
  r[kPayloadAddr] = address_of(f.payload.data);
  r[kPayloadLen] = double(f.payload.size);
  r[kSeq] = double(f.header.seq);
  r[kTs] = f.header.ts;
  r[kDelivery] = double(static_cast<int>(f.header.delivery));
  r[kChannel] = f.header.meta ? -1 : names.id_of(f.header.ch);
}

// What a call leaves for JS to read, at a fixed address (outbox()).
// After a decode: [records address, named channel count]. After an encode: [bytes address, length].
struct Outbox {
  double at = 0;
  double count = 0;
};

// Whole-frame encoder and decoder with reusable buffers; results stay valid until the next call.
class Encoder {
 public:
  double reserve(std::size_t n) { return staging_.reserve(n); }
  double outbox() const { return address_of(&outbox_); }
  std::string error() const { return std::string(frame_error_name(error_)); }

  // The channel and delivery of the frames that follow: JS sends them only when they change.
  void set_channel(const std::string& ch) { header_.ch = ch; }
  void set_delivery(const std::string& name) { delivery_ = delivery_from_name(name); }

  // Encodes a data frame around the staged payload; 0 or -1.
  int data_frame(double seq, double ts, std::size_t payload_len) {
    header_.meta.reset();
    return encode(seq, ts, payload_len);
  }
  int data_frame_with_meta(double seq, double ts, std::size_t payload_len,
                           const std::string& meta_json) {
    JsonParse meta = parse_json(ByteView(std::string_view(meta_json)));
    if (!meta.ok() || !meta.value.is_object()) return fail(FrameError::invalid_header);
    header_.meta = std::move(meta.value);
    return encode(seq, ts, payload_len);
  }

  // Decodes the staged buffer as exactly one data frame (one WebSocket message); 0 or -1.
  int decode_frame(std::size_t n) {
    auto r = decode_data_frame(staging_.get(n));
    if (!r) return fail(r.error());
    records_.clear();
    append_record(records_, r.value(), names_);
    outbox_ = {address_of(records_.data()), names_.count()};
    return 0;
  }
  std::string channel_name(std::size_t id) const { return names_.name(id); }

  int control_frame(const std::string& json) {
    out_.clear();
    if (auto e = append_control_frame(out_, json)) return fail(*e);
    outbox_ = {address_of(out_.data()), double(out_.size())};
    return 0;
  }

 private:
  int fail(FrameError e) {
    error_ = e;
    return -1;
  }
  int encode(double seq, double ts, std::size_t payload_len) {
    // A JS number must be a safe integer to become a seq; anything else is not one.
    if (!delivery_ || !(seq >= 0 && seq <= double(kMaxSafeInteger)) ||
        seq != double(std::int64_t(seq)))
      return fail(FrameError::invalid_header);
    header_.seq = std::int64_t(seq);
    header_.ts = ts;
    header_.delivery = *delivery_;
    out_.clear();
    if (auto e = append_data_frame(out_, header_, staging_.get(payload_len))) return fail(*e);
    outbox_ = {address_of(out_.data()), double(out_.size())};
    return 0;
  }

  Staging staging_;
  Outbox outbox_;
  FrameError error_ = FrameError::invalid_header;
  FrameHeader header_;
  std::optional<Delivery> delivery_;
  Bytes out_;
  std::vector<double> records_;
  ChannelNames names_;
};

// Incremental data-frame decoder. feed() returns how many frames completed, or -1 once the
// stream failed; their records are valid until the next feed().
class DataStream {
 public:
  double reserve(std::size_t n) { return staging_.reserve(n); }
  double outbox() const { return address_of(&outbox_); }

  int feed(std::size_t n) {
    records_.clear();
    auto e = decoder_.feed(staging_.get(n),
                           [this](const DataFrame& f) { append_record(records_, f, names_); });
    outbox_ = {address_of(records_.data()), names_.count()};
    return e ? -1 : int(records_.size() / kRecordSize);
  }
  std::string channel_name(std::size_t id) const { return names_.name(id); }
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
  Outbox outbox_;
  DataStreamDecoder decoder_;
  std::vector<double> records_;
  ChannelNames names_;
};

// Incremental control-stream decoder. feed() returns how many messages completed, or -1; message
// i's JSON text is at outbox address + [2i, 2i+1] as (address, length).
class ControlStream {
 public:
  double reserve(std::size_t n) { return staging_.reserve(n); }
  double outbox() const { return address_of(&outbox_); }
  int feed(std::size_t n) {
    spans_.clear();
    auto e = decoder_.feed(staging_.get(n), [this](ByteView m) {
      spans_.push_back(address_of(m.data));
      spans_.push_back(double(m.size));
    });
    outbox_ = {address_of(spans_.data()), double(spans_.size() / 2)};
    return e ? -1 : int(spans_.size() / 2);
  }
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
  Outbox outbox_;
  ControlStreamDecoder decoder_;
  std::vector<double> spans_;
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
  o.set("maxIdChars", double(kMaxIdChars));
  o.set("maxShortTextChars", double(kMaxShortTextChars));
  o.set("maxMessageTextChars", double(kMaxMessageTextChars));
  o.set("maxManifestChannels", double(kMaxManifestChannels));
  o.set("maxManifestPanels", double(kMaxManifestPanels));
  o.set("maxListEntries", double(kMaxListEntries));
  o.set("controlChannel", std::string(kControlChannel));
  return o;
}

// Where each field sits in a frame record, so that JS never hard-codes the layout.
val frame_record_layout() {
  val o = val::object();
  o.set("size", double(kRecordSize));
  o.set("headerAddr", double(kHeaderAddr));
  o.set("headerLen", double(kHeaderLen));
  o.set("payloadAddr", double(kPayloadAddr));
  o.set("payloadLen", double(kPayloadLen));
  o.set("seq", double(kSeq));
  o.set("ts", double(kTs));
  o.set("delivery", double(kDelivery));
  o.set("channel", double(kChannel));
  return o;
}

// Delivery names indexed by the value a frame record carries.
val delivery_names() {
  val list = val::array();
  for (Delivery d : {Delivery::latest, Delivery::reliable}) {
    list.set(static_cast<int>(d), std::string(delivery_name(d)));
  }
  return list;
}

// The closed sets JS reads, by the names the core gives them.
val enums() {
  auto list = [](std::size_t n, auto name) {
    val l = val::array();
    for (std::size_t i = 0; i < n; ++i) l.set(i, std::string(name(i)));
    return l;
  };
  val o = val::object();
  o.set("messageTypes", list(kMessageTypeCount, [](std::size_t i) {
          return message_type_name(static_cast<MessageType>(i));
        }));
  o.set("dropReasons", list(kDropReasonCount, [](std::size_t i) {
          return drop_reason_name(static_cast<DropReason>(i));
        }));
  o.set("frameErrors", list(kFrameErrorCount, [](std::size_t i) {
          return frame_error_name(static_cast<FrameError>(i));
        }));
  o.set("manifestErrors", list(kManifestErrorCodeCount, [](std::size_t i) {
          return manifest_error_name(static_cast<ManifestErrorCode>(i));
        }));
  o.set("errorCodes",
        list(kErrorCodeCount, [](std::size_t i) { return error_name(static_cast<ErrorCode>(i)); }));
  o.set("deliveries", delivery_names());
  val senders = val::array();
  for (Sender s : {Sender::robot, Sender::viewer, Sender::relay})
    senders.set(static_cast<int>(s), std::string(sender_name(s)));
  o.set("senders", senders);
  return o;
}

}  // namespace

EMSCRIPTEN_BINDINGS(tether_wire) {
  using namespace emscripten;
  class_<Encoder>("WireCodec")
      .constructor<>()
      .function("reserve", &Encoder::reserve)
      .function("outbox", &Encoder::outbox)
      .function("error", &Encoder::error)
      .function("setChannel", &Encoder::set_channel)
      .function("setDelivery", &Encoder::set_delivery)
      .function("dataFrame", &Encoder::data_frame)
      .function("dataFrameWithMeta", &Encoder::data_frame_with_meta)
      .function("decodeFrame", &Encoder::decode_frame)
      .function("channelName", &Encoder::channel_name)
      .function("controlFrame", &Encoder::control_frame);
  class_<DataStream>("WireDataStream")
      .constructor<>()
      .function("reserve", &DataStream::reserve)
      .function("outbox", &DataStream::outbox)
      .function("feed", &DataStream::feed)
      .function("channelName", &DataStream::channel_name)
      .function("error", &DataStream::error)
      .function("finish", &DataStream::finish)
      .function("buffered", &DataStream::buffered);
  class_<ControlStream>("WireControlStream")
      .constructor<>()
      .function("reserve", &ControlStream::reserve)
      .function("outbox", &ControlStream::outbox)
      .function("feed", &ControlStream::feed)
      .function("error", &ControlStream::error)
      .function("finish", &ControlStream::finish)
      .function("buffered", &ControlStream::buffered);
  function("wireParseMessage", &parse_message_text);
  function("wireCheckHello", &check_hello_text);
  function("wireValidateManifest", &validate_manifest_text);
  function("wireErrorCodes", &error_codes);
  function("wireLimits", &limits);
  function("wireFrameErrors", &frame_errors);
  function("wireFrameRecordLayout", &frame_record_layout);
  function("wireDeliveryNames", &delivery_names);
  function("wireEnums", &enums);
}

}  // namespace tether::wire::bindings
