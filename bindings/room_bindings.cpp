// Embind surface of the room relay core (src/room/relay.hpp). Marshalling only (DESIGN.md
// rule 4): options arrive as JSON text, messages as strings, actions leave as a packed Float64Array
// view plus their texts; JS policy callbacks are reached through a hooks object. The public API
// is web/glue/relay.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "room/client.hpp"
#include "room/envelope.hpp"
#include "room/relay.hpp"

namespace tether::room::bindings {
namespace {

using emscripten::val;

// Reason strings travel as small codes; the table is exported once (reasonNames()).
const char* const kReasons[] = {"",       "duplicate",    "generation",     "schema", "order",
                                "proto",  "policy-version", "unauthorized"};
double reason_code(const char* r) {
  for (std::size_t i = 0; i < sizeof(kReasons) / sizeof(kReasons[0]); ++i) {
    if (std::string_view(kReasons[i]) == r) return static_cast<double>(i);
  }
  return 0;
}

class JsHooks final : public PolicyHooks {
 public:
  explicit JsHooks(val hooks) : hooks_(std::move(hooks)) {}
  bool can_write(ConnId conn, std::string_view path, const std::string& room, double seq) override {
    return hooks_.call<bool>("canWrite", conn, std::string(path), room, seq);
  }
  bool validate(ConnId conn, std::string_view op, const std::string& room, double seq) override {
    return hooks_.call<bool>("validate", conn, std::string(op), room, seq);
  }
  bool can_bump(ConnId conn, std::string_view path, double epoch, const std::string& room, double seq) override {
    return hooks_.call<bool>("canBump", conn, std::string(path), epoch, room, seq);
  }
  bool acl_allow(ConnId conn, std::size_t rule, const std::string& room) override {
    return hooks_.call<bool>("aclAllow", conn, static_cast<double>(rule), room);
  }

 private:
  val hooks_;
};

RoomRelayOptions options_from(const std::string& text) {
  RoomRelayOptions o;
  JsonParse p = parse_json(ByteView(std::string_view(text)));
  if (!p.ok() || !p.value.is_object()) return o;
  const Json& j = p.value;
  auto num = [&](const char* k, double fallback) {
    const Json* v = field(j, k);
    auto d = v ? read_number(*v) : std::nullopt;
    return d ? *d : fallback;
  };
  auto flag = [&](const char* k) {
    const Json* v = field(j, k);
    return v && v->is_boolean() && v->get<bool>();
  };
  o.policy_version = num("policyVersion", 0);
  o.journal_limit = num("journalLimit", 1000);
  o.max_ops_per_envelope = num("maxOpsPerEnvelope", 1024);
  o.max_envelopes_per_second = num("maxEnvelopesPerSecond", 0);
  o.eject_connection = flag("ejectConnection");
  o.durable = flag("durable");
  o.has_policy = flag("hasPolicy");
  o.has_can_write = flag("canWrite");
  o.has_validate = flag("validate");
  o.has_can_bump = flag("canBump");
  o.verify_citations = flag("verifyCitations");
  o.seed = static_cast<std::uint64_t>(num("seed", 0));
  if (const Json* acl = field(j, "acl"); acl && acl->is_array()) {
    o.native_acl = true;
    for (const auto& rule : *acl) {
      AclRule r;
      if (rule.is_array()) {
        for (const auto& seg : rule) {
          std::string s;
          append_js_string(s, seg);
          r.prefix.push_back(std::move(s));
        }
      }
      o.acl.push_back(std::move(r));
    }
  }
  return o;
}

class RoomRelayCore {
 public:
  RoomRelayCore(const std::string& options_json, val hooks)
      : hooks_(std::move(hooks)), relay_(options_from(options_json), &hooks_) {}

