#include "cockpit/relay.hpp"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "wire/limits.hpp"
#include "wire/messages.hpp"

namespace tether::cockpit {

using wire::ErrorCode;
using wire::MessageType;

namespace {
Bytes to_bytes(std::string_view text) {
  return Bytes(text.begin(), text.end());
}
}  // namespace

CockpitRelay::CockpitRelay(RelayConfig config)
    : ws_buffered_amount_(config.websocket_buffered_amount),
      sessions_(std::move(config.auth), config.sfu),
      lease_(config.wall_clock_ms, config.lease_gen_floor),
      rtc_(config.sfu ? std::optional<RtcConfig>(config.rtc) : std::nullopt) {}

// --- sessions -----------------------------------------------------------------------------------

SessionId CockpitRelay::handle_session_open(Role role, Lane lane, TimeMs now) {
  Session* s = sessions_.open(role, lane);
  if (!s) return 0;
  s->heard_ms = now;
  if (lane == Lane::websocket) {
    ++ws_sessions_;
    if (!liveness_at_) liveness_at_ = now + kWebSocketLivenessMs;
  }
  return s->ep.id;
}

std::optional<CockpitAction> CockpitRelay::poll_action() {
  auto a = out_.poll();
  if (a && !ws_buffered_amount_) {
    // What each WebSocket is handed, for the acknowledged window: once per action, here or
    // already in count_queued.
    if (counted_ > 0)
      --counted_;
    else
      count_handed(*a);
  }
  return a;
}

void CockpitRelay::count_handed(const CockpitAction& a) {
  if (!a.bytes) return;
  Session* s = sessions_.find(a.session);
  if (s && s->ep.lane == Lane::websocket) {
    s->ws_queued += a.bytes->size();
    if (a.ack_mark) s->ws_pong_marks.record(s->ws_queued);
  }
}

void CockpitRelay::count_queued() {
  // Actions are queued whole: by the time another completion is looked at, each queued action's
  // bytes and ack mark are final, and a session's actions are polled in this same order.
  for (; counted_ < out_.size(); ++counted_) count_handed(out_.queued(counted_));
}

void CockpitRelay::handle_session_closed(SessionId s, TimeMs now) {
  release(s, now);
  settle(now);
}

void CockpitRelay::settle(TimeMs now) {
  for (;;) {
    // Sessions that moved to another object go without a close: the host keeps the transport.
    std::vector<SessionId> handed;
    handed.swap(handed_);
    for (SessionId id : handed) release(id, now);
    std::vector<Failure> failed = sessions_.take_failed();
    if (failed.empty() && handed.empty()) return;
    for (Failure& f : failed) {
      if (!sessions_.find(f.session)) continue;
      out_.close(f.session, f.code, std::move(f.reason));
      release(f.session, now);
    }
  }
}

void CockpitRelay::release(SessionId id, TimeMs now) {
  Session* s = sessions_.find(id);
  if (!s) return;
  for (StreamId st : s->incoming) incoming_.erase(st);
  s->incoming.clear();
  if (s->ep.lane == Lane::websocket && ws_sessions_ > 0 && --ws_sessions_ == 0)
    liveness_at_.reset();
  rtc_.left(id, sessions_, out_, now);
  if (s->ep.role == Role::viewer) {
    // Outgoing streams die with the transport session; only the bookkeeping goes.
    const bool had_subs = delivery_.viewer_left(id);
    publish_.viewer_left(id);
    if (!s->watching.empty()) {
      const std::string robot_id = s->watching;
      if (Robot* r = sessions_.robot(robot_id)) lease_.viewer_left(id, *r, sessions_, out_);
      sessions_.unwatch(*s);
      if (had_subs) update_snapshot(robot_id, now);
    }
    sessions_.erase(id);
    return;
  }
  Robot* r = sessions_.robot_of(*s);
  if (!r) {
    sessions_.erase(id);
    return;
  }
  const std::string robot_id = s->robot_id;
  // Its streams are gone, so nothing earlier can arrive: what waited for them goes now, in order.
  if (delivery_.holding(robot_id)) delivery_.release_held(robot_id, 0, sessions_, out_);
  publish_.robot_left(id, sessions_, out_);
  lease_.robot_left(robot_id, sessions_, out_);
  delivery_.robot_left(robot_id);
  sessions_.erase(id);
  if (part_ == FleetPart::robot) out_.push(ActionKind::presence, 0).bytes = share(to_bytes("null"));
  sessions_.push_robots(out_, now);
  sessions_.push_manifest(robot_id, out_);
}

// --- hello, watch, subscriptions ----------------------------------------------------------------

void CockpitRelay::on_hello(Session& s, const wire::Message& hello, TimeMs now) {
  if (part_ == FleetPart::directory && s.ep.role == Role::robot) {
    // A robot's sessions live in its own object: checked here, registered there.
    if (!sessions_.admit(s, hello, out_)) return;
    Ticket t;
    t.robot_id = hello.body["robot"]["id"].get<std::string>();
    t.hello = hello.body;
    t.gen_floor = lease_.last_gen();
    hand_off(s, std::move(t));
    return;
  }
  if (part_ == FleetPart::robot && s.ep.role == Role::robot) {
    const Json& rb = hello.body["robot"];
    if (rb.is_object() && rb.contains("id") && rb["id"] != home_robot_) {
      sessions_.fail(s, ErrorCode::robot_id_conflict,
                     "this relay object serves robot " + home_robot_ +
                         "; connect through the fleet's /ws/robot",
                     out_);
      return;
    }
  }
  if (part_ != FleetPart::whole && s.ep.role == Role::viewer) s.hello = hello.body;
  const bool was_welcomed = s.welcomed;
  Robot* r = sessions_.hello(s, hello, out_, now);
  if (!r) {
    if (!was_welcomed && s.welcomed && !s.closing) rtc_.welcomed(s, sessions_, out_, now);
    return;
  }
  const std::string id = s.robot_id;
  if (part_ == FleetPart::robot)
    out_.push(ActionKind::presence, 0).bytes = share(to_bytes(to_json(r->identity)));
  // Viewers that kept watching while the robot was away keep the subscriptions the new manifest
  // still serves the same way; the fresh registration re-baselines the robot (workaround 3).
  delivery_.rebaseline(id, r->channels, out_);
  sessions_.send_snapshot(*r, delivery_.wanted(id, r->channels), true, out_, now);
  sessions_.push_robots(out_, now);
  sessions_.push_manifest(id, out_);
  rtc_.welcomed(s, sessions_, out_, now);
  for (SessionId v : rtc_.viewers_of(id))
    if (Session* vs = sessions_.find(v)) update_rtc(*vs, now);
}

void CockpitRelay::update_rtc(Session& v, TimeMs now) {
  if (!rtc_.enabled()) return;
  std::set<std::string> tracks;
  if (Robot* r = sessions_.robot_of(v)) {
    for (const auto& [ch, info] : r->channels)
      if (info.track && delivery_.subscribed(v.ep.id, ch)) tracks.insert(ch);
  }
  rtc_.viewer_wants(v.ep.id, v.watching, std::move(tracks), sessions_, out_, now);
}

void CockpitRelay::no_sfu(Session& s, bool reply, TimeMs) {
  count_drop("rtc_without_sfu");
  if (reply)
    out_.send_error(s.ep, ErrorCode::invalid_control,
                    "this relay brokers no WebRTC video: it was started without an SFU "
                    "(--rtc-file)");
}

void CockpitRelay::update_snapshot(const std::string& robot_id, TimeMs now) {
  if (Robot* r = sessions_.robot(robot_id))
    sessions_.send_snapshot(*r, delivery_.wanted(robot_id, r->channels), false, out_, now);
}

void CockpitRelay::unwatch(Session& s, TimeMs now) {
  if (s.watching.empty()) return;
  const std::string robot_id = s.watching;
  const bool had_subs = delivery_.unsubscribe_all(s.ep.id, out_);
  if (Robot* r = sessions_.robot(robot_id)) lease_.viewer_left(s.ep.id, *r, sessions_, out_);
  sessions_.unwatch(s);
  if (had_subs) update_snapshot(robot_id, now);
  update_rtc(s, now);
}

void CockpitRelay::on_watch(Session& s, const std::string& robot_id, TimeMs now) {
  if (part_ != FleetPart::whole && robot_id != home_robot_) {
    // Another robot's viewers live in its object: the session moves there, leaving this robot
    // (its subscriptions and any lease) exactly as a watch of another robot does.
    if (!fleet_has(robot_id)) {
      out_.send_error(s.ep, ErrorCode::unknown_robot,
                      "no robot " + robot_id + " is connected; watch one from the robots list");
      return;
    }
    unwatch(s, now);
    Ticket t;
    t.robot_id = robot_id;
    t.hello = s.hello;
    t.welcomed = true;
    t.watch = true;
    t.gen_floor = lease_.last_gen();
    hand_off(s, std::move(t));
    return;
  }
  if (!sessions_.robot(robot_id)) {
    out_.send_error(s.ep, ErrorCode::unknown_robot,
                    "no robot " + robot_id + " is connected; watch one from the robots list");
    return;
  }
  if (s.watching != robot_id) {
    unwatch(s, now);
    sessions_.watch(s, robot_id);
    update_rtc(s, now);
  }
  out_.send(s.ep, sessions_.manifest_message(robot_id));
}

void CockpitRelay::on_fleet(Session& s, bool link, TimeMs now) {
  const bool was = s.fleet_link;
  s.fleet_link = link;
  if (!link || was) return;
  // The figures at once, then at most one push per kLinkPushIntervalMs while any viewer asks.
  out_.send(s.ep, sessions_.robots_message(true, now));
  if (!link_at_) link_at_ = now + kLinkPushIntervalMs;
}

void CockpitRelay::push_links(TimeMs now) {
  if (!link_at_ || now < *link_at_) return;
  std::vector<Endpoint> asking;
  sessions_.for_each([&](Session& s) {
    if (s.ep.role == Role::viewer && s.fleet_link && s.welcomed && !s.closing)
      asking.push_back(s.ep);
  });
  if (asking.empty()) {
    link_at_.reset();
    link_pushed_ = Json();
    return;
  }
  link_at_ = now + kLinkPushIntervalMs;
  Json m = sessions_.robots_message(true, now);
  // What changed is judged on the silence only once it is news: a robot heard regularly is
  // silent for under a second between pings, which is not pushed, while a silent robot's
  // silence is pushed as it grows, in whole seconds.
  Json key = m["robots"];
  for (Json& e : key) {
    if (!e.contains("link")) continue;
    Json& silent = e["link"]["silentMs"];
    const TimeMs ms = silent.get<TimeMs>();
    silent = ms < kLinkDegradedAfterMs ? 0 : ms / 1000;
  }
  if (key == link_pushed_) return;
  link_pushed_ = std::move(key);
  for (Endpoint ep : asking) out_.send(ep, m);
}

Robot* CockpitRelay::watched(Session& s) {
  if (s.watching.empty()) {
    out_.send_error(s.ep, ErrorCode::no_watch, "watch a robot before subscribing or driving");
    return nullptr;
  }
  Robot* r = sessions_.robot_of(s);
  if (!r)
    out_.send_error(s.ep, ErrorCode::unknown_robot,
                    "robot " + s.watching + " is not connected; wait for it in the robots list");
  return r;
}

void CockpitRelay::on_sub(Session& s, const std::string& ch, TimeMs now) {
  Robot* r = watched(s);
  if (!r) return;
  auto cit = r->channels.find(ch);
  if (cit == r->channels.end() || cit->second.tx) {
    out_.send_error(s.ep, ErrorCode::unknown_channel,
                    "robot " + s.watching + " declares no rx channel " + ch);
    return;
  }
  if (delivery_.subscribed(s.ep.id, ch)) return;
  if (delivery_.subscription_count(s.ep.id) >= kMaxSubsPerViewer) {
    out_.send_error(s.ep, ErrorCode::invalid_control, "too many subscriptions");
    return;
  }
  delivery_.subscribe(s.ep.id, s.watching, ch, cit->second.delivery);
  update_snapshot(s.watching, now);
  if (cit->second.track) update_rtc(s, now);
}

void CockpitRelay::on_unsub(Session& s, const std::string& ch, TimeMs now) {
  if (s.watching.empty()) {
    out_.send_error(s.ep, ErrorCode::no_watch, "watch a robot before unsubscribing");
    return;
  }
  if (!delivery_.subscribed(s.ep.id, ch)) {
    Robot* r = sessions_.robot_of(s);
    if (r && !r->channels.count(ch))
      out_.send_error(s.ep, ErrorCode::unknown_channel,
                      "robot " + s.watching + " declares no channel " + ch);
    return;
  }
  delivery_.unsubscribe(s.ep.id, ch, out_);
  update_snapshot(s.watching, now);
  update_rtc(s, now);
}

// --- robot input --------------------------------------------------------------------------------

void CockpitRelay::on_robot_message(Session& s, ByteView json, bool reply_invalid, TimeMs now) {
  auto m = wire::parse_message(json, wire::Sender::robot);
  if (!m) {
    count_drop(std::string(wire::drop_reason_name(m.error().reason)));
    if (!s.welcomed && reply_invalid) {
      sessions_.fail(s, ErrorCode::hello_required, "send a valid hello first: " + m.error().detail,
                     out_);
    } else if (reply_invalid) {
      out_.send_error(s.ep, ErrorCode::invalid_control, "dropped: " + m.error().detail);
    }
    return;
  }
  if (m->type == MessageType::hello) {
    on_hello(s, m.value(), now);
    return;
  }
  if (!s.welcomed) {
    // Datagrams may overtake the hello's stream; only a stream message proves the order.
    if (reply_invalid)
      sessions_.fail(s, ErrorCode::hello_required, "send hello first", out_);
    else
      count_drop("before_hello");
    return;
  }
  Robot* robot = sessions_.robot_of(s);
  if (!robot) return;
  robot->link.heard(now);
  switch (m->type) {
    case MessageType::ping:
      if (auto rtt = m->body.find("rttMs"); rtt != m->body.end())
        robot->link.rtt(rtt->get<std::int64_t>());
      pong(s, std::move(m->body));
      return;
    case MessageType::pub_ack:
    case MessageType::pub_nack: publish_.on_answer(s, m.value(), sessions_, out_); return;
    case MessageType::rtc_offer:
    case MessageType::rtc_stalled:
      if (!rtc_.enabled())
        no_sfu(s, reply_invalid, now);
      else if (m->type == MessageType::rtc_stalled)
        rtc_.on_robot_stalled(s, m.value(), sessions_, out_, now);
      else if (Robot* r = sessions_.robot_of(s))
        rtc_.on_robot_offer(s, *r, m.value(), sessions_, out_, now);
      return;
    default: count_drop("unsupported_robot_message"); return;
  }
}

void CockpitRelay::on_robot_frame(Session& s, const wire::DataFrame& f, StreamId origin,
                                  TimeMs now) {
  if (f.header.ch == wire::kControlChannel) {
    on_robot_message(s, f.payload, true, now);
    return;
  }
  if (!s.welcomed) {
    sessions_.fail(s, ErrorCode::hello_required, "send hello before channel data", out_);
    return;
  }
  if (wire::is_reserved_channel(f.header.ch)) {  // never forwarded (§ Framing)
    count_drop("reserved_channel");
    return;
  }
  Robot* r = sessions_.robot_of(s);
  if (!r) return;
  r->link.heard(now);
  auto cit = r->channels.find(f.header.ch);
  if (cit == r->channels.end() || cit->second.tx) {
    count_drop("undeclared_channel");
    return;
  }
  r->link.frame(f.payload.size, now);
  // The oldest other one-shot stream of this robot still unfinished (its own is in the set).
  StreamId oldest = 0;
  for (StreamId st : s.incoming) {
    if (st != origin) {
      oldest = st;
      break;
    }
  }
  delivery_.on_frame(s.robot_id, cit->second, f, origin, oldest, sessions_, out_, now);
}

// --- viewer input -------------------------------------------------------------------------------

void CockpitRelay::on_viewer_message(Session& s, ByteView json, bool on_control, TimeMs now) {
  auto m = wire::parse_message(json, wire::Sender::viewer);
  if (!m) {
    count_drop(std::string(wire::drop_reason_name(m.error().reason)));
    if (!on_control) return;
    if (!s.welcomed)
      sessions_.fail(s, ErrorCode::hello_required, "send a valid hello first: " + m.error().detail,
                     out_);
    else
      out_.send_error(s.ep, ErrorCode::invalid_control, "dropped: " + m.error().detail);
    return;
  }
  if (m->type == MessageType::hello) {
    if (on_control) on_hello(s, m.value(), now);
    return;
  }
  if (!s.welcomed) {
    if (on_control) sessions_.fail(s, ErrorCode::hello_required, "send hello first", out_);
    return;
  }
  Json& b = m->body;
  switch (m->type) {
    case MessageType::ping: pong(s, std::move(b)); return;
    case MessageType::watch: on_watch(s, b["robotId"].get<std::string>(), now); return;
    case MessageType::fleet: on_fleet(s, b["link"].get<bool>(), now); return;
    case MessageType::sub: on_sub(s, b["ch"].get<std::string>(), now); return;
    case MessageType::unsub: on_unsub(s, b["ch"].get<std::string>(), now); return;
    case MessageType::teleop_start:
      if (Robot* r = watched(s)) lease_.start(s, *r, sessions_, out_, now);
      return;
    case MessageType::teleop_stop:
      if (Robot* r = sessions_.robot_of(s)) lease_.stop(s, *r, sessions_, out_);
      return;
    case MessageType::twist:
    case MessageType::stop:
      lease_.command(s, sessions_.robot_of(s), std::move(b), sessions_, out_);
      return;
    case MessageType::rtc_offer:
    case MessageType::rtc_answer:
      if (!rtc_.enabled())
        no_sfu(s, on_control, now);
      else if (m->type == MessageType::rtc_offer)
        rtc_.on_viewer_offer(s, m.value(), sessions_, out_, now);
      else
        rtc_.on_viewer_answer(s, m.value(), sessions_, out_, now);
      return;
    default: count_drop("unsupported_viewer_message"); return;
  }
}

void CockpitRelay::on_viewer_frame(Session& s, const wire::DataFrame& f, TimeMs now) {
  if (f.header.ch == wire::kControlChannel) {
    on_viewer_message(s, f.payload, true, now);
    return;
  }
  if (!s.welcomed) {
    sessions_.fail(s, ErrorCode::hello_required, "send hello before publishing", out_);
    return;
  }
  if (wire::is_reserved_channel(f.header.ch)) {
    // `@...` ids are never channel data (§ Framing): no nack either, since a relay message may
    // not name a reserved channel. Found by fuzz_cockpit_relay.
    count_drop("reserved_channel");
    return;
  }
  publish_.on_publish(s, sessions_.robot_of(s), f, sessions_, out_, now);
}

// --- transport ingress --------------------------------------------------------------------------

void CockpitRelay::handle_control_data(SessionId id, ByteView chunk, TimeMs now) {
  Session* s = sessions_.find(id);
  if (!s || s->closing) return;
  if (s->ep.role != Role::viewer || s->ep.lane != Lane::webtransport) {
    count_drop("control_on_wrong_session");
    return;
  }
  // Sessions are released only when the input settles, so the decoder outlives every handler.
  auto e = s->control.feed(chunk, [&](ByteView m) {
    if (!s->closing) on_viewer_message(*s, m, true, now);
  });
  if (e && !s->closing) {
    // The control stream is the session: corrupt framing there ends it.
    const std::string why(wire::frame_error_text(*e));
    sessions_.end(*s, wire::frame_error_code(*e), why, out_);
  }
  settle(now);
}

void CockpitRelay::handle_datagram(SessionId id, ByteView bytes, TimeMs now) {
  Session* s = sessions_.find(id);
  if (!s || s->closing) return;
  if (s->ep.role == Role::robot)
    on_robot_message(*s, bytes, false, now);
  else
    on_viewer_message(*s, bytes, false, now);
  settle(now);
}

StreamId CockpitRelay::handle_incoming_open(SessionId id, TimeMs) {
  Session* s = sessions_.find(id);
  if (!s || s->closing || s->incoming.size() >= kMaxIncomingStreamsPerSession) return 0;
  const StreamId st = out_.new_stream();
  incoming_.emplace(st, Incoming{id, {}, {}});
  s->incoming.insert(st);
  return st;
}

void CockpitRelay::handle_incoming_data(StreamId st, ByteView chunk, TimeMs now) {
  auto it = incoming_.find(st);
  if (it == incoming_.end()) return;
  Session* s = sessions_.find(it->second.session);
  if (!s || s->closing) return;
  if (s->ep.role == Role::viewer)
    viewer_stream_data(st, it->second, *s, chunk, now);
  else
    robot_stream_data(st, it->second, *s, chunk, now);
  settle(now);
}

void CockpitRelay::robot_stream_data(StreamId st, Incoming& in, Session& s, ByteView chunk,
                                     TimeMs now) {
  bool got_frame = false;
  auto e = in.robot.feed(chunk, [&](const wire::DataFrame& f) {
    if (got_frame) {
      count_drop("extra_frame_on_one_shot_stream");
      return;
    }
    got_frame = true;
    // Handled in place: the views live until the next feed.
    if (!s.closing) on_robot_frame(s, f, st, now);
  });
  if (got_frame)
    stop_incoming(st);
  else if (e)
    incoming_failed(st, *e);
}

void CockpitRelay::viewer_stream_data(StreamId st, Incoming& in, Session& s, ByteView chunk,
                                      TimeMs now) {
  ViewerStreamReader::Step step = in.viewer.feed(chunk);
  switch (step.status) {
    case ViewerStreamReader::Status::more: return;
    case ViewerStreamReader::Status::frame: on_viewer_frame(s, step.frame, now); break;
    case ViewerStreamReader::Status::too_large: publish_.too_large(s, *step.header, out_); break;
    case ViewerStreamReader::Status::failed: incoming_failed(st, step.error); return;
  }
  // One frame per one-shot stream: stop reading it (see stop_incoming).
  stop_incoming(st);
}

// Incoming streams are one-shot, one frame each (§ Sessions and messages). Once the frame is in,
// the relay stops reading (STOP_SENDING): the peer's FIN comes lazily or never on Deno
// (workaround 2), and a stream left open would hold the peer's stream credit.
void CockpitRelay::stop_incoming(StreamId st) {
  auto it = incoming_.find(st);
  if (it == incoming_.end()) return;
  const SessionId sid = it->second.session;
  incoming_.erase(it);
  Session* s = sessions_.find(sid);
  if (!s) return;
  incoming_done(*s, st);
  if (!s->closing) out_.reset(sid, st, StreamEnd::closing);
}

void CockpitRelay::incoming_done(Session& s, StreamId st) {
  s.incoming.erase(st);
  if (s.ep.role != Role::robot || s.robot_id.empty() || !delivery_.holding(s.robot_id)) return;
  delivery_.release_held(s.robot_id, s.incoming.empty() ? 0 : *s.incoming.begin(), sessions_, out_);
}

void CockpitRelay::incoming_failed(StreamId st, wire::FrameError e) {
  // Corrupt framing kills only its stream (§ Sessions and messages).
  count_drop(std::string("stream_") + std::string(wire::frame_error_name(e)));
  stop_incoming(st);
}

void CockpitRelay::handle_incoming_end(StreamId st, TimeMs now) {
  auto it = incoming_.find(st);
  if (it == incoming_.end()) return;
  // A frame cut off mid-way is dropped; nothing else is lost.
  if (it->second.robot.buffered() > 0 || it->second.viewer.partial()) count_drop("truncated");
  const SessionId sid = it->second.session;
  incoming_.erase(it);
  if (Session* s = sessions_.find(sid)) incoming_done(*s, st);
  settle(now);
}

void CockpitRelay::handle_ws_message(SessionId id, ByteView frame, TimeMs now) {
  Session* s = sessions_.find(id);
  if (!s || s->closing) return;
  s->heard_ms = now;
  auto f = wire::decode_data_frame(frame);
  if (!f) {
    // One WebSocket message is one frame: a corrupt one is dropped alone.
    count_drop(std::string("ws_") + std::string(wire::frame_error_name(f.error())));
    if (s->welcomed)
      out_.send_error(
          s->ep, ErrorCode::invalid_control,
          "dropped a WebSocket message: " + std::string(wire::frame_error_text(f.error())));
    else
      sessions_.fail(*s, ErrorCode::hello_required, "send hello as an @control data frame first",
                     out_);
  } else if (s->ep.role == Role::robot) {
    on_robot_frame(*s, f.value(), 0, now);
  } else {
    on_viewer_frame(*s, f.value(), now);
  }
  settle(now);
}

// --- outgoing streams ---------------------------------------------------------------------------

void CockpitRelay::handle_stream_opened(StreamId st, TimeMs now) {
  complete(Completion::opened, st, now);
  settle(now);
}

void CockpitRelay::handle_write_done(StreamId st, TimeMs now) {
  complete(Completion::written, st, now);
  settle(now);
}

void CockpitRelay::handle_writes_done(StreamId st, std::size_t count, TimeMs now) {
  // Bounded by what is outstanding, not by the host's count: each completion is one step.
  std::size_t n = std::min(count, delivery_.owner(st) ? delivery_.writes_outstanding(st)
                                                      : sessions_.carrier_writes_outstanding(st));
  while (n-- > 0) complete(Completion::written, st, now);
  settle(now);
}

void CockpitRelay::dispatch(Completion c, StreamId st, TimeMs now) {
  if (c == Completion::opened)
    delivery_.stream_opened(st, now, out_);
  else if (!delivery_.write_done(st, now, out_))
    sessions_.carrier_done(st);
}

bool CockpitRelay::paced(const Session& s) const {
  return !ws_buffered_amount_ && s.ep.lane == Lane::websocket;
}

void CockpitRelay::complete(Completion c, StreamId st, TimeMs now) {
  if (!ws_buffered_amount_) {
    SessionId owner = delivery_.owner(st);
    if (!owner) owner = sessions_.carrier_session(st);
    Session* s = sessions_.find(owner);
    // A counted handle_writes_done runs several completions in one input: each must see the
    // bytes the ones before it handed out, as it would had each been its own input and drain
    // (docs/cockpit-protocol.md § The slow-reader rule: the window plus one frame).
    if (s && paced(*s)) count_queued();
    if (s && paced(*s) &&
        (!s->ws_deferred.empty() || s->ws_queued - s->ws_acked > kWebSocketAckWindowBytes)) {
      // The socket's window is full: the completion waits for the client's next ping.
      s->ws_deferred.emplace_back(c == Completion::opened, st);
      return;
    }
  }
  dispatch(c, st, now);
}

void CockpitRelay::acknowledge(Session& s, const Json& read, TimeMs now) {
  // Only a count that ends exactly where a pong ended: the client read up to that pong.
  // The parser admitted `read` as a counter: a non-negative integer within JSON's safe range.
  if (!read.is_number()) return;
  const auto n = static_cast<std::uint64_t>(read.get<double>());
  if (!s.ws_pong_marks.credit(n)) return;
  s.ws_acked = std::max(s.ws_acked, n);
  while (!s.ws_deferred.empty() && s.ws_queued - s.ws_acked <= kWebSocketAckWindowBytes) {
    auto [opened, st] = s.ws_deferred.front();
    s.ws_deferred.pop_front();
    dispatch(opened ? Completion::opened : Completion::written, st, now);
  }
}

void CockpitRelay::pong(Session& s, Json ping) {
  if (auto read = ping.find("read"); read != ping.end()) {
    s.ws_counts_reads = true;  // from now on only what it says it read counts
    if (paced(s)) acknowledge(s, *read, s.heard_ms);
    ping.erase(read);  // a pong echoes n and ts only
  } else if (!s.ws_counts_reads && paced(s) && !s.ws_pong_marks.empty()) {
    // A client that has never sent `read` speaks the v7 wire as written, which has no such field
    // (other viewers and robot SDKs): its ping acknowledges up to the newest pong, as before, so
    // it is never frozen for not knowing the field. The price, documented with the rule: such a
    // client can still ping without reading.
    acknowledge(s, Json(s.ws_pong_marks.newest()), s.heard_ms);
  }
  ping.erase("rttMs");  // a robot's own figure, for the fleet's link (link.hpp)
  ping["t"] = "pong";
  if (CockpitAction* a = out_.send(s.ep, ping)) a->ack_mark = true;
}

void CockpitRelay::handle_stream_failed(StreamId st, TimeMs now) {
  if (!delivery_.stream_failed(st, sessions_, out_)) {
    if (Session* s = sessions_.find(sessions_.carrier_session(st)))
      sessions_.fail(*s, ErrorCode::carrier_failed,
                     "the carrier stream failed; reconnect to re-register", out_);
  }
  settle(now);
}

// --- a fleet split over objects ----------------------------------------------------------------

void CockpitRelay::set_fleet_part(FleetPart part, std::string home_robot) {
  part_ = part;
  home_robot_ = std::move(home_robot);
  if (part_ == FleetPart::directory) sessions_.set_fleet_robots(Json::array());
}

bool CockpitRelay::fleet_has(const std::string& robot_id) const {
  return part_ == FleetPart::directory ? fleet_.has(robot_id) : fleet_ids_.count(robot_id) != 0;
}

void CockpitRelay::hand_off(Session& s, Ticket t) {
  CockpitAction& a = out_.push(ActionKind::handoff, s.ep.id);
  a.ch = t.robot_id;
  a.bytes = share(to_bytes(encode_ticket(t)));
  s.closing = true;  // nothing more is read from it or sent on it here
  handed_.push_back(s.ep.id);
}

void CockpitRelay::handle_handoff(SessionId id, ByteView bytes, TimeMs now) {
  Session* s = sessions_.find(id);
  if (!s || s->closing) return;
  if (part_ != FleetPart::robot) {
    count_drop("handoff_misrouted");  // only a robot object takes sessions in
    return;
  }
  if (s->welcomed || s->ticketed) {
    count_drop("handoff_late");
    return;
  }
  auto t = decode_ticket(bytes);
  if (!t) {
    count_drop("handoff_invalid");
    sessions_.fail(*s, std::nullopt, t.error(), out_);
    settle(now);
    return;
  }
  if (part_ == FleetPart::robot && t.value().robot_id != home_robot_) {
    sessions_.fail(
        *s, std::nullopt,
        "a handoff for robot " + t.value().robot_id + " reached the object of " + home_robot_,
        out_);
    settle(now);
    return;
  }
  s->ticketed = true;
  s->quiet = t.value().welcomed && s->ep.role == Role::viewer;
  lease_.raise_floor(t.value().gen_floor);
  // The hello is checked again here, token and all: the ticket grants nothing by itself.
  const std::string text = to_json(t.value().hello);
  auto m =
      wire::parse_message(ByteView(std::string_view(text)),
                          s->ep.role == Role::robot ? wire::Sender::robot : wire::Sender::viewer);
  if (!m || m->type != MessageType::hello) {
    sessions_.fail(*s, ErrorCode::hello_required, "the handed-off hello is not a valid hello",
                   out_);
  } else {
    on_hello(*s, m.value(), now);
    if (t.value().watch && s->welcomed && !s->closing) on_watch(*s, t.value().robot_id, now);
  }
  settle(now);
}

void CockpitRelay::fleet_changed(TimeMs now) {
  sessions_.set_fleet_robots(fleet_.robots());
  sessions_.push_robots(out_, now);
  out_.push(ActionKind::fleet_robots, 0).bytes =
      share(to_bytes(to_json(sessions_.robots_message(false, now))));
}

void CockpitRelay::handle_presence(std::uint64_t link, ByteView report, TimeMs now) {
  if (part_ != FleetPart::directory) return;
  auto changed = fleet_.report(link, report, now);
  if (!changed) {
    count_drop("presence_invalid");
    return;
  }
  if (changed.value()) fleet_changed(now);
}

void CockpitRelay::handle_fleet_robots(ByteView bytes, TimeMs now) {
  if (part_ != FleetPart::robot) return;
  JsonParse p = bytes.size <= kMaxFleetRobotsBytes ? parse_json(bytes) : JsonParse{};
  const Json* list = nullptr;
  if (p.ok() && p.value.is_object()) {
    auto it = p.value.find("robots");
    if (it != p.value.end() && it->is_array() && it->size() <= wire::kMaxListEntries) list = &*it;
  }
  std::set<std::string> ids;
  if (list) {
    for (const Json& r : *list) {
      auto id = r.is_object() && r.contains("id") ? json_string(r["id"]) : std::nullopt;
      if (!id) {
        list = nullptr;
        break;
      }
      ids.emplace(*id);
    }
  }
  if (!list) {
    count_drop("fleet_robots_invalid");
    return;
  }
  fleet_ids_ = std::move(ids);
  sessions_.set_fleet_robots(*list);
  sessions_.push_robots(out_, now);
  settle(now);
}

void CockpitRelay::handle_directory_lost(TimeMs now) {
  if (part_ != FleetPart::robot) return;
  if (Robot* r = sessions_.robot(home_robot_)) {
    if (Session* s = sessions_.find(r->session))
      sessions_.end(*s, std::nullopt,
                    "the fleet directory restarted and no longer lists this robot; reconnect",
                    out_);
  }
  settle(now);
}

// --- time ---------------------------------------------------------------------------------------

Timeout CockpitRelay::poll_timeout() const {
  return earliest(
      earliest(earliest(delivery_.poll_timeout(), publish_.poll_timeout()), rtc_.poll_timeout()),
      earliest(liveness_at_, link_at_));
}

void CockpitRelay::sweep_liveness(TimeMs now) {
  if (!liveness_at_ || now < *liveness_at_) return;
  // Over the WebSocket sessions once per deadline, never per message: between two looks a
  // session's heard_ms only grows, so the earliest a session could reach the bound is known here.
  std::vector<SessionId> silent;
  Timeout next;
  sessions_.for_each([&](Session& s) {
    if (s.ep.lane != Lane::websocket || s.closing) return;
    if (now - s.heard_ms >= kWebSocketLivenessMs)
      silent.push_back(s.ep.id);
    else
      next = earliest(next, s.heard_ms + kWebSocketLivenessMs);
  });
  for (SessionId id : silent) {
    if (Session* s = sessions_.find(id))
      sessions_.end(*s, std::nullopt,
                    "nothing heard for " + std::to_string(kWebSocketLivenessMs / 1000) +
                        " s over the WebSocket: the peer is gone (a client pings every second "
                        "or two); reconnect",
                    out_);
  }
  // Sessions being closed are released soon; until then, look again a whole bound later.
  liveness_at_ = ws_sessions_ ? (next ? next : Timeout(now + kWebSocketLivenessMs)) : std::nullopt;
}

void CockpitRelay::handle_timeout(TimeMs now) {
  publish_.handle_timeout(now, sessions_, out_);
  delivery_.handle_timeout(now, out_);
  sweep_liveness(now);
  push_links(now);
  rtc_.handle_timeout(now, sessions_, out_);
  settle(now);
}

// --- the SFU ------------------------------------------------------------------------------------

void CockpitRelay::handle_sfu_result(std::uint64_t call, ByteView result, TimeMs now) {
  rtc_.handle_sfu_result(call, result, sessions_, out_, now);
  settle(now);
}

// --- introspection ------------------------------------------------------------------------------

std::optional<ChannelCounters> CockpitRelay::counters(const std::string& robot_id,
                                                      const std::string& ch) const {
  if (!sessions_.robots().count(robot_id)) return std::nullopt;
  return delivery_.counters(robot_id, ch);
}

Json CockpitRelay::stats() const {
  Json robots = Json::array();
  for (const auto& [id, r] : sessions_.robots()) {
    Json o = r.identity;
    o["viewers"] = sessions_.watcher_count(id);
    o["leaseHolder"] = lease_.holder(id) != 0;
    o["subs"] = r.snapshot;
    o["channels"] = delivery_.channel_stats(id);
    Json rtc = Json::object();
    rtc["framesOnTrack"] = delivery_.frames_on_track(id);
    if (rtc_.enabled()) rtc["tracks"] = rtc_.robot_stats(id);
    o["rtc"] = std::move(rtc);
    robots.push_back(std::move(o));
  }
  Json out = Json::object();
  out["version"] = wire::kProtocolVersion;
  if (part_ == FleetPart::directory) {
    Json fleet = fleet_.stats();
    robots = std::move(fleet["robots"]);
    fleet.erase("robots");
    out["fleet"] = std::move(fleet);
  }
  out["robots"] = std::move(robots);
  out["viewers"] = sessions_.viewers();
  out["sessions"] = sessions_.size();
  std::map<std::string, std::uint64_t> all = drops_;
  for (const auto& [k, n] : rtc_.drops()) all[k] += n;
  Json drops = Json::object();
  for (const auto& [k, n] : all) drops[k] = n;
  out["dropped"] = std::move(drops);
  out["teleopDropped"] = lease_.dropped();
  if (rtc_.enabled()) out["rtc"] = rtc_.stats();
  return out;
}

}  // namespace tether::cockpit
