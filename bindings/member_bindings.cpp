// Embind surface of the room member (src/room/member.hpp): a peer's membership in one room, under
// the transports' sockets. Marshalling only (docs/design.md rule 4). Its own binding so that the
// edge module (wasm/module.cmake), which hosts rooms and never joins one, leaves the member out.
// The public API is web/glue/room-member.js, driven by web/glue/driver.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "room/member.hpp"

namespace tether::room::bindings {
namespace {

using emscripten::val;

val string_list(const std::vector<std::string>& list) {
  val a = val::array();
  for (const auto& s : list) a.call<void>("push", s);
  return a;
}

// The hot path (every lane message, both ways) crosses as numbers: texts are staged into and read
// out of WASM memory, and the outbox (six doubles JS keeps a view of) carries addresses and
// lengths, as the wire and bus bindings do (bench/README.md).
class RoomMemberCore {
 public:
  static constexpr int kEventBase = 100;
  explicit RoomMemberCore(const std::string& options_json)
      : member_(parse_member_options(options_json).options) {}
  void start(double now) { member_.handle_start(static_cast<TimeMs>(now)); }
  void link_open(double now) { member_.handle_link_open(static_cast<TimeMs>(now)); }
  // The staging buffer's address once it holds at least n bytes (JS writes the input there).
  double staging(int n) {
    if (staging_.size() < static_cast<std::size_t>(n)) staging_.resize(static_cast<std::size_t>(n));
    return static_cast<double>(reinterpret_cast<std::uintptr_t>(staging_.data()));
  }
  double outbox() const { return static_cast<double>(reinterpret_cast<std::uintptr_t>(out_)); }
  void link_message_staged(int len, double now) {
    member_.handle_link_message(staged(len), static_cast<TimeMs>(now));
  }
  void link_closed(double now) { member_.handle_link_closed(static_cast<TimeMs>(now)); }
  void timeout(double now) { member_.handle_timeout(static_cast<TimeMs>(now)); }
  void close() { member_.handle_close(); }
  // One envelope to a peer: the staging buffer holds the peer's id (peer_len bytes) and then the
  // text (text_len bytes). LaneSend as an int.
  int send_text_staged(int peer_len, int text_len, double buffered) {
    std::string_view both = staged(peer_len + text_len);
    if (both.size() < static_cast<std::size_t>(peer_len))
      return static_cast<int>(LaneSend::not_open);
    return static_cast<int>(
        member_.send_text(both.substr(0, peer_len), both.substr(peer_len), buffered));
  }
  bool send_signal(const std::string& to, const std::string& data) {
    return member_.send_signal(to, data);
  }
  // The next action, else the next event, in one call: an action's kind (0..), an event's kind
  // plus kEventBase, or -1 when there is neither (the outbox's slot 5 then holds poll_timeout, or
  // -1). Texts stay in the outbox until the next call: [0, 1] text address and length, [2, 3]
  // origin, [4] a dial's attempt. Every other field of an event is read with event_details().
  // Slot 6 says whether more output waits after this item; when none does, slot 5 holds
  // poll_timeout, so the caller knows the deadline without another call.
  int poll_next() {
    int code = -1;
    if ((last_action_ = member_.poll_action())) {
      out_[0] = address(last_action_->text);
      out_[1] = static_cast<double>(last_action_->text.size());
      out_[4] = last_action_->attempt;
      code = static_cast<int>(last_action_->kind);
    } else if ((last_event_ = member_.poll_event())) {
      out_[0] = address(last_event_->text);
      out_[1] = static_cast<double>(last_event_->text.size());
      out_[2] = address(last_event_->origin);
      out_[3] = static_cast<double>(last_event_->origin.size());
      code = kEventBase + static_cast<int>(last_event_->kind);
    }
    const bool more = member_.has_output();
    out_[6] = more ? 1 : 0;
    if (!more) {
      Timeout t = member_.poll_timeout();
      out_[5] = t ? static_cast<double>(*t) : -1;
    }
    return code;
  }
  // The hot inputs return their first output at once (poll_next's result), saving a call per
  // message: a frame from the relay, and a lane send (its LaneSend in slot 7).
  int link_message_staged_next(int len, double now) {
    link_message_staged(len, now);
    return poll_next();
  }
  int send_text_staged_next(int peer_len, int text_len, double buffered) {
    out_[7] = send_text_staged(peer_len, text_len, buffered);
    return poll_next();
  }
  val event_details() const {
    val o = val::object();
    if (!last_event_) return o;
    const MemberEvent& e = *last_event_;
    o.set("origin", e.origin);
    o.set("text", e.text);
    o.set("members", string_list(e.members));
    o.set("reconnect", e.reconnect);
    o.set("again", e.again);
    o.set("fatal", e.fatal);
    o.set("reason", e.reason);
    if (!e.writer.empty()) o.set("writer", e.writer);
    if (e.expected >= 0) o.set("expected", e.expected);
    return o;
  }
  bool joined() const { return member_.joined(); }
  bool lane_open(const std::string& peer) const { return member_.lane_open(peer); }
  val roster() const { return string_list(member_.roster()); }
  val stats() const {
    const MemberStats& st = member_.stats();
    val o = val::object();
    o.set("reconnects", static_cast<double>(st.reconnects));
    o.set("sent", static_cast<double>(st.sent));
    o.set("received", static_cast<double>(st.received));
    o.set("refused", static_cast<double>(st.refused));
    o.set("ignored", static_cast<double>(st.ignored));
    o.set("readAcks", static_cast<double>(st.read_acks));
    return o;
  }

