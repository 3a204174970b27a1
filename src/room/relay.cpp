// The room relay core (room/relay.hpp; the room-relay spec).
#include "room/relay.hpp"

#include <algorithm>
#include <cmath>

#include "common/json.hpp"
#include "room/limits.hpp"
#include "room/read_ack.hpp"

namespace tether::room {

namespace {
constexpr std::uint32_t kNoMember = 0xffffffffu;

std::string json_quoted(std::string_view s) {
  std::string out;
  append_quoted(out, s);
  return out;
}

SharedText share(std::string s) {
  return std::make_shared<const std::string>(std::move(s));
}

std::uint64_t splitmix(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void append_base36(std::string& out, std::uint64_t v) {
  char buf[16];
  int n = 0;
  do {
    int d = static_cast<int>(v % 36);
    buf[n++] = static_cast<char>(d < 10 ? '0' + d : 'a' + d - 10);
    v /= 36;
  } while (v && n < 16);
  while (n) out += buf[--n];
}

bool number_equals(const JsonScan& scan, std::uint32_t v, double expected) {
  auto d = read_number(scan, v);
  return d && *d == expected;
}
}  // namespace

const char* const kRoomActionKindNames[8] = {
    "send", "close", "commit", "ask-can-write", "ask-validate", "ask-can-bump", "ask-acl", "read"};
const char* const kRoomEventKindNames[5] = {"join", "reject", "drop", "violation",
                                            "durability-failed"};
const char* const kRoomReasonNames[8] = {"",      "duplicate", "generation",     "schema",
                                         "order", "proto",     "policy-version", "unauthorized"};

const char* receive_error_name(ReceiveError e) {
  switch (e) {
    case ReceiveError::none: return "none";
    case ReceiveError::unparseable: return "unparseable";
    case ReceiveError::not_an_object: return "not-an-object";
    case ReceiveError::bad_type: return "bad-type";
    case ReceiveError::bad_room: return "bad-room";
    case ReceiveError::bad_hello: return "bad-hello";
    case ReceiveError::unknown_connection: return "unknown-connection";
    case ReceiveError::other_room: return "other-room";
    case ReceiveError::backlog_full: return "backlog-full";
  }
  return "unknown";
}

const char* receive_error_message(ReceiveError e) {
  switch (e) {
    case ReceiveError::none: return "";
    case ReceiveError::unparseable:
      return "the message is not UTF-8 JSON within the size and depth limits; send one JSON object "
             "per frame";
    case ReceiveError::not_an_object:
      return "a client message is a JSON object with t and room; wrap the payload";
    case ReceiveError::bad_type:
      return "t must be a string naming 'hello', 'env', 'presence' or 'signal'";
    case ReceiveError::bad_room:
      return "room must be a string of at most 512 bytes; name the room the message is for";
    case ReceiveError::bad_hello:
      return "a hello needs origin: a non-empty id without control characters, at most 512 bytes";
    case ReceiveError::unknown_connection:
      return "this connection was disconnected; call connect() again";
    case ReceiveError::other_room:
      return "this connection is bound to the room its ticket names; open one connection per room";
    case ReceiveError::backlog_full:
      return "the connection sent too much while its envelope waited for a policy verdict; answer "
             "every ask_* "
             "action (handle_policy_verdict) and reconnect";
  }
  return "";
}

// ---- state ----------------------------------------------------------------------------------

struct RoomRelay::Member {
  ConnId conn = 0;
  std::string origin;
  std::string writer;
  std::uint64_t incarnation = 0;
  bool ejected = false;
  bool in_room = false;
  std::vector<std::int8_t> acl;  // -1 unknown, else the rule's allow(ctx, room)
};

// An envelope parked on a question: its own copy of the message, the scan and validated view of
// it, and where the policy checks stand.
struct RoomRelay::Work {
  enum class Phase : std::uint8_t { policy, bump };
  ConnId conn = 0;
  std::uint32_t member = kNoMember;
  std::uint64_t incarnation = 0;  // the room's, so an unload meanwhile is noticed
  std::uint32_t env = JsonScan::kNone;
  std::string text;
  JsonScan scan;
  EnvelopeView ev;
  std::vector<std::vector<OriginId>> cite_ids;
  Phase phase = Phase::policy;
  std::size_t op = 0;
  bool op_checked = false;  // policy: canWrite/ACL passed for `op`; bump: canBump passed
  std::optional<bool> answer;
  std::uint64_t token = 0;  // the question it waits on; 0 when running
  bool parked = false;      // owns its buffers (else it views the relay's scratch)
};

struct RoomRelay::Connection {
  std::uint64_t host_tag = 0;
  std::string writer;
  std::string writer_json;
  std::string only_room;  // empty: any room
  bool replay = false;    // the host's journal replay (connect): not judged again
  std::vector<std::pair<std::string, std::uint32_t>> joined;  // insertion order, like a Map
  // Members this connection's hello replaced in `joined` (another origin, same room) that are
  // still in their room: disconnect removes them too.
  std::vector<std::pair<std::string, std::uint32_t>> displaced;
  // An envelope waiting for a verdict, and what the connection sent after it.
  std::unique_ptr<Work> work;
  struct Queued {
    std::string text;
    TimeMs now_ms;  // when it arrived: its rate token is taken as of then
  };
  std::deque<Queued> backlog;
  std::size_t backlog_bytes = 0;
  bool disconnect_queued = false;
  bool released = false;  // listed in released_
  std::uint32_t member_in(const std::string& room) const {
    for (const auto& [name, m] : joined) {
      if (name == room) return m;
    }
    return kNoMember;
  }
  bool waiting() const { return work != nullptr || !backlog.empty() || disconnect_queued; }
};

struct RoomRelay::Release {
  bool welcome = false;
  std::uint32_t member = kNoMember;  // welcome
  std::string head;                  // welcome / rewelcome: everything before "peers"
  std::vector<std::uint32_t> audience;
  std::string echo;
  std::string settled;  // empty: the trim moved nothing
  std::string seq_env;
  Verdict state = Verdict::ok;
  std::uint64_t ticket = 0;
};

struct RoomRelay::Room {
  explicit Room(std::string n) : name(std::move(n)), registers(&origin_names) {}
  std::string name;
  std::string name_json;
  SharedText name_text;  // the name, for actions and events
  std::uint64_t incarnation = 0;
  double seq = 0;
  std::string instance;
  // Relay-wide, new whenever `instance` is assigned (set_instance): a commit action carries it as
  // its epoch, so a host may keep the instance it read until the number changes.
  std::uint64_t instance_serial = 0;
  double schema_version = 0;

  std::vector<std::string> origin_names;
  std::unordered_map<std::string, OriginId> origin_ids;
  struct OriginState {
    VersionRanges ranges;
    bool in_ranges = false;
    bool in_settled = false;
    Hlc settled;
  };
  std::vector<OriginState> origins;
  std::vector<OriginId> ranges_order;
  std::vector<OriginId> settled_order;
  RegisterStore registers;

