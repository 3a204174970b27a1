// The room client core (room/client.hpp). Not a hot path: it keeps one small register map and
// uses nlohmann for clarity.
#include "room/client.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "room/limits.hpp"

namespace tether::room {

namespace {
Json hlc_json(const Hlc& h) {
  return Json{{"p", h.p}, {"l", h.l}};
}
Hlc hlc_of(const Json& j) {
  auto h = read_hlc(j);
  return h ? *h : Hlc{};
}
// The stamp at `k` of an object (zero when absent, or when `j` is no object: a hostile server's
// text must not reach nlohmann's value(), which aborts in the WASM build).
Hlc hlc_at(const Json& j, const char* k) {
  const Json* v = field(j, k);
  return v ? hlc_of(*v) : Hlc{};
}
double num(const Json& j, const char* k, double fallback) {
  const Json* v = field(j, k);
  auto d = v ? read_number(*v) : std::nullopt;
  return d ? *d : fallback;
}
std::string str(const Json& j, const char* k) {
  const Json* v = field(j, k);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}
}  // namespace

const char* write_refusal_name(WriteRefusal r) {
  switch (r) {
    case WriteRefusal::none: return "";
    case WriteRefusal::not_welcomed: return "not-welcomed";
    case WriteRefusal::migrating: return "migrating";
    case WriteRefusal::bad_ops: return "ops";
    case WriteRefusal::needs_migration: return "needs-migration";
    case WriteRefusal::outdated: return "outdated";
    case WriteRefusal::no_migration: return "no-migration";
    case WriteRefusal::migration_root: return "migration-root";
  }
  return "";
}

const char* room_client_event_name(RoomClientEvent::Kind k) {
  switch (k) {
    case RoomClientEvent::Kind::refused: return "refused";
    case RoomClientEvent::Kind::rejected: return "rejected";
    case RoomClientEvent::Kind::ejected: return "ejected";
    case RoomClientEvent::Kind::lost: return "lost";
  }
  return "";
}

RoomClient::RoomClient(RoomClientOptions options) : opt_(std::move(options)) {}

void RoomClient::refused(std::string reason, const Json& env) {
  RoomClientEvent& e = events_.emplace();
  e.kind = RoomClientEvent::Kind::refused;
  e.reason = std::move(reason);
  e.envelope = to_json(env);
}

// Our next write must be above every version the room already holds from our origin: a client
// created again under an origin it used before (docs/rooms.md § The envelope: one origin per tab
// or device, so a reload reuses it) would otherwise write versions 1, 2, ... again, and the relay
// answers those `duplicate` (§ Sequencing and admission), which reads as an acknowledgement of a
// write the room never kept.
void RoomClient::raise_version(double admitted) {
  if (admitted > version_) version_ = admitted;
}

std::string RoomClient::key_of(const Json& path) {
  return path_register_key(path);
}

Hlc RoomClient::tick(TimeMs now) {
  const double now_ms = static_cast<double>(now);
  if (now_ms > clock_.p)
    clock_ = Hlc{now_ms, 0};
  else
    clock_.l += 1;
  return clock_;
}

void RoomClient::observe(const Hlc& remote, TimeMs now) {
  const double now_ms = static_cast<double>(now);
  double p = std::max({clock_.p, remote.p, now_ms});
  if (p == clock_.p && p == remote.p)
    clock_.l = std::max(clock_.l, remote.l) + 1;
  else if (p == clock_.p)
    clock_.l += 1;
  else if (p == remote.p)
    clock_.l = remote.l + 1;
  else
    clock_.l = 0;
  clock_.p = p;
}

std::string RoomClient::hello() const {
  Json h = {{"t", "hello"},
            {"room", opt_.room},
            {"origin", opt_.origin},
            {"proto", kMeshProtoVersion},
            {"policyVersion", opt_.policy_version},
            {"schemaVersion", opt_.schema_version}};
  if (welcomed_ && seq_ > 0) h["seq"] = seq_;
  return to_json(h);
}

bool RoomClient::live(const Register& r, const Sibling& s) const {
  auto w = r.water.find(s.origin);
  return w == r.water.end() || compare_hlc(s.hlc, w->second) > 0;
}

void RoomClient::ingest(const Json& env) {
  std::string origin = str(env, "origin");
  std::string writer = str(env, "writer");
  if (!env.is_object()) return;
  Hlc h = hlc_at(env, "hlc");
  const Json* ops = field(env, "ops");
  if (!ops || !ops->is_array()) return;
  for (const auto& op : *ops) {
    const Json* path = field(op, "path");
    if (!path || !path->is_array()) continue;
    std::string kind = str(op, "kind");
    if (path->empty() && kind != "set") continue;
    Register& r = registers_[key_of(*path)];
    if (r.path.is_null()) r.path = *path;
    if (const Json* cites = field(op, "cites"); cites && cites->is_array()) {
      for (const auto& c : *cites) {
        std::string co = str(c, "origin");
        Hlc ch = hlc_at(c, "hlc");
        if (co == origin && compare_hlc(ch, h) == 0) continue;
        auto it = r.water.find(co);
        if (it == r.water.end() || compare_hlc(ch, it->second) > 0) r.water[co] = ch;
      }
    }
    auto best = std::find_if(r.siblings.begin(), r.siblings.end(),
                             [&](const Sibling& s) { return s.origin == origin; });
    if (best == r.siblings.end() || compare_hlc(h, best->hlc) > 0) {
      Sibling s{origin, h, num(op, "epoch", 0), kind, Json()};
      if (kind == "set") {
        if (const Json* next = field(op, "next")) s.value = *next;
      }
      if (best == r.siblings.end())
        r.siblings.push_back(std::move(s));
      else
        *best = std::move(s);
    }
  }
}

void RoomClient::settle(const Json& settled) {
  // The relay's collection rule, run over this client's registers.
  for (auto it = registers_.begin(); it != registers_.end();) {
    Register& r = it->second;
    r.siblings.erase(std::remove_if(r.siblings.begin(), r.siblings.end(),
                                    [&](const Sibling& s) {
                                      auto w = r.water.find(s.origin);
                                      const Json* done = field(settled, s.origin);
                                      return w != r.water.end() && done &&
                                             hlc_le(s.hlc, w->second) &&
                                             hlc_le(s.hlc, hlc_of(*done));
                                    }),
                     r.siblings.end());
    for (auto w = r.water.begin(); w != r.water.end();) {
      const Json* done = field(settled, w->first);
      if (done && hlc_le(w->second, hlc_of(*done)))
        w = r.water.erase(w);
      else
        ++w;
    }
    if (r.siblings.empty() && r.water.empty())
      it = registers_.erase(it);
    else
      ++it;
  }
}

// docs/rooms.md § Migrations: an ordinary write carries the room's schema, so it never cuts a
// generation; ours goes on an envelope only where the cut drops nothing anyone wrote.
WriteOutcome RoomClient::write(std::string_view ops_json, TimeMs now_ms) {
  if (!welcomed_) return {WriteRefusal::not_welcomed};
  if (migrating_) return {WriteRefusal::migrating};
  if (room_schema_ > opt_.schema_version) return {WriteRefusal::outdated};
  if (room_schema_ < opt_.schema_version) {
    // A room nobody has written holds nothing a migration could drop: its first write may
    // carry our schema (the spec's creator "whose first envelope was the migration that cut").
    if (seq_ > 0 || !registers_.empty() || !tail_.empty()) return {WriteRefusal::needs_migration};
  }
  auto ops = store_ops(ops_json);
  if (!ops) return {WriteRefusal::bad_ops};
  const bool cuts = room_schema_ < opt_.schema_version;  // the first write of an unwritten room
  return build(*ops, now_ms, cuts ? opt_.schema_version : room_schema_, cuts);
}

WriteOutcome RoomClient::migrate(std::string_view ops_json, TimeMs now_ms) {
  if (!welcomed_) return {WriteRefusal::not_welcomed};
  if (migrating_) return {WriteRefusal::migrating};
  if (room_schema_ >= opt_.schema_version) return {WriteRefusal::no_migration};
  auto ops = store_ops(ops_json);
  if (!ops) return {WriteRefusal::bad_ops};
  const bool sets_root = std::any_of(ops->begin(), ops->end(), [](const Json& op) {
    return field(op, "path")->empty() && str(op, "kind") == "set";
  });
  if (!sets_root) return {WriteRefusal::migration_root};
  return build(*ops, now_ms, opt_.schema_version, true);
}

// StoreOps JSON (a non-empty array of {kind: set|delete|clear, path: [...], next?}), or nullopt.
std::optional<Json> RoomClient::store_ops(std::string_view ops_json) {
  JsonParse parsed = parse_json(ByteView(ops_json));
  if (!parsed.ok() || !parsed.value.is_array() || parsed.value.empty()) return std::nullopt;
  for (const auto& store_op : parsed.value) {
    const Json* path = field(store_op, "path");
    std::string kind = str(store_op, "kind");
    if (!path || !path->is_array() || (kind != "set" && kind != "delete" && kind != "clear"))
      return std::nullopt;
  }
  return std::move(parsed.value);
}

WriteOutcome RoomClient::build(const Json& input, TimeMs now_ms, double schema, bool migration) {
  Hlc h = tick(now_ms);
  Json ops = Json::array();
  for (const auto& store_op : input) {
    const Json* path = field(store_op, "path");
    Json op = store_op;
    Json cites = Json::array();
    double epoch = 0;
    auto reg = registers_.find(key_of(*path));
    if (reg != registers_.end()) {
      for (const auto& s : reg->second.siblings) {
        epoch = std::max(epoch, s.epoch);  // carry the precedence this writer observed
        if (live(reg->second, s))
          cites.push_back(Json{{"origin", s.origin}, {"hlc", hlc_json(s.hlc)}});
      }
    }
    op["cites"] = std::move(cites);
    op["epoch"] = epoch;
    ops.push_back(std::move(op));
  }
  Json env = {{"proto", kMeshProtoVersion},
              {"instance", instance_},
              {"origin", opt_.origin},
              {"writer", opt_.writer},
              {"version", ++version_},
              {"hlc", hlc_json(h)},
              {"policyVersion", opt_.policy_version},
              {"schemaVersion", schema},
              {"ops", ops}};
  ingest(env);
  std::string message = to_json(Json{{"t", "env"}, {"room", opt_.room}, {"env", env}});
  transmits_.push(message);
  tail_.push_back(Pending{version_, instance_, std::move(message), env});
  // Ours cuts a generation: what we write in this one would be refused after the cut.
  if (migration) migrating_ = true;
  return {};
}

std::string RoomClient::connect() {
  reads_.reset();
  uncounted_ = false;
  return hello();
}

void RoomClient::handle_message(std::string_view server_json, TimeMs now_ms, bool frame) {
  if (!frame) uncounted_ = true;
  reads_.frame(static_cast<double>(server_json.size()));
  apply(server_json, now_ms);
  if (uncounted_) return;
  if (auto n = reads_.take()) transmits_.push(read_message(to_json(Json(opt_.room)), *n));
}

void RoomClient::apply(std::string_view server_json, TimeMs now_ms) {
  JsonParse parsed = parse_json(ByteView(server_json));
  if (!parsed.ok() || !parsed.value.is_object()) return;
  const Json& m = parsed.value;
  if (str(m, "room") != opt_.room) return;
  std::string t = str(m, "t");
  if (t == "welcome") {
    if (const Json* every = field(m, kReadAckField)) {
      if (auto d = read_number(*every)) reads_.advertised(*d);
    }
    std::string instance = str(m, "instance");
    std::string mode = str(m, "mode");
    bool new_generation = instance != instance_;
    // null is how a schema raised to Infinity (an envelope's 1e999) is written.
    double schema = 0;
    if (const Json* sv = field(m, "schemaVersion"))
      schema = sv->is_null() ? HUGE_VAL : read_number(*sv).value_or(0);
    // A new generation without a raised schema is no migration: the relay lost the room (it
    // restarted without storage, or served the name again without hydrating it; spec: unload).
    // The spec has us hydrate from what it holds now, so the document we held goes: hand it to
    // the application first, which alone can say whether to write it again.
    if (new_generation && !instance_.empty() && schema <= room_schema_ && !registers_.empty()) {
      RoomClientEvent& e = events_.emplace();
      e.kind = RoomClientEvent::Kind::lost;
      e.reason = "room-lost";
      e.envelope = to_json(value());
    }
    instance_ = instance;
    if (mode == "snapshot" || new_generation) registers_.clear();
    if (mode == "snapshot") {
      if (const Json* regs = field(m, "registers"); regs && regs->is_array()) {
        for (const auto& rj : *regs) {
          const Json* path = field(rj, "path");
          if (!path || !path->is_array()) continue;
          Register r;
          r.path = *path;
          if (const Json* sibs = field(rj, "siblings"); sibs && sibs->is_array()) {
            for (const auto& s : *sibs) {
              Sibling sib{str(s, "origin"), hlc_at(s, "hlc"), num(s, "epoch", 0), str(s, "kind"),
                          Json()};
              if (const Json* v = field(s, "value")) sib.value = *v;
              r.siblings.push_back(std::move(sib));
            }
          }
          if (const Json* water = field(rj, "water"); water && water->is_object()) {
            for (auto it = water->begin(); it != water->end(); ++it)
              r.water[it.key()] = hlc_of(it.value());
          }
          registers_[key_of(*path)] = std::move(r);
        }
        observe_registers(*regs, now_ms);
      }
      // `wm`: per origin, the highest version the room holds at the snapshot point.
      if (const Json* wm = field(m, "wm"); wm && wm->is_object()) {
        if (const Json* ours = field(*wm, opt_.origin.c_str())) {
          if (auto v = read_number(*ours)) raise_version(*v);
        }
      }
    } else if (mode == "delta") {
      if (const Json* envs = field(m, "envs"); envs && envs->is_array()) {
        for (const auto& e : *envs) {
          ingest(e);
          if (const Json* h = field(e, "hlc")) observe(hlc_of(*h), now_ms);
          if (str(e, "origin") == opt_.origin) raise_version(num(e, "version", 0));
        }
      }
    }
    seq_ = num(m, "seq", 0);
    room_schema_ = schema;
    welcomed_ = true;
    catching_up_ = false;
    // A tail written in another generation means nothing here: drop it loudly (spec). All but
    // the envelope that cut this generation: a migration whose echo was lost on the way is in
    // the registers the welcome handed over, and is acknowledged, not refused.
    std::vector<Pending> keep;
    for (auto& p : tail_) {
      if (p.instance == instance_)
        keep.push_back(std::move(p));
      else if (!new_generation || !in_registers(p))
        refused("generation", p.env);
    }
    tail_.swap(keep);
    migrating_ = std::any_of(tail_.begin(), tail_.end(), [&](const Pending& p) {
      return num(p.env, "schemaVersion", 0) > room_schema_;
    });
    if (new_generation && mode != "snapshot" && seq_ > 0) {
      // Our registers belong to a dead generation and this answer did not replace them.
      welcomed_ = false;
      transmits_.push(hello());
      return;
    }
    for (auto& p : tail_) {
      ingest(p.env);
      transmits_.push(p.message);
    }
    return;
  }
  if (t == "env") {
    const Json* env = field(m, "env");
    if (!env) return;
    double s = num(*env, "seq", 0);
    if (!welcomed_ || catching_up_ || s <= seq_) return;  // stale, or covered by a coming welcome
    if (s > seq_ + 1) {
      // A gap: something was lost on the way. Ask for a delta from what we have.
      catching_up_ = true;
      transmits_.push(hello());
      return;
    }
    ingest(*env);
    seq_ = s;
    observe(hlc_at(*env, "hlc"), now_ms);
    if (str(*env, "origin") == opt_.origin) {
      double v = num(*env, "version", -1);
      tail_.erase(std::remove_if(tail_.begin(), tail_.end(),
                                 [&](const Pending& p) { return p.version == v; }),
                  tail_.end());
    }
    return;
  }
  if (t == "drop" && str(m, "origin") == opt_.origin) {
    double v = num(m, "version", -1);
    std::string reason = str(m, "reason");
    auto it =
        std::find_if(tail_.begin(), tail_.end(), [&](const Pending& p) { return p.version == v; });
    if (it == tail_.end()) return;
    if (reason != "duplicate") {
      // Refused: not in the room. Hand it to the application and rehydrate from a snapshot.
      refused(reason, it->env);
      tail_.erase(it);
      welcomed_ = false;
      seq_ = 0;
      transmits_.push(hello());
      return;
    }
    tail_.erase(it);  // the acknowledgement of a resend whose echo was lost
    return;
  }
  if (t == "settled") {
    if (const Json* s = field(m, "settled"); s && s->is_object()) settle(*s);
    return;
  }
  if (t == "reject") {
    // Our hello was refused (docs/rooms.md § Messages): nothing we write reaches the room until
    // a hello is accepted, so write() refuses until then, and the host hears why (a `schema`
    // reject wants a client of the room's schema, `policy-version` the relay's policy, and
    // `unauthorized` means our writer is banned). The tail stays: tail() still hands it over.
    RoomClientEvent& e = events_.emplace();
    e.kind = RoomClientEvent::Kind::rejected;
    e.reason = str(m, "reason");
    e.expected = num(m, "expected", -1);
    if (e.expected < 0) e.expected = -1;
    welcomed_ = false;
    catching_up_ = false;
    return;
  }
  if (t == "eject") {
    // Under `ejection: 'writer'` every member hears of every eject (docs/rooms.md § Policy and the
    // tripwire): only one naming our writer is ours. The relay closes our socket; until a new
    // welcome nothing we write can be sequenced.
    if (str(m, "writer") != opt_.writer) return;
    RoomClientEvent& e = events_.emplace();
    e.kind = RoomClientEvent::Kind::ejected;
    e.reason = str(m, "reason");
    welcomed_ = false;
    catching_up_ = false;
  }
}

// Whether the registers hold `p` as a sibling: our origin at its stamp (a clock never stamps
// twice, so the stamp names the envelope).
bool RoomClient::in_registers(const Pending& p) const {
  const Hlc h = hlc_at(p.env, "hlc");
  for (const auto& [key, r] : registers_) {
    for (const auto& s : r.siblings) {
      if (s.origin == opt_.origin && compare_hlc(s.hlc, h) == 0) return true;
    }
  }
  return false;
}

void RoomClient::observe_registers(const Json& registers, TimeMs now_ms) {
  // Every stamp a snapshot holds is a write this client now knows of: the siblings and the
  // watermarks (the cited writes that superseded them).
  for (const auto& r : registers) {
    if (const Json* sibs = field(r, "siblings"); sibs && sibs->is_array()) {
      for (const auto& s : *sibs) {
        if (const Json* h = field(s, "hlc")) observe(hlc_of(*h), now_ms);
      }
    }
    if (const Json* water = field(r, "water"); water && water->is_object()) {
      for (auto it = water->begin(); it != water->end(); ++it) observe(hlc_of(it.value()), now_ms);
    }
  }
}

std::string RoomClient::seed_tail(const std::vector<std::string>& messages, TimeMs now_ms) {
  if (welcomed_ || !tail_.empty() || version_ > 0)
    return "seed the outbox into a new client, before its first welcome";
  std::vector<Pending> seeded;
  double last = 0;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const std::string at = "outbox entry " + std::to_string(i) + ": ";
    JsonParse parsed = parse_json(ByteView(std::string_view(messages[i])));
    if (!parsed.ok() || !parsed.value.is_object() || str(parsed.value, "t") != "env")
      return at + "not a client env message (persist what tail() returned)";
    const Json& m = parsed.value;
    if (str(m, "room") != opt_.room) return at + "written for another room";
    const Json* env = field(m, "env");
    if (!env || !env->is_object()) return at + "has no envelope";
    EnvelopeView view;
    JsonScan scan;
    std::string text;
    if (const char* bad = validate_envelope(*env, view, scan, text))
      return at + "malformed envelope (" + bad + ")";
    if (view.origin != opt_.origin || view.writer != opt_.writer)
      return at + "written by another origin or writer; seed the client that wrote it";
    if (view.version <= last) return at + "versions must increase, oldest first";
    last = view.version;
    seeded.push_back(Pending{view.version, view.instance, messages[i], *env});
  }
  for (auto& p : seeded) {
    observe(hlc_at(p.env, "hlc"), now_ms);
    version_ = p.version;
    tail_.push_back(std::move(p));
  }
  return std::string();
}