  double connect(const std::string& writer, const std::string& only_room) { return relay_.connect(writer, only_room); }
  void disconnect(double conn) { relay_.disconnect(static_cast<ConnId>(conn)); }
  int receive(double conn, const std::string& text, double now) {
    return static_cast<int>(relay_.receive(static_cast<ConnId>(conn), text, now));
  }
  // The fast path: JS encodes a message straight into this buffer (TextEncoder.encodeInto), so no
  // per-character marshalling runs in JS.
  val stage(int n) {
    staging_.resize(static_cast<std::size_t>(n));
    return val(emscripten::typed_memory_view(staging_.size(), staging_.data()));
  }
  int receive_staged(double conn, int len, double now) {
    std::size_t n = std::min(staging_.size(), static_cast<std::size_t>(len));
    return static_cast<int>(relay_.receive(static_cast<ConnId>(conn),
                                           std::string_view(reinterpret_cast<const char*>(staging_.data()), n), now));
  }
  void commit_result(double ticket, int verdict) {
    relay_.commit_result(static_cast<std::uint64_t>(ticket), static_cast<RoomRelay::Verdict>(verdict));
  }
  int action_count() const { return static_cast<int>(relay_.actions().size()); }
  // Actions [from, count) as 9 doubles each: kind, conn, text, room, ticket, reason, expected, and
  // the text's address and length in WASM memory (valid until clearActions; JS decodes them with
  // TextDecoder rather than through a per-byte conversion).
  val pack_actions(int from) {
    packed_.clear();
    const auto& acts = relay_.actions();
    for (std::size_t i = static_cast<std::size_t>(from); i < acts.size(); ++i) {
      const RoomAction& a = acts[i];
      const bool has_text = a.text < relay_.texts().size();
      const std::string* t = has_text ? &relay_.texts()[a.text] : nullptr;
      packed_.insert(packed_.end(), {static_cast<double>(a.kind), static_cast<double>(a.conn),
                                     static_cast<double>(a.text), static_cast<double>(a.room),
                                     static_cast<double>(a.ticket), reason_code(a.reason), a.expected,
                                     t ? static_cast<double>(reinterpret_cast<std::uintptr_t>(t->data())) : 0.0,
                                     t ? static_cast<double>(t->size()) : 0.0});
    }
    return val(emscripten::typed_memory_view(packed_.size(), packed_.data()));
  }
  std::string text(int i) const { return relay_.texts()[static_cast<std::size_t>(i)]; }
  void clear_actions() { relay_.clear_actions(); }
  val room(const std::string& name) const {
    auto info = relay_.room(name);
    if (!info) return val::undefined();
    val o = val::object();
    o.set("seq", info->seq);
    o.set("instance", info->instance);
    o.set("members", static_cast<double>(info->members));
    o.set("journal", static_cast<double>(info->journal));
    o.set("stalled", info->stalled);
    return o;
  }
  bool hydrate(const std::string& name, const std::string& snapshot, double now) {
    return relay_.hydrate(name, snapshot, now);
  }
  bool unload(const std::string& name, bool discard) { return relay_.unload(name, discard); }
  std::string state_json(const std::string& name) const { return relay_.state_json(name); }
  std::string checkpoint_json(const std::string& name) const { return relay_.checkpoint_json(name); }
  double register_count() const { return static_cast<double>(relay_.register_count()); }
  double register_bytes() const { return static_cast<double>(relay_.register_bytes()); }

