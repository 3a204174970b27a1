// libFuzzer harness: the room relay's client-message parser and envelope validator
// (src/room/json_scan.hpp, envelope.hpp, relay.hpp). The input is newline-separated
// client messages sent by a joined member of room "r" (the token $I becomes the room's current
// instance, so valid envelopes are reachable); the first byte picks the options. Policy questions
// are answered at once on even lines and held for a later line on odd ones, so envelopes park
// and their connection's next messages queue behind them. Properties: nothing crashes; a refused
// message changes nothing and emits nothing; every send names a live connection; the scanner
// accepts only what nlohmann accepts, or numbers beyond a double's range (as JSON.parse does);
// every text sent, committed or checkpointed parses with nlohmann (such numbers written as null);
// the room's seq never decreases; every held question, once answered, leaves nothing waiting.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "room/envelope.hpp"
#include "room/json_scan.hpp"
#include "room/relay.hpp"

using namespace tether;
using namespace tether::room;

namespace {
bool verdict(const RoomAction& a) {
  switch (a.kind) {
    case RoomAction::Kind::ask_can_write: return a.text->size() % 3 != 0;
    case RoomAction::Kind::ask_validate: return a.text->size() % 5 != 0;
    case RoomAction::Kind::ask_can_bump: return a.epoch < 3;
    case RoomAction::Kind::ask_acl: return a.rule != 1;
    default: return false;
  }
}

struct Host {
  RoomRelay& relay;
  ConnId a, b;
  std::vector<RoomAction> held;
  void drain(int line, bool hold) {
    while (auto act = relay.poll_action()) {
      if (act->kind == RoomAction::Kind::send && act->conn != a && act->conn != b) __builtin_trap();
      // What the relay sends or stores is JSON every parser reads the same, nlohmann included: a
      // number beyond a double's range has become null (what the reference's JSON.stringify
      // writes), so no peer, journal or hydrate sees text the others refuse.
      if ((act->kind == RoomAction::Kind::send || act->kind == RoomAction::Kind::commit) &&
          !parse_json(ByteView(std::string_view(*act->text))).ok())
        __builtin_trap();
      if (act->kind == RoomAction::Kind::commit) {
        relay.handle_commit_result(
            act->token, (line & 1) ? RoomRelay::Verdict::ok : RoomRelay::Verdict::failed);
      } else if (act->kind != RoomAction::Kind::send && act->kind != RoomAction::Kind::close) {
        if (hold)
          held.push_back(*act);
        else
          relay.handle_policy_verdict(act->token, verdict(*act), 0);
      }
    }
    while (relay.poll_event()) {
    }
  }
  void answer_held(int line) {
    std::vector<RoomAction> q;
    q.swap(held);
    for (const auto& act : q) {
      relay.handle_policy_verdict(act.token, verdict(act), 0);
      drain(line, false);
    }
  }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t flags = data[0];
  std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);

  // The scanner alone: it accepts what nlohmann accepts and, as JSON.parse does, numbers beyond a
  // double's range, which nlohmann refuses (fuzz_json_differential holds the whole rule); the
  // validator never crashes.
  JsonScan scan;
  if (scan.parse(input, kMaxJsonDepth)) {
    const JsonParse dom = parse_json(ByteView(input));
    if (!dom.ok() && !(dom.error == JsonError::number_out_of_range && scan.has_overflow()))
      __builtin_trap();
    EnvelopeView view;
    (void)validate_envelope(scan, 0, view);
  }

  RoomRelayOptions o;
  o.eject_connection = flags & 1;
  o.durable = flags & 2;
  o.journal_limit = (flags >> 2) & 3;
  o.max_ops_per_envelope = (flags & 16) ? 2 : 1024;
  o.max_envelopes_per_second = (flags & 32) ? 3 : 0;
  o.has_policy = flags & 64;
  o.has_can_write = o.has_validate = o.has_can_bump = o.verify_citations = flags & 64;
  if (flags & 128) {
    o.has_policy = true;
    o.native_acl = true;
    o.has_can_write = false;
    o.acl = {AclRule{{"a"}}, AclRule{{"*", "b"}}};
  }
  RoomRelay relay(o);
  ConnId a = relay.connect("w");
  ConnId b = relay.connect("v");
  Host host{relay, a, b, {}};
  relay.handle_message(a, R"({"t":"hello","room":"r","origin":"oa","proto":3,"policyVersion":0})",
                       0);
  relay.handle_message(b, R"({"t":"hello","room":"r","origin":"ob","proto":3,"policyVersion":0})",
                       0);
  host.drain(0, false);
  TimeMs now = 0;
  double seq = 0;
  std::size_t start = 0;
  for (int line = 0; line < 64 && start <= input.size(); ++line) {
    std::size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    std::string msg(input.substr(start, end - start));
    start = end + 1;
    auto info = relay.room("r");
    if (info) {
      for (std::size_t at = msg.find("$I"); at != std::string::npos;
           at = msg.find("$I", at + info->instance.size())) {
        msg.replace(at, 2, info->instance);
      }
    }
    now += 100;
    ReceiveError e = relay.handle_message(line % 5 == 4 ? b : a, msg, now);
    if (e != ReceiveError::none && relay.action_ready()) __builtin_trap();
    host.drain(line, line & 1);
    if ((line & 3) == 2) host.answer_held(line);
    if (auto after = relay.room("r")) {
      if (after->seq < seq && after->instance == (info ? info->instance : after->instance))
        __builtin_trap();
      seq = after->seq;
    }
  }
  host.answer_held(1);
  if (!host.held.empty()) __builtin_trap();
  for (const std::string& state : {relay.checkpoint_json("r"), relay.state_json("r")})
    if (!state.empty() && !parse_json(ByteView(std::string_view(state))).ok()) __builtin_trap();
  relay.handle_disconnect(a);
  relay.handle_disconnect(b);
  host.drain(1, false);
  (void)relay.unload("r", true);
  return 0;
}