 private:
  std::string_view staged(int len) const {
    return std::string_view(reinterpret_cast<const char*>(staging_.data()),
                            std::min(staging_.size(), static_cast<std::size_t>(std::max(0, len))));
  }
  static double address(const std::string& s) {
    return static_cast<double>(reinterpret_cast<std::uintptr_t>(s.data()));
  }

  RoomMember member_;
  std::vector<std::uint8_t> staging_;
  std::optional<MemberAction> last_action_;
  std::optional<MemberEvent> last_event_;
  double out_[8] = {};
};

std::string member_options_error(const std::string& json) {
  return parse_member_options(json).error;
}
val member_defaults() {
  val o = val::object();
  o.set("maxMessageBytes", static_cast<double>(kDefaultLaneMessageBytes));
  o.set("maxFrameBytes", static_cast<double>(kDefaultLinkFrameBytes));
  o.set("maxBufferedBytes", static_cast<double>(kDefaultLinkBufferedBytes));
  o.set("reconnectMinMs", static_cast<double>(kDefaultReconnectMinMs));
  o.set("reconnectMaxMs", static_cast<double>(kDefaultReconnectMaxMs));
  o.set("maxPeerIdBytes", static_cast<double>(kMaxPeerIdBytes));
  o.set("envelopeSignalKind", std::string(kEnvelopeSignalKind));
  return o;
}
template <class Kind, int N>
val kind_names(const char* (*name)(Kind)) {
  val a = val::array();
  for (int i = 0; i < N; ++i) a.call<void>("push", std::string(name(static_cast<Kind>(i))));
  return a;
}
val lane_send_names() {
  return kind_names<LaneSend, kLaneSendKinds>(&lane_send_name);
}
val member_action_kinds() {
  return kind_names<MemberAction::Kind, kMemberActionKinds>(&member_action_name);
}
val member_event_kinds() {
  return kind_names<MemberEvent::Kind, kMemberEventKinds>(&member_event_name);
}

}  // namespace

EMSCRIPTEN_BINDINGS(tether_room_member) {
  emscripten::class_<RoomMemberCore>("RoomMemberCore")
      .constructor<const std::string&>()
      .function("start", &RoomMemberCore::start)
      .function("linkOpen", &RoomMemberCore::link_open)
      .function("staging", &RoomMemberCore::staging)
      .function("outbox", &RoomMemberCore::outbox)
      .function("linkMessageStaged", &RoomMemberCore::link_message_staged)
      .function("linkMessageStagedNext", &RoomMemberCore::link_message_staged_next)
      .function("sendTextStagedNext", &RoomMemberCore::send_text_staged_next)
      .function("linkClosed", &RoomMemberCore::link_closed)
      .function("timeout", &RoomMemberCore::timeout)
      .function("close", &RoomMemberCore::close)
      .function("sendTextStaged", &RoomMemberCore::send_text_staged)
      .function("sendSignal", &RoomMemberCore::send_signal)
      .function("pollNext", &RoomMemberCore::poll_next)
      .function("eventDetails", &RoomMemberCore::event_details)
      .function("joined", &RoomMemberCore::joined)
      .function("laneOpen", &RoomMemberCore::lane_open)
      .function("roster", &RoomMemberCore::roster)
      .function("stats", &RoomMemberCore::stats);
  emscripten::function("roomMemberOptionsError", &member_options_error);
  emscripten::function("roomMemberDefaults", &member_defaults);
  emscripten::function("roomLaneSendNames", &lane_send_names);
  emscripten::function("roomMemberActionKinds", &member_action_kinds);
  emscripten::function("roomMemberEventKinds", &member_event_kinds);
  emscripten::constant("roomMemberEventBase", RoomMemberCore::kEventBase);
}

}  // namespace tether::room::bindings
