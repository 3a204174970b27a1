#include "wire/messages.hpp"

#include <array>
#include <initializer_list>
#include <vector>

#include "common/utf8.hpp"
#include "wire/frame.hpp"
#include "wire/limits.hpp"

namespace tether::wire {
namespace {

enum SenderMask : std::uint8_t { kRobot = 1, kViewer = 2, kRelay = 4, kAny = 7 };
std::uint8_t mask_of(Sender s) {
  return std::uint8_t(1u << static_cast<unsigned>(s));
}

// The shapes a field may take. Bounds come from limits.hpp.
enum class Kind {
  version,       // integer 0..1000: any version parses, so a v5 hello earns version_mismatch
  counter,       // integer 0..2^53-1
  number,        // finite number
  short_text,    // string of at most kMaxShortTextChars
  long_text,     // string of at most kMaxMessageTextChars
  id,            // non-empty string of at most kMaxIdChars
  channel,       // a channel id a viewer may name: 1..64 characters, no leading '@'
  channel_list,  // array of `channel`, without repeats
  error_code,    // a code name of errors.hpp
  object,        // any object (manifests are validated by manifest.hpp)
  robot_hello,   // {id?, name?, model?}: a missing id earns missing_robot_id, not a drop
  robot_list,    // array of {id, name, model, link?}
  boolean,       // true or false
  sdp,           // string of at most kMaxSdpBytes bytes
  tracks,        // array of at most kMaxRtcTracks {mid, ch}
  ice_servers,   // array of {urls: string | [string], username?, credential?}
};

struct Field {
  const char* name;
  Kind kind;
  std::uint8_t required_from;  // senders that must include it
  std::uint8_t allowed_from;   // senders that may include it
  std::uint8_t stripped_from;  // senders whose value is removed, never trusted
};

struct Schema {
  MessageType type;
  const char* name;
  std::uint8_t senders;
  std::vector<Field> fields;
};

Field req(const char* n, Kind k, std::uint8_t from = kAny) {
  return {n, k, from, from, 0};
}
Field opt(const char* n, Kind k, std::uint8_t from = kAny) {
  return {n, k, 0, from, 0};
}
// The lease generation: the relay stamps it, and a viewer's own value is discarded
// (cockpit-wire-v7-notes.md § Teleop: "The relay never trusts a viewer-authored gen").
Field gen() {
  return {"gen", Kind::counter, kRelay, kRelay | kViewer, kViewer};
}

using M = MessageType;
const std::array<Schema, kMessageTypeCount>& schemas() {
  static const std::array<Schema, kMessageTypeCount> table = {{
      {M::hello,
       "hello",
       kRobot | kViewer,
       {req("v", Kind::version), req("role", Kind::short_text), opt("token", Kind::long_text),
        opt("robot", Kind::robot_hello), opt("manifest", Kind::object)}},
      {M::welcome, "welcome", kRelay, {req("v", Kind::version)}},
      {M::error, "error", kRelay, {req("code", Kind::error_code), req("message", Kind::long_text)}},
      // `read` (WebSocket only): the bytes the client had read when it read its last pong, which
      // the edge relay paces its writes by (docs/cockpit-protocol.md § WebSocket lane). `rttMs`
      // (a robot's, optional): the round-trip time it measured for its previous ping, which the
      // relay reports in the fleet's link figures (§ Fleet link quality).
      {M::ping,
       "ping",
       kRobot | kViewer,
       {req("n", Kind::counter), req("ts", Kind::number), opt("read", Kind::counter),
        opt("rttMs", Kind::counter, kRobot)}},
      {M::pong, "pong", kRelay, {req("n", Kind::counter), req("ts", Kind::number)}},
      {M::robots, "robots", kRelay, {req("robots", Kind::robot_list)}},
      {M::watch, "watch", kViewer, {req("robotId", Kind::id)}},
      {M::manifest, "manifest", kRelay, {req("robotId", Kind::id), opt("manifest", Kind::object)}},
      {M::sub, "sub", kViewer, {req("ch", Kind::channel)}},
      {M::unsub, "unsub", kViewer, {req("ch", Kind::channel)}},
      {M::subs, "subs", kRelay, {req("chs", Kind::channel_list), req("n", Kind::counter)}},
      {M::teleop_start, "teleop_start", kViewer | kRelay, {gen()}},
      {M::teleop_started, "teleop_started", kRelay, {}},
      {M::teleop_stop, "teleop_stop", kViewer | kRelay, {gen()}},
      {M::twist,
       "twist",
       kViewer | kRelay,
       {req("vx", Kind::number), req("vy", Kind::number), req("wz", Kind::number),
        req("seq", Kind::counter), req("ts", Kind::number), gen()}},
      {M::stop,
       "stop",
       kViewer | kRelay,
       {req("seq", Kind::counter), req("ts", Kind::number), gen()}},
      // Publish answers: the robot acks or nacks the request id it got in the tx frame's
      // meta.id; the relay maps the answer back to the publishing viewer.
      {M::pub_ack, "pub_ack", kRobot | kRelay, {req("ch", Kind::channel), req("id", Kind::id)}},
      {M::pub_nack,
       "pub_nack",
       kRobot | kRelay,
       {req("ch", Kind::channel), req("id", Kind::id), opt("code", Kind::short_text),
        opt("message", Kind::long_text)}},
      {M::rtc_ice, "rtc_ice", kRelay, {req("iceServers", Kind::ice_servers)}},
      {M::rtc_offer,
       "rtc_offer",
       kAny,
       {req("sdp", Kind::sdp), opt("tracks", Kind::tracks), opt("robotId", Kind::id, kRelay)}},
      {M::rtc_answer,
       "rtc_answer",
       kRelay | kViewer,
       {req("sdp", Kind::sdp), opt("robotId", Kind::id)}},
      {M::rtc_stalled, "rtc_stalled", kRobot, {req("ch", Kind::channel)}},
      // A viewer asks for (link: true) or gives up the relay's link figures in `robots`
      // (docs/cockpit-protocol.md § Fleet link quality).
      {M::fleet, "fleet", kViewer, {req("link", Kind::boolean)}},
  }};
  return table;
}

const Schema& schema_of(MessageType t) {
  return schemas()[static_cast<std::size_t>(t)];
}

Err<Drop> drop(DropReason r, std::string field, std::string detail) {
  return err(Drop{r, std::move(field), std::move(detail)});
}

bool text_within(const Json& v, std::size_t max_chars, bool non_empty) {
  if (!v.is_string()) return false;
  const auto& s = v.get_ref<const std::string&>();
  if (non_empty && s.empty()) return false;
  return s.size() <= max_chars || utf8_code_points(s) <= max_chars;
}

std::optional<Drop> check_string(const Json& v, const std::string& path, std::size_t max_chars,
                                 bool non_empty) {
  if (!v.is_string()) return Drop{DropReason::wrong_type, path, path + ": expected a string"};
  // Parsed text was validated whole; an object built in code was not (validate_message).
  if (!is_valid_utf8(ByteView(std::string_view(v.get_ref<const std::string&>()))))
    return Drop{DropReason::invalid_utf8, path, path + ": not valid UTF-8"};
  if (!text_within(v, max_chars, non_empty))
    return Drop{DropReason::out_of_range, path,
                path + ": expected " + (non_empty ? "1" : "0") + " to " +
                    std::to_string(max_chars) + " characters"};
  return std::nullopt;
}

std::optional<Drop> check_channel(const Json& v, const std::string& path) {
  if (auto d = check_string(v, path, kMaxChannelIdChars, true)) return d;
  if (is_reserved_channel(v.get_ref<const std::string&>()))
    return Drop{DropReason::reserved_channel, path,
                path + ": channel ids starting with '@' are reserved for control frames"};
  return std::nullopt;
}

// Checks an object's keys against a fixed set, with per-key checks.
template <class CheckKey>
std::optional<Drop> check_object(const Json& v, const std::string& path,
                                 std::initializer_list<const char*> required,
                                 CheckKey&& check_key) {
  if (!v.is_object()) return Drop{DropReason::wrong_type, path, path + ": expected an object"};
  for (const char* r : required) {
    if (!v.contains(r))
      return Drop{DropReason::missing_field, path + "." + r, path + "." + r + " is required"};
  }
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (auto d = check_key(it.key(), it.value(), path + "." + it.key())) return d;
  }
  return std::nullopt;
}

Drop unknown(const std::string& path) {
  return Drop{DropReason::unknown_field, path, path + " is not part of protocol v7"};
}

// A robots entry's `link`: the relay's figures for the robot (§ Fleet link quality).
std::optional<Drop> check_link(const Json& v, const std::string& path) {
  return check_object(
      v, path, {"state", "silentMs"},
      [](const std::string& key, const Json& value, const std::string& p) -> std::optional<Drop> {
        if (key == "state") {
          if (!value.is_string()) return Drop{DropReason::wrong_type, p, p + ": expected a string"};
          const auto& st = value.get_ref<const std::string&>();
          if (st != "good" && st != "degraded" && st != "stalled")
            return Drop{DropReason::out_of_range, p, p + ": expected good, degraded or stalled"};
          return std::nullopt;
        }
        if (key == "silentMs" || key == "rttMs" || key == "bytesPerS") {
          if (!json_integer(value, 0, kMaxSafeInteger))
            return Drop{DropReason::wrong_type, p, p + ": expected an integer 0..2^53-1"};
          return std::nullopt;
        }
        if (key == "fps") {
          if (!json_finite(value) || value.get<double>() < 0)
            return Drop{DropReason::wrong_type, p, p + ": expected a number >= 0"};
          return std::nullopt;
        }
        return unknown(p);
      });
}

// A hello's robot ({id?, name?, model?}), or a robots entry (`listed`: {id, name, model}, and the
// relay's link figures for a viewer that asked for them).
std::optional<Drop> check_robot(const Json& v, const std::string& path, bool listed) {
  return check_object(
      v, path,
      listed ? std::initializer_list<const char*>{"id", "name", "model"}
             : std::initializer_list<const char*>{},
      [&](const std::string& key, const Json& value, const std::string& p) -> std::optional<Drop> {
        if (key == "id") return check_string(value, p, kMaxIdChars, listed);
        if (key == "name" || key == "model")
          return check_string(value, p, kMaxShortTextChars, false);
        if (key == "link" && listed) return check_link(value, p);
        return unknown(p);
      });
}

template <class CheckItem>
std::optional<Drop> check_array(const Json& v, const std::string& path, std::size_t max_items,
                                CheckItem&& check_item) {
  if (!v.is_array()) return Drop{DropReason::wrong_type, path, path + ": expected an array"};
  if (v.size() > max_items)
    return Drop{DropReason::out_of_range, path,
                path + ": at most " + std::to_string(max_items) + " entries"};
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (auto d = check_item(v[i], path + "[" + std::to_string(i) + "]")) return d;
  }
  return std::nullopt;
}