  struct JournalEntry {
    double seq;
    std::string text;
  };
  std::deque<JournalEntry> journal;

  std::vector<std::uint32_t> members;
  struct Presence {
    std::string origin;
    std::string peer;  // PresenceState JSON
    std::uint32_t by;
  };
  std::vector<Presence> presence;
  std::unordered_set<std::string> ejected;
  struct Bucket {
    double tokens;
    double last;
  };
  std::unordered_map<std::string, Bucket> buckets;

  std::deque<std::unique_ptr<Release>> queue;
  std::uint64_t head_id = 0;  // id of queue.front()
  bool stalled = false;
};

RoomRelay::RoomRelay(RoomRelayOptions options) : opt_(std::move(options)), rng_(opt_.seed) {}
RoomRelay::~RoomRelay() = default;

void RoomRelay::send(ConnId conn, const SharedText& t, bool ephemeral) {
  RoomAction& a = actions_.emplace();
  a.kind = RoomAction::Kind::send;
  a.conn = conn;
  a.text = t;
  a.ephemeral = ephemeral;
}

void RoomRelay::broadcast(Room& room, const SharedText& t, std::uint32_t except, bool ephemeral) {
  for (std::uint32_t id : room.members) {
    if (id != except) send(members_[id].conn, t, ephemeral);
  }
}

void RoomRelay::close_conn(ConnId conn) {
  RoomAction& a = actions_.emplace();
  a.kind = RoomAction::Kind::close;
  a.conn = conn;
}

RoomEvent& RoomRelay::event(RoomEvent::Kind kind, Room& room, ConnId conn) {
  RoomEvent& e = events_.emplace();
  e.kind = kind;
  e.conn = conn;
  e.room = room.name_text;
  e.expected = std::nan("");
  return e;
}

void RoomRelay::set_instance(Room& room, std::string instance) {
  room.instance = std::move(instance);
  room.instance_serial = ++instance_serials_;
}

std::string RoomRelay::mint_instance(TimeMs now_ms) {
  std::string out;
  append_base36(out, now_ms > 0 ? static_cast<std::uint64_t>(now_ms) : 0);
  out += '-';
  append_base36(out, ++instance_counter_);
  out += '-';
  append_base36(out, splitmix(rng_) % 2176782336ull);  // six base-36 digits of the seeded RNG
  return out;
}

RoomRelay::Room& RoomRelay::room_of(const std::string& name, TimeMs now_ms) {
  auto it = rooms_.find(name);
  if (it != rooms_.end()) return *it->second;
  auto room = std::make_unique<Room>(name);
  room->name_json = json_quoted(name);
  room->name_text = share(name);
  room->incarnation = next_room_incarnation_++;
  set_instance(*room, mint_instance(now_ms));
  Room& ref = *room;
  by_incarnation_.emplace(ref.incarnation, &ref);
  rooms_.emplace(name, std::move(room));
  return ref;
}

void RoomRelay::maybe_evict(const std::string& name) {
  auto it = rooms_.find(name);
  if (it == rooms_.end()) return;
  Room& r = *it->second;
  if (r.members.empty() && r.seq == 0 && r.ejected.empty()) {
    for (const auto& e : r.queue) pending_.erase(e->ticket);
    by_incarnation_.erase(r.incarnation);
    rooms_.erase(it);
  }
}

OriginId RoomRelay::intern(Room& room, const std::string& origin) {
  auto it = room.origin_ids.find(origin);
  if (it != room.origin_ids.end()) return it->second;
  OriginId id = static_cast<OriginId>(room.origin_names.size());
  room.origin_names.push_back(origin);
  room.origins.emplace_back();
  room.origin_ids.emplace(origin, id);
  return id;
}

// ---- connections and membership ---------------------------------------------------------------

ConnId RoomRelay::connect(std::string writer, std::string only_room, bool replay) {
  ConnId id = next_conn_++;
  Connection c;
  c.only_room = std::move(only_room);
  c.replay = replay;
  c.writer_json = json_quoted(writer);
  c.writer = std::move(writer);
  conns_.emplace(id, std::move(c));
  return id;
}

void RoomRelay::remove_member(Room& room, std::uint32_t member) {
  auto it = std::find(room.members.begin(), room.members.end(), member);
  if (it != room.members.end()) room.members.erase(it);
  members_[member].in_room = false;
}

void RoomRelay::drop_presence(Room& room, std::uint32_t member) {
  const Member& m = members_[member];
  for (auto it = room.presence.begin(); it != room.presence.end(); ++it) {
    if (it->origin != m.origin) continue;
    if (it->by != member) return;
    std::string msg = "{\"t\":\"presence\",\"room\":" + room.name_json + ",\"peer\":" + it->peer +
                      ",\"gone\":true}";
    room.presence.erase(it);
    broadcast(room, share(std::move(msg)));
    return;
  }
}

void RoomRelay::drop_member(Room& room, std::uint32_t member) {
  remove_member(room, member);
  drop_presence(room, member);
  broadcast(room, share("{\"t\":\"member\",\"room\":" + room.name_json +
                        ",\"origin\":" + json_quoted(members_[member].origin) + ",\"gone\":true}"));
  close_conn(members_[member].conn);
}

void RoomRelay::set_host_tag(ConnId conn, std::uint64_t tag) {
  if (auto it = conns_.find(conn); it != conns_.end()) it->second.host_tag = tag;
}

std::uint64_t RoomRelay::host_tag(ConnId conn) const {
  auto it = conns_.find(conn);
  return it == conns_.end() ? 0 : it->second.host_tag;
}

void RoomRelay::handle_disconnect(ConnId conn) {
  auto cit = conns_.find(conn);
  if (cit == conns_.end() || cit->second.disconnect_queued) return;
  if (cit->second.waiting()) {
    cit->second.disconnect_queued = true;  // after what it sent before it left
    return;
  }
  disconnect_now(conn);
}

void RoomRelay::disconnect_now(ConnId conn) {
  auto cit = conns_.find(conn);
  if (cit == conns_.end()) return;
  auto joined = std::move(cit->second.joined);
  cit->second.joined.clear();
  // The reference leaves a displaced member in its room after its connection is gone (a ghost in
  // every later welcome's `members`); the spec's members are the origins currently in the room.
  for (auto& d : cit->second.displaced) joined.push_back(std::move(d));
  cit->second.displaced.clear();
  for (const auto& [name, member] : joined) {
    auto rit = rooms_.find(name);
    if (rit == rooms_.end()) continue;
    Room& room = *rit->second;
    Member& m = members_[member];
    if (!m.in_room || m.incarnation != room.incarnation) continue;
    remove_member(room, member);
    drop_presence(room, member);
    broadcast(room, share("{\"t\":\"member\",\"room\":" + room.name_json +
                          ",\"origin\":" + json_quoted(m.origin) + ",\"gone\":true}"));
    maybe_evict(name);
  }
  for (const auto& [name, member] : joined) {
    auto mit = members_.find(member);
    if (mit != members_.end() && !mit->second.in_room) members_.erase(mit);
  }
  conns_.erase(cit);
}

void RoomRelay::eject(Room& room, std::uint32_t member, const std::string& writer,
                      const char* reason, const std::string& detail, const std::string* path_json) {
  std::string violation = "{\"writer\":" + json_quoted(writer) + ",\"reason\":\"" + reason + "\"";
  if (!detail.empty()) violation += ",\"detail\":" + json_quoted(detail);
  if (path_json) violation += ",\"path\":" + *path_json;
  violation += '}';
  event(RoomEvent::Kind::violation, room, members_[member].conn).text = std::move(violation);
  SharedText notice =
      share("{\"t\":\"eject\",\"room\":" + room.name_json + ",\"writer\":" + json_quoted(writer) +
            ",\"reason\":\"" + reason + "\"}");
  if (!opt_.eject_connection) {
    room.ejected.insert(writer);
    broadcast(room, notice);
    std::vector<std::uint32_t> held = room.members;
    for (std::uint32_t id : held) {
      if (members_[id].writer == writer && members_[id].in_room) drop_member(room, id);
    }
    return;
  }
  members_[member].ejected = true;
  send(members_[member].conn, notice);
  drop_member(room, member);
}

bool RoomRelay::over_rate(Room& room, const std::string& writer, TimeMs now_ms) {
  double rate = opt_.max_envelopes_per_second;
  if (!(rate > 0)) return false;
  const double now = static_cast<double>(now_ms);
  auto it = room.buckets.find(writer);
  if (it == room.buckets.end())
    it = room.buckets.emplace(writer, Room::Bucket{rate * 2, now}).first;
  Room::Bucket& b = it->second;
  b.tokens = std::min(rate * 2, b.tokens + (now - b.last) / 1000 * rate);
  b.last = now;
  if (b.tokens < 1) return true;
  b.tokens -= 1;
  return false;
}

// ---- messages ---------------------------------------------------------------------------------

// What can be said of a message without any state: its shape, its room, its type. Leaves the
// message in scan_.
ReceiveError RoomRelay::check_message(const Connection& c, std::string_view text_in) {
  if (text_in.size() > kMaxMessageBytes) return ReceiveError::unparseable;
  JsonScan& scan = scan_;
  if (!scan.parse(text_in, kMaxJsonDepth)) return ReceiveError::unparseable;
  const std::uint32_t msg = 0;
  if (!scan.is_object(msg)) return ReceiveError::not_an_object;
  std::uint32_t room_field = scan.field(msg, "room");
  if (!scan.is_string(room_field)) return ReceiveError::bad_room;
  std::string_view name = scan.str(room_field, room_scratch_);
  if (name.size() > kMaxRoomNameBytes) return ReceiveError::bad_room;
  // Before any room exists: a bound connection must not even create another room.
  if (!c.only_room.empty() && name != c.only_room) return ReceiveError::other_room;
  std::uint32_t t = scan.field(msg, "t");
  if (t != JsonScan::kNone && !scan.is_string(t)) return ReceiveError::bad_type;
  std::string type_scratch;
  if (t != JsonScan::kNone && scan.str(t, type_scratch) == "hello") {
    std::string origin;
    if (!clean_id(scan, scan.field(msg, "origin"), origin)) return ReceiveError::bad_hello;
  }
  return ReceiveError::none;
}

ReceiveError RoomRelay::handle_message(ConnId conn, std::string_view text_in, TimeMs now_ms) {
  auto cit = conns_.find(conn);
  if (cit == conns_.end() || cit->second.disconnect_queued) return ReceiveError::unknown_connection;
  Connection& c = cit->second;
  if (ReceiveError e = check_message(c, text_in); e != ReceiveError::none) return e;
  if (c.waiting()) {
    // Behind an envelope that waits for a verdict: in order, once it is decided.
    if (c.backlog.size() >= kMaxBacklogMessages ||
        c.backlog_bytes + text_in.size() > kMaxBacklogBytes) {
      return ReceiveError::backlog_full;
    }
    c.backlog.push_back(Connection::Queued{std::string(text_in), now_ms});
    c.backlog_bytes += text_in.size();
    return ReceiveError::none;
  }
  dispatch(conn, now_ms);
  return ReceiveError::none;
}

// Acts on the message check_message left in scan_.
void RoomRelay::dispatch(ConnId conn, TimeMs now_ms) {
  JsonScan& scan = scan_;
  const std::uint32_t msg = 0;
  Connection& c = conns_.find(conn)->second;
  std::string name(scan.str(scan.field(msg, "room"), room_scratch_));
  std::uint32_t t = scan.field(msg, "t");
  std::string type_scratch;
  std::string_view type = t != JsonScan::kNone ? scan.str(t, type_scratch) : std::string_view();
  if (type == "hello") {
    hello(conn, c, msg, name, now_ms);
    return;
  }
  if (opt_.read_ack_bytes > 0 && type == kReadMessageType) {
    // A socket's acknowledgement, for the host's admission to judge: no room state is touched.
    auto n = read_number(scan, scan.field(msg, "bytes"));
    if (n && read_count_valid(*n)) {
      RoomAction& a = actions_.emplace();
      a.kind = RoomAction::Kind::read;
      a.conn = conn;
      a.seq = *n;
    }
    return;
  }
  Room& room = room_of(name, now_ms);
  std::uint32_t member = c.member_in(name);
  if (member == kNoMember || members_[member].ejected || room.ejected.count(c.writer)) return;
  Member& m = members_[member];
  if (type == "signal") {
    std::uint32_t to = scan.field(msg, "to");
    if (!scan.is_string(to)) return;
    std::string to_scratch;
    std::string_view target = scan.str(to, to_scratch);
    for (std::uint32_t id : room.members) {
      if (members_[id].origin != target) continue;
      std::string out =
          "{\"t\":\"signal\",\"room\":" + room.name_json + ",\"from\":" + json_quoted(m.origin);
      std::uint32_t data = scan.field(msg, "data");
      if (data != JsonScan::kNone) {
        out += ",\"data\":";
        scan.append_json(out, data);
      }
      out += '}';
      send(members_[id].conn, share(std::move(out)));
      break;
    }
    return;
  }
  if (type == "presence") {
    std::string peer = "{\"origin\":" + json_quoted(m.origin) + ",\"writer\":" + c.writer_json;
    std::uint32_t data = scan.field(msg, "data");
    if (data != JsonScan::kNone) {
      peer += ",\"data\":";
      scan.append_json(peer, data);
    }
    peer += '}';
    std::string out = "{\"t\":\"presence\",\"room\":" + room.name_json + ",\"peer\":" + peer + "}";
    auto it = std::find_if(room.presence.begin(), room.presence.end(),
                           [&](const Room::Presence& p) { return p.origin == m.origin; });
    if (it == room.presence.end())
      room.presence.push_back(Room::Presence{m.origin, std::move(peer), member});
    else {
      it->peer = std::move(peer);
      it->by = member;
    }
    broadcast(room, share(std::move(out)), member, /*ephemeral=*/true);
    return;
  }
  envelope(conn, c, member, room, scan.field(msg, "env"), now_ms);
}

void RoomRelay::hello(ConnId conn, Connection& c, std::uint32_t msg, const std::string& name,
                      TimeMs now_ms) {
  const JsonScan& scan = scan_;
  Room& room = room_of(name, now_ms);
  auto reject = [&](const char* reason, std::optional<double> expected) {
    std::string out =
        "{\"t\":\"reject\",\"room\":" + room.name_json + ",\"reason\":\"" + reason + "\"";
    if (expected) {
      out += ",\"expected\":";
      append_number(out, *expected);
    }
    out += '}';
    send(conn, share(std::move(out)));
    RoomEvent& e = event(RoomEvent::Kind::reject, room, conn);
    e.reason = reason;
    if (expected) e.expected = *expected;
  };
  std::uint32_t prior_here = c.member_in(name);
  if (room.ejected.count(c.writer) || (prior_here != kNoMember && members_[prior_here].ejected)) {
    reject("unauthorized", std::nullopt);
    return;
  }
  // The pins are a client's promise to speak this relay's protocol and policy; the host's own
  // journal replay makes none (connect's `replay`; docs/rooms.md § Durability at the edge).
  if (!c.replay && !number_equals(scan, scan.field(msg, "proto"), kMeshProtoVersion)) {
    reject("proto", kMeshProtoVersion);
    maybe_evict(name);
    return;
  }
  if (!c.replay && !number_equals(scan, scan.field(msg, "policyVersion"), opt_.policy_version)) {
    reject("policy-version", opt_.policy_version);
    maybe_evict(name);
    return;
  }
  std::uint32_t sv = scan.field(msg, "schemaVersion");
  if (scan.is_number(sv) && scan.number(sv) < room.schema_version) {
    reject("schema", room.schema_version);
    maybe_evict(name);
    return;
  }
  std::string origin;
  clean_id(scan, scan.field(msg, "origin"), origin);
  std::vector<std::uint32_t> held = room.members;
  for (std::uint32_t prior : held) {
    if (members_[prior].origin != origin) continue;
    remove_member(room, prior);
    drop_presence(room, prior);
    if (members_[prior].conn != conn) close_conn(members_[prior].conn);
  }
  std::uint32_t id = next_member_++;
  Member m;
  m.conn = conn;
  m.origin = origin;
  m.writer = c.writer;
  m.incarnation = room.incarnation;
  m.in_room = true;
  members_.emplace(id, std::move(m));
  bool replaced = false;
  for (auto& [n, mem] : c.joined) {
    if (n == name) {
      auto old = members_.find(mem);
      if (old != members_.end() && !old->second.in_room)
        members_.erase(old);
      else if (old != members_.end())
        c.displaced.emplace_back(n, mem);
      mem = id;
      replaced = true;
    }
  }
  if (!replaced) c.joined.emplace_back(name, id);
  room.members.push_back(id);
  event(RoomEvent::Kind::join, room, conn).text = origin;
  broadcast(room,
            share("{\"t\":\"member\",\"room\":" + room.name_json +
                  ",\"origin\":" + json_quoted(origin) + "}"),
            id);

  std::string head = "{\"t\":\"welcome\",\"room\":" + room.name_json + ",\"seq\":";
  append_number(head, room.seq);
  head += ",\"instance\":" + json_quoted(room.instance) + ",\"schemaVersion\":";
  append_number(head, room.schema_version);
  if (opt_.read_ack_bytes > 0) {
    head += ",\"";
    head += kReadAckField;
    head += "\":";
    append_number(head, opt_.read_ack_bytes);
  }
  // Infinity included (a seq beyond a double's range): JSON.parse gives the reference that, and
  // it answers with an empty delta.
  std::uint32_t seq_node = scan.field(msg, "seq");
  std::optional<double> client_seq =
      scan.is_number(seq_node) ? std::optional<double>(scan.number(seq_node)) : std::nullopt;
  if (room.seq == 0 || (client_seq && *client_seq == room.seq)) {
    head += ",\"mode\":\"up-to-date\"";
  } else if (client_seq && !room.journal.empty() && *client_seq >= room.journal.front().seq - 1) {
    head += ",\"mode\":\"delta\",\"envs\":[";
    bool first = true;
    for (const auto& e : room.journal) {
      if (!(e.seq > *client_seq)) continue;
      if (!first) head += ',';
      first = false;
      head += e.text;
    }
    head += ']';
  } else {
    head += ",\"mode\":\"snapshot\",\"registers\":";
    room.registers.append_checkpoint(head);
    head += ",\"wm\":";
    append_wm(head, room);
  }
  auto entry = std::make_unique<Release>();
  entry->welcome = true;
  entry->member = id;
  entry->head = std::move(head);
  submit(room, std::move(entry));
}

// ---- envelopes and the policy questions ------------------------------------------------------

// The verdict the envelope was waiting for, or a question asked (nullopt: the envelope parks).
std::optional<bool> RoomRelay::answer_or_ask(Work& w, RoomAction::Kind kind, const Room& room,
                                             std::string_view text, double epoch,
                                             std::uint32_t rule) {
  if (w.answer) {
    bool v = *w.answer;
    w.answer.reset();
    return v;
  }
  RoomAction& a = actions_.emplace();
  a.kind = kind;
  a.conn = w.conn;
  if (kind != RoomAction::Kind::ask_acl) a.text = share(std::string(text));
  a.room = room.name_text;
  a.room_id = room.incarnation;
  a.token = w.token = next_token_++;
  a.seq = room.seq;
  a.epoch = epoch;
  a.rule = rule;
  asked_.emplace(a.token, w.conn);
  return std::nullopt;
}

// pathPrefixAcl: the first matching rule that allows wins; unknown allows are asked, one at a time.
std::optional<bool> RoomRelay::acl_can_write(Work& w, Member& m, const OpView& op,
                                             const Room& room) {
  if (m.acl.size() != opt_.acl.size()) m.acl.assign(opt_.acl.size(), -1);
  for (std::size_t r = 0; r < opt_.acl.size(); ++r) {
    const auto& prefix = opt_.acl[r].prefix;
    if (prefix.size() > op.depth) continue;  // segments beyond depth are stale scratch
    bool match = true;
    for (std::size_t i = 0; i < prefix.size() && match; ++i) {
      match = prefix[i] == "*" || prefix[i] == op.segments[i];
    }
    if (!match) continue;
    if (m.acl[r] < 0) {
      auto v =
          answer_or_ask(w, RoomAction::Kind::ask_acl, room, {}, 0, static_cast<std::uint32_t>(r));
      if (!v) return std::nullopt;
      m.acl[r] = *v ? 1 : 0;
    }
    if (m.acl[r]) return true;
  }
  return false;
}

void RoomRelay::envelope(ConnId conn, Connection& c, std::uint32_t member, Room& room,
                         std::uint32_t env, TimeMs now_ms) {
  EnvelopeView& ev = scratch_;
  const std::string& writer = c.writer;
  // Tripwires, in the reference's order: proto/policy pin, shape, op count, rate, policy.
  // A journal replay (connect's `replay`) re-applies an envelope that passed them all when it was
  // written, under the version, limits and rules of that day: judging it again by today's would
  // leave a room unloadable after an operator bumps POLICY_VERSION or tightens a rule
  // (docs/rooms.md § Durability at the edge). Only what keeps the room consistent applies to it:
  // shape, writer, and the refusals (generation, schema, duplicate, order).
  const bool judged = !c.replay;
  const JsonScan& scan = scan_;
  if (!scan.is_object(env) && !scan.is_array(env)) {
    eject(room, member, writer, "malformed", "envelope", nullptr);
    return;
  }
  if (judged && (!number_equals(scan, scan.field(env, "policyVersion"), opt_.policy_version) ||
                 !number_equals(scan, scan.field(env, "proto"), kMeshProtoVersion))) {
    eject(room, member, writer, "proto", "", nullptr);
    return;
  }
  if (const char* malformed = validate_envelope(scan, env, ev)) {
    eject(room, member, writer, "malformed", malformed, nullptr);
    return;
  }
  if (judged && static_cast<double>(ev.n_ops) > opt_.max_ops_per_envelope) {
    eject(room, member, writer, "ops-limit", "", nullptr);
    return;
  }
  // A replay takes no token either: a restart must not spend live writers' budgets.
  if (judged && over_rate(room, writer, now_ms)) {
    eject(room, member, writer, "rate", "", nullptr);
    return;
  }
  if (ev.writer != writer) {
    eject(room, member, writer, "writer-mismatch", "", nullptr);
    return;
  }
  // The rest may wait for verdicts. It starts on the relay's scratch; a question parks it.
  std::unique_ptr<Work> w;
  if (!spare_work_.empty()) {
    w = std::move(spare_work_.back());
    spare_work_.pop_back();
  } else {
    w = std::make_unique<Work>();
  }
  w->conn = conn;
  w->member = member;
  w->incarnation = room.incarnation;
  w->env = env;
  w->phase = Work::Phase::policy;
  w->op = 0;
  w->op_checked = false;
  w->answer.reset();
  w->token = 0;
  w->parked = false;
  if (run_envelope(*w, now_ms) == Step::suspended) {
    suspend(*w, scan_.text());
    conns_.find(conn)->second.work = std::move(w);
    return;
  }
  spare_work_.push_back(std::move(w));
}

// Moves the scratch state into the Work (swapping with its spare buffers) and copies the message,
// so the next message can use the scratch.
void RoomRelay::suspend(Work& w, std::string_view text) {
  if (w.parked) return;
  w.parked = true;
  w.text.assign(text.data(), text.size());
  std::swap(w.scan, scan_);
  std::swap(w.ev, scratch_);
  std::swap(w.cite_ids, cite_ids_);
  w.scan.rebase(w.text);
}

RoomRelay::Step RoomRelay::run_envelope(Work& w, TimeMs now_ms) {
  const JsonScan& scan = w.parked ? w.scan : scan_;
  EnvelopeView& ev = w.parked ? w.ev : scratch_;
  auto& cite_ids = w.parked ? w.cite_ids : cite_ids_;
  Room& room = *by_incarnation_.find(w.incarnation)->second;
  const std::uint32_t member = w.member;
  const std::uint32_t env = w.env;
  Connection& c = conns_.find(w.conn)->second;
  const std::string& writer = c.writer;
  // No policy question for a journal replay (connect's `replay`): it was answered when written.
  const bool policy = opt_.has_policy && !c.replay;

  if (w.phase == Work::Phase::policy) {
    if (policy) {
      for (; w.op < ev.n_ops; ++w.op, w.op_checked = false) {
        const OpView& op = ev.ops[w.op];
        if (!w.op_checked && (opt_.native_acl || opt_.has_can_write)) {
          std::optional<bool> ok =
              opt_.native_acl ? acl_can_write(w, members_[member], op, room)
              : opt_.can_write_root_only && op.depth > 0
                  ? std::optional<bool>(true)
                  : answer_or_ask(w, RoomAction::Kind::ask_can_write, room, scan.raw(op.path));
          if (!ok) return Step::suspended;
          if (!*ok) {
            std::string path = std::string(scan.raw(op.path));
            eject(room, member, writer, "can-write", "", &path);
            return Step::done;
          }
          w.op_checked = true;
        }
        if (opt_.has_validate) {
          std::optional<bool> ok =
              answer_or_ask(w, RoomAction::Kind::ask_validate, room, scan.raw(op.op));
          if (!ok) return Step::suspended;
          if (!*ok) {
            std::string path = std::string(scan.raw(op.path));
            eject(room, member, writer, "validate", "", &path);
            return Step::done;
          }
        }
      }
    }
    // Refusals without ejection (spec: "Writes the relay refuses without ejecting anyone").
    auto refuse = [&](const char* reason) {
      RoomEvent& d = event(RoomEvent::Kind::drop, room, w.conn);
      d.reason = reason;
      d.text = std::string(scan.raw(env));
      std::string out = "{\"t\":\"drop\",\"room\":" + room.name_json +
                        ",\"origin\":" + json_quoted(ev.origin) + ",\"version\":";
      append_number(out, ev.version);
      out += ",\"reason\":\"";
      out += reason;
      out += "\"}";
      send(members_[member].conn, share(std::move(out)));
      return Step::done;
    };
    if (ev.instance != room.instance) return refuse("generation");
    std::optional<double> schema =
        scan.is_number(ev.schema) ? std::optional<double>(scan.number(ev.schema)) : std::nullopt;
    if (schema && *schema < room.schema_version) return refuse("schema");
    OriginId origin = intern(room, ev.origin);
    {
      const VersionRanges& ranges = room.origins[origin].ranges;
      if (room.origins[origin].in_ranges) {
        if (ranges.has(ev.version)) return refuse("duplicate");
        if (ev.version < ranges.max()) return refuse("order");
      }
    }
    if (cite_ids.size() < ev.n_ops) cite_ids.resize(ev.n_ops);
    for (std::size_t k = 0; k < ev.n_ops; ++k) {
      cite_ids[k].clear();
      for (std::size_t ci = 0; ci < ev.ops[k].n_cites; ++ci) {
        cite_ids[k].push_back(intern(room, ev.ops[k].cites[ci].origin));
      }
    }
    w.phase = Work::Phase::bump;
    w.op = 0;
    w.op_checked = false;
  }

  if (policy && (opt_.has_can_bump || opt_.verify_citations)) {
    for (; w.op < ev.n_ops; ++w.op, w.op_checked = false) {
      const OpView& op = ev.ops[w.op];
      const std::size_t k = w.op;
      if (opt_.has_can_bump && !w.op_checked) {
        double observed = room.registers.max_epoch(op.key);
        if (op.epoch > observed) {
          std::optional<bool> ok =
              answer_or_ask(w, RoomAction::Kind::ask_can_bump, room, scan.raw(op.path), op.epoch);
          if (!ok) return Step::suspended;
          if (!*ok) {
            std::string detail = "epoch ";
            append_number(detail, op.epoch);
            detail += " > observed ";
            append_number(detail, observed);
            std::string path = std::string(scan.raw(op.path));
            eject(room, member, writer, "epoch-bump", detail, &path);
            return Step::done;
          }
        }
        w.op_checked = true;
      }
      if (!opt_.verify_citations) continue;
      for (std::size_t ci = 0; ci < op.n_cites; ++ci) {
        const Cite& cite = op.cites[ci];
        const auto& os = room.origins[cite_ids[k][ci]];
        if (os.in_settled && hlc_le(cite.hlc, os.settled)) continue;
        if (cite.origin == ev.origin && compare_hlc(cite.hlc, ev.hlc) == 0) continue;
        if (!room.registers.covers(op.key, cite_ids[k][ci], cite.hlc)) {
          std::string detail = "cites " + cite.origin + "@";
          append_number(detail, cite.hlc.p);
          detail += '.';
          append_number(detail, cite.hlc.l);
          std::string path = std::string(scan.raw(op.path));
          eject(room, member, writer, "unknown-citation", detail, &path);
          return Step::done;
        }
      }
    }
  }

  // Sequence and retain.
  OriginId origin = intern(room, ev.origin);
  std::optional<double> schema =
      scan.is_number(ev.schema) ? std::optional<double>(scan.number(ev.schema)) : std::nullopt;
  room.seq += 1;
  std::string seq_env = seq_envelope(scan, env, room.seq);
  bool bumped = false;
  if (schema && *schema > room.schema_version) {
    // A migration cuts a generation (spec: "Persistence"): evidence is dropped on purpose.
    room.schema_version = *schema;
    set_instance(room, mint_instance(now_ms));
    room.registers.reset();
    for (auto& o : room.origins) o = Room::OriginState{};
    room.ranges_order.clear();
    room.settled_order.clear();
    room.journal.clear();
    bumped = true;
  }
  room.journal.push_back(Room::JournalEntry{room.seq, seq_env});
  room.registers.ingest(scan, ev, origin, c.writer_json, json_quoted(ev.origin), cite_ids);
  if (!bumped) {
    auto& os = room.origins[origin];
    if (!os.in_ranges) {
      os.in_ranges = true;
      room.ranges_order.push_back(origin);
    }
    if (record_admission(os.ranges, ev.version)) {
      if (!os.in_settled) {
        os.in_settled = true;
        room.settled_order.push_back(origin);
      }
      os.settled = ev.hlc;
      room.registers.touch(origin);
    }
  }
  std::string settled_msg;
  if (static_cast<double>(room.journal.size()) > opt_.journal_limit) {
    room.journal.pop_front();
    if (!room.settled_order.empty()) {
      settled_msg = "{\"t\":\"settled\",\"room\":" + room.name_json + ",\"settled\":";
      append_settled(settled_msg, room);
      settled_msg += '}';
      room.registers.settle([&](OriginId o) -> const Hlc* {
        return o < room.origins.size() && room.origins[o].in_settled ? &room.origins[o].settled
                                                                     : nullptr;
      });
    }
  }
  auto entry = std::make_unique<Release>();
  entry->audience = room.members;
  entry->echo = "{\"t\":\"env\",\"room\":" + room.name_json + ",\"env\":" + seq_env + "}";
  entry->settled = std::move(settled_msg);
  if (bumped) {
    std::string head = "{\"t\":\"welcome\",\"room\":" + room.name_json + ",\"seq\":";
    append_number(head, room.seq);
    head += ",\"instance\":" + json_quoted(room.instance) + ",\"schemaVersion\":";
    append_number(head, room.schema_version);
    head += ",\"mode\":\"snapshot\",\"registers\":";
    room.registers.append_checkpoint(head);
    head += ",\"wm\":";
    append_wm(head, room);
    entry->head = std::move(head);
  }
  if (opt_.durable) {
    entry->state = Verdict::pending;
    entry->seq_env = seq_env;
    RoomAction& a = actions_.emplace();
    a.kind = RoomAction::Kind::commit;
    a.room = room.name_text;
    a.room_id = room.incarnation;
    a.text = share(std::move(seq_env));
    a.token = next_token_++;
    a.seq = room.seq;
    // The generation the commit was made in: the same number as long as the instance is the
    // same, so a host reads the instance string once per generation (web/glue/relay.js).
    a.epoch = static_cast<double>(room.instance_serial);
    entry->ticket = a.token;
    pending_.emplace(a.token, PendingCommit{room.incarnation, room.head_id + room.queue.size()});
  }
  submit(room, std::move(entry));
  return Step::done;
}

void RoomRelay::handle_policy_verdict(std::uint64_t token, bool allow, TimeMs now_ms) {
  auto it = asked_.find(token);
  if (it == asked_.end()) return;
  ConnId conn = it->second;
  asked_.erase(it);
  auto cit = conns_.find(conn);
  if (cit == conns_.end() || !cit->second.work || cit->second.work->token != token) return;
  Work& w = *cit->second.work;
  w.token = 0;
  // What may have changed while it waited: the room unloaded, the member ejected or gone. Then
  // the envelope is not the room's any more (the client resends its tail after its next welcome).
  auto rit = by_incarnation_.find(w.incarnation);
  const Member* m = find_member(w.member);
  if (rit == by_incarnation_.end() || !m || !m->in_room || m->ejected ||
      rit->second->ejected.count(cit->second.writer)) {
    finish_work(conn);
    return;
  }
  w.answer = allow;
  if (run_envelope(w, now_ms) == Step::suspended) return;
  finish_work(conn);
}

// The parked envelope is decided: its buffers go back to the spares and the connection's backlog
// may run (from poll_action, once what is already queued has been polled).
void RoomRelay::finish_work(ConnId conn) {
  auto cit = conns_.find(conn);
  if (cit == conns_.end()) return;
  Connection& c = cit->second;
  if (c.work) {
    if (c.work->token) asked_.erase(c.work->token);
    spare_work_.push_back(std::move(c.work));
  }
  if ((!c.backlog.empty() || c.disconnect_queued) && !c.released) {
    c.released = true;
    released_.push_back(conn);
  }
}

// Runs released backlog until an action is queued or nothing is left. True when it ran anything.
bool RoomRelay::run_released() {
  bool ran = false;
  while (actions_.empty() && !released_.empty()) {
    ConnId conn = released_.front();
    auto cit = conns_.find(conn);
    if (cit == conns_.end()) {
      released_.pop_front();
      continue;
    }
    Connection& c = cit->second;
    if (c.work) {  // parked again on a question of its own: the verdict releases it
      c.released = false;
      released_.pop_front();
      continue;
    }
    if (c.backlog.empty()) {
      c.released = false;
      released_.pop_front();
      if (c.disconnect_queued) disconnect_now(conn);
      ran = true;
      continue;
    }
    Connection::Queued q = std::move(c.backlog.front());
    c.backlog.pop_front();
    c.backlog_bytes -= q.text.size();
    ran = true;
    // It passed check_message when it arrived; checked again to leave it in the scratch scan.
    if (check_message(c, q.text) == ReceiveError::none) dispatch(conn, q.now_ms);
  }
  return ran;
}

std::optional<RoomAction> RoomRelay::poll_action() {
  if (actions_.empty()) run_released();
  return actions_.poll();
}

// `{...env, seq}` as text: the client's bytes with the room's seq appended (or replacing a seq the
// client sent, in place, as an object spread does).
std::string RoomRelay::seq_envelope(const JsonScan& scan, std::uint32_t env, double seq) const {
  std::string out;
  std::uint32_t existing = scan.field(env, "seq");
  if (existing == JsonScan::kNone) {
    std::string scratch;
    std::string_view raw = scan.json(env, scratch);
    out.reserve(raw.size() + 24);
    out.append(raw.data(), raw.size() - 1);  // all but the closing brace
    out += scan.node(env).count ? ",\"seq\":" : "\"seq\":";
    append_number(out, seq);
    out += '}';
    return out;
  }
  // Rebuild member by member: every member named "seq" gives way to the one seq.
  out += '{';
  bool first = true;
  bool placed = false;
  std::string scratch;
  for (std::uint32_t c = scan.node(env).first; c != JsonScan::kNone; c = scan.node(c).next) {
    bool is_seq = scan.key(c, scratch) == "seq";
    if (is_seq && placed) continue;
    if (!first) out += ',';
    first = false;
    if (is_seq) {
      out += "\"seq\":";
      append_number(out, seq);
      placed = true;
      continue;
    }
    out += '"';
    out += scan.key_raw(c);
    out += "\":";
    scan.append_json(out, c);
  }
  out += '}';
  return out;
}

std::string replay_message(std::string_view room, std::string_view seq_env_json) {
  JsonScan scan;
  if (seq_env_json.size() > kMaxMessageBytes || !scan.parse(seq_env_json, kMaxJsonDepth) ||
      !scan.is_object(0)) {
    return std::string();
  }
  std::string out = "{\"t\":\"env\",\"room\":";
  append_quoted(out, room);
  out += ",\"env\":{";
  bool first = true;
  std::string scratch;
  for (std::uint32_t c = scan.node(0).first; c != JsonScan::kNone; c = scan.node(c).next) {
    if (scan.key(c, scratch) == "seq") continue;
    if (!first) out += ',';
    first = false;
    out += '"';
    out += scan.key_raw(c);
    out += "\":";
    scan.append_json(out, c);
  }
  out += "}}";
  return out;
}

// ---- the release queue (durability gates) -----------------------------------------------------

void RoomRelay::submit(Room& room, std::unique_ptr<Release> entry) {
  room.queue.push_back(std::move(entry));
  drain(room);
}

void RoomRelay::drain(Room& room) {
  while (!room.stalled && !room.queue.empty()) {
    Release& head = *room.queue.front();
    if (head.state == Verdict::pending) return;
    if (head.state == Verdict::failed) {
      room.stalled = true;
      RoomEvent& e = event(RoomEvent::Kind::durability_failed, room);
      e.text = head.seq_env;
      e.token = head.ticket;
      return;
    }
    std::unique_ptr<Release> owned = std::move(room.queue.front());
    room.queue.pop_front();
    ++room.head_id;
    run(room, *owned);
  }
}

void RoomRelay::handle_commit_result(std::uint64_t ticket, Verdict v) {
  if (v == Verdict::pending) return;
  auto pit = pending_.find(ticket);
  if (pit == pending_.end()) return;
  PendingCommit pc = pit->second;
  pending_.erase(pit);
  auto rit = by_incarnation_.find(pc.incarnation);
  if (rit == by_incarnation_.end()) return;  // unloaded or evicted meanwhile
  Room& room = *rit->second;
  if (pc.entry < room.head_id || pc.entry - room.head_id >= room.queue.size()) return;
  Release& e = *room.queue[pc.entry - room.head_id];
  if (e.state != Verdict::pending) return;
  e.state = v;
  drain(room);
}

const RoomRelay::Member* RoomRelay::find_member(std::uint32_t id) const {
  auto it = members_.find(id);
  return it == members_.end() ? nullptr : &it->second;
}

std::string RoomRelay::welcome_text(Room& room, std::uint32_t member, const std::string& head) {
  std::string out = head;
  out += ",\"peers\":[";
  for (std::size_t i = 0; i < room.presence.size(); ++i) {
    if (i) out += ',';
    out += room.presence[i].peer;
  }
  out += "],\"members\":[";
  bool first = true;
  for (std::uint32_t id : room.members) {
    if (id == member) continue;
    if (!first) out += ',';
    first = false;
    append_quoted(out, members_[id].origin);
  }
  out += "]}";
  return out;
}

void RoomRelay::run(Room& room, Release& e) {
  if (e.welcome) {
    const Member* m = find_member(e.member);
    if (!m || !m->in_room || m->ejected) return;
    send(m->conn, share(welcome_text(room, e.member, e.head)));
    return;
  }
  SharedText echo = share(std::move(e.echo));
  for (std::uint32_t id : e.audience) {
    const Member* m = find_member(id);
    if (m && m->in_room) send(m->conn, echo);
  }
  if (!e.settled.empty()) broadcast(room, share(std::move(e.settled)));
  if (!e.head.empty()) {
    for (std::uint32_t id : e.audience) {
      const Member* m = find_member(id);
      if (!m || !m->in_room || m->ejected) continue;
      send(m->conn, share(welcome_text(room, id, e.head)));
    }
  }
}

// ---- room administration ----------------------------------------------------------------------

std::optional<RoomInfo> RoomRelay::room(const std::string& name) const {
  auto it = rooms_.find(name);
  if (it == rooms_.end()) return std::nullopt;
  const Room& r = *it->second;
  return RoomInfo{r.seq, r.instance, r.members.size(), r.journal.size(), r.stalled};
}

bool RoomRelay::unload(const std::string& name, bool discard) {
  auto it = rooms_.find(name);
  if (it == rooms_.end() || !it->second->members.empty()) return false;
  if (!it->second->queue.empty() && !(discard && it->second->stalled)) return false;
  for (const auto& e : it->second->queue) pending_.erase(e->ticket);
  by_incarnation_.erase(it->second->incarnation);
  rooms_.erase(it);
  return true;
}

void RoomRelay::append_wm(std::string& out, const Room& room) const {
  out += '{';
  bool first = true;
  for (OriginId o : room.ranges_order) {
    if (!first) out += ',';
    first = false;
    append_quoted(out, room.origin_names[o]);
    out += ':';
    append_number(out, room.origins[o].ranges.max());
  }
  out += '}';
}

void RoomRelay::append_ranges(std::string& out, const Room& room) const {
  out += '{';
  bool first = true;
  for (OriginId o : room.ranges_order) {
    if (!first) out += ',';
    first = false;
    append_quoted(out, room.origin_names[o]);
    out += ":[";
    const auto& r = room.origins[o].ranges.list();
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (i) out += ',';
      out += '[';
      append_number(out, r[i].first);
      out += ',';
      append_number(out, r[i].second);
      out += ']';
    }
    out += ']';
  }
  out += '}';
}

void RoomRelay::append_settled(std::string& out, const Room& room) const {
  out += '{';
  bool first = true;
  for (OriginId o : room.settled_order) {
    if (!first) out += ',';
    first = false;
    append_quoted(out, room.origin_names[o]);
    out += ':';
    append_hlc(out, room.origins[o].settled);
  }
  out += '}';
}

std::string RoomRelay::state_json(const std::string& name) const {
  auto it = rooms_.find(name);
  if (it == rooms_.end()) return "null";
  const Room& r = *it->second;
  std::string out = "{\"seq\":";
  append_number(out, r.seq);
  out += ",\"instance\":" + json_quoted(r.instance) + ",\"wm\":";
  append_wm(out, r);
  out += ",\"ranges\":";
  append_ranges(out, r);
  out += ",\"settled\":";
  append_settled(out, r);
  out += ",\"schemaVersion\":";
  append_number(out, r.schema_version);
  out += '}';
  return out;
}

std::string RoomRelay::checkpoint_json(const std::string& name) const {
  auto it = rooms_.find(name);
  if (it == rooms_.end()) return "[]";
  std::string out;
  it->second->registers.append_checkpoint(out);
  return out;
}

bool RoomRelay::hydrate(const std::string& name, std::string_view snapshot_json, TimeMs now_ms) {
  Room& room = room_of(name, now_ms);
  if (room.seq != 0 || !room.members.empty() || !room.journal.empty()) return false;
  JsonParse parsed = parse_json(ByteView(snapshot_json));
  if (!parsed.ok() || !parsed.value.is_object()) return false;
  const Json& snap = parsed.value;
  const Json* seq = field(snap, "seq");
  auto seq_v = seq ? read_number(*seq) : std::nullopt;
  if (!seq_v || *seq_v < 0) return false;

  // Validate everything before touching the room, so a refused snapshot changes nothing.
  std::vector<CheckpointRegister> regs;
  if (const Json* registers = field(snap, "registers")) {
    if (!read_register_checkpoint(*registers, regs)) return false;
  }
  std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> ranges;
  if (const Json* rj = field(snap, "ranges")) {
    if (!rj->is_object()) return false;
    for (auto it = rj->begin(); it != rj->end(); ++it) {
      if (!it.value().is_array()) return false;
      std::vector<std::pair<double, double>> rs;
      for (const auto& pair : it.value()) {
        if (!pair.is_array() || pair.size() != 2) return false;
        auto a = read_number(pair[0]);
        auto b = read_number(pair[1]);
        if (!a || !b) return false;
        rs.emplace_back(*a, *b);
      }
      ranges.emplace_back(it.key(), std::move(rs));
    }
  } else if (const Json* wm = field(snap, "wm")) {
    if (!wm->is_object()) return false;
    for (auto it = wm->begin(); it != wm->end(); ++it) {
      auto v = read_number(it.value());
      if (!v) return false;
      if (*v > 0) ranges.emplace_back(it.key(), std::vector<std::pair<double, double>>{{1, *v}});
    }
  }
  std::vector<std::pair<std::string, Hlc>> settled;
  if (const Json* sj = field(snap, "settled")) {
    if (!sj->is_object()) return false;
    for (auto it = sj->begin(); it != sj->end(); ++it) {
      auto hv = read_hlc(it.value());
      if (!hv) return false;
      settled.emplace_back(it.key(), *hv);
    }
  }
  std::optional<std::string> instance;
  if (const Json* ij = field(snap, "instance")) {
    if (!ij->is_string() || ij->get_ref<const std::string&>().size() > kMaxIdBytes) return false;
    instance = ij->get<std::string>();
  }
  std::optional<double> schema;
  if (const Json* sv = field(snap, "schemaVersion")) {
    // null is what a schema raised to Infinity (an envelope's 1e999) was written as; nothing else
    // the relay writes there is null, so it reads back as Infinity.
    schema = sv->is_null() ? std::optional<double>(HUGE_VAL) : read_number(*sv);
    if (!schema) return false;
  }
  std::vector<Room::JournalEntry> journal;
  if (const Json* jj = field(snap, "journal")) {
    if (!jj->is_array()) return false;
    for (const auto& e : *jj) {
      const Json* s = field(e, "seq");
      auto sv = s ? read_number(*s) : std::nullopt;
      if (!sv) return false;
      if (*sv <= *seq_v) journal.push_back(Room::JournalEntry{*sv, value_text(e)});
    }
    std::stable_sort(journal.begin(), journal.end(),
                     [](const auto& a, const auto& b) { return a.seq < b.seq; });
    double limit = std::max(0.0, opt_.journal_limit);
    if (static_cast<double>(journal.size()) > limit) {
      journal.erase(journal.begin(),
                    journal.begin() + static_cast<std::ptrdiff_t>(journal.size() -
                                                                  static_cast<std::size_t>(limit)));
    }
  }

  room.seq = *seq_v;
  for (auto& lr : regs) {
    std::vector<RegisterStore::LoadedSibling> sibs;
    for (auto& [o, s] : lr.siblings) {
      s.origin = intern(room, o);
      sibs.push_back(std::move(s));
    }
    std::vector<std::pair<OriginId, Hlc>> water;
    for (auto& [o, h] : lr.water) water.emplace_back(intern(room, o), h);
    room.registers.load(lr.key, lr.path_json, lr.epoch, std::move(sibs), water);
  }
  for (auto& [o, rs] : ranges) {
    OriginId id = intern(room, o);
    auto& os = room.origins[id];
    if (!os.in_ranges) room.ranges_order.push_back(id);
    os.in_ranges = true;
    os.ranges = VersionRanges(std::move(rs));
  }
  for (auto& [o, h] : settled) {
    OriginId id = intern(room, o);
    auto& os = room.origins[id];
    if (!os.in_settled) room.settled_order.push_back(id);
    os.in_settled = true;
    os.settled = h;
    room.registers.touch(id);
  }
  if (instance) set_instance(room, std::move(*instance));
  if (schema) room.schema_version = *schema;
  room.journal.assign(journal.begin(), journal.end());
  return true;
}

std::size_t RoomRelay::register_count() const {
  std::size_t n = 0;
  for (const auto& [name, r] : rooms_) n += r->registers.register_count();
  return n;
}

std::size_t RoomRelay::register_bytes() const {
  std::size_t n = 0;
  for (const auto& [name, r] : rooms_) n += r->registers.memory_bytes();
  return n;
}

}  // namespace tether::room
