// Embind surface of the room cores a room's host uses (src/room/: the relay, admission, tickets;
// the client and the reference's checking helpers are room_client_bindings.cpp, the member
// member_bindings.cpp, so the rooms Worker's module carries none of them: wasm/module.cmake). Marshalling only (docs/design.md
// rule 4): options arrive as JSON text, messages as strings; actions leave in batches as a packed
// Float64Array view with their texts in WASM memory, events as small objects; policy verdicts come
// back as inputs. The public API is web/glue/relay.js, driven by web/glue/driver.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "room/admission.hpp"
#include "room/envelope.hpp"
#include "room/limits.hpp"
#include "room/member.hpp"
#include "room/ranges.hpp"
#include "room/registers.hpp"
#include "room/relay.hpp"
#include "room/ticket.hpp"

namespace tether::room::bindings {
namespace {

using emscripten::val;

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
  o.can_write_root_only = flag("canWriteRootOnly");
  o.has_validate = flag("validate");
  o.has_can_bump = flag("canBump");
  o.verify_citations = flag("verifyCitations");
  o.seed = static_cast<std::uint64_t>(num("seed", 0));
  o.read_ack_bytes = num("readAckBytes", 0);
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

// Where each field of a packed action sits (packActions), so JS never hard-codes the layout.
enum PackedField : int {
  kKind,
  kConn,
  kText,  // the text's id within the batch (equal ids: one text, decoded once)
  kTextAddr,
  kTextLen,
  kRoom,  // the room name's id within the batch
  kRoomAddr,
  kRoomLen,
  kToken,
  kSeq,
  kEpoch,
  kRule,
  kRoomId,     // the room's incarnation: a name decoded once stays valid for that id
  kEphemeral,  // send: 1 for a presence update (the slow-reader rule drops these first)
  // The admission core's verdict, for a connection judged inside the batch (useAdmission): send
  // 0 pass, 1 drop, else the close code; read 1 credited, 0 not; -1 for a connection the host
  // judges itself.
  kVerdict,
  kReason,  // a close verdict's reason: refusalReason(kReason)
  kStride
};

// The admission limits of a room endpoint (room/admission.hpp): inputs in, verdicts out.
class RoomAdmissionCore {
 public:
  explicit RoomAdmissionCore(const std::string& limits_json)
      : adm_(parse_admission_limits(limits_json).limits) {}
  double attempt(const std::string& scope, const std::string& writer, double now) {
    return static_cast<double>(adm_.handle_attempt(scope, writer, static_cast<TimeMs>(now)));
  }
  // The answer to load_budget: the saved state's text, or "" when nothing was saved.
  void budget(const std::string& scope, const std::string& writer, const std::string& state,
              double now) {
    adm_.handle_budget(scope, writer, state.empty() ? std::nullopt : parse_budget(state),
                       static_cast<TimeMs>(now));
  }
  // `read_state`: what read_state() gave before a hibernation ("" when nothing was kept).
  double opened(const std::string& scope, const std::string& writer, double now, bool resumed,
                const std::string& read_state, bool buffered_is_exact) {
    OpenedSocket how;
    how.resumed = resumed;
    how.read_state = read_state;
    how.buffered_is_exact = buffered_is_exact;
    return static_cast<double>(adm_.handle_opened(scope, writer, static_cast<TimeMs>(now), how));
  }
  std::string read_state(double conn) const {
    return adm_.read_state(static_cast<std::uint64_t>(conn));
  }
  // A reader's acknowledgement (the relay's read action): true when credited.
  bool read(double conn, double bytes) {
    return adm_.handle_read(static_cast<std::uint64_t>(conn), bytes);
  }
  double read_ack_bytes() const { return adm_.read_ack_bytes(); }
  // 0 pass, 1 measure (call again with the frame's UTF-8 size), else the close code (reason:
  // closeReason()).
  int frame(double conn, bool binary, double length, double utf8_bytes, double now) {
    FrameVerdict v = adm_.handle_frame(static_cast<std::uint64_t>(conn), binary, length, utf8_bytes,
                                       static_cast<TimeMs>(now));
    if (v.kind == FrameVerdict::Kind::pass) return 0;
    if (v.kind == FrameVerdict::Kind::measure) return 1;
    reason_ = std::move(v.reason);
    return static_cast<int>(v.code);
  }
  // The slow-reader rule for one outgoing frame: 0 send, 1 drop (an ephemeral frame), else the
  // close code (reason: closeReason()). `buffered` < 0: the runtime cannot say.
  int send(double conn, double bytes, bool ephemeral, double buffered, double now) {
    SendVerdict v = adm_.handle_send(static_cast<std::uint64_t>(conn), bytes, ephemeral, buffered,
                                     static_cast<TimeMs>(now));
    if (v.kind == SendVerdict::Kind::send) return 0;
    if (v.kind == SendVerdict::Kind::drop) return 1;
    reason_ = std::move(v.reason);
    return static_cast<int>(v.code);
  }
  double dropped_ephemeral() const { return static_cast<double>(adm_.dropped_ephemeral()); }
  std::string close_reason() const { return reason_; }
  void closed(double conn, double now) {
    adm_.handle_closed(static_cast<std::uint64_t>(conn), static_cast<TimeMs>(now));
  }
  val poll_action() {
    auto a = adm_.poll_action();
    if (!a) return val::null();
    val o = val::object();
    o.set("kind", std::string(a->kind == AdmissionAction::Kind::load_budget ? "load-budget"
                                                                            : "save-budget"));
    o.set("scope", a->scope);
    o.set("writer", a->writer);
    o.set("state", a->state);
    return o;
  }
  val poll_event() {
    auto v = adm_.poll_event();
    if (!v) return val::null();
    val o = val::object();
    o.set("token", static_cast<double>(v->token));
    o.set("status", v->status);
    o.set("message", v->message);
    o.set("retryAfter", v->retry_after_s);
    return o;
  }
  double connections(const std::string& scope) const {
    return static_cast<double>(adm_.connections(scope));
  }
  Admission& core() { return adm_; }

