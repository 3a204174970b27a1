// Scripted WebRTC brokering for the cockpit relay core (src/cockpit/rtc.hpp): the relay harness
// with an SFU configured, the sfu_call actions decoded, and a small SFU model that answers them
// the way Cloudflare Realtime (and the local SFU, web/sfu/) does: session ids, mids, published
// tracks, offers and answers, with failures injected per operation. Tests either answer calls by
// hand (exact results) or let the model answer everything pending (`pump`).
#pragma once
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cockpit_harness.hpp"

namespace rtc_test {

using namespace cockpit_test;

// Track channels beside a JPEG camera.
inline Json rtc_manifest() {
  return J(R"({"version":1,"channels":[
    {"ch":"front","encoding":"video.webrtc.v1"},
    {"ch":"rear","encoding":"video.webrtc.v1"},
    {"ch":"cam","encoding":"jpeg.v1","delivery":"latest"}],
    "panels":[{"id":"v","kind":"video","channels":["front"]}]})");
}

inline RelayConfig rtc_config(bool turn = false) {
  RelayConfig c;
  c.sfu = true;
  c.rtc.turn = turn;
  return c;
}

struct SfuCall {
  std::uint64_t token = 0;
  SfuOp op = SfuOp::new_session;
  std::string sfu;  // the SFU session the call names
  Json body;
  SessionId session = 0;
};

inline std::vector<SfuCall> sfu_calls(const std::vector<CockpitAction>& acts) {
  std::vector<SfuCall> out;
  for (const auto& a : acts) {
    if (a.kind != ActionKind::sfu_call) continue;
    out.push_back(SfuCall{a.call, a.op, a.sfu_session,
                          J(std::string(ByteView(*a.bytes).as_chars())), a.session});
  }
  return out;
}
inline std::vector<std::uint64_t> cancels(const std::vector<CockpitAction>& acts) {
  std::vector<std::uint64_t> out;
  for (const auto& a : acts)
    if (a.kind == ActionKind::sfu_cancel) out.push_back(a.call);
  return out;
}

// The Realtime client's result values.
inline Json ok_result(Json body, int status = 200) {
  Json r = Json::object();
  r["ok"] = true;
  r["status"] = status;
  r["body"] = std::move(body);
  return r;
}
inline Json fail_result(int status, const std::string& code, const std::string& desc = "") {
  Json r = Json::object();
  r["ok"] = false;
  r["status"] = status;
  r["errorCode"] = code;
  r["errorDescription"] = desc.empty() ? "injected " + code : desc;
  return r;
}

inline std::string sdp(const std::string& tag) {
  return "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=" + tag + "\r\n";
}

// The SFU model. Mids on a session count up from 0; a published track is (session, trackName).
struct FakeSfu {
  struct Fault {
    SfuOp op;
    Json result;
    std::string location;  // newTracks only: "local" or "remote", or "" for either
  };
  std::deque<Fault> faults;
  std::map<std::string, int> mids;                          // session -> next mid
  std::set<std::pair<std::string, std::string>> published;  // (session, trackName)
  std::set<std::string> sessions;
  int next_session = 0;
  std::vector<SfuCall> seen;

  void fail_next(SfuOp op, Json result, std::string location = "") {
    faults.push_back(Fault{op, std::move(result), std::move(location)});
  }
  // A session vanishes: later calls on it answer 410.
  void lose(const std::string& session) {
    sessions.erase(session);
    for (auto it = published.begin(); it != published.end();)
      it = it->first == session ? published.erase(it) : std::next(it);
  }
  // A track is collected for lack of media.
  void collect(const std::string& session, const std::string& track) {
    published.erase({session, track});
  }

  Json answer(const SfuCall& c) {
    seen.push_back(c);
    std::string location;
    if (c.op == SfuOp::new_tracks && c.body.contains("tracks") && !c.body["tracks"].empty())
      location = c.body["tracks"][0]["location"].get<std::string>();
    for (auto it = faults.begin(); it != faults.end(); ++it) {
      if (it->op == c.op && (it->location.empty() || it->location == location)) {
        Json r = it->result;
        faults.erase(it);
        return r;
      }
    }
    if (c.op == SfuOp::generate_ice_servers)
      return ok_result(J(R"({"iceServers":[{"urls":["stun:stun.example:3478"]},
        {"urls":["turn:turn.example:3478?transport=udp"],"username":"u)" +
                         std::to_string(seen.size()) + R"(","credential":"c"}]})"),
                       201);
    if (c.op == SfuOp::new_session) {
      const std::string id = "S" + std::to_string(++next_session);
      sessions.insert(id);
      Json b = Json::object();
      b["sessionId"] = id;
      if (c.body.contains("sessionDescription")) {
        b["sessionDescription"] = J(R"({"type":"answer"})");
        b["sessionDescription"]["sdp"] = sdp("answer-" + id);
      }
      return ok_result(b, 201);
    }
    if (!sessions.count(c.sfu))
      return fail_result(410, "session_error", "session " + c.sfu + " does not exist");
    if (c.op == SfuOp::new_tracks) {
      Json b = Json::object();
      Json tracks = Json::array();
      bool any = false;
      for (const Json& t : c.body["tracks"]) {
        Json e = Json::object();
        e["trackName"] = t["trackName"];
        if (t["location"] == "local") {
          published.insert({c.sfu, t["trackName"].get<std::string>()});
          e["mid"] = t["mid"];
        } else {
          e["sessionId"] = t["sessionId"];
          if (!published.count(
                  {t["sessionId"].get<std::string>(), t["trackName"].get<std::string>()})) {
            e["errorCode"] = "not_found_track_error";
            e["errorDescription"] = "no such track";
          } else {
            e["mid"] = std::to_string(++mids[c.sfu]);
            any = true;
          }
        }
        tracks.push_back(e);
      }
      b["tracks"] = tracks;
      b["requiresImmediateRenegotiation"] = any;
      if (location == "local" && c.body.contains("sessionDescription")) {
        b["sessionDescription"] = J(R"({"type":"answer"})");
        b["sessionDescription"]["sdp"] = sdp("publish-" + c.sfu);
      } else if (any) {
        b["sessionDescription"] = J(R"({"type":"offer"})");
        b["sessionDescription"]["sdp"] = sdp("pull-" + c.sfu + "-" + std::to_string(mids[c.sfu]));
      }
      return ok_result(b);
    }
    if (c.op == SfuOp::renegotiate) return ok_result(Json::object());
    if (c.op == SfuOp::close_tracks) {
      Json b = Json::object();
      b["requiresImmediateRenegotiation"] = false;
      b["tracks"] = Json::array();
      for (const Json& t : c.body["tracks"]) b["tracks"].push_back(t);
      return ok_result(b);
    }
    return fail_result(404, "not_found");
  }
};

