// Embind surface of the bus core. Marshalling only (DESIGN.md rule 4): JSON text and bytes in,
// JSON text (shaped by src/bus/json_out.cpp) and typed-memory views out; every decision is made
// by src/bus. The JS wrapper with the public API is web/glue/bus.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "bus/bus.hpp"
#include "bus/json_out.hpp"
#include "bus/scan.hpp"
#include "bus/shares.hpp"
#include "bus/transfer.hpp"

namespace tether::bus::bindings {
namespace {

using emscripten::val;

std::string text(const Json& j) {
  std::string out;
  append_json(out, j, JsonNumbers::js_double);
  return out;
}

Json parse(const std::string& s) {
  JsonParse p = parse_json(ByteView(std::string_view(s)));
  return p.ok() ? std::move(p.value) : Json(nullptr);
}

std::string sent_text(const Result<Sent, BusError>& r) {
  if (!r) return text(error_json(r.error()));
  return text(Json{{"ok", true}, {"id", r->envelope.id}, {"envelope", envelope_to_json(r->envelope)}});
}

std::optional<std::string> opt(const std::string& s, bool present) {
  if (!present) return std::nullopt;
  return s;
}

std::string bad_type(const std::string& type) {
  return text(error_json(bus_error(BusErrorCode::unknown_type, "type", "\"" + type + "\" is not a bus message type")));
}

// Received text crosses as bytes: JS encodes it straight into this staging buffer
// (TextEncoder.encodeInto into HEAPU8) and then makes one call with numbers only; a parse result
// goes back as UTF-8 text at a fixed outbox [address, length] that JS decodes once. Embind's
// std::string arguments and results cost a malloc and a JS UTF-8 loop each (bench/README.md).
// One inbox serves every caller: JS is single-threaded and every call consumes the staged bytes
// before it returns.
double address_of(const void* p) { return double(reinterpret_cast<std::uintptr_t>(p)); }

class Inbox {
 public:
  // The staging buffer's address once it holds at least n bytes; it moves only here.
  double reserve(std::size_t n) {
    if (n > bytes_.size()) bytes_.resize(n);
    return address_of(bytes_.data());
  }
  ByteView staged(std::size_t n) const { return ByteView(bytes_.data(), std::min(n, bytes_.size())); }
  double outbox() const { return address_of(outbox_); }
  // Parses the staged bytes; the result text ({ok:true, envelope} or a BusError) is at the outbox.
  void parse(std::size_t n) {
    const ByteView in = staged(n);
    out_.clear();
    if (auto s = scan_envelope(in)) {
      append_scanned_result(out_, *s);  // one pass, payload text verbatim
    } else {
      auto e = parse_envelope_dom(in);  // every refusal, and the shapes the scanner leaves
      if (!e) append_json(out_, error_json(e.error()), JsonNumbers::js_double);
      else append_json(out_, Json{{"ok", true}, {"envelope", envelope_to_json(e.value())}}, JsonNumbers::js_double);
    }
    outbox_[0] = address_of(out_.data());
    outbox_[1] = double(out_.size());
  }