std::optional<Drop> check_field(Kind kind, const Json& v, const std::string& path) {
  switch (kind) {
    case Kind::version:
      if (!json_integer(v, 0, 1000))
        return Drop{DropReason::wrong_type, path, path + ": expected a protocol version number"};
      return std::nullopt;
    case Kind::counter:
      if (!json_integer(v, 0, kMaxSafeInteger))
        return Drop{DropReason::wrong_type, path, path + ": expected an integer 0..2^53-1"};
      return std::nullopt;
    case Kind::number:
      if (!json_finite(v))
        return Drop{DropReason::wrong_type, path, path + ": expected a finite number"};
      return std::nullopt;
    case Kind::short_text: return check_string(v, path, kMaxShortTextChars, false);
    case Kind::long_text: return check_string(v, path, kMaxMessageTextChars, false);
    case Kind::id: return check_string(v, path, kMaxIdChars, true);
    case Kind::channel: return check_channel(v, path);
    case Kind::channel_list: {
      if (auto d = check_array(v, path, kMaxListEntries, check_channel)) return d;
      for (std::size_t i = 1; i < v.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
          if (v[i] == v[j])
            return Drop{DropReason::out_of_range, path, path + ": repeats " + v[i].dump()};
        }
      }
      return std::nullopt;
    }
    case Kind::error_code: {
      if (auto d = check_string(v, path, kMaxShortTextChars, true)) return d;
      if (!error_code_from_name(v.get_ref<const std::string&>()))
        return Drop{DropReason::out_of_range, path, path + ": not an error code of protocol v7"};
      return std::nullopt;
    }
    case Kind::object:
      if (!v.is_object()) return Drop{DropReason::wrong_type, path, path + ": expected an object"};
      return std::nullopt;
    case Kind::robot_hello: return check_robot(v, path, false);
    case Kind::robot_list:
      return check_array(v, path, kMaxListEntries, [](const Json& item, const std::string& p) {
        return check_robot(item, p, true);
      });
    case Kind::boolean:
      if (!v.is_boolean())
        return Drop{DropReason::wrong_type, path, path + ": expected true or false"};
      return std::nullopt;
    case Kind::sdp:
      if (!v.is_string()) return Drop{DropReason::wrong_type, path, path + ": expected a string"};
      if (!is_valid_utf8(ByteView(std::string_view(v.get_ref<const std::string&>()))))
        return Drop{DropReason::invalid_utf8, path, path + ": not valid UTF-8"};
      if (v.get_ref<const std::string&>().size() > kMaxSdpBytes)
        return Drop{DropReason::too_large, path, path + ": an SDP is at most 48 KiB"};
      return std::nullopt;
    case Kind::tracks:
      return check_array(v, path, kMaxRtcTracks, [](const Json& item, const std::string& p) {
        return check_object(item, p, {"mid", "ch"},
                            [](const std::string& key, const Json& value,
                               const std::string& kp) -> std::optional<Drop> {
                              if (key == "mid")
                                return check_string(value, kp, kMaxShortTextChars, true);
                              if (key == "ch") return check_channel(value, kp);
                              return unknown(kp);
                            });
      });
    case Kind::ice_servers:
      return check_array(v, path, kMaxListEntries, [](const Json& item, const std::string& p) {
        return check_object(item, p, {"urls"},
                            [](const std::string& key, const Json& value,
                               const std::string& kp) -> std::optional<Drop> {
                              if (key == "urls") {
                                if (value.is_string())
                                  return check_string(value, kp, kMaxMessageTextChars, true);
                                return check_array(value, kp, kMaxListEntries,
                                                   [](const Json& u, const std::string& up) {
                                                     return check_string(
                                                         u, up, kMaxMessageTextChars, true);
                                                   });
                              }
                              if (key == "username" || key == "credential")
                                return check_string(value, kp, kMaxMessageTextChars, false);
                              return unknown(kp);
                            });
      });
  }
  return std::nullopt;
}

}  // namespace

