#include "cockpit/delivery.hpp"

#include <utility>

namespace tether::cockpit {

// --- subscriptions ----------------------------------------------------------------------------

bool Delivery::subscribed(SessionId viewer, const std::string& ch) const {
  auto it = viewers_.find(viewer);
  return it != viewers_.end() && it->second.by_channel.count(ch);
}

std::size_t Delivery::subscription_count(SessionId viewer) const {
  auto it = viewers_.find(viewer);
  return it == viewers_.end() ? 0 : it->second.by_channel.size();
}

void Delivery::subscribe(SessionId viewer, const std::string& robot_id, const std::string& ch,
                         wire::Delivery mode) {
  ViewerSubs& v = viewers_[viewer];
  v.robot_id = robot_id;
  v.by_channel[ch].mode = mode;
  feeds_[robot_id].channels[ch].viewers.insert(viewer);
}

void Delivery::remove(SessionId viewer, ViewerSubs& subs, std::string ch, bool reset, Outbox* out) {
  auto it = subs.by_channel.find(ch);
  if (it == subs.by_channel.end()) return;
  if (reset)
    drop_streams(viewer, it->second, *out);
  else
    forget_streams(it->second);
  subs.by_channel.erase(it);
  auto fit = feeds_.find(subs.robot_id);
  if (fit == feeds_.end()) return;
  auto cit = fit->second.channels.find(ch);
  if (cit != fit->second.channels.end()) cit->second.viewers.erase(viewer);
}

void Delivery::unsubscribe(SessionId viewer, const std::string& ch, Outbox& out) {
  auto it = viewers_.find(viewer);
  if (it == viewers_.end()) return;
  remove(viewer, it->second, ch, true, &out);
  if (it->second.by_channel.empty()) viewers_.erase(it);
}

bool Delivery::unsubscribe_all(SessionId viewer, Outbox& out) {
  auto it = viewers_.find(viewer);
  if (it == viewers_.end()) return false;
  while (!it->second.by_channel.empty())
    remove(viewer, it->second, it->second.by_channel.begin()->first, true, &out);
  viewers_.erase(it);
  return true;
}

bool Delivery::viewer_left(SessionId viewer) {
  auto it = viewers_.find(viewer);
  if (it == viewers_.end()) return false;
  while (!it->second.by_channel.empty())
    remove(viewer, it->second, it->second.by_channel.begin()->first, false, nullptr);
  viewers_.erase(it);
  return true;
}

std::vector<std::string> Delivery::wanted(
    const std::string& robot_id, const std::map<std::string, ChannelInfo>& channels) const {
  std::vector<std::string> chs;
  auto fit = feeds_.find(robot_id);
  if (fit == feeds_.end()) return chs;
  for (const auto& [ch, feed] : fit->second.channels) {
    if (!feed.viewers.empty() && channels.count(ch)) chs.push_back(ch);
  }
  return chs;
}

void Delivery::rebaseline(const std::string& robot_id,
                          const std::map<std::string, ChannelInfo>& channels, Outbox& out) {
  auto fit = feeds_.find(robot_id);
  if (fit == feeds_.end()) return;
  std::vector<std::pair<SessionId, std::string>> gone;
  for (const auto& [ch, feed] : fit->second.channels) {
    auto cit = channels.find(ch);
    for (SessionId v : feed.viewers) {
      auto vit = viewers_.find(v);
      if (vit == viewers_.end()) continue;
      auto sit = vit->second.by_channel.find(ch);
      if (sit == vit->second.by_channel.end()) continue;
      if (cit == channels.end() || cit->second.tx || cit->second.delivery != sit->second.mode)
        gone.emplace_back(v, ch);
    }
  }
  for (const auto& [v, ch] : gone) unsubscribe(v, ch, out);
}

void Delivery::robot_left(const std::string& robot_id) {
  auto fit = feeds_.find(robot_id);
  if (fit == feeds_.end()) return;
  fit->second.frames_on_track = 0;
  for (auto it = fit->second.channels.begin(); it != fit->second.channels.end();) {
    if (it->second.viewers.empty()) {
      it = fit->second.channels.erase(it);
      continue;
    }
    it->second.seen = false;
    it->second.counters = ChannelCounters{};
    it->second.last_seq.reset();
    it->second.held.clear();
    it->second.held_bytes = 0;
    ++it;
  }
  fit->second.holding.clear();
  if (fit->second.channels.empty()) feeds_.erase(fit);
}

// --- frames -------------------------------------------------------------------------------------

namespace {

SharedBytes frame_bytes(const wire::DataFrame& f) {
  Bytes bytes;
  bytes.reserve(wire::kDataPrefixBytes + f.header_json.size + f.payload.size);
  append_u32_le(bytes, std::uint32_t(f.header_json.size));
  append_u32_le(bytes, std::uint32_t(f.payload.size));
  append(bytes, f.header_json);
  append(bytes, f.payload);
  return share(std::move(bytes));
}

// Whether a frame that came on `origin` must wait for an earlier stream.
bool may_wait(StreamId origin, StreamId oldest_pending) {
  return oldest_pending != 0 && oldest_pending < origin;
}

}  // namespace

void Delivery::on_frame(const std::string& robot_id, const ChannelInfo& info,
                        const wire::DataFrame& f, StreamId origin, StreamId oldest_pending,
                        Sessions& sessions, Outbox& out, TimeMs now) {
  RobotFeed& rf = feeds_[robot_id];
  if (info.track) {  // never forwarded, only counted (§ WebRTC video)
    ++rf.frames_on_track;
    rf.channels[f.header.ch].seen = true;
    return;
  }
  ChannelFeed& feed = rf.channels[f.header.ch];
  feed.seen = true;
  const std::int64_t seq = f.header.seq;
  if (info.delivery == wire::Delivery::latest) {
    // Consumers keep the newest by seq; an older frame that arrives late is not worth sending.
    if (feed.last_seq && seq <= *feed.last_seq) {
      ++feed.counters.dropped;
      return;
    }
    feed.last_seq = seq;
    if (feed.viewers.empty()) return;
    fan_out(f.header.ch, info.delivery, feed, frame_bytes(f), sessions, out, now);
    return;
  }
  // Reliable data is never dropped by seq: a frame at or below the last one forwarded (a robot
  // that restarted its count, a stream opened out of order) goes on as it comes.
  const bool behind = feed.last_seq && seq <= *feed.last_seq;
  const bool next = feed.last_seq && seq == *feed.last_seq + 1;
  if (behind || (feed.held.empty() && (next || !may_wait(origin, oldest_pending)))) {
    if (!behind) feed.last_seq = seq;
    if (!feed.viewers.empty())
      fan_out(f.header.ch, info.delivery, feed, frame_bytes(f), sessions, out, now);
    return;
  }
  auto [it, fresh] = feed.held.try_emplace(seq, Held{origin, frame_bytes(f)});
  if (!fresh) {  // the same seq twice while waiting: this copy goes on as it comes
    if (!feed.viewers.empty())
      fan_out(f.header.ch, info.delivery, feed, frame_bytes(f), sessions, out, now);
    return;
  }
  feed.held_bytes += it->second.frame->size();
  if (release(f.header.ch, feed, oldest_pending, sessions, out))
    rf.holding.insert(f.header.ch);
  else
    rf.holding.erase(f.header.ch);
}

bool Delivery::release(const std::string& ch, ChannelFeed& feed, StreamId oldest_pending,
                       Sessions& sessions, Outbox& out) {
  while (!feed.held.empty()) {
    auto it = feed.held.begin();
    const bool over = feed.held.size() > kReorderMaxFrames || feed.held_bytes > kReorderMaxBytes;
    const bool next = feed.last_seq && it->first == *feed.last_seq + 1;
    if (!over && !next && may_wait(it->second.origin, oldest_pending)) return true;
    SharedBytes frame = std::move(it->second.frame);
    feed.held_bytes -= frame->size();
    feed.last_seq = it->first;
    feed.held.erase(it);
    if (!feed.viewers.empty())
      fan_out(ch, wire::Delivery::reliable, feed, frame, sessions, out, TimeMs(0));
  }
  return false;
}

bool Delivery::holding(const std::string& robot_id) const {
  auto fit = feeds_.find(robot_id);
  return fit != feeds_.end() && !fit->second.holding.empty();
}

void Delivery::release_held(const std::string& robot_id, StreamId oldest_pending,
                            Sessions& sessions, Outbox& out) {
  auto fit = feeds_.find(robot_id);
  if (fit == feeds_.end()) return;
  RobotFeed& rf = fit->second;
  for (auto it = rf.holding.begin(); it != rf.holding.end();) {
    auto cit = rf.channels.find(*it);
    if (cit == rf.channels.end() || !release(*it, cit->second, oldest_pending, sessions, out))
      it = rf.holding.erase(it);
    else
      ++it;
  }
}

void Delivery::fan_out(const std::string& ch, wire::Delivery mode, ChannelFeed& feed,
                       const SharedBytes& frame, Sessions& sessions, Outbox& out, TimeMs now) {
  std::vector<SessionId> overflowed;
  for (SessionId v : feed.viewers) {
    const Session* vs = sessions.find(v);
    if (!vs || vs->closing) continue;
    auto vit = viewers_.find(v);
    if (vit == viewers_.end()) continue;
    auto sit = vit->second.by_channel.find(ch);
    if (sit == vit->second.by_channel.end()) continue;
    if (mode == wire::Delivery::latest) {
      deliver_latest(v, ch, sit->second, frame, feed.counters, now, out);
    } else if (!deliver_reliable(v, ch, sit->second, frame, feed.counters, out)) {
      overflowed.push_back(v);
    }
  }
  for (SessionId v : overflowed) {
    if (Session* vs = sessions.find(v))
      sessions.fail(*vs, std::nullopt,
                    "reliable queue overflow on channel " + ch + " (" +
                        std::to_string(kReliableMaxFrames) +
                        " frames or 16 MiB): the viewer reads too slowly; reconnect",
                    out);
  }
}

// --- streams ------------------------------------------------------------------------------------

void Delivery::open_stream(SessionId viewer, const std::string& ch, wire::Delivery mode,
                           StreamId st, Outbox& out) {
  outgoing_[st] = {viewer, ch};
  CockpitAction& a = out.push(ActionKind::open_stream, viewer, st);
  a.ch = ch;
  a.delivery = mode;
  a.send_order = out.next_send_order();
}

void Delivery::end_stream(SessionId viewer, StreamId st, StreamEnd why, Outbox& out) {
  outgoing_.erase(st);
  out.reset(viewer, st, why);
}

void Delivery::erase_live(Sub& sub, std::map<StreamId, LatestStream>::iterator it) {
  if (!it->second.writing) reap_.erase({it->second.started_ms + kLatestStaleMs, it->first});
  sub.live.erase(it);
}

void Delivery::forget_streams(Sub& sub) {
  if (sub.creating) outgoing_.erase(sub.creating);
  while (!sub.live.empty()) {
    outgoing_.erase(sub.live.begin()->first);
    erase_live(sub, sub.live.begin());
  }
  if (sub.stream) outgoing_.erase(sub.stream);
  sub.creating = 0;
  sub.stream = 0;
}

void Delivery::drop_streams(SessionId viewer, Sub& sub, Outbox& out) {
  if (sub.creating) end_stream(viewer, sub.creating, StreamEnd::closing, out);
  for (const auto& [st, ls] : sub.live) end_stream(viewer, st, StreamEnd::closing, out);
  if (sub.stream) end_stream(viewer, sub.stream, StreamEnd::closing, out);
  forget_streams(sub);
}

void Delivery::reap(SessionId viewer, Sub& sub, ChannelCounters& counters, TimeMs now,
                    Outbox& out) {
  for (auto it = sub.live.begin(); it != sub.live.end();) {
    auto next = std::next(it);
    if (!it->second.writing && now - it->second.started_ms >= kLatestStaleMs) {
      end_stream(viewer, it->first, StreamEnd::expired, out);
      ++counters.expired;
      erase_live(sub, it);
    }
    it = next;
  }
}

void Delivery::deliver_latest(SessionId viewer, const std::string& ch, Sub& sub,
                              const SharedBytes& frame, ChannelCounters& counters, TimeMs now,
                              Outbox& out) {
  reap(viewer, sub, counters, now, out);
  if (sub.creating) {
    // The wedged send: its payload binds only when creation ends, so supersede it in place.
    if (sub.creating_payload) ++counters.dropped;
    sub.creating_payload = frame;
    return;
  }
  // A write-wedged stream at least one stale window old is reset, once per window, and the
  // newest goes out on a fresh stream.
  if (now - sub.last_abort_ms >= kLatestStaleMs) {
    for (auto it = sub.live.begin(); it != sub.live.end(); ++it) {
      if (it->second.writing && now - it->second.started_ms >= kLatestStaleMs) {
        end_stream(viewer, it->first, StreamEnd::aborted, out);
        ++counters.aborted;
        erase_live(sub, it);
        sub.last_abort_ms = now;
        break;
      }
    }
  }
  std::size_t writing = 0;
  for (const auto& [st, ls] : sub.live) writing += ls.writing ? 1 : 0;
  if (writing >= kMaxLatestWritesInFlight) {
    if (sub.parked) ++counters.dropped;
    sub.parked = frame;
    return;
  }
  sub.creating = out.new_stream();
  sub.creating_payload = frame;
  open_stream(viewer, ch, wire::Delivery::latest, sub.creating, out);
}

bool Delivery::deliver_reliable(SessionId viewer, const std::string& ch, Sub& sub,
                                const SharedBytes& frame, ChannelCounters& counters, Outbox& out) {
  const std::size_t n = frame->size();
  if (sub.queue.size() + 1 > kReliableMaxFrames ||
      (!sub.queue.empty() && sub.queued_bytes + n > kReliableMaxBytes)) {
    counters.dropped += sub.queue.size() + 1;
    return false;
  }
  sub.queue.push_back(frame);
  sub.queued_bytes += n;
  if (!sub.stream) {
    sub.stream = out.new_stream();
    sub.open = false;
    open_stream(viewer, ch, wire::Delivery::reliable, sub.stream, out);
  }
  pump_reliable(viewer, sub, &counters, out);
  return true;
}

void Delivery::pump_reliable(SessionId viewer, Sub& sub, ChannelCounters* counters, Outbox& out) {
  // A few writes in flight keep the stream busy without waiting a round trip per frame; the
  // transport completes them in order.
  while (sub.open && sub.writing < kReliableWritesInFlight && sub.writing < sub.queue.size()) {
    if (counters) ++counters->sent;
    out.push(ActionKind::write_stream, viewer, sub.stream).bytes = sub.queue[sub.writing];
    ++sub.writing;
  }
}

ChannelCounters* Delivery::counters_of(const std::string& robot_id, const std::string& ch) {
  auto fit = feeds_.find(robot_id);
  if (fit == feeds_.end()) return nullptr;
  auto cit = fit->second.channels.find(ch);
  return cit == fit->second.channels.end() ? nullptr : &cit->second.counters;
}

std::optional<Delivery::Located> Delivery::locate(StreamId st) {
  auto it = outgoing_.find(st);
  if (it == outgoing_.end()) return std::nullopt;
  auto vit = viewers_.find(it->second.first);
  if (vit == viewers_.end()) return std::nullopt;
  auto sit = vit->second.by_channel.find(it->second.second);
  if (sit == vit->second.by_channel.end()) return std::nullopt;
  return Located{it->second.first, &sit->first, &sit->second,
                 counters_of(vit->second.robot_id, sit->first)};
}

bool Delivery::stream_opened(StreamId st, TimeMs now, Outbox& out) {
  auto at = locate(st);
  if (!at) return outgoing_.count(st) > 0;
  Sub& sub = *at->sub;
  if (sub.mode == wire::Delivery::reliable) {
    if (sub.stream != st) return true;
    sub.open = true;
    pump_reliable(at->viewer, sub, at->counters, out);
    return true;
  }
  if (sub.creating != st) return true;
  sub.creating = 0;
  SharedBytes payload = std::move(sub.creating_payload);
  sub.creating_payload.reset();
  if (!payload) {
    end_stream(at->viewer, st, StreamEnd::closing, out);
    return true;
  }
  sub.live[st] = LatestStream{true, now};
  if (at->counters) ++at->counters->sent;
  out.push(ActionKind::write_stream, at->viewer, st).bytes = std::move(payload);
  return true;
}

bool Delivery::write_done(StreamId st, TimeMs now, Outbox& out) {
  (void)now;
  auto at = locate(st);
  if (!at) return outgoing_.count(st) > 0;
  Sub& sub = *at->sub;
  if (sub.mode == wire::Delivery::reliable) {
    if (sub.stream != st || sub.writing == 0 || sub.queue.empty()) return true;
    sub.queued_bytes -= sub.queue.front()->size();
    sub.queue.pop_front();
    --sub.writing;
    pump_reliable(at->viewer, sub, at->counters, out);
    return true;
  }
  auto it = sub.live.find(st);
  if (it == sub.live.end() || !it->second.writing) return true;
  // It stays open until it is reaped: latest streams end in RESET (workaround 12).
  it->second.writing = false;
  reap_.emplace(it->second.started_ms + kLatestStaleMs, st);
  if (sub.parked && !sub.creating) {
    sub.creating = out.new_stream();
    sub.creating_payload = std::move(sub.parked);
    sub.parked.reset();
    open_stream(at->viewer, *at->ch, wire::Delivery::latest, sub.creating, out);
  }
  return true;
}

SessionId Delivery::owner(StreamId st) const {
  auto it = outgoing_.find(st);
  return it == outgoing_.end() ? 0 : it->second.first;
}

std::size_t Delivery::writes_outstanding(StreamId st) const {
  auto it = outgoing_.find(st);
  if (it == outgoing_.end()) return 0;
  auto vit = viewers_.find(it->second.first);
  if (vit == viewers_.end()) return 0;
  auto sit = vit->second.by_channel.find(it->second.second);
  if (sit == vit->second.by_channel.end()) return 0;
  const Sub& sub = sit->second;
  if (sub.mode == wire::Delivery::reliable) return sub.stream == st ? sub.writing : 0;
  auto lit = sub.live.find(st);
  return lit != sub.live.end() && lit->second.writing ? 1 : 0;
}

bool Delivery::stream_failed(StreamId st, Sessions& sessions, Outbox& out) {
  auto at = locate(st);
  const bool ours = outgoing_.erase(st) > 0;
  if (!at) return ours;
  Sub& sub = *at->sub;
  if (sub.mode == wire::Delivery::reliable) {
    // The ordered stream is gone, and with it the order: the viewer must resubscribe.
    if (sub.stream == st) {
      if (Session* v = sessions.find(at->viewer))
        sessions.fail(
            *v, std::nullopt,
            "the reliable stream for channel " + *at->ch + " failed; reconnect to resume it", out);
    }
    return true;
  }
  if (sub.creating == st) {
    sub.creating = 0;
    if (sub.creating_payload && at->counters) ++at->counters->dropped;
    sub.creating_payload.reset();
  }
  auto it = sub.live.find(st);
  if (it != sub.live.end()) erase_live(sub, it);
  return true;
}

// --- time ---------------------------------------------------------------------------------------

Timeout Delivery::poll_timeout() const {
  if (reap_.empty()) return std::nullopt;
  return reap_.begin()->first;
}

void Delivery::handle_timeout(TimeMs now, Outbox& out) {
  // An idle input stops offering, so stale streams are reaped at their deadline (workaround 12).
  while (!reap_.empty() && reap_.begin()->first <= now) {
    const StreamId st = reap_.begin()->second;
    auto at = locate(st);
    if (!at) {
      reap_.erase(reap_.begin());
      continue;
    }
    auto it = at->sub->live.find(st);
    if (it == at->sub->live.end()) {
      reap_.erase(reap_.begin());
      continue;
    }
    end_stream(at->viewer, st, StreamEnd::expired, out);
    if (at->counters) ++at->counters->expired;
    erase_live(*at->sub, it);
  }
}

// --- counters -----------------------------------------------------------------------------------

ChannelCounters Delivery::counters(const std::string& robot_id, const std::string& ch) const {
  auto fit = feeds_.find(robot_id);
  if (fit == feeds_.end()) return {};
  auto cit = fit->second.channels.find(ch);
  return cit == fit->second.channels.end() ? ChannelCounters{} : cit->second.counters;
}

Json Delivery::channel_stats(const std::string& robot_id) const {
  Json chs = Json::object();
  auto fit = feeds_.find(robot_id);
  if (fit == feeds_.end()) return chs;
  for (const auto& [ch, feed] : fit->second.channels) {
    if (!feed.seen) continue;
    const ChannelCounters& c = feed.counters;
    Json cj = Json::object();
    cj["sent"] = c.sent;
    cj["dropped"] = c.dropped;
    cj["expired"] = c.expired;
    cj["aborted"] = c.aborted;
    chs[ch] = std::move(cj);
  }
  return chs;
}

std::uint64_t Delivery::frames_on_track(const std::string& robot_id) const {
  auto fit = feeds_.find(robot_id);
  return fit == feeds_.end() ? 0 : fit->second.frames_on_track;
}

}  // namespace tether::cockpit