 private:
  JsHooks hooks_;
  RoomRelay relay_;
  std::vector<double> packed_;
  std::vector<std::uint8_t> staging_;
};

// The room client core: JSON text in and out.
class RoomClientCore {
 public:
  explicit RoomClientCore(const std::string& options_json) : client_(client_options(options_json)) {}
  std::string hello() const { return client_.hello(); }
  val write(const std::string& ops, double now) {
    auto m = client_.write(ops, now);
    return m ? val(*m) : val::null();
  }
  val receive(const std::string& text, double now) {
    val out = val::array();
    for (const auto& m : client_.receive(text, now)) out.call<void>("push", m);
    return out;
  }
  val tail() const {
    val out = val::array();
    for (const auto& m : client_.tail_messages()) out.call<void>("push", m);
    return out;
  }
  std::string value() const { return to_json(client_.value()); }
  double unacked() const { return static_cast<double>(client_.unacked()); }
  double seq() const { return client_.seq(); }
  bool welcomed() const { return client_.welcomed(); }
  std::string refused() const {
    std::string out = "[";
    bool first = true;
    for (const auto& r : client_.refused()) {
      if (!first) out += ',';
      first = false;
      out += "{\"reason\":";
      append_quoted(out, r.reason);
      out += ",\"env\":" + r.envelope + "}";
    }
    return out + "]";
  }

 private:
  static RoomClientOptions client_options(const std::string& text) {
    RoomClientOptions o;
    JsonParse p = parse_json(ByteView(std::string_view(text)));
    if (!p.ok() || !p.value.is_object()) return o;
    const Json& j = p.value;
    auto s = [&](const char* k) {
      const Json* v = field(j, k);
      return v && v->is_string() ? v->get<std::string>() : std::string();
    };
    auto num = [&](const char* k) {
      const Json* v = field(j, k);
      auto d = v ? read_number(*v) : std::nullopt;
      return d ? *d : 0.0;
    };
    o.room = s("room");
    o.origin = s("origin");
    o.writer = s("writer");
    o.policy_version = num("policyVersion");
    o.schema_version = num("schemaVersion");
    return o;
  }
  RoomClient client_;
};

val reason_names() {
  val a = val::array();
  for (const char* r : kReasons) a.call<void>("push", std::string(r));
  return a;
}

std::string receive_error(int code) { return receive_error_name(static_cast<ReceiveError>(code)); }
std::string receive_error_text(int code) { return receive_error_message(static_cast<ReceiveError>(code)); }

}  // namespace

EMSCRIPTEN_BINDINGS(tether_room) {
  emscripten::class_<RoomRelayCore>("RoomRelayCore")
      .constructor<const std::string&, val>()
      .function("connect", &RoomRelayCore::connect)
      .function("disconnect", &RoomRelayCore::disconnect)
      .function("receive", &RoomRelayCore::receive)
      .function("stage", &RoomRelayCore::stage)
      .function("receiveStaged", &RoomRelayCore::receive_staged)
      .function("commitResult", &RoomRelayCore::commit_result)
      .function("actionCount", &RoomRelayCore::action_count)
      .function("packActions", &RoomRelayCore::pack_actions)
      .function("text", &RoomRelayCore::text)
      .function("clearActions", &RoomRelayCore::clear_actions)
      .function("room", &RoomRelayCore::room)
      .function("hydrate", &RoomRelayCore::hydrate)
      .function("unload", &RoomRelayCore::unload)
      .function("stateJson", &RoomRelayCore::state_json)
      .function("checkpointJson", &RoomRelayCore::checkpoint_json)
      .function("registerCount", &RoomRelayCore::register_count)
      .function("registerBytes", &RoomRelayCore::register_bytes);
  emscripten::class_<RoomClientCore>("RoomClientCore")
      .constructor<const std::string&>()
      .function("hello", &RoomClientCore::hello)
      .function("write", &RoomClientCore::write)
      .function("receive", &RoomClientCore::receive)
      .function("tail", &RoomClientCore::tail)
      .function("value", &RoomClientCore::value)
      .function("unacked", &RoomClientCore::unacked)
      .function("seq", &RoomClientCore::seq)
      .function("welcomed", &RoomClientCore::welcomed)
      .function("refused", &RoomClientCore::refused);
  emscripten::function("relayReasonNames", &reason_names);
  emscripten::function("relayReceiveError", &receive_error);
  emscripten::function("relayReceiveErrorText", &receive_error_text);
}

}  // namespace tether::room::bindings
