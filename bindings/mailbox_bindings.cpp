// Embind surface of the hosted mailbox core (src/mailbox/). Marshalling only (DESIGN.md rule 4):
// request bytes and entropy go through one staging buffer, actions and events leave as plain
// objects, limits as numbers. The JS wrapper with the public API is web/glue/mailbox.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>
#include <vector>

#include "common/bytes.hpp"
#include "common/json.hpp"
#include "mailbox/mailbox.hpp"
#include "mailbox/request.hpp"

namespace tether::mailbox::bindings {
namespace {

using emscripten::val;

const char* event_kind(Event::Kind k) {
  switch (k) {
    case Event::Kind::record_skipped: return "record_skipped";
    case Event::Kind::storage_failed: return "storage_failed";
  }
  return "record_skipped";
}

struct ActionToJs {
  val operator()(const Persist& p) const {
    val o = val::object();
    o.set("kind", std::string("persist"));
    o.set("token", static_cast<double>(p.token));
    val puts = val::array();
    for (const Put& put : p.puts) {
      val pair = val::array();
      pair.call<void>("push", put.key, put.value);
      puts.call<void>("push", pair);
    }
    o.set("puts", puts);
    val deletes = val::array();
    for (const std::string& key : p.deletes) deletes.call<void>("push", key);
    o.set("deletes", deletes);
    return o;
  }
  val operator()(const Respond& r) const {
    val o = val::object();
    o.set("kind", std::string("respond"));
    o.set("request", static_cast<double>(r.request));
    o.set("status", r.status);
    o.set("body", r.body);
    o.set("retryAfterMs", static_cast<double>(r.retry_after_ms));
    return o;
  }
  val operator()(const AcceptReader& a) const {
    val o = val::object();
    o.set("kind", std::string("accept"));
    o.set("request", static_cast<double>(a.request));
    o.set("reader", static_cast<double>(a.reader));
    return o;
  }
  val operator()(const Push& p) const {
    val o = val::object();
    o.set("kind", std::string("push"));
    o.set("reader", static_cast<double>(p.reader));
    o.set("text", p.text);
    return o;
  }
  val operator()(const CloseReader& c) const {
    val o = val::object();
    o.set("kind", std::string("close"));
    o.set("reader", static_cast<double>(c.reader));
    o.set("code", c.code);
    o.set("reason", c.reason);
    return o;
  }
};

class MailboxCore {
 public:
  bool load_record(const std::string& key, const std::string& value) {
    return core_.load_record(key, value);
  }
  void loaded(double now) { core_.loaded(static_cast<TimeMs>(now)); }
  // The body then the entropy, written by JS straight into WASM memory.
  val stage(int n) {
    staging_.resize(static_cast<std::size_t>(n < 0 ? 0 : n));
    return val(emscripten::typed_memory_view(staging_.size(), staging_.data()));
  }
  void request(double id, const std::string& method, const std::string& target,
               const std::string& authorization, int body_len, int entropy_len, double now) {
    const std::size_t body =
        std::min(staging_.size(), static_cast<std::size_t>(body_len < 0 ? 0 : body_len));
    const std::size_t entropy = std::min(
        staging_.size() - body, static_cast<std::size_t>(entropy_len < 0 ? 0 : entropy_len));
    core_.handle_request(static_cast<RequestId>(id), method, target, authorization,
                         ByteView(staging_.data(), body), ByteView(staging_.data() + body, entropy),
                         static_cast<TimeMs>(now));
  }
  void persisted(double token, bool ok, double now) {
    core_.handle_persisted(static_cast<std::uint64_t>(token), ok, static_cast<TimeMs>(now));
  }
  void reader_closed(double reader, double now) {
    core_.handle_reader_closed(static_cast<ReaderId>(reader), static_cast<TimeMs>(now));
  }
  double restore_reader(double now) {
    return static_cast<double>(core_.restore_reader(static_cast<TimeMs>(now)));
  }
  void handle_timeout(double now) { core_.handle_timeout(static_cast<TimeMs>(now)); }
  val poll_action() {
    auto a = core_.poll_action();
    if (!a) return val::null();
    return std::visit(ActionToJs{}, *a);
  }
  val poll_event() {
    auto e = core_.poll_event();
    if (!e) return val::null();
    val o = val::object();
    o.set("kind", std::string(event_kind(e->kind)));
    o.set("key", e->key);
    o.set("detail", e->detail);
    return o;
  }
  double poll_timeout() const {
    auto t = core_.poll_timeout();
    return t ? static_cast<double>(*t) : -1.0;
  }
  val info() const {
    val o = val::object();
    o.set("exists", core_.exists());
    o.set("id", core_.id());
    o.set("failed", core_.failed());
    o.set("storedMessages", static_cast<double>(core_.stored_messages()));
    o.set("storedBytes", static_cast<double>(core_.stored_bytes()));
    o.set("records", static_cast<double>(core_.records()));
    o.set("readers", static_cast<double>(core_.readers()));
    return o;
  }
  // Every record the core's state amounts to, as {key: value} JSON text (tests compare storage).
  std::string snapshot() const {
    Json j = Json::object();
    for (const auto& [k, v] : core_.snapshot()) j[k] = v;
    return to_json(j);
  }