 private:
  Admission adm_;
  std::string reason_;
};

class RoomRelayCore {
 public:
  explicit RoomRelayCore(const std::string& options_json) : relay_(options_from(options_json)) {}

  // `replay`: ctx.replay, the host replaying its own journal (RoomRelay::connect).
  double connect(const std::string& writer, const std::string& only_room, bool replay) {
    return relay_.connect(writer, only_room, replay);
  }
  void disconnect(double conn) { relay_.handle_disconnect(static_cast<ConnId>(conn)); }
  // The fast path: JS encodes a message straight into this buffer (TextEncoder.encodeInto), so no
  // per-character marshalling runs in JS.
  val stage(int n) {
    staging_.resize(static_cast<std::size_t>(n));
    return val(emscripten::typed_memory_view(staging_.size(), staging_.data()));
  }
  // A staged message and the first batch in one call (the only way in: one crossing per
  // message, and the receive-only and text-by-index calls this replaced are gone); a message the core refused comes back as the
  // empty batch carrying its error (it changed nothing, so nothing else is polled).
  //
  // `units`: the message's length in UTF-16 code units, for a connection judged here
  // (useAdmission): the admission core's frame check (size, rates) runs first, on the UTF-8 size
  // just staged, so one message is one call. A refused frame comes back as the empty batch
  // carrying its close code (refusalReason(0) says why) and reaches no relay. < 0: the host judged
  // the frame itself.
  int receive_staged_pack(double conn, int len, double now, double units) {
    std::size_t n = std::min(staging_.size(), static_cast<std::size_t>(len));
    now_ = now;
    if (units >= 0 && admission_ != nullptr) {
      if (std::uint64_t tag = relay_.host_tag(static_cast<ConnId>(conn)); tag != 0) {
        FrameVerdict v = admission_->handle_frame(tag - 1, false, units, static_cast<double>(n),
                                                  static_cast<TimeMs>(now));
        if (v.kind == FrameVerdict::Kind::close) {
          reasons_.clear();
          reasons_.push_back(std::move(v.reason));
          return nothing(0, static_cast<int>(v.code));
        }
      }
    }
    ReceiveError e =
        relay_.handle_message(static_cast<ConnId>(conn),
                              std::string_view(reinterpret_cast<const char*>(staging_.data()), n),
                              static_cast<TimeMs>(now));
    if (e != ReceiveError::none) return nothing(static_cast<int>(e));
    return pack_actions();
  }
  void commit_result(double ticket, int verdict) {
    relay_.handle_commit_result(static_cast<std::uint64_t>(ticket),
                                static_cast<RoomRelay::Verdict>(verdict));
  }
  // The answer to a question (or a commit answered at once) and the next batch, in one call: the
  // host answers from inside its perform, and what the answer released is what it does next.
  int policy_verdict_pack(double token, bool allow, double now) {
    now_ = now;
    relay_.handle_policy_verdict(static_cast<std::uint64_t>(token), allow,
                                 static_cast<TimeMs>(now));
    return pack_actions();
  }
  int commit_result_pack(double ticket, int verdict, double now) {
    commit_result(ticket, verdict);
    return pack_actions(now);
  }
  // The slow-reader rule inside the batch: the host's admission core (it must outlive this
  // relay) judges every send and read action of a connection bound with judge(), as the batch is
  // packed, so a broadcast to n members is one call and not n (docs/rooms.md § The slow-reader
  // rule). Only for sockets without a bufferedAmount (workerd): the core counts what each was
  // handed and its reader acknowledged. pauseJudging(true) while the host drops every frame
  // unsent (a silent rejoin): those are neither judged nor counted, as before.
  void use_admission(RoomAdmissionCore* a) { admission_ = a != nullptr ? &a->core() : nullptr; }
  // The admission id rides on the relay's connection (its host tag, id + 1; 0: not judged).
  bool judge(double conn, double admission_conn) {
    relay_.set_host_tag(static_cast<ConnId>(conn), static_cast<std::uint64_t>(admission_conn) + 1);
    return relay_.host_tag(static_cast<ConnId>(conn)) != 0;
  }
  void pause_judging(bool paused) { judging_paused_ = paused; }
  std::string refusal_reason(int i) const {
    return i >= 0 && static_cast<std::size_t>(i) < reasons_.size()
               ? reasons_[static_cast<std::size_t>(i)]
               : std::string();
  }
  // poll_action in batches (one boundary crossing for a broadcast, not one per member): the next
  // actions as kStride doubles each, up to and including the first commit or question (an action
  // whose answer or live read must come before anything after it runs), or until the core has
  // nothing ready. Texts stay alive, and their addresses valid, until the next call. With no
  // action at all the batch is nothing(): the caller polls events only when there are some.
  int pack_actions(double now) {
    now_ = now;
    return pack_actions();
  }
  int pack_actions() {
    packed_.clear();
    texts_.clear();
    reasons_.clear();
    if (!relay_.action_ready()) {
      if (auto a = relay_.poll_action()) {
        pack(*a);
      } else {
        return nothing(0);
      }
      if (is_barrier(packed_[kKind]) || !relay_.action_ready()) {
        return done();
      }
    }
    // Only actions already queued: what comes after them may be released work, which runs in the
    // next call, once these have been carried out.
    while (relay_.action_ready()) {
      std::optional<RoomAction> a = relay_.poll_action();
      pack(*a);
      if (is_barrier(static_cast<double>(a->kind))) break;
    }
    return done();
  }
  static constexpr double kNoAction = -1;
  // Where JS reads a batch: outbox()[0] holds its address once a pack call returned its length.
  double outbox() const { return static_cast<double>(reinterpret_cast<std::uintptr_t>(out_)); }
  // The next event as {kind, conn, room, text, reason, expected, token}, or null.
  val poll_event() {
    std::optional<RoomEvent> e = relay_.poll_event();
    if (!e) return val::null();
    val o = val::object();
    o.set("kind", static_cast<int>(e->kind));
    o.set("conn", static_cast<double>(e->conn));
    o.set("room", e->room ? *e->room : std::string());
    o.set("text", e->text);
    o.set("reason", std::string(e->reason));
    o.set("expected", e->expected);
    o.set("token", static_cast<double>(e->token));
    return o;
  }
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
  // The room's generation nonce, empty when it is not loaded: what a commit's host reads per
  // envelope, without room()'s whole object.
  std::string instance(const std::string& name) const {
    auto info = relay_.room(name);
    return info ? info->instance : std::string();
  }
  bool hydrate(const std::string& name, const std::string& snapshot, double now) {
    return relay_.hydrate(name, snapshot, static_cast<TimeMs>(now));
  }
  bool unload(const std::string& name, bool discard) { return relay_.unload(name, discard); }
  std::string state_json(const std::string& name) const { return relay_.state_json(name); }
  std::string checkpoint_json(const std::string& name) const {
    return relay_.checkpoint_json(name);
  }
  double room_count() const { return static_cast<double>(relay_.room_count()); }
  double register_count() const { return static_cast<double>(relay_.register_count()); }
  double register_bytes() const { return static_cast<double>(relay_.register_bytes()); }

