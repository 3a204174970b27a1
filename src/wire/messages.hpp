// Every v7 message (cockpit-wire-v7-notes.md § Message set), with strict shape validation.
// A message is a JSON object whose `t` names its type. Parsing never throws: an unknown or
// invalid message comes back as a Drop, which the session reports and survives
// (cockpit-wire-protocol.md § Sessions and messages: "An invalid message is dropped").
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.hpp"
#include "common/json.hpp"
#include "common/result.hpp"
#include "wire/errors.hpp"

namespace tether::wire {

// Who sent a message. Each type may come only from certain senders.
enum class Sender { robot, viewer, relay };
std::string_view sender_name(Sender s);

enum class MessageType {
  hello,
  welcome,
  error,
  ping,
  pong,
  robots,
  watch,
  manifest,
  sub,
  unsub,
  subs,
  teleop_start,
  teleop_started,
  teleop_stop,
  twist,
  stop,
  pub_ack,
  pub_nack,
  rtc_ice,
  rtc_offer,
  rtc_answer,
  rtc_stalled,
  fleet,
};
constexpr std::size_t kMessageTypeCount = 23;
std::string_view message_type_name(MessageType t);
std::optional<MessageType> message_type_from_name(std::string_view name);

struct Message {
  MessageType type;
  Json body;  // the validated object, `t` first
};

struct Drop {
  DropReason reason;
  std::string field;   // the offending field's path, e.g. "robot.id"; empty for the whole message
  std::string detail;  // a sentence for logs: what was wrong and what is expected
};

// Parses UTF-8 JSON text (a datagram, a control-stream message, or an @control payload).
Result<Message, Drop> parse_message(ByteView json, Sender from);
// Validates an object built in code or received already parsed. Normalises as parse does:
// a viewer-authored teleop `gen` is removed, since the relay never trusts it.
Result<Message, Drop> validate_message(Json object, Sender from);

// Compact JSON with the wire's number format.
std::string encode_message(const Message& m);

// Session-level checks of a hello that parsed, in the order the relay applies them
// (cockpit-wire-protocol.md § Sessions and messages). The manifest is checked separately.
enum class Role { robot, viewer };
std::optional<ErrorCode> check_hello(const Message& hello, Role endpoint);

}  // namespace tether::wire