struct RtcHarness : Harness {
  FakeSfu sfu;
  std::size_t answered = 0;  // log entries already looked at by pump

  explicit RtcHarness(bool turn = false) : Harness(rtc_config(turn)) {}

  void result(std::uint64_t token, const Json& r) {
    const std::string t = to_json(r);
    relay.handle_sfu_result(token, ByteView(std::string_view(t)), now);
    collect();
  }
  // Answers every SFU call made so far, and the ones those answers lead to, with the model.
  void pump() {
    for (;;) {
      collect();
      if (answered >= log.size()) return;
      std::vector<CockpitAction> fresh(log.begin() + std::ptrdiff_t(answered), log.end());
      answered = log.size();
      for (const SfuCall& c : sfu_calls(fresh)) result(c.token, sfu.answer(c));
    }
  }
  void advance(TimeMs ms) {
    now += ms;
    relay.handle_timeout(now);
    collect();
  }
  std::vector<CockpitAction> take() {
    answered = 0;
    return Harness::take();
  }
  // Actions since the last take, after pumping the SFU.
  std::vector<CockpitAction> settle() {
    pump();
    return take();
  }

  // A robot with track channels that has offered its tracks.
  SessionId rtc_robot(const std::string& id, std::vector<std::string> chs = {"front", "rear"}) {
    SessionId r = robot(id, rtc_manifest());
    robot_offer(r, chs);
    return r;
  }
  void robot_offer(SessionId r, const std::vector<std::string>& chs, const std::string& tag = "") {
    Json m = J(R"({"t":"rtc_offer"})");
    m["sdp"] = sdp("robot-offer" + tag);
    m["tracks"] = Json::array();
    int mid = 0;
    for (const auto& ch : chs) {
      Json t = Json::object();
      t["mid"] = std::to_string(mid++);
      t["ch"] = ch;
      m["tracks"].push_back(t);
    }
    robot_stream(r, control_data_frame(m));
  }
  void robot_stalled(SessionId r, const std::string& ch) {
    Json m = J(R"({"t":"rtc_stalled"})");
    m["ch"] = ch;
    robot_stream(r, control_data_frame(m));
  }
  void viewer_offer(SessionId v, const std::string& tag = "viewer-offer") {
    Json m = J(R"({"t":"rtc_offer"})");
    m["sdp"] = sdp(tag);
    viewer_send(v, m);
  }
  void viewer_answer(SessionId v, const std::string& tag = "viewer-answer") {
    Json m = J(R"({"t":"rtc_answer"})");
    m["sdp"] = sdp(tag);
    viewer_send(v, m);
  }
  void sub(SessionId v, const std::string& ch) {
    Json m = J(R"({"t":"sub"})");
    m["ch"] = ch;
    viewer_send(v, m);
  }
  void unsub(SessionId v, const std::string& ch) {
    Json m = J(R"({"t":"unsub"})");
    m["ch"] = ch;
    viewer_send(v, m);
  }
  void watch(SessionId v, const std::string& robot_id) {
    Json m = J(R"({"t":"watch"})");
    m["robotId"] = robot_id;
    viewer_send(v, m);
  }
  // A viewer whose pulls of `chs` are made and answered (the SFU model answering everything).
  SessionId video_viewer(const std::string& robot_id, std::vector<std::string> chs = {"front"}) {
    SessionId v = rtc_viewer(robot_id, std::move(chs));
    settle();
    viewer_answer(v);
    settle();
    return v;
  }
  // A viewer watching `robot_id`, with its SFU session made, subscribed to `chs`.
  SessionId rtc_viewer(const std::string& robot_id, std::vector<std::string> chs = {"front"}) {
    SessionId v = watcher(robot_id);
    viewer_offer(v);
    for (const auto& ch : chs) sub(v, ch);
    return v;
  }
};

// Messages of one type a session got.
inline std::vector<Json> got(const std::vector<CockpitAction>& acts, SessionId s,
                             const std::string& t) {
  return Harness::of_type(Harness::messages(acts, s), t);
}

}  // namespace rtc_test
