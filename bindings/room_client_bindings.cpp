// Embind surface of the room client (src/room/client.hpp) and of the reference's checking helpers
// the relay runs inside itself (checkEnvelope, createRanges, createRegisterStore, validateEnvelope:
// room/check.hpp, ranges.hpp, registers.hpp, envelope.hpp), for peers, agents and tests. Apart
// from room_bindings.cpp (the relay side) so that a room's host, the rooms Worker, carries none of
// it (wasm/module.cmake). Marshalling only (docs/design.md rule 4); the public API is
// web/glue/relay.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>
#include <vector>

#include "common/json.hpp"
#include "room/check.hpp"
#include "room/client.hpp"
#include "room/envelope.hpp"
#include "room/limits.hpp"
#include "room/ranges.hpp"
#include "room/registers.hpp"

namespace tether::room::bindings {
namespace {

using emscripten::val;

// The room client core: JSON text in, client messages out through pollTransmit.
class RoomClientCore {
 public:
  explicit RoomClientCore(const std::string& options_json)
      : client_(client_options(options_json)) {}
  std::string hello() const { return client_.hello(); }
  std::string connect() { return client_.connect(); }
  // "" when the envelope was queued, else the refusal's name (write_refusal_name).
  std::string write(const std::string& ops, double now) {
    return write_refusal_name(client_.write(ops, static_cast<TimeMs>(now)).refusal);
  }
  std::string migrate(const std::string& ops, double now) {
    return write_refusal_name(client_.migrate(ops, static_cast<TimeMs>(now)).refusal);
  }
  double room_schema_version() const { return client_.room_schema_version(); }
  void receive(const std::string& text, double now, bool frame) {
    client_.handle_message(text, static_cast<TimeMs>(now), frame);
  }
  // A persisted outbox (an array of the strings tail() returned): "" when seeded, else the fix.
  std::string seed(val messages, double now) {
    std::vector<std::string> list;
    if (!messages.isArray()) return "the outbox must be the array of strings tail() returned";
    const unsigned n = messages["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) {
      val m = messages[i];
      if (!m.isString()) return "the outbox must be the array of strings tail() returned";
      list.push_back(m.as<std::string>());
    }
    return client_.seed_tail(list, static_cast<TimeMs>(now));
  }
  val poll_transmit() {
    auto m = client_.poll_transmit();
    return m ? val(*m) : val::null();
  }
  // What the relay refused, as {kind, reason, env?, expected?} (kind: room_client_event_name;
  // env: a refused write's OpEnvelope JSON), or null.
  val poll_event() {
    auto r = client_.poll_event();
    if (!r) return val::null();
    val o = val::object();
    o.set("kind", std::string(room_client_event_name(r->kind)));
    o.set("reason", r->reason);
    if (r->kind == RoomClientEvent::Kind::refused) o.set("env", r->envelope);
    if (r->kind == RoomClientEvent::Kind::lost) o.set("value", r->envelope);
    if (r->expected >= 0) o.set("expected", r->expected);
    return o;
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

// The reference's checkEnvelope (room/check.hpp): questions out, verdicts in.
class RoomEnvelopeCheck {
 public:
  RoomEnvelopeCheck(const std::string& env, const std::string& writer, bool has_policy,
                    bool can_write, bool validate)
      : check_(env, writer, has_policy, can_write, validate) {}
  // The next question: -1 once decided, else op * 2 + kind (0 canWrite, 1 validate).
  double question() const {
    auto q = check_.poll_question();
    if (!q) return -1;
    return static_cast<double>(q->op) * 2 + (q->kind == EnvelopeCheck::Question::Kind::validate);
  }
  void verdict(bool allow) { check_.handle_verdict(allow); }
  std::string reason() const { return check_.reason(); }
  bool unreadable() const { return check_.unreadable(); }
  double op() const { return static_cast<double>(check_.op()); }

 private:
  EnvelopeCheck check_;
};

// One origin's admission evidence (room/ranges.hpp): the reference's createRanges.
class RoomRanges {
 public:
  // `initial_json`: [[from, to], ...]; anything else leaves it empty and invalid().
  explicit RoomRanges(const std::string& initial_json) {
    JsonParse p = parse_json(ByteView(std::string_view(initial_json)));
    std::vector<VersionRanges::Range> initial;
    if (!p.ok() || !p.value.is_array()) {
      invalid_ = true;
      return;
    }
    for (const auto& r : p.value) {
      auto a = r.is_array() && r.size() == 2 ? read_number(r[0]) : std::nullopt;
      auto b = r.is_array() && r.size() == 2 ? read_number(r[1]) : std::nullopt;
      if (!a || !b) {
        invalid_ = true;
        return;
      }
      initial.emplace_back(*a, *b);
    }
    ranges_ = VersionRanges(std::move(initial));
  }
  bool invalid() const { return invalid_; }
  bool has(double v) const { return ranges_.has(v); }
  bool add(double v) { return ranges_.add(v); }
  double max() const { return ranges_.max(); }
  double prefix() const { return ranges_.prefix(); }
  // recordAdmission's step: true when the origin's settled stamp moves to this envelope's.
  bool record(double version) { return record_admission(ranges_, version); }
  std::string json() const {
    std::string out = "[";
    for (const auto& [a, b] : ranges_.list()) {
      if (out.size() > 1) out += ',';
      out += '[';
      append_number(out, a);
      out += ',';
      append_number(out, b);
      out += ']';
    }
    return out + "]";
  }

 private:
  VersionRanges ranges_;
  bool invalid_ = false;
};

// The reference's createRegisterStore (room/registers.hpp): JSON in, JSON out.
class RoomRegisters {
 public:
  // "" when folded in, else the validateEnvelope reason.
  std::string ingest(const std::string& env_json) {
    const char* reason = table_.ingest(env_json);
    return reason ? reason : "";
  }
  bool load(const std::string& registers_json) { return table_.load(registers_json); }
  bool settle(const std::string& settled_json) { return table_.settle(settled_json); }
  void reset() { table_.reset(); }
  std::string checkpoint() const { return table_.checkpoint(); }
  double max_epoch(const std::string& path_json) const { return table_.max_epoch(path_json); }
  int covers(const std::string& path_json, const std::string& origin,
             const std::string& hlc_json) const {
    return table_.covers(path_json, origin, hlc_json);
  }

 private:
  RegisterTable table_;
};

// validateEnvelope (the reference's export): the core's whole-envelope check over the envelope's
// JSON text; "" when well-formed, else the malformed reason.
std::string validate_envelope_text(const std::string& env_json) {
  JsonScan scan;
  if (!scan.parse(env_json, kMaxJsonDepth)) return "envelope";
  EnvelopeView view;
  const char* reason = validate_envelope(scan, 0, view);
  return reason ? reason : "";
}

}  // namespace

EMSCRIPTEN_BINDINGS(tether_room_client) {
  emscripten::class_<RoomClientCore>("RoomClientCore")
      .constructor<const std::string&>()
      .function("hello", &RoomClientCore::hello)
      .function("connect", &RoomClientCore::connect)
      .function("write", &RoomClientCore::write)
      .function("migrate", &RoomClientCore::migrate)
      .function("roomSchemaVersion", &RoomClientCore::room_schema_version)
      .function("receive", &RoomClientCore::receive)
      .function("seed", &RoomClientCore::seed)
      .function("pollTransmit", &RoomClientCore::poll_transmit)
      .function("pollEvent", &RoomClientCore::poll_event)
      .function("tail", &RoomClientCore::tail)
      .function("value", &RoomClientCore::value)
      .function("unacked", &RoomClientCore::unacked)
      .function("seq", &RoomClientCore::seq)
      .function("welcomed", &RoomClientCore::welcomed);
  emscripten::class_<RoomEnvelopeCheck>("RoomEnvelopeCheck")
      .constructor<const std::string&, const std::string&, bool, bool, bool>()
      .function("question", &RoomEnvelopeCheck::question)
      .function("verdict", &RoomEnvelopeCheck::verdict)
      .function("reason", &RoomEnvelopeCheck::reason)
      .function("unreadable", &RoomEnvelopeCheck::unreadable)
      .function("op", &RoomEnvelopeCheck::op);
  emscripten::class_<RoomRanges>("RoomRanges")
      .constructor<const std::string&>()
      .function("invalid", &RoomRanges::invalid)
      .function("has", &RoomRanges::has)
      .function("add", &RoomRanges::add)
      .function("max", &RoomRanges::max)
      .function("prefix", &RoomRanges::prefix)
      .function("record", &RoomRanges::record)
      .function("json", &RoomRanges::json);
  emscripten::class_<RoomRegisters>("RoomRegisters")
      .constructor<>()
      .function("ingest", &RoomRegisters::ingest)
      .function("load", &RoomRegisters::load)
      .function("settle", &RoomRegisters::settle)
      .function("reset", &RoomRegisters::reset)
      .function("checkpoint", &RoomRegisters::checkpoint)
      .function("maxEpoch", &RoomRegisters::max_epoch)
      .function("covers", &RoomRegisters::covers);
  emscripten::function("roomValidateEnvelope", &validate_envelope_text);
}

}  // namespace tether::room::bindings