 private:
  Mailbox core_;
  Bytes staging_;
};

val limits() {
  val o = val::object();
  auto n = [&](const char* name, double v) { o.set(name, v); };
  n("entropyBytes", kEntropyBytes);
  n("maxTextBytes", kMaxTextBytes);
  n("maxRequestBytes", kMaxRequestBytes);
  n("maxTargetBytes", kMaxTargetBytes);
  n("maxMessageIdBytes", kMaxMessageIdBytes);
  n("maxNameBytes", kMaxNameBytes);
  n("maxStoredMessages", kMaxStoredMessages);
  n("maxStoredBytes", kMaxStoredBytes);
  n("maxRecords", kMaxRecords);
  n("retentionMs", static_cast<double>(kRetentionMs));
  n("statusRetentionMs", static_cast<double>(kStatusRetentionMs));
  n("maxListCount", kMaxListCount);
  n("maxListBytes", kMaxListBytes);
  n("maxAckBatch", kMaxAckBatch);
  n("maxReaders", kMaxReaders);
  n("maxPairs", kMaxPairs);
  n("maxPendingPairs", kMaxPendingPairs);
  n("maxOpenCodes", kMaxOpenCodes);
  n("codeTtlMs", static_cast<double>(kCodeTtlMs));
  n("pendingPairTtlMs", static_cast<double>(kPendingPairTtlMs));
  n("floodBurst", kFloodBurst);
  n("floodRefillMs", static_cast<double>(kFloodRefillMs));
  return o;
}

// Every documented error: {code: {status, fix}}.
val errors() {
  val o = val::object();
  for (int i = 0; i < kErrorCodeCount; ++i) {
    const auto c = static_cast<ErrorCode>(i);
    val e = val::object();
    e.set("status", error_status(c));
    e.set("fix", std::string(error_fix(c)));
    o.set(std::string(error_name(c)), e);
  }
  return o;
}

val error_value(const ApiError& e) {
  val o = val::object();
  o.set("ok", false);
  o.set("status", error_status(e.code));
  o.set("error", std::string(error_name(e.code)));
  o.set("body", error_body(e));
  o.set("retryAfterMs", static_cast<double>(e.retry_after_ms));
  return o;
}

// The host's own failures (storage unreadable, a misrouted call) in the documented shape.
val error_response(const std::string& code, const std::string& message, double retry_after_ms) {
  for (int i = 0; i < kErrorCodeCount; ++i) {
    const auto c = static_cast<ErrorCode>(i);
    if (error_name(c) == code) {
      ApiError e = api_error(c, message);
      e.retry_after_ms = static_cast<TimeMs>(retry_after_ms);
      return error_value(e);
    }
  }
  return error_value(api_error(ErrorCode::internal, "unknown error code " + code));
}

val front_door_js(const std::string& method, const std::string& target, double content_length,
                  bool upgrade) {
  auto r = front_door(method, target, static_cast<std::int64_t>(content_length), upgrade);
  if (!r) return error_value(r.error());
  val o = val::object();
  o.set("ok", true);
  o.set("route", std::string(route_name(r->route)));
  o.set("mailbox", r->mailbox);
  return o;
}

// The id a create request will make from these entropy bytes (a Uint8Array).
std::string mailbox_id_for_js(const val& entropy) {
  const std::vector<std::uint8_t> b = emscripten::vecFromJSArray<std::uint8_t>(entropy);
  return mailbox_id_for(ByteView(b.data(), b.size()));
}

}  // namespace
}  // namespace tether::mailbox::bindings

EMSCRIPTEN_BINDINGS(tether_mailbox) {
  using namespace emscripten;
  using namespace tether::mailbox::bindings;
  class_<MailboxCore>("MailboxCore")
      .constructor<>()
      .function("loadRecord", &MailboxCore::load_record)
      .function("loaded", &MailboxCore::loaded)
      .function("stage", &MailboxCore::stage)
      .function("request", &MailboxCore::request)
      .function("persisted", &MailboxCore::persisted)
      .function("readerClosed", &MailboxCore::reader_closed)
      .function("restoreReader", &MailboxCore::restore_reader)
      .function("handleTimeout", &MailboxCore::handle_timeout)
      .function("pollAction", &MailboxCore::poll_action)
      .function("pollEvent", &MailboxCore::poll_event)
      .function("pollTimeout", &MailboxCore::poll_timeout)
      .function("info", &MailboxCore::info)
      .function("snapshot", &MailboxCore::snapshot);
  function("mailboxLimits", &limits);
  function("mailboxErrors", &errors);
  function("mailboxErrorResponse", &error_response);
  function("mailboxFrontDoor", &front_door_js);
  function("mailboxIdFor", &mailbox_id_for_js);
}