std::string_view sender_name(Sender s) {
  switch (s) {
    case Sender::robot: return "robot";
    case Sender::viewer: return "viewer";
    case Sender::relay: return "relay";
  }
  return "relay";
}

std::string_view message_type_name(MessageType t) {
  return schema_of(t).name;
}

std::optional<MessageType> message_type_from_name(std::string_view name) {
  for (const auto& s : schemas()) {
    if (name == s.name) return s.type;
  }
  return std::nullopt;
}

Result<Message, Drop> validate_message(Json object, Sender from) {
  if (!object.is_object()) return drop(DropReason::not_an_object, "", "a message is a JSON object");
  auto t_it = object.find("t");
  if (t_it == object.end() || !t_it->is_string())
    return drop(DropReason::missing_type, "t", "a message needs a string field t naming its type");
  const auto type = message_type_from_name(t_it->get_ref<const std::string&>());
  if (!type)
    return drop(DropReason::unknown_type, "t",
                "unknown message type " + t_it->dump() + " (protocol v7)");
  const Schema& schema = schema_of(*type);
  const std::uint8_t me = mask_of(from);
  if (!(schema.senders & me))
    return drop(DropReason::wrong_sender, "t",
                std::string(schema.name) + " is never sent by a " + std::string(sender_name(from)));

  Json out = Json::object();
  out["t"] = schema.name;
  for (const Field& f : schema.fields) {
    auto it = object.find(f.name);
    if (it == object.end()) {
      if (f.required_from & me)
        return drop(DropReason::missing_field, f.name,
                    std::string(schema.name) + "." + f.name + " is required");
      continue;
    }
    if (f.stripped_from & me) continue;
    if (!(f.allowed_from & me))
      return drop(DropReason::unknown_field, f.name,
                  std::string(schema.name) + "." + f.name + " is not sent by a " +
                      std::string(sender_name(from)));
    if (auto d = check_field(f.kind, *it, f.name)) return err(std::move(*d));
    out[f.name] = std::move(*it);
  }
  // Anything left is a key the schema does not know.
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (!out.contains(it.key())) {
      bool known = false;
      for (const Field& f : schema.fields) known = known || it.key() == f.name;
      if (!known)
        return drop(DropReason::unknown_field, it.key(),
                    std::string(schema.name) + "." + it.key() + " is not part of protocol v7");
    }
  }
  return Message{*type, std::move(out)};
}

