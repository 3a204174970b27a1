// Admission limits of a room endpoint (admission.hpp).
#include "room/admission.hpp"

#include <algorithm>
#include <cmath>

#include "common/json.hpp"
#include "room/envelope.hpp"
#include "room/read_ack.hpp"

namespace tether::room {

namespace {
std::string whole(double v) {
  std::string out;
  append_number(out, v);
  return out;
}
std::string ceil_seconds(double ms) {
  return whole(std::ceil(ms / 1000));
}
}  // namespace

const char* const kAdmissionLimitNames[kAdmissionLimitCount] = {
    "maxFrameBytes",         "connectionMessagesPerSecond",
    "connectionBurst",       "principalMessagesPerSecond",
    "principalBurst",        "cooldownMs",
    "maxConnectionsPerRoom", "maxBufferedBytes",
    "readerBytesPerSecond"};

namespace {
double* limit_slot(AdmissionLimits& l, std::size_t i) {
  double* slots[kAdmissionLimitCount] = {
      &l.max_frame_bytes,          &l.connection_messages_per_second,
      &l.connection_burst,         &l.principal_messages_per_second,
      &l.principal_burst,          &l.cooldown_ms,
      &l.max_connections_per_room, &l.max_buffered_bytes,
      &l.reader_bytes_per_second};
  return i < kAdmissionLimitCount ? slots[i] : nullptr;
}
}  // namespace

double limit_value(const AdmissionLimits& l, std::size_t i) {
  return *limit_slot(const_cast<AdmissionLimits&>(l), i);
}

ParsedLimits parse_admission_limits(std::string_view json) {
  ParsedLimits out;
  if (json.empty()) return out;
  JsonParse p = parse_json(ByteView(json));
  if (!p.ok() || !(p.value.is_object() || p.value.is_null())) {
    out.error = "the room limits must be a JSON object of limit name -> positive number";
    return out;
  }
  if (p.value.is_null()) return out;
  for (auto it = p.value.begin(); it != p.value.end(); ++it) {
    if (it.key() == kRequireReadAckName) {
      if (!it.value().is_boolean()) {
        out.error = std::string(kRequireReadAckName) + " must be true or false, not " +
                    value_text(it.value());
        return out;
      }
      out.limits.require_read_ack = it.value().get<bool>();
      continue;
    }
    std::size_t i = 0;
    while (i < kAdmissionLimitCount && it.key() != kAdmissionLimitNames[i]) ++i;
    if (i == kAdmissionLimitCount) {
      out.error = "unknown limit " + value_text(Json(it.key())) + "; known: ";
      for (std::size_t k = 0; k < kAdmissionLimitCount; ++k)
        out.error += (k ? ", " : "") + std::string(kAdmissionLimitNames[k]);
      out.error += ", " + std::string(kRequireReadAckName);
      return out;
    }
    auto v = read_number(it.value());
    if (!v || !(*v > 0) || !std::isfinite(*v)) {
      out.error = "limit " + it.key() + " must be a positive number, not " + value_text(it.value());
      return out;
    }
    *limit_slot(out.limits, i) = *v;
  }
  return out;
}

void TokenBucket::refill(double rate, double burst, double now_ms) {
  if (now_ms > at) {
    tokens = std::min(burst, tokens + (now_ms - at) * rate / 1000);
    at = now_ms;
  }
}

bool TokenBucket::take(double rate, double burst, double now_ms) {
  refill(rate, burst, now_ms);
  if (tokens < 1) return false;
  tokens -= 1;
  return true;
}

std::string budget_json(const BudgetState& s) {
  return "{\"tokens\":" + whole(s.tokens) + ",\"at\":" + whole(s.at) +
         ",\"cooldownUntil\":" + whole(s.cooldown_until) + "}";
}

std::optional<BudgetState> parse_budget(std::string_view json) {
  JsonParse p = parse_json(ByteView(json));
  if (!p.ok() || !p.value.is_object()) return std::nullopt;
  auto num = [&](const char* k) -> std::optional<double> {
    const Json* v = field(p.value, k);
    auto d = v ? read_number(*v) : std::nullopt;
    return d && std::isfinite(*d) ? d : std::nullopt;
  };
  auto tokens = num("tokens");
  auto at = num("at");
  if (!tokens || !at) return std::nullopt;
  return BudgetState{*tokens, *at, num("cooldownUntil").value_or(0)};
}

std::string read_state_json(const ReadState& s) {
  std::string out = "{\"sent\":" + whole(s.sent) + ",\"acked\":" + whole(s.acked) +
                    ",\"claimed\":" + (s.claimed ? "true" : "false") + ",\"marks\":[";
  for (std::size_t i = 0; i < s.marks.size(); ++i) {
    if (i) out += ',';
    append_number(out, s.marks[i]);
  }
  out += "]}";
  return out;
}

std::optional<ReadState> parse_read_state(std::string_view json) {
  if (json.empty()) return std::nullopt;
  JsonParse p = parse_json(ByteView(json));
  if (!p.ok() || !p.value.is_object() || p.value.size() != 4) return std::nullopt;
  auto count = [](const Json* v) -> std::optional<double> {
    auto d = v ? read_number(*v) : std::nullopt;
    return d && read_count_valid(*d) ? d : std::nullopt;
  };
  auto sent = count(field(p.value, "sent"));
  auto acked = count(field(p.value, "acked"));
  const Json* claimed = field(p.value, "claimed");
  const Json* marks = field(p.value, "marks");
  if (!sent || !acked || *acked > *sent || !claimed || !claimed->is_boolean() || !marks ||
      !marks->is_array() || marks->size() > kMaxReadAckMarks)
    return std::nullopt;
  ReadState s{*sent, *acked, claimed->get<bool>(), {}};
  double last = *acked;
  for (const Json& m : *marks) {
    auto n = count(&m);
    if (!n || *n <= last || *n > *sent) return std::nullopt;
    s.marks.push_back(*n);
    last = *n;
  }
  return s;
}

Admission::Admission(AdmissionLimits limits) : limits_(limits) {}

std::string Admission::key(std::string_view scope, std::string_view writer) {
  std::string k(scope);
  k += '\0';
  k += writer;
  return k;
}

Admission::Principal& Admission::principal(std::string_view scope, std::string_view writer,
                                           TimeMs now_ms) {
  auto [it, fresh] = principals_.try_emplace(key(scope, writer));
  Principal& p = it->second;
  if (fresh) {
    p.bucket = TokenBucket{limits_.principal_burst, static_cast<double>(now_ms)};
    AdmissionAction& a = actions_.emplace();
    a.kind = AdmissionAction::Kind::load_budget;
    a.scope = std::string(scope);
    a.writer = std::string(writer);
  }
  return p;
}

void Admission::save(std::string_view scope, std::string_view writer, const Principal& p) {
  AdmissionAction& a = actions_.emplace();
  a.kind = AdmissionAction::Kind::save_budget;
  a.scope = std::string(scope);
  a.writer = std::string(writer);
  a.state = budget_json(BudgetState{p.bucket.tokens, p.bucket.at, p.cooldown_until});
}

std::uint64_t Admission::handle_attempt(std::string_view scope, std::string_view writer,
                                        TimeMs now_ms) {
  Attempt a{next_token_++, std::string(scope), std::string(writer)};
  Principal& p = principal(scope, writer, now_ms);
  if (!p.loaded) {
    waiting_[key(scope, writer)].push_back(std::move(a));
    return waiting_[key(scope, writer)].back().token;
  }
  std::uint64_t token = a.token;
  decide(a, now_ms);
  return token;
}

void Admission::decide(const Attempt& a, TimeMs now_ms) {
  AttemptVerdict& v = events_.emplace();
  v.token = a.token;
  auto sc = scope_conns_.find(a.scope);
  std::size_t live = sc == scope_conns_.end() ? 0 : sc->second;
  if (static_cast<double>(live) >= limits_.max_connections_per_room) {
    v.status = kStatusRoomFull;
    v.message =
        "the room holds its maximum of " + whole(limits_.max_connections_per_room) + " connections";
    v.retry_after_s = kRoomFullRetryAfterSeconds;
    return;
  }
  const Principal& p = principals_[key(a.scope, a.writer)];
  double wait = std::max(0.0, p.cooldown_until - static_cast<double>(now_ms));
  if (wait > 0) {
    v.status = kStatusCoolingDown;
    v.message = "writer " + a.writer + " spent its message budget; retry after " +
                ceil_seconds(wait) + " s";
    v.retry_after_s = static_cast<int>(std::ceil(wait / 1000));
  }
}

void Admission::handle_budget(std::string_view scope, std::string_view writer,
                              std::optional<BudgetState> saved, TimeMs now_ms) {
  auto it = principals_.find(key(scope, writer));
  if (it == principals_.end() || it->second.loaded) return;
  Principal& p = it->second;
  p.loaded = true;
  if (saved) {
    const double tokens = std::min(limits_.principal_burst, saved->tokens);
    if (!p.used) {
      p.bucket = TokenBucket{tokens, saved->at};
      p.cooldown_until = saved->cooldown_until;
    } else {
      // Frames were counted before this answer came (an async host): it can only make it stricter.
      p.bucket.tokens = std::min(p.bucket.tokens, tokens);
      p.cooldown_until = std::max(p.cooldown_until, saved->cooldown_until);
    }
  }
  auto w = waiting_.find(key(scope, writer));
  if (w == waiting_.end()) return;
  std::vector<Attempt> attempts = std::move(w->second);
  waiting_.erase(w);
  for (const auto& a : attempts) decide(a, now_ms);
}

std::uint64_t Admission::handle_opened(std::string_view scope, std::string_view writer,
                                       TimeMs now_ms, const OpenedSocket& how) {
  Principal& p = principal(scope, writer, now_ms);
  ++p.conns;
  ++scope_conns_[std::string(scope)];
  std::uint64_t id = next_token_++;
  Conn c;
  c.scope = std::string(scope);
  c.writer = std::string(writer);
  c.bucket = TokenBucket{limits_.connection_burst, static_cast<double>(now_ms)};
  c.queued_at = static_cast<double>(now_ms);
  c.exact = how.buffered_is_exact;
  if (how.resumed) {
    if (auto saved = parse_read_state(how.read_state)) {
      c.sent = saved->sent;
      c.acked = saved->acked;
      c.counts_reads = saved->claimed;
      for (double m : saved->marks) c.marks.record(m);
    } else {
      c.blind = true;
    }
  }
  conns_.emplace(id, std::move(c));
  return id;
}

double Admission::read_ack_bytes() const {
  return std::max(kMinReadAckBytes, std::floor(limits_.max_buffered_bytes * kReadAckShare));
}

std::string Admission::read_state(std::uint64_t conn) const {
  auto it = conns_.find(conn);
  if (it == conns_.end() || it->second.blind) return {};
  const Conn& c = it->second;
  ReadState s{c.sent, c.acked, c.counts_reads, {}};
  c.marks.each([&](double m) { s.marks.push_back(m); });
  return read_state_json(s);
}

bool Admission::handle_read(std::uint64_t conn, double bytes) {
  auto it = conns_.find(conn);
  if (it == conns_.end() || it->second.blind || !read_count_valid(bytes)) return false;
  Conn& c = it->second;
  // Like the cockpit lane's `read`: once a reader has said it counts, only what it earned counts.
  c.counts_reads = true;
  if (bytes == 0) return true;
  if (!c.marks.credit(bytes)) return false;
  c.acked = std::max(c.acked, bytes);
  return true;
}

FrameVerdict Admission::handle_frame(std::uint64_t conn, bool binary, double length,
                                     double utf8_bytes, TimeMs now_ms) {
  FrameVerdict v;
  auto it = conns_.find(conn);
  if (it == conns_.end()) {
    v.kind = FrameVerdict::Kind::close;
    v.code = CloseCode::invalid;
    v.reason = "unknown connection; reconnect";
    return v;
  }
  auto close = [&](CloseCode code, std::string reason) {
    v.kind = FrameVerdict::Kind::close;
    v.code = code;
    v.reason = std::move(reason);
    return v;
  };
  if (binary)
    return close(CloseCode::binary,
                 "binary frames are not part of the room protocol; send JSON text");
  const double max = limits_.max_frame_bytes;
  // A UTF-16 code unit is one to three UTF-8 bytes: the length alone decides outside that band.
  if (utf8_bytes < 0) {
    if (length > max)
      return close(CloseCode::too_big,
                   "frame larger than " + whole(max) + " bytes; split the write");
    if (length * 3 > max) {
      v.kind = FrameVerdict::Kind::measure;
      return v;
    }
  } else if (utf8_bytes > max) {
    return close(CloseCode::too_big, "frame larger than " + whole(max) + " bytes; split the write");
  }
  const double now = static_cast<double>(now_ms);
  Conn& c = it->second;
  if (!c.bucket.take(limits_.connection_messages_per_second, limits_.connection_burst, now)) {
    return close(CloseCode::rate, "more than " + whole(limits_.connection_messages_per_second) +
                                      " messages/s on one connection");
  }
  Principal& p = principal(c.scope, c.writer, now_ms);
  p.used = true;
  const std::string spent =
      "writer spent its message budget; cooling down " + ceil_seconds(limits_.cooldown_ms) + " s";
  if (p.cooldown_until > now) return close(CloseCode::budget, spent);
  if (!p.bucket.take(limits_.principal_messages_per_second, limits_.principal_burst, now)) {
    p.cooldown_until = now + limits_.cooldown_ms;
    save(c.scope, c.writer, p);
    return close(CloseCode::budget, spent);
  }
  return v;
}

SendVerdict Admission::handle_send(std::uint64_t conn, double bytes, bool ephemeral,
                                   double buffered, TimeMs now_ms) {
  SendVerdict v;
  auto it = conns_.find(conn);
  if (it == conns_.end()) return v;  // closing: the host's send fails harmlessly
  Conn& c = it->second;
  const double now = static_cast<double>(now_ms);
  // The model drains at the pace a reader is assumed to keep (time never runs backwards in it).
  if (now > c.queued_at) {
    c.queued =
        std::max(0.0, c.queued - (now - c.queued_at) * limits_.reader_bytes_per_second / 1000);
    c.queued_at = now;
  }
  const double max = limits_.max_buffered_bytes;
  // Held to its acknowledgements: it said it counts, or the deployment requires it of every
  // socket whose runtime cannot count what its reader has not taken.
  const bool required = limits_.require_read_ack && !c.exact;
  double queued = buffered >= 0 ? buffered : c.queued;
  if (c.blind && required)
    queued = max;  // its count was lost with the host's memory: nothing it holds is known
  else if (c.counts_reads || required)
    queued = std::max(c.sent - c.acked, buffered);
  // A socket that holds nothing unsent takes any frame, however large: the bound is about a
  // reader that stopped reading, not about the size of one frame. A welcome is one frame with the
  // whole room (or the delta) in it, and one past the bound refused to a fresh socket would be
  // refused again after every reconnect (docs/rooms.md § Limits, the slow-reader rule). What it
  // leaves unread counts against the frames after it as usual.
  const bool holds = queued > 0;
  if (holds && ephemeral && queued + bytes > max * kEphemeralQueueShare) {
    ++dropped_ephemeral_;
    v.kind = SendVerdict::Kind::drop;
    return v;
  }
  if (holds && queued + bytes > max) {
    v.kind = SendVerdict::Kind::close;
    v.code = CloseCode::slow_reader;
    v.reason = "more than " + whole(max) + " bytes queued for this reader; read faster, reconnect";
    return v;
  }
  c.queued += bytes;
  const double before = c.sent;
  c.sent += bytes;
  if (crosses_mark(before, c.sent, read_ack_bytes())) {
    c.marks.record(c.sent);
  }
  return v;
}

void Admission::handle_closed(std::uint64_t conn, TimeMs now_ms) {
  auto it = conns_.find(conn);
  if (it == conns_.end()) return;
  Conn c = std::move(it->second);
  conns_.erase(it);
  auto sc = scope_conns_.find(c.scope);
  if (sc != scope_conns_.end() && --sc->second == 0) scope_conns_.erase(sc);
  auto pit = principals_.find(key(c.scope, c.writer));
  if (pit == principals_.end()) return;
  Principal& p = pit->second;
  p.bucket.refill(limits_.principal_messages_per_second, limits_.principal_burst,
                  static_cast<double>(now_ms));
  save(c.scope, c.writer, p);
  // A principal with no socket left is forgotten here; its saved budget is asked for again.
  if (p.conns > 0) --p.conns;
  if (p.conns == 0 && p.loaded && waiting_.find(pit->first) == waiting_.end())
    principals_.erase(pit);
}

std::size_t Admission::connections(std::string_view scope) const {
  auto it = scope_conns_.find(std::string(scope));
  return it == scope_conns_.end() ? 0 : it->second;
}

}  // namespace tether::room