 private:
  Bytes bytes_;
  std::string out_;
  double outbox_[2] = {0, 0};
};

Inbox& inbox() {
  static Inbox box;
  return box;
}

class BusCore {
 public:
  // {ok:true} or a BusError, as JSON text; the bus exists only after ok.
  std::string init(const std::string& options) {
    auto c = config_from_json(parse(options));
    if (!c) return text(error_json(c.error()));
    bus_ = std::make_unique<Bus>(std::move(c.value()));
    return "{\"ok\":true}";
  }
  void open(const std::string& conn, double now) { bus_->connection_open(conn, std::int64_t(now)); }
  void closed(const std::string& conn) { bus_->connection_closed(conn); }
  void roster(const std::string& conns_json) {
    std::vector<ConnId> v;
    Json j = parse(conns_json);
    if (j.is_array())
      for (const auto& c : j)
        if (c.is_string()) v.push_back(c.get<std::string>());
    bus_->roster(v);
  }
  void signaling_restored(double now) { bus_->signaling_restored(std::int64_t(now)); }
  bool is_open(const std::string& id) const { return bus_->is_open(id); }
  // The message is the inbox's first `len` staged bytes. Returns what the glue must do next:
  // bit 0 a transmit may be waiting, bit 1 there are events, bit 2 the message was delivered as
  // the text the glue passed (Bus::take_sole_scanned_message: the glue emits JSON.parse of its
  // own text, so the ordinary message costs no event text, copy or decode).
  int receive_staged(const std::string& conn, double len, double now) {
    bus_->receive(conn, inbox().staged(std::size_t(len)), std::int64_t(now));
    // Not while a transmit waits: the glue offers those before it delivers, and a transport that
    // delivers synchronously (a loopback) must not see a later message before this one.
    const int own = !bus_->may_transmit() && bus_->take_sole_scanned_message() ? 4 : 0;
    return pending() | own;
  }
  int pending() const { return (bus_->may_transmit() ? 1 : 0) | (bus_->has_events() ? 2 : 0); }
  std::string send(const std::string& to, const std::string& type, const std::string& payload, const std::string& topic,
                   bool has_topic, double now) {
    auto t = message_type_from_name(type);
    if (!t) return bad_type(type);
    return sent_text(bus_->send(to, *t, parse(payload), opt(topic, has_topic), std::int64_t(now)));
  }
  std::string broadcast(const std::string& type, const std::string& payload, const std::string& topic, bool has_topic,
                        double now) {
    auto t = message_type_from_name(type);
    if (!t) return bad_type(type);
    return sent_text(bus_->broadcast(*t, parse(payload), opt(topic, has_topic), std::int64_t(now)));
  }
  std::string request_history(const std::string& to, const std::string& count, double now) {
    return sent_text(bus_->request_history(to, parse(count), std::int64_t(now)));
  }
  std::string reply(bool command, const std::string& envelope, const std::string& extra, double now) {
    auto e = parse_envelope(ByteView(std::string_view(envelope)));
    if (!e) return text(error_json(e.error()));
    return sent_text(command ? bus_->respond(e.value(), parse(extra), std::int64_t(now))
                             : bus_->ack(e.value(), parse(extra), std::int64_t(now)));
  }
  std::string set_announce(const std::string& announce, double now) {
    return sent_text(bus_->set_announce(parse(announce), std::int64_t(now)));
  }
  std::string outcome(const std::string& id) {
    auto o = bus_->outcome(id);
    if (!o) return "";
    return *o == SendStatus::sent ? "sent" : "queued";
  }
  std::string last_broadcast() {
    return text(Json{{"sentTo", bus_->last_broadcast_accepted()}, {"rejectedBy", bus_->last_broadcast_rejected()}});
  }
  std::string handoff(const std::string& to, const std::string& request, double expires_at, double now) {
    auto h = bus_->handoff(to, request, std::int64_t(expires_at), std::int64_t(now));
    if (!h) return text(error_json(h.error()));
    return text(Json{{"ok", true}, {"handoff", outgoing_handoff_json(h.value())}});
  }
  std::string resume_handoff(const std::string& envelope, double now) {
    auto e = parse_envelope(ByteView(std::string_view(envelope)));
    if (!e) return text(error_json(e.error()));
    auto h = bus_->resume_handoff(e.value(), std::int64_t(now));
    if (!h) return text(error_json(h.error()));
    return text(Json{{"ok", true}, {"handoff", outgoing_handoff_json(h.value())}});
  }
  std::string note_sent(const std::string& envelope) {
    auto e = parse_envelope(ByteView(std::string_view(envelope)));
    if (!e) return text(error_json(e.error()));
    if (auto bad = bus_->note_sent(e.value())) return text(error_json(*bad));
    return R"({"ok":true})";
  }
  bool cancel_handoff(const std::string& id) { return bus_->cancel_handoff(id); }
  std::string pending_handoffs() {
    Json a = Json::array();
    for (const auto& h : bus_->pending_handoffs()) a.push_back(outgoing_handoff_json(h));
    return text(a);
  }
  std::string confirm_handoff(const std::string& key, double now) { return sent_text(bus_->confirm_handoff(key, std::int64_t(now))); }
  bool remember_handoff(const std::string& key) {
    auto k = parse_handoff_key(key);
    if (!k) return false;
    bus_->remember_handoff(*k);
    return true;
  }
  void tick(double now) { bus_->tick(std::int64_t(now)); }
  double next_wake() {
    auto w = bus_->next_wake_ms();
    return w ? double(*w) : -1.0;
  }
  // {token, peer, text} or null.
  val poll_transmit() {
    auto t = bus_->poll_transmit();
    if (!t) return val::null();
    val o = val::object();
    o.set("token", t->token);
    o.set("peer", t->conn);
    o.set("text", t->text);
    return o;
  }
  void transmit_result(std::uint32_t token, bool accepted) { bus_->transmit_result(token, accepted); }
  // JSON text of an event array, or "" when there is none (the common case costs nothing).
  std::string take_events() {
    auto events = bus_->take_events();
    if (events.empty()) return "";
    std::string out = "[";
    for (const auto& e : events) {
      if (out.size() > 1) out += ',';
      append_event_json(out, e, *bus_);
    }
    out += ']';
    return out;
  }
  std::string peers() {
    Json a = Json::array();
    for (const auto& p : bus_->peers()) a.push_back(peer_json(p));
    return text(a);
  }
  double queued(const std::string& stream) { return double(stream.empty() ? bus_->queued_total() : bus_->queued(stream)); }
  std::string history(double count, const std::string& for_stream) {
    Json a = Json::array();
    for (const auto& e : bus_->history(count < 0 ? kHistoryCapacity : std::size_t(count), for_stream))
      a.push_back(envelope_to_json(e));
    return text(a);
  }