 private:
  // A batch is read in place (no copy, no typed-array allocation per call): its address goes to
  // the outbox, its length is the result; it stays valid until the next pack call.
  int done() {
    out_[0] = static_cast<double>(reinterpret_cast<std::uintptr_t>(packed_.data()));
    return static_cast<int>(packed_.size());
  }
  // The batch that says no action is ready: {kNoAction, 1 if an event is ready, the receive
  // error, the frame's close code}.
  int nothing(int receive_error, int frame_close = 0) {
    packed_.clear();
    packed_.push_back(kNoAction);
    packed_.push_back(relay_.event_ready() ? 1 : 0);
    packed_.push_back(receive_error);
    packed_.push_back(frame_close);
    return done();
  }
  static bool is_barrier(double kind) {
    return kind != static_cast<double>(RoomAction::Kind::send) &&
           kind != static_cast<double>(RoomAction::Kind::close) &&
           kind != static_cast<double>(RoomAction::Kind::read);
  }
  void pack(const RoomAction& a) {
    const std::size_t at = packed_.size();
    packed_.resize(at + kStride, 0.0);
    double* p = &packed_[at];
    p[kKind] = static_cast<double>(a.kind);
    p[kConn] = static_cast<double>(a.conn);
    keep(a.text, p + kText);
    keep(a.room, p + kRoom);
    p[kToken] = static_cast<double>(a.token);
    p[kSeq] = a.seq;
    p[kEpoch] = a.epoch;
    p[kRule] = static_cast<double>(a.rule);
    p[kRoomId] = static_cast<double>(a.room_id);
    p[kEphemeral] = a.ephemeral ? 1 : 0;
    p[kVerdict] = -1;
    p[kReason] = -1;
    if (admission_ == nullptr || judging_paused_) return;
    if (a.kind != RoomAction::Kind::send && a.kind != RoomAction::Kind::read) return;
    const std::uint64_t tag = relay_.host_tag(a.conn);
    if (tag == 0) return;
    const std::uint64_t id = tag - 1;
    if (a.kind == RoomAction::Kind::read) {
      p[kVerdict] = admission_->handle_read(id, a.seq) ? 1 : 0;
      return;
    }
    // The frame's UTF-8 size is the shared text's: a broadcast is measured once, not per member.
    SendVerdict v = admission_->handle_send(id, a.text ? static_cast<double>(a.text->size()) : 0,
                                            a.ephemeral, -1, static_cast<TimeMs>(now_));
    if (v.kind == SendVerdict::Kind::send) {
      p[kVerdict] = 0;
    } else if (v.kind == SendVerdict::Kind::drop) {
      p[kVerdict] = 1;
    } else {
      p[kVerdict] = static_cast<double>(v.code);
      p[kReason] = static_cast<double>(reasons_.size());
      reasons_.push_back(std::move(v.reason));
    }
  }
  // Gives a text an id within the batch (the same string keeps its id: a broadcast is decoded
  // once) and writes id, address and length; -1 when there is none.
  void keep(const SharedText& t, double* out) {
    if (!t) {
      out[0] = -1;
      return;
    }
    std::size_t id = texts_.size();
    if (!texts_.empty() && texts_.back().get() == t.get())
      id = texts_.size() - 1;
    else if (texts_.size() > 1 && texts_[texts_.size() - 2].get() == t.get())
      id = texts_.size() - 2;
    else
      texts_.push_back(t);
    out[0] = static_cast<double>(id);
    out[1] = static_cast<double>(reinterpret_cast<std::uintptr_t>(t->data()));
    out[2] = static_cast<double>(t->size());
  }