Result<Message, Drop> parse_message(ByteView json, Sender from) {
  if (json.size > kMaxControlBytes)
    return drop(DropReason::too_large, "", "a control message is at most 64 KiB");
  JsonParse parsed = parse_json(json);
  switch (parsed.error) {
    case JsonError::none: break;
    case JsonError::invalid_utf8:
      return drop(DropReason::invalid_utf8, "", "the message is not valid UTF-8");
    case JsonError::too_deep:
      return drop(DropReason::too_deep, "", "the message nests deeper than 64 levels");
    case JsonError::invalid_json:
      return drop(DropReason::invalid_json, "", "the message is not valid JSON");
    case JsonError::number_out_of_range:
      return drop(DropReason::invalid_json, "",
                  "the message holds a number beyond a double's range; send finite numbers");
  }
  return validate_message(std::move(parsed.value), from);
}

std::string encode_message(const Message& m) {
  return to_json(m.body);
}

std::optional<ErrorCode> check_hello(const Message& hello, Role endpoint) {
  if (hello.type != MessageType::hello) return ErrorCode::hello_required;
  const Json& b = hello.body;
  if (json_integer(b["v"], 0, 1000).value_or(-1) != kProtocolVersion)
    return ErrorCode::version_mismatch;
  const std::string& role = b["role"].get_ref<const std::string&>();
  if (role != (endpoint == Role::robot ? "robot" : "viewer")) return ErrorCode::role_mismatch;
  if (endpoint == Role::robot) {
    auto robot = b.find("robot");
    if (robot == b.end() || !robot->contains("id") ||
        (*robot)["id"].get_ref<const std::string&>().empty())
      return ErrorCode::missing_robot_id;
    if (!b.contains("manifest")) return ErrorCode::invalid_manifest;
  }
  return std::nullopt;
}

}  // namespace tether::wire