std::vector<std::string> RoomClient::tail_messages() const {
  std::vector<std::string> out;
  for (const auto& p : tail_) out.push_back(p.message);
  return out;
}

Json RoomClient::value() const {
  struct Win {
    const Register* reg;
    const Sibling* s;
  };
  std::vector<Win> wins;
  for (const auto& [key, r] : registers_) {
    const Sibling* best = nullptr;
    for (const auto& s : r.siblings) {
      if (!live(r, s)) continue;
      if (!best || std::make_tuple(s.epoch, s.hlc.p, s.hlc.l, s.origin) >
                       std::make_tuple(best->epoch, best->hlc.p, best->hlc.l, best->origin)) {
        best = &s;
      }
    }
    if (best) wins.push_back(Win{&r, best});
  }
  std::sort(wins.begin(), wins.end(), [](const Win& a, const Win& b) {
    return std::make_tuple(a.s->hlc.p, a.s->hlc.l, a.s->origin, a.reg->path.size()) <
           std::make_tuple(b.s->hlc.p, b.s->hlc.l, b.s->origin, b.reg->path.size());
  });
  Json doc = Json::object();
  for (const auto& w : wins) {
    const Json& path = w.reg->path;
    if (path.empty()) {
      if (w.s->kind == "set") doc = w.s->value;
      continue;
    }
    Json* at = &doc;
    for (std::size_t i = 0; i + 1 < path.size(); ++i) {
      std::string k;
      append_js_string(k, path[i]);
      if (!at->is_object()) *at = Json::object();
      at = &(*at)[k];
    }
    if (!at->is_object()) *at = Json::object();
    std::string last;
    append_js_string(last, path.back());
    if (w.s->kind == "set")
      (*at)[last] = w.s->value;
    else
      at->erase(last);
  }
  return doc;
}

}  // namespace tether::room