  RoomRelay relay_;
  Admission* admission_ = nullptr;
  bool judging_paused_ = false;
  double now_ = 0;  // the last input's clock, for the verdicts of the batch it released
  std::vector<std::string> reasons_;
  std::vector<double> packed_;
  std::vector<SharedText> texts_;
  std::vector<std::uint8_t> staging_;
  double out_[2] = {};
};

// Tickets (room/ticket.hpp): {ticket} or {error}; {ok, writer, kind, room, exp} or {ok, reason,
// message}.
val mint(const std::string& secret, const std::string& writer, const std::string& kind,
         const std::string& room, double ttl_seconds, double now) {
  MintedTicket m = mint_ticket(secret, writer, kind, room, ttl_seconds, static_cast<TimeMs>(now));
  val o = val::object();
  if (m.error.empty())
    o.set("ticket", m.ticket);
  else
    o.set("error", m.error);
  return o;
}
val verify(const std::string& secret, const std::string& ticket, val room, double now) {
  std::optional<std::string> r;
  if (room.isString()) r = room.as<std::string>();
  TicketVerdict v =
      verify_ticket(secret, ticket, r ? std::optional<std::string_view>(*r) : std::nullopt,
                    static_cast<TimeMs>(now));
  val o = val::object();
  o.set("ok", v.ok);
  if (v.ok) {
    o.set("writer", v.claims.writer);
    o.set("kind", v.claims.kind);
    o.set("room", v.claims.room);
    o.set("exp", v.claims.exp);
  } else {
    o.set("reason", v.reason);
    o.set("message", v.message);
  }
  return o;
}
std::string ticket_secret_error(const std::string& secret) {
  return secret_error(secret);
}
val ticket_limits() {
  val o = val::object();
  o.set("version", std::string(kTicketVersion));
  o.set("maxTicketChars", static_cast<double>(kMaxTicketChars));
  o.set("minSecretChars", static_cast<double>(kMinSecretChars));
  o.set("maxTtlSeconds", kMaxTicketTtlSeconds);
  o.set("defaultTtlSeconds", kDefaultTicketTtlSeconds);
  val kinds = val::array();
  kinds.call<void>("push", std::string("human"));
  kinds.call<void>("push", std::string("agent"));
  o.set("kinds", kinds);
  return o;
}

std::string replay(const std::string& room, const std::string& seq_env) {
  return replay_message(room, seq_env);
}

// A hello as the room relay expects it; NaN leaves schemaVersion or seq out.
std::string hello(const std::string& room, const std::string& origin, double policy_version,
                  double schema_version, double seq) {
  return hello_text(
      room, origin, policy_version,
      std::isnan(schema_version) ? std::nullopt : std::optional<double>(schema_version),
      std::isnan(seq) ? std::nullopt : std::optional<double>(seq));
}

// Limit names -> values: the defaults, or a configuration over them ({limits} or {error}).
val limits_object(const AdmissionLimits& l) {
  val o = val::object();
  for (std::size_t i = 0; i < std::size(kAdmissionLimitNames); ++i)
    o.set(kAdmissionLimitNames[i], limit_value(l, i));
  o.set(std::string(kRequireReadAckName), l.require_read_ack);
  return o;
}
val admission_defaults() {
  return limits_object(AdmissionLimits{});
}
val parse_limits(const std::string& json) {
  ParsedLimits p = parse_admission_limits(json);
  val o = val::object();
  if (!p.error.empty())
    o.set("error", p.error);
  else
    o.set("limits", limits_object(p.limits));
  return o;
}
val close_codes() {
  val o = val::object();
  o.set("BINARY", static_cast<int>(CloseCode::binary));
  o.set("INVALID", static_cast<int>(CloseCode::invalid));
  o.set("EJECTED", static_cast<int>(CloseCode::ejected));
  o.set("TOO_BIG", static_cast<int>(CloseCode::too_big));
  o.set("STORAGE", static_cast<int>(CloseCode::storage));
  o.set("RATE", static_cast<int>(CloseCode::rate));
  o.set("BUDGET", static_cast<int>(CloseCode::budget));
  o.set("SLOW_READER", static_cast<int>(CloseCode::slow_reader));
  return o;
}

val names(const char* const* list, std::size_t n) {
  val a = val::array();
  for (std::size_t i = 0; i < n; ++i) a.call<void>("push", std::string(list[i]));
  return a;
}
val action_kinds() {
  return names(kRoomActionKindNames, std::size(kRoomActionKindNames));
}
val event_kinds() {
  return names(kRoomEventKindNames, std::size(kRoomEventKindNames));
}

// RoomRelay::Verdict by name, as commitResult takes it.
val commit_verdicts() {
  val o = val::object();
  o.set("ok", static_cast<int>(RoomRelay::Verdict::ok));
  o.set("pending", static_cast<int>(RoomRelay::Verdict::pending));
  o.set("failed", static_cast<int>(RoomRelay::Verdict::failed));
  return o;
}

val action_layout() {
  val o = val::object();
  o.set("stride", static_cast<int>(kStride));
  o.set("none", RoomRelayCore::kNoAction);
  o.set("kind", static_cast<int>(kKind));
  o.set("conn", static_cast<int>(kConn));
  o.set("text", static_cast<int>(kText));
  o.set("textAddr", static_cast<int>(kTextAddr));
  o.set("textLen", static_cast<int>(kTextLen));
  o.set("room", static_cast<int>(kRoom));
  o.set("roomAddr", static_cast<int>(kRoomAddr));
  o.set("roomLen", static_cast<int>(kRoomLen));
  o.set("token", static_cast<int>(kToken));
  o.set("seq", static_cast<int>(kSeq));
  o.set("epoch", static_cast<int>(kEpoch));
  o.set("rule", static_cast<int>(kRule));
  o.set("roomId", static_cast<int>(kRoomId));
  o.set("ephemeral", static_cast<int>(kEphemeral));
  o.set("verdict", static_cast<int>(kVerdict));
  o.set("reason", static_cast<int>(kReason));
  return o;
}

// The room protocol's version and bounds (room/limits.hpp): JS writes none of them itself.
val room_limits() {
  val o = val::object();
  o.set("meshProtoVersion", kMeshProtoVersion);
  o.set("defaultJournalLimit", kDefaultJournalLimit);
  o.set("defaultMaxOpsPerEnvelope", kDefaultMaxOpsPerEnvelope);
  o.set("maxIdBytes", static_cast<double>(kMaxIdBytes));
  o.set("maxRoomNameBytes", static_cast<double>(kMaxRoomNameBytes));
  o.set("maxPathDepth", static_cast<double>(kMaxPathDepth));
  o.set("maxMessageBytes", static_cast<double>(kMaxMessageBytes));
  o.set("maxBacklogMessages", static_cast<double>(kMaxBacklogMessages));
  o.set("maxBacklogBytes", static_cast<double>(kMaxBacklogBytes));
  return o;
}

std::string receive_error(int code) {
  return receive_error_name(static_cast<ReceiveError>(code));
}
std::string receive_error_text(int code) {
  return receive_error_message(static_cast<ReceiveError>(code));
}

}  // namespace

EMSCRIPTEN_BINDINGS(tether_room) {
  emscripten::class_<RoomRelayCore>("RoomRelayCore")
      .constructor<const std::string&>()
      .function("connect", &RoomRelayCore::connect)
      .function("disconnect", &RoomRelayCore::disconnect)
      .function("stage", &RoomRelayCore::stage)
      .function("receiveStagedPack", &RoomRelayCore::receive_staged_pack)
      .function("policyVerdictPack", &RoomRelayCore::policy_verdict_pack)
      .function("commitResultPack", &RoomRelayCore::commit_result_pack)
      .function("packActions",
                static_cast<int (RoomRelayCore::*)(double)>(&RoomRelayCore::pack_actions))
      .function("useAdmission", &RoomRelayCore::use_admission, emscripten::allow_raw_pointers())
      .function("judge", &RoomRelayCore::judge)
      .function("pauseJudging", &RoomRelayCore::pause_judging)
      .function("refusalReason", &RoomRelayCore::refusal_reason)
      .function("outbox", &RoomRelayCore::outbox)
      .function("pollEvent", &RoomRelayCore::poll_event)
      .function("room", &RoomRelayCore::room)
      .function("instance", &RoomRelayCore::instance)
      .function("hydrate", &RoomRelayCore::hydrate)
      .function("unload", &RoomRelayCore::unload)
      .function("stateJson", &RoomRelayCore::state_json)
      .function("checkpointJson", &RoomRelayCore::checkpoint_json)
      .function("roomCount", &RoomRelayCore::room_count)
      .function("registerCount", &RoomRelayCore::register_count)
      .function("registerBytes", &RoomRelayCore::register_bytes);
  emscripten::class_<RoomAdmissionCore>("RoomAdmissionCore")
      .constructor<const std::string&>()
      .function("attempt", &RoomAdmissionCore::attempt)
      .function("budget", &RoomAdmissionCore::budget)
      .function("opened", &RoomAdmissionCore::opened)
      .function("frame", &RoomAdmissionCore::frame)
      .function("send", &RoomAdmissionCore::send)
      .function("read", &RoomAdmissionCore::read)
      .function("readAckBytes", &RoomAdmissionCore::read_ack_bytes)
      .function("readState", &RoomAdmissionCore::read_state)
      .function("droppedEphemeral", &RoomAdmissionCore::dropped_ephemeral)
      .function("closeReason", &RoomAdmissionCore::close_reason)
      .function("closed", &RoomAdmissionCore::closed)
      .function("pollAction", &RoomAdmissionCore::poll_action)
      .function("pollEvent", &RoomAdmissionCore::poll_event)
      .function("connections", &RoomAdmissionCore::connections);
  emscripten::function("roomHelloText", &hello);
  emscripten::function("roomReplayMessage", &replay);
  emscripten::function("roomMintTicket", &mint);
  emscripten::function("roomVerifyTicket", &verify);
  emscripten::function("roomTicketSecretError", &ticket_secret_error);
  emscripten::function("roomTicketLimits", &ticket_limits);
  emscripten::function("roomAdmissionDefaults", &admission_defaults);
  emscripten::constant("roomFramePass", 0);
  emscripten::constant("roomFrameMeasure", 1);
  emscripten::constant("roomSendPass", 0);
  emscripten::constant("roomSendDrop", 1);
  emscripten::function("roomParseLimits", &parse_limits);
  emscripten::function("roomCloseCodes", &close_codes);
  emscripten::function("roomActionKinds", &action_kinds);
  emscripten::function("roomEventKinds", &event_kinds);
  emscripten::function("roomActionLayout", &action_layout);
  emscripten::function("roomCommitVerdicts", &commit_verdicts);
  emscripten::function("roomLimits", &room_limits);
  emscripten::function("roomReceiveError", &receive_error);
  emscripten::function("roomReceiveErrorText", &receive_error_text);
}

}  // namespace tether::room::bindings
