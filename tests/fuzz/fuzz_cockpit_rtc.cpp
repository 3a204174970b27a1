// libFuzzer harness: the cockpit relay's WebRTC brokering (src/cockpit/rtc.hpp) driven by a hostile
// script: robots and viewers sending any rtc_* input (offers, answers, stalls, SDPs at and past
// MAX_SDP_LEN, track lists at and past MAX_RTC_TRACKS), and SFU results of every shape, well-formed
// or not, for calls in flight, cancelled or never made, with time passing. The input is a list of
// steps `op | u16-LE len | len bytes`; the op's low nibble picks the event, its high nibble the
// target. The first byte's low bit says whether a TURN key is configured.
//
// Properties: nothing crashes or leaks; every message the relay sends validates as a relay message
// of protocol v7 (SDPs within MAX_SDP_LEN, tracks within MAX_RTC_TRACKS); every carrier frame
// decodes; every sfu_call body is a JSON object and names a fresh token; one call at most is in
// flight per peer (and one TURN mint); an sfu_cancel names a call in flight; a closed session gets
// no transport action after its close; a deadline reported after handle_timeout(now) is later.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cockpit/relay.hpp"
#include "common/json.hpp"
#include "common/utf8.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"

using namespace tether;
using namespace tether::cockpit;

namespace {

RelayConfig config(bool turn) {
  RelayConfig c;
  c.sfu = true;
  c.rtc.turn = turn;
  return c;
}

struct Call {
  std::uint64_t token;
  SfuOp op;
  SessionId session;
  Json body;
};

struct Driver {
  explicit Driver(bool turn) : relay(config(turn)) {}
  CockpitRelay relay;
  std::int64_t now = 0;
  std::vector<std::pair<SessionId, Lane>> sessions;
  std::set<SessionId> closed;
  std::vector<Call> pending;  // in issue order
  std::set<std::uint64_t> seen;
  int made = 0;

  void check() {
    while (auto polled = relay.poll_action()) {
      const CockpitAction& a = *polled;
      if (a.kind == ActionKind::sfu_call) {
        if (!a.bytes || !seen.insert(a.call).second) __builtin_trap();
        JsonParse body = parse_json(ByteView(*a.bytes));
        if (!body.ok() || !body.value.is_object()) __builtin_trap();
        for (const Call& c : pending)
          if (c.session == a.session) __builtin_trap();  // two calls at once for one peer
        pending.push_back(Call{a.call, a.op, a.session, std::move(body.value)});
        continue;
      }
      if (a.kind == ActionKind::sfu_cancel) {
        auto it = std::find_if(pending.begin(), pending.end(),
                               [&](const Call& c) { return c.token == a.call; });
        if (it == pending.end()) __builtin_trap();  // a cancel for no call in flight
        pending.erase(it);
        continue;
      }
      if (closed.count(a.session)) __builtin_trap();
      Lane lane = Lane::webtransport;
      for (auto& [s, l] : sessions)
        if (s == a.session) lane = l;
      if (a.kind == ActionKind::send_datagram || a.kind == ActionKind::write_control) {
        ByteView json(*a.bytes);
        if (lane == Lane::websocket) {
          auto f = wire::decode_data_frame(json);
          if (!f || f->header.ch != "@control") __builtin_trap();
          json = f->payload;
        } else if (a.kind == ActionKind::write_control) {
          if (a.bytes->size() < 4 || read_u32_le(a.bytes->data()) != a.bytes->size() - 4)
            __builtin_trap();
          json = ByteView(a.bytes->data() + 4, a.bytes->size() - 4);
        }
        if (!wire::parse_message(json, wire::Sender::relay)) __builtin_trap();
      } else if (a.kind == ActionKind::write_carrier) {
        auto f = wire::decode_data_frame(ByteView(*a.bytes));
        if (!f) __builtin_trap();
        if (f->header.ch == "@control" && !wire::parse_message(f->payload, wire::Sender::relay))
          __builtin_trap();
      } else if (a.kind == ActionKind::close_session) {
        closed.insert(a.session);
      }
    }
  }

  SessionId session(unsigned target) {
    if (sessions.empty()) return 0;
    return sessions[target % sessions.size()].first;
  }
  void open(Role r, Lane l) {
    if (sessions.size() >= 12) return;
    if (SessionId s = relay.handle_session_open(r, l, now)) sessions.emplace_back(s, l);
  }
  // Takes the call at `target` (0: the oldest) off the list.
  std::optional<Call> take(unsigned target) {
    if (pending.empty()) return std::nullopt;
    const std::size_t i = target % pending.size();
    Call c = std::move(pending[i]);
    pending.erase(pending.begin() + std::ptrdiff_t(i));
    return c;
  }
  void result(std::uint64_t token, const std::string& text) {
    relay.handle_sfu_result(token, ByteView(std::string_view(text)), now);
  }

