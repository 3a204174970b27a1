// The room member (member.hpp).
#include "room/member.hpp"

#include <algorithm>
#include <cmath>

#include "common/json.hpp"
#include "common/utf8.hpp"
#include "room/envelope.hpp"
#include "room/limits.hpp"

namespace tether::room {

namespace {
bool clean_peer_id(std::string_view s, std::size_t max_bytes) {
  return !s.empty() && s.size() <= max_bytes && !has_control_char(s) && is_valid_utf8(ByteView(s));
}

std::string number_text(double v) {
  std::string out;
  append_number(out, v);
  return out;
}
}  // namespace

const char* member_action_name(MemberAction::Kind k) {
  switch (k) {
    case MemberAction::Kind::dial: return "dial";
    case MemberAction::Kind::transmit: return "transmit";
    case MemberAction::Kind::hang_up: return "hang-up";
  }
  return "";
}

const char* member_event_name(MemberEvent::Kind k) {
  using K = MemberEvent::Kind;
  switch (k) {
    case K::joined: return "joined";
    case K::member: return "member";
    case K::left: return "left";
    case K::roster: return "roster";
    case K::lane_open: return "lane-open";
    case K::lane_close: return "lane-close";
    case K::text: return "text";
    case K::signal: return "signal";
    case K::down: return "down";
    case K::refused: return "refused";
  }
  return "";
}

const char* lane_send_name(LaneSend s) {
  switch (s) {
    case LaneSend::accepted: return "accepted";
    case LaneSend::not_open: return "not-open";
    case LaneSend::too_big: return "too-big";
    case LaneSend::backpressure: return "backpressure";
    case LaneSend::frame_too_big: return "frame-too-big";
    case LaneSend::not_utf8: return "not-utf8";
  }
  return "";
}

ParsedMemberOptions parse_member_options(std::string_view json) {
  ParsedMemberOptions out;
  RoomMemberOptions& o = out.options;
  JsonParse p = parse_json(ByteView(json));
  if (!p.ok() || !p.value.is_object()) {
    out.error = "the room member's options must be a JSON object";
    return out;
  }
  const Json& j = p.value;
  auto text = [&](const char* k, std::size_t max_bytes, std::string& into, const char* what) {
    const Json* v = field(j, k);
    if (!v || !v->is_string() || !clean_peer_id(v->get_ref<const std::string&>(), max_bytes)) {
      out.error = std::string(k) + " must be a non-empty string of at most " +
                  number_text(double(max_bytes)) + " bytes without control characters (" + what +
                  ")";
      return false;
    }
    into = v->get<std::string>();
    return true;
  };
  auto integer = [&](const char* k, double min, double max, double& into) {
    const Json* v = field(j, k);
    if (!v || v->is_null()) return true;  // the default
    auto d = read_number(*v);
    if (!d || *d != std::floor(*d) || *d < min || *d > max) {
      out.error = std::string(k) + " must be an integer from " + number_text(min) + " to " +
                  number_text(max) + " (got " + value_text(*v) + ")";
      return false;
    }
    into = *d;
    return true;
  };
  if (!text("room", kMaxRoomNameBytes, o.room, "the room's name")) return out;
  if (!text("selfId", kMaxPeerIdBytes, o.origin, "our origin in the room; peers address us by it"))
    return out;
  if (const Json* w = field(j, "writer"); w && !w->is_null()) {
    if (!text("writer", kMaxIdBytes, o.writer,
              "our writer as the relay authenticated it, e.g. the ticket's"))
      return out;
  }
  if (const Json* pv = field(j, "policyVersion"); pv && !pv->is_null()) {
    auto d = read_number(*pv);
    if (!d) {
      out.error = "policyVersion must be a number (the room policy version the relay runs)";
      return out;
    }
    o.policy_version = *d;
  }
  if (const Json* l = field(j, "lanes"); l && l->is_boolean()) o.lanes = l->get<bool>();
  double message = double(o.max_message_bytes), frame = double(o.max_frame_bytes),
         buffered = double(o.max_buffered_bytes), min_ms = double(o.reconnect_min_ms),
         max_ms = double(o.reconnect_max_ms), seed = 0;
  if (!integer("maxMessageBytes", 1, double(kMaxLaneMessageBytes), message)) return out;
  if (!integer("maxBufferedBytes", 1, double(kMaxLinkBufferedBytes), buffered)) return out;
  if (!integer("maxFrameBytes", double(kMinLinkFrameBytes), double(kMaxLinkFrameBytes), frame))
    return out;
  if (!integer("reconnectMinMs", 1, double(kMaxReconnectMinMs), min_ms)) return out;
  if (!integer("reconnectMaxMs", min_ms, double(kMaxReconnectMaxMs), max_ms)) return out;
  if (!integer("seed", 0, 9007199254740991.0, seed)) return out;
  o.max_message_bytes = std::size_t(message);
  o.max_frame_bytes = std::size_t(frame);
  o.max_buffered_bytes = std::size_t(buffered);
  o.reconnect_min_ms = TimeMs(min_ms);
  o.reconnect_max_ms = TimeMs(max_ms);
  o.seed = std::uint64_t(seed);
  return out;
}

std::string hello_text(std::string_view room, std::string_view origin, double policy_version,
                       std::optional<double> schema_version, std::optional<double> seq) {
  std::string out = "{\"t\":\"hello\",\"room\":";
  append_quoted(out, room);
  out += ",\"origin\":";
  append_quoted(out, origin);
  out += ",\"proto\":";
  append_number(out, kMeshProtoVersion);
  out += ",\"policyVersion\":";
  append_number(out, policy_version);
  if (schema_version) {
    out += ",\"schemaVersion\":";
    append_number(out, *schema_version);
  }
  if (seq) {
    out += ",\"seq\":";
    append_number(out, *seq);
  }
  out += '}';
  return out;
}

RoomMember::RoomMember(RoomMemberOptions options) : opt_(std::move(options)), rng_(opt_.seed) {}

MemberEvent& RoomMember::event(MemberEvent::Kind kind, std::string origin) {
  MemberEvent& e = events_.emplace();
  e.kind = kind;
  e.origin = std::move(origin);
  return e;
}

void RoomMember::roster_event() {
  event(MemberEvent::Kind::roster).members = roster_;
}

bool RoomMember::in_roster(std::string_view p) const {
  return std::find(roster_.begin(), roster_.end(), p) != roster_.end();
}

bool RoomMember::lane_open(std::string_view peer) const {
  return joined_ && link_up_ && !closed_ && in_roster(peer);
}

void RoomMember::dial() {
  dialing_ = true;
  MemberAction& a = actions_.emplace();
  a.kind = MemberAction::Kind::dial;
  a.attempt = attempt_ + 1;
}

void RoomMember::handle_start(TimeMs) {
  if (started_ || closed_) return;
  started_ = true;
  dial();
}

void RoomMember::handle_link_open(TimeMs) {
  if (closed_ || !dialing_) return;
  link_up_ = true;
  reads_.reset();
  MemberAction& a = actions_.emplace();
  a.kind = MemberAction::Kind::transmit;
  a.text = hello_text(opt_.room, opt_.origin, opt_.policy_version);
}

void RoomMember::lost_link() {
  const bool was_joined = joined_;
  joined_ = false;
  link_up_ = false;
  if (!was_joined) return;
  if (opt_.lanes) {
    for (const auto& p : roster_) event(MemberEvent::Kind::lane_close, p);
  }
  event(MemberEvent::Kind::down);
}

void RoomMember::handle_link_closed(TimeMs now_ms) {
  if (!dialing_ && !link_up_) return;
  dialing_ = false;
  lost_link();
  schedule(now_ms);
}

// Capped exponential backoff with jitter in [base/2, base]: peers dropped together do not all
// come back in one burst.
void RoomMember::schedule(TimeMs now_ms) {
  if (closed_ || fatal_ || redial_at_) return;
  const double base = std::min(
      double(opt_.reconnect_max_ms),
      double(opt_.reconnect_min_ms) * std::pow(2.0, std::min(attempt_, kMaxBackoffDoublings)));
  ++attempt_;
  const double unit = double(rng_.next_u64() >> 11) / 9007199254740992.0;  // [0, 1)
  const TimeMs delay = std::max<TimeMs>(1, TimeMs(std::llround(base / 2 + unit * base / 2)));
  redial_at_ = now_ms + delay;
}

void RoomMember::handle_timeout(TimeMs now_ms) {
  if (!redial_at_ || now_ms < *redial_at_) return;
  redial_at_.reset();
  if (closed_ || fatal_) return;
  dial();
}

void RoomMember::handle_close() {
  if (closed_) return;
  const bool had_link = dialing_ || link_up_;
  lost_link();
  closed_ = true;
  dialing_ = false;
  redial_at_.reset();
  roster_.clear();
  if (had_link) actions_.emplace().kind = MemberAction::Kind::hang_up;
}

void RoomMember::handle_link_message(std::string_view text, TimeMs) {
  if (closed_ || !link_up_) return;
  reads_.frame(static_cast<double>(text.size()));
  read_frame(text);
  if (closed_ || !link_up_) return;
  if (auto n = reads_.take()) {
    std::string room;
    append_quoted(room, opt_.room);
    MemberAction& a = actions_.emplace();
    a.kind = MemberAction::Kind::transmit;
    a.text = read_message(room, *n);
    ++stats_.read_acks;
  }
}

void RoomMember::read_frame(std::string_view text) {
  if (text.size() > kMaxServerMessageBytes) return;
  if (!scan_.parse(text, kMaxJsonDepth) || !scan_.is_object(0)) return;
  const std::uint32_t room = scan_.field(0, "room");
  if (!scan_.is_string(room) || scan_.str(room, scratch_) != opt_.room) return;
  const std::uint32_t t = scan_.field(0, "t");
  if (!scan_.is_string(t)) return;
  std::string type(scan_.str(t, scratch_));
  if (type == "welcome")
    welcome(0);
  else if (type == "member")
    member(0);
  else if (type == "signal")
    signal(0);
  else if (type == "reject")
    refused(0, true);
  else if (type == "eject")
    refused(0, false);
  // env, presence, settled, drop: the room's document traffic, not the member's.
}

void RoomMember::welcome(std::uint32_t msg) {
  const std::uint32_t every = scan_.field(msg, kReadAckField);
  if (scan_.is_number(every)) reads_.advertised(scan_.number(every));
  std::vector<std::string> members;
  const std::uint32_t list = scan_.field(msg, "members");
  if (scan_.is_array(list)) {
    for (std::uint32_t c = scan_.node(list).first; c != JsonScan::kNone; c = scan_.node(c).next) {
      if (!scan_.is_string(c)) continue;
      std::string id(scan_.str(c, scratch_));
      if (id == opt_.origin || !clean_peer_id(id, kMaxPeerIdBytes)) continue;
      if (std::find(members.begin(), members.end(), id) == members.end())
        members.push_back(std::move(id));
    }
  }
  std::vector<std::string> before = std::move(roster_);
  roster_ = members;
  joined_ = true;
  attempt_ = 0;
  const bool reconnect = ever_joined_;
  if (reconnect) ++stats_.reconnects;
  ever_joined_ = true;
  MemberEvent& j = event(MemberEvent::Kind::joined);
  j.members = members;
  j.reconnect = reconnect;
  if (opt_.lanes) {
    for (const auto& p : before) {
      if (!in_roster(p)) event(MemberEvent::Kind::lane_close, p);
    }
  }
  roster_event();
  if (opt_.lanes) {
    for (const auto& p : roster_) event(MemberEvent::Kind::lane_open, p);
  }
}

void RoomMember::member(std::uint32_t msg) {
  const std::uint32_t o = scan_.field(msg, "origin");
  if (!scan_.is_string(o)) return;
  std::string origin(scan_.str(o, scratch_));
  if (origin == opt_.origin || !clean_peer_id(origin, kMaxPeerIdBytes)) return;
  const std::uint32_t gone = scan_.field(msg, "gone");
  if (gone != JsonScan::kNone && scan_.node(gone).type == JsonScan::Type::boolean &&
      scan_.node(gone).truthy) {
    auto it = std::find(roster_.begin(), roster_.end(), origin);
    if (it == roster_.end()) return;
    roster_.erase(it);
    event(MemberEvent::Kind::left, origin);
    if (opt_.lanes && joined_) event(MemberEvent::Kind::lane_close, origin);
    roster_event();
    return;
  }
  // A known origin joining again is a restarted peer that displaced its old connection: its lane
  // was reset, so say so before reopening it (queues flush again on open).
  const bool again = in_roster(origin);
  event(MemberEvent::Kind::member, origin).again = again;
  if (again) {
    if (opt_.lanes && joined_) event(MemberEvent::Kind::lane_close, origin);
  } else {
    roster_.push_back(origin);
    roster_event();
  }
  if (opt_.lanes && joined_) event(MemberEvent::Kind::lane_open, origin);
}

void RoomMember::signal(std::uint32_t msg) {
  const std::uint32_t from = scan_.field(msg, "from");
  const std::uint32_t data = scan_.field(msg, "data");
  if (!opt_.lanes) {
    if (!scan_.is_string(from) || data == JsonScan::kNone) {
      ++stats_.ignored;
      return;
    }
    std::string origin(scan_.str(from, scratch_));
    event(MemberEvent::Kind::signal, std::move(origin)).text = std::string(scan_.raw(data));
    return;
  }
  if (!scan_.is_string(from) || !scan_.is_object(data)) {
    ++stats_.ignored;
    return;
  }
  const std::uint32_t k = scan_.field(data, "k");
  const std::uint32_t body = scan_.field(data, "text");
  if (!scan_.is_string(k) || scan_.str(k, scratch_) != kEnvelopeSignalKind ||
      !scan_.is_string(body)) {
    ++stats_.ignored;  // somebody else's signaling (WebRTC offers etc.): not ours
    return;
  }
  std::string origin(scan_.str(from, scratch_));
  std::string_view text = scan_.str(body, scratch_);
  if (text.size() > opt_.max_message_bytes) {
    ++stats_.ignored;
    return;
  }
  ++stats_.received;
  event(MemberEvent::Kind::text, std::move(origin)).text = std::string(text);
}

void RoomMember::refused(std::uint32_t msg, bool reject) {
  const std::uint32_t r = scan_.field(msg, "reason");
  std::string reason = scan_.is_string(r) ? std::string(scan_.str(r, scratch_)) : std::string();
  if (!reject) {
    // An eject names the writer it bans. Under `ejection: 'writer'` the relay broadcasts it to
    // the whole room (docs/rooms.md § Policy and the tripwire), so a member that knows its
    // writer acts only on one naming it; another writer's is not news about us (its members'
    // `member … gone` notices follow and update the roster).
    const std::uint32_t w = scan_.field(msg, "writer");
    std::string writer = scan_.is_string(w) ? std::string(scan_.str(w, scratch_)) : std::string();
    if (!opt_.writer.empty() && writer != opt_.writer) {
      ++stats_.ignored;
      return;
    }
    MemberEvent& e = event(MemberEvent::Kind::refused);
    e.reason = std::move(reason);
    e.writer = writer;
    // Without our writer we cannot tell whose it is: say what the relay said, claim nothing.
    e.text = opt_.writer.empty() ? "the relay ejected writer '" + writer + "' (" + e.reason +
                                       "); pass the writer option to tell whether it was us"
                                 : "the relay ejected us (" + e.reason + ")";
    return;
  }
  MemberEvent& e = event(MemberEvent::Kind::refused);
  e.reason = reason;
  e.fatal = true;
  auto expected = read_number(scan_, scan_.field(msg, "expected"));
  if (expected) e.expected = *expected;
  e.text = "the relay rejected our hello (" + reason +
           (expected ? ", expected " + number_text(*expected) : "") +
           "); check the policyVersion option against the relay";
  // A refused hello will be refused again: stop instead of hammering the relay.
  fatal_ = true;
  redial_at_.reset();
}

// A signal to `to`, up to its data: {"t":"signal","room":..,"to":..,"data":
std::string RoomMember::signal_head(std::string_view to) const {
  std::string frame = "{\"t\":\"signal\",\"room\":";
  append_quoted(frame, opt_.room);
  frame += ",\"to\":";
  append_quoted(frame, to);
  frame += ",\"data\":";
  return frame;
}

LaneSend RoomMember::send_text(std::string_view peer, std::string_view text,
                               double buffered_bytes) {
  if (!opt_.lanes || !lane_open(peer)) return LaneSend::not_open;
  if (text.size() > opt_.max_message_bytes) {
    ++stats_.refused;
    return LaneSend::too_big;
  }
  if (buffered_bytes > double(opt_.max_buffered_bytes)) {
    ++stats_.refused;
    return LaneSend::backpressure;
  }
  // Text a JS string held a lone surrogate in (or any invalid UTF-8) would make a frame the relay
  // refuses as unreadable, and it would close the link: refuse it here instead.
  if (!is_valid_utf8(ByteView(text))) {
    ++stats_.refused;
    return LaneSend::not_utf8;
  }
  std::string frame = signal_head(peer);
  frame += "{\"k\":\"";
  frame += kEnvelopeSignalKind;
  frame += "\",\"text\":";
  append_quoted(frame, text);
  frame += "}}";
  // Escaping can grow the frame past what the relay accepts (its maxPayload): refuse, don't lose.
  if (frame.size() > opt_.max_frame_bytes) {
    ++stats_.refused;
    return LaneSend::frame_too_big;
  }
  ++stats_.sent;
  MemberAction& a = actions_.emplace();
  a.kind = MemberAction::Kind::transmit;
  a.text = std::move(frame);
  return LaneSend::accepted;
}

bool RoomMember::send_signal(std::string_view to, std::string_view data_json) {
  if (opt_.lanes || !joined_ || !link_up_ || closed_) return false;
  if (!clean_peer_id(to, kMaxPeerIdBytes) || data_json.size() > opt_.max_frame_bytes ||
      !scan_.parse(data_json, kMaxJsonDepth)) {
    return false;
  }
  std::string frame = signal_head(to);
  frame += data_json;
  frame += '}';
  MemberAction& a = actions_.emplace();
  a.kind = MemberAction::Kind::transmit;
  a.text = std::move(frame);
  return true;
}

}  // namespace tether::room