 private:
  std::unique_ptr<Bus> bus_;
};

// The one-to-one transfer: a sender plan over staged file bytes.
class FilePlan {
 public:
  val input(std::size_t n) {
    if (n > kFileMaxBytes) return val::null();
    bytes_.resize(n);
    return val(emscripten::typed_memory_view(n, bytes_.data()));
  }
  std::string plan(const std::string& name, const std::string& mime, const std::string& kind, double chunk_size,
                   const std::string& transfer_id, double seed) {
    auto p = plan_file_send(ByteView(bytes_), name, mime, kind, std::uint32_t(chunk_size), transfer_id, std::uint64_t(seed));
    if (!p) return text(error_json(p.error()));
    offer_ = p->offer;
    return text(Json{{"ok", true}, {"offer", file_offer_json(offer_)}, {"complete", file_complete_payload(offer_)}});
  }
  std::string chunk(std::uint32_t index) { return text(file_chunk_payload(offer_, ByteView(bytes_), index)); }

 private:
  Bytes bytes_;
  FileOffer offer_;
};

class FileReceiverCore {
 public:
  FileReceiverCore(double max_file, double max_incomplete, double max_promised)
      : rx_(ReceiverLimits{std::uint64_t(max_file), std::size_t(max_incomplete), std::uint64_t(max_promised)}) {}
  std::string offer(const std::string& from, const std::string& payload) {
    auto o = rx_.offer(from, parse(payload));
    if (!o) return text(error_json(o.error()));
    return text(Json{{"ok", true}, {"offer", file_offer_json(o.value())}});
  }
  // The result as JSON text; the chunk bytes stay readable through data() until the next call.
  std::string chunk(const std::string& from, const std::string& payload) {
    auto c = rx_.chunk(from, parse(payload));
    if (!c) return text(error_json(c.error()));
    last_ = std::move(c->data);
    return text(Json{{"ok", true}, {"transferId", c->transfer_id}, {"index", c->index}, {"offset", c->offset}});
  }
  val data() { return val(emscripten::typed_memory_view(last_.size(), last_.data())); }
  std::string complete(const std::string& from, const std::string& payload) {
    auto o = rx_.complete(from, parse(payload));
    if (!o) return text(error_json(o.error()));
    return text(Json{{"ok", true}, {"offer", file_offer_json(o.value())}});
  }
  bool abort(const std::string& id) { return rx_.abort(id); }
  double incomplete() const { return double(rx_.incomplete()); }
  double promised() const { return double(rx_.promised_bytes()); }

 private:
  FileReceiver rx_;
  Bytes last_;
};

std::string serialize_envelope_js(const std::string& s) {
  auto e = parse_envelope(ByteView(std::string_view(s)));
  if (!e) return text(error_json(e.error()));
  auto t = encode_envelope(e.value());
  if (!t) return text(error_json(t.error()));
  return text(Json{{"ok", true}, {"text", t.value()}});
}

bool is_transient_js(const std::string& type) {
  auto t = message_type_from_name(type);
  return t && is_transient(*t);
}

std::string match_receipt_js(const std::string& envelope, const std::string& request_id, const std::string& peer,
                             const std::string& instance, bool has_instance) {
  auto e = parse_envelope(ByteView(std::string_view(envelope)));
  if (!e) return "null";
  auto r = match_receipt(e.value(), request_id, peer,
                         has_instance ? std::optional<std::string_view>(instance) : std::nullopt);
  if (!r) return "null";
  return text(receipt_json(*r, e.value(), request_id, peer));
}

// null (not a share command), {ok:true, command, share, path} or a BusError, for envelope text.
std::string parse_share_command_js(const std::string& envelope) {
  auto e = parse_envelope(ByteView(std::string_view(envelope)));
  if (!e) return text(error_json(e.error()));
  auto c = parse_share_command(e.value());
  if (!c) return "null";
  if (!c->ok()) return text(error_json(c->error()));
  return text(Json{{"ok", true},
                   {"command", std::string(share_command_name(c->value().kind))},
                   {"share", c->value().share},
                   {"path", c->value().path}});
}

// {ok:true, payload} (the command payload) or a BusError.
std::string share_command_payload_js(const std::string& command, const std::string& share,
                                     const std::string& path) {
  ShareCommand c;
  if (command == share_command_name(ShareCommand::Kind::list_files))
    c.kind = ShareCommand::Kind::list_files;
  else if (command == share_command_name(ShareCommand::Kind::get_file))
    c.kind = ShareCommand::Kind::get_file;
  else if (command != share_command_name(ShareCommand::Kind::shares))
    return text(error_json(bus_error(BusErrorCode::bad_field, "command",
                                     "a share command is shares, list-files or get-file")));
  c.share = share;
  c.path = path;
  auto p = share_command_payload(c);
  if (!p) return text(error_json(p.error()));
  return text(Json{{"ok", true}, {"payload", p.value()}});
}

std::string file_ack_refusal_js(const std::string& payload, const std::string& error) {
  return text(file_ack_refusal(parse(payload), error));
}

// The file_ack for an offer the receiver verified ({ok:true, offer} from complete()).
std::string file_ack_received_js(const std::string& offer, const std::string& saved_path) {
  auto o = parse_file_offer(parse(offer), kFileMaxBytes);
  if (!o) return text(error_json(o.error()));
  return text(Json{{"ok", true}, {"payload", file_ack_received(o.value(), saved_path)}});
}

std::string limits_js() { return text(limits_json()); }

}  // namespace
}  // namespace tether::bus::bindings