  // A well-formed success for the call, as the SFU would answer; `extra` bytes become part of the
  // SDP and of the ids when they are text, so mutations reach the shapes the relay passes on.
  std::string good(const Call& c, ByteView extra) {
    std::string tail(extra.as_chars());
    if (!is_valid_utf8(extra)) tail.clear();
    ++made;
    const std::string sdp = "v=0\r\ns=" + tail + "\r\n";
    Json b = Json::object();
    switch (c.op) {
      case SfuOp::generate_ice_servers: {
        Json s = Json::object();
        s["urls"] = "turn:t" + tail;
        s["username"] = "u";
        s["credential"] = "c";
        b["iceServers"] = Json::array({s});
        break;
      }
      case SfuOp::new_session:
        b["sessionId"] = "S" + std::to_string(made) + tail.substr(0, 8);
        if (c.body.contains("sessionDescription")) {
          b["sessionDescription"] = Json::object();
          b["sessionDescription"]["type"] = "answer";
          b["sessionDescription"]["sdp"] = sdp;
        }
        break;
      case SfuOp::new_tracks: {
        Json tracks = Json::array();
        bool remote = false;
        if (c.body.contains("tracks") && c.body["tracks"].is_array()) {
          for (const Json& t : c.body["tracks"]) {
            Json e = Json::object();
            e["trackName"] = t.value("trackName", "");
            remote = t.value("location", "") == "remote";
            e["mid"] = remote ? std::to_string(made) + tail.substr(0, 4) : t.value("mid", "0");
            if (remote && !tail.empty() && tail[0] == 'x') {
              e["errorCode"] = tail.size() > 1 ? "not_found_track_error" : "other_error";
              e.erase("mid");
            }
            tracks.push_back(std::move(e));
          }
        }
        b["tracks"] = std::move(tracks);
        b["sessionDescription"] = Json::object();
        b["sessionDescription"]["type"] = remote ? "offer" : "answer";
        b["sessionDescription"]["sdp"] = sdp;
        break;
      }
      case SfuOp::close_tracks:
        b["tracks"] = c.body.contains("tracks") ? c.body["tracks"] : Json::array();
        break;
      case SfuOp::renegotiate: break;
    }
    Json r = Json::object();
    r["ok"] = true;
    r["status"] = 200;
    r["body"] = std::move(b);
    return to_json(r);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  Driver d(data[0] & 1);
  std::size_t pos = 1;
  int steps = 0;
  while (pos + 3 <= size && steps++ < 512) {
    const unsigned op = data[pos] & 0x0f, target = data[pos] >> 4;
    const std::size_t len =
        std::min<std::size_t>(data[pos + 1] | data[pos + 2] << 8, size - pos - 3);
    const ByteView body(data + pos + 3, len);
    pos += 3 + len;
    switch (op) {
      case 0: d.open(Role::robot, Lane::webtransport); break;
      case 1: d.open(Role::viewer, Lane::webtransport); break;
      case 2: d.open(Role::robot, Lane::websocket); break;
      case 3: d.open(Role::viewer, Lane::websocket); break;
      case 4: d.relay.handle_control_data(d.session(target), body, d.now); break;
      case 5: d.relay.handle_datagram(d.session(target), body, d.now); break;
      case 6:
        if (StreamId st = d.relay.handle_incoming_open(d.session(target), d.now)) {
          d.relay.handle_incoming_data(st, body, d.now);
          d.relay.handle_incoming_end(st, d.now);
        }
        break;
      case 7: d.relay.handle_ws_message(d.session(target), body, d.now); break;
      case 8:  // any bytes as the result of a call in flight
        if (auto c = d.take(target)) d.relay.handle_sfu_result(c->token, body, d.now);
        break;
      case 9:  // a well-formed success
        if (auto c = d.take(target)) d.result(c->token, d.good(*c, body));
        break;
      case 10: {  // a failure with the status the body names
        if (auto c = d.take(target)) {
          const int status = len >= 2 ? (body.data[0] | body.data[1] << 8) % 600 : 503;
          Json r = Json::object();
          r["ok"] = false;
          r["status"] = status;
          r["errorCode"] = status == 410 ? "session_error" : "temporarily_unavailable_error";
          r["errorDescription"] = "fuzzed";
          d.result(c->token, to_json(r));
        }
        break;
      }
      case 11: {  // a result for a token the relay may never have issued
        std::uint64_t token = 0;
        for (std::size_t i = 0; i < std::min<std::size_t>(len, 8); ++i)
          token |= std::uint64_t(body.data[i]) << (8 * i);
        if (std::none_of(d.pending.begin(), d.pending.end(),
                         [&](const Call& c) { return c.token == token; }))
          d.result(token, R"({"ok":true,"status":200,"body":{}})");
        break;
      }
      case 12: {
        d.now += std::int64_t(len) * 250;
        d.relay.handle_timeout(d.now);
        d.check();
        if (auto t = d.relay.poll_timeout(); t && *t <= d.now) __builtin_trap();
        break;
      }
      case 13: {
        SessionId s = d.session(target);
        d.relay.handle_session_closed(s, d.now);
        d.closed.insert(s);
        break;
      }
      case 14:  // a frame on a track channel (counted, never forwarded)
        if (StreamId st = d.relay.handle_incoming_open(d.session(target), d.now)) {
          wire::FrameHeader h;
          h.ch = target & 1 ? "front" : "rear";
          h.seq = std::int64_t(len);
          Bytes frame;
          if (!wire::append_data_frame(frame, h, body)) {
            d.relay.handle_incoming_data(st, ByteView(frame), d.now);
            d.relay.handle_incoming_end(st, d.now);
          }
        }
        break;
      default: break;
    }
    d.check();
    (void)d.relay.stats();
  }
  return 0;
}