EMSCRIPTEN_BINDINGS(tether_bus) {
  using namespace emscripten;
  using namespace tether::bus::bindings;
  class_<BusCore>("BusCore")
      .constructor<>()
      .function("init", &BusCore::init)
      .function("open", &BusCore::open)
      .function("closed", &BusCore::closed)
      .function("roster", &BusCore::roster)
      .function("signalingRestored", &BusCore::signaling_restored)
      .function("isOpen", &BusCore::is_open)
      .function("receiveStaged", &BusCore::receive_staged)
      .function("pending", &BusCore::pending)
      .function("send", &BusCore::send)
      .function("broadcast", &BusCore::broadcast)
      .function("requestHistory", &BusCore::request_history)
      .function("reply", &BusCore::reply)
      .function("setAnnounce", &BusCore::set_announce)
      .function("outcome", &BusCore::outcome)
      .function("lastBroadcast", &BusCore::last_broadcast)
      .function("handoff", &BusCore::handoff)
      .function("resumeHandoff", &BusCore::resume_handoff)
      .function("noteSent", &BusCore::note_sent)
      .function("cancelHandoff", &BusCore::cancel_handoff)
      .function("pendingHandoffs", &BusCore::pending_handoffs)
      .function("confirmHandoff", &BusCore::confirm_handoff)
      .function("rememberHandoff", &BusCore::remember_handoff)
      .function("tick", &BusCore::tick)
      .function("nextWake", &BusCore::next_wake)
      .function("pollTransmit", &BusCore::poll_transmit)
      .function("transmitResult", &BusCore::transmit_result)
      .function("takeEvents", &BusCore::take_events)
      .function("peers", &BusCore::peers)
      .function("queued", &BusCore::queued)
      .function("history", &BusCore::history);
  class_<FilePlan>("BusFilePlan")
      .constructor<>()
      .function("input", &FilePlan::input)
      .function("plan", &FilePlan::plan)
      .function("chunk", &FilePlan::chunk);
  class_<FileReceiverCore>("BusFileReceiver")
      .constructor<double, double, double>()
      .function("offer", &FileReceiverCore::offer)
      .function("chunk", &FileReceiverCore::chunk)
      .function("data", &FileReceiverCore::data)
      .function("complete", &FileReceiverCore::complete)
      .function("abort", &FileReceiverCore::abort)
      .function("incomplete", &FileReceiverCore::incomplete)
      .function("promised", &FileReceiverCore::promised);
  function("busInboxReserve", +[](double n) { return inbox().reserve(std::size_t(n)); });
  function("busInboxOutbox", +[]() { return inbox().outbox(); });
  function("busInboxParse", +[](double n) { inbox().parse(std::size_t(n)); });
  function("busInboxScan", +[](double n) { return tether::bus::scan_envelope(inbox().staged(std::size_t(n))).has_value(); });
  function("busSerializeEnvelope", &serialize_envelope_js);
  function("busIsTransient", &is_transient_js);
  function("busMatchReceipt", &match_receipt_js);
  function("busLimits", &limits_js);
  function("busParseShareCommand", &parse_share_command_js);
  function("busShareCommandPayload", &share_command_payload_js);
  function("busFileAckRefusal", &file_ack_refusal_js);
  function("busFileAckReceived", &file_ack_received_js);
  function("busEnvelopeVersion", +[]() { return tether::bus::kEnvelopeVersion; });
}
