#include "cockpit/publish.hpp"

#include <algorithm>
#include <utility>

#include "wire/limits.hpp"

namespace tether::cockpit {

using wire::ErrorCode;

namespace {

// The request id a publish carries in meta.id.
std::optional<std::string> request_id(const wire::FrameHeader& h) {
  if (!h.meta) return std::nullopt;
  auto it = h.meta->find("id");
  if (it == h.meta->end() || !it->is_string()) return std::nullopt;
  const auto& s = it->get_ref<const std::string&>();
  if (s.empty() || s.size() > wire::kMaxIdChars) return std::nullopt;
  return s;
}

}  // namespace

// --- the bounded reader -------------------------------------------------------------------------

ViewerStreamReader::Step ViewerStreamReader::feed(ByteView chunk) {
  Step step;
  std::size_t used = 0;
  while (used < chunk.size) {
    // Take bytes up to the next boundary: the prefix, the header, then the payload.
    std::size_t need = wire::kDataPrefixBytes;
    std::uint32_t hl = 0, pl = 0;
    if (buf_.size() >= wire::kDataPrefixBytes) {
      hl = read_u32_le(buf_.data());
      pl = read_u32_le(buf_.data() + 4);
      need = wire::kDataPrefixBytes + hl;
      if (buf_.size() >= need) need += pl;
    }
    const std::size_t n = std::min(need - buf_.size(), chunk.size - used);
    buf_.insert(buf_.end(), chunk.data + used, chunk.data + used + n);
    used += n;
    if (buf_.size() < need) continue;
    if (need == wire::kDataPrefixBytes) {
      hl = read_u32_le(buf_.data());
      if (hl == 0 || hl > wire::kMaxHeaderBytes) {
        step.status = Status::failed;
        step.error = wire::FrameError::header_too_large;
        return step;
      }
      continue;
    }
    if (buf_.size() == wire::kDataPrefixBytes + hl) {
      auto h = wire::parse_header(ByteView(buf_.data() + wire::kDataPrefixBytes, hl));
      if (!h) {
        step.status = Status::failed;
        step.error = h.error();
        return step;
      }
      if (pl > wire::kMaxPublishBytes && h->ch != wire::kControlChannel) {
        // Refused before the payload is buffered; the rest of the stream is never read.
        step.status = Status::too_large;
        step.header = std::move(h.value());
        return step;
      }
      if (pl > wire::kMaxControlBytes) {
        step.status = Status::failed;
        step.error = wire::FrameError::control_too_large;
        return step;
      }
      if (pl > 0) continue;
    }
    frame_ = std::move(buf_);
    buf_.clear();
    auto f = wire::decode_data_frame(ByteView(frame_));
    if (!f) {
      step.status = Status::failed;
      step.error = f.error();
      return step;
    }
    step.status = Status::frame;
    step.frame = f.value();
    return step;
  }
  return step;
}

// --- publishing ---------------------------------------------------------------------------------

void Publish::nack(Session& viewer, const std::string& ch, const std::string& id, ErrorCode code,
                   const std::string& message, Outbox& out) {
  Json m = Json::object();
  m["t"] = "pub_nack";
  m["ch"] = ch;
  m["id"] = id;
  m["code"] = std::string(wire::error_name(code));
  m["message"] = message;
  out.send(viewer.ep, m);
}

void Publish::too_large(Session& viewer, const wire::FrameHeader& h, Outbox& out) {
  auto id = request_id(h);
  if (!id || wire::is_reserved_channel(h.ch)) return;
  nack(viewer, h.ch, *id, ErrorCode::publish_too_large, "a published value is at most 32 KiB", out);
}

void Publish::on_publish(Session& v, Robot* r, const wire::DataFrame& f, Sessions& sessions,
                         Outbox& out, TimeMs now) {
  const std::string& ch = f.header.ch;
  auto id = request_id(f.header);
  if (!id) {
    out.send_error(v.ep, ErrorCode::invalid_control,
                   "dropped a publish on " + ch +
                       " without meta.id (a request id of 1..128 characters, answered by "
                       "pub_ack or pub_nack)");
    return;
  }
  if (f.payload.size > wire::kMaxPublishBytes) {
    too_large(v, f.header, out);
    return;
  }
  if (v.watching.empty()) {
    nack(v, ch, *id, ErrorCode::no_watch, "watch a robot before publishing", out);
    return;
  }
  if (!r) {
    nack(v, ch, *id, ErrorCode::robot_disconnected, "robot " + v.watching + " is not connected",
         out);
    return;
  }
  auto cit = r->channels.find(ch);
  if (cit == r->channels.end() || !cit->second.tx || !cit->second.publish) {
    nack(v, ch, *id, ErrorCode::not_publishable,
         "channel " + ch + " is not declared with dir tx and publish: true", out);
    return;
  }
  if (cit->second.required_scope &&
      (!v.grant || !v.grant->scopes.count(*cit->second.required_scope))) {
    nack(v, ch, *id, ErrorCode::not_publishable,
         "channel " + ch + " needs a token with scope " + *cit->second.required_scope, out);
    return;
  }
  auto [vit, fresh] = viewers_.try_emplace(v.ep.id);
  ViewerPublishes& vp = vit->second;
  if (fresh) vp.tokens_ms = now;
  if (vp.pending.count(*id)) {
    nack(v, ch, *id, ErrorCode::duplicate_request,
         "request id " + *id + " is still pending; use a fresh id", out);
    return;
  }
  if (vp.pending.size() >= kMaxPendingPublishes) {
    nack(v, ch, *id, ErrorCode::pending_limit,
         "wait for pub_ack or pub_nack: at most " + std::to_string(kMaxPendingPublishes) +
             " publishes may be pending",
         out);
    return;
  }
  // A token bucket per viewer.
  const double elapsed = double(std::max<TimeMs>(0, now - vp.tokens_ms)) / 1000.0;
  vp.tokens = std::min(kPublishBurst, vp.tokens + elapsed * kPublishRatePerSecond);
  vp.tokens_ms = now;
  if (vp.tokens < 1) {
    nack(v, ch, *id, ErrorCode::rate_limited, "publish at most 20 values a second", out);
    return;
  }
  vp.tokens -= 1;
  // The robot sees a relay-assigned id, so two viewers' ids can never collide.
  RobotPublishes& rp = robots_[r->session];
  const std::string relay_id = "r" + std::to_string(++rp.next_request);
  wire::FrameHeader h = f.header;
  (*h.meta)["id"] = relay_id;
  h.delivery = cit->second.delivery;
  Bytes frame;
  if (wire::append_data_frame(frame, h, f.payload)) {
    nack(v, ch, *id, ErrorCode::publish_too_large, "the frame header grew too large", out);
    return;
  }
  rp.pending[relay_id] = Pending{v.ep.id, ch, *id};
  deadlines_.push_back(Deadline{now + kPublishTimeoutMs, r->session, relay_id});
  vp.pending[*id] = relay_id;
  sessions.carrier_write(*r, share(std::move(frame)), out);
}

void Publish::on_answer(const Session& robot, const wire::Message& m, Sessions& sessions,
                        Outbox& out) {
  auto rit = robots_.find(robot.ep.id);
  const std::string& rid = m.body["id"].get_ref<const std::string&>();
  if (rit == robots_.end() || !rit->second.pending.count(rid)) return;  // late, timed out, made up
  auto it = rit->second.pending.find(rid);
  Pending p = std::move(it->second);
  rit->second.pending.erase(it);
  trim();
  Session* v = sessions.find(p.viewer);
  if (!v) return;
  if (auto vit = viewers_.find(p.viewer); vit != viewers_.end())
    vit->second.pending.erase(p.viewer_id);
  Json answer = m.body;
  answer["ch"] = p.ch;
  answer["id"] = p.viewer_id;
  out.send(v->ep, answer);
}

void Publish::robot_left(SessionId robot, Sessions& sessions, Outbox& out) {
  auto rit = robots_.find(robot);
  if (rit == robots_.end()) return;
  for (auto& [rid, p] : rit->second.pending) {
    Session* v = sessions.find(p.viewer);
    if (!v) continue;
    if (auto vit = viewers_.find(p.viewer); vit != viewers_.end())
      vit->second.pending.erase(p.viewer_id);
    nack(*v, p.ch, p.viewer_id, ErrorCode::robot_disconnected,
         "the robot left before answering; publish again when it returns", out);
  }
  robots_.erase(rit);
  trim();
}

void Publish::viewer_left(SessionId viewer) {
  viewers_.erase(viewer);
}

void Publish::trim() {
  while (!deadlines_.empty()) {
    const Deadline& d = deadlines_.front();
    auto rit = robots_.find(d.robot);
    if (rit != robots_.end() && rit->second.pending.count(d.relay_id)) return;
    deadlines_.pop_front();
  }
}

Timeout Publish::poll_timeout() const {
  if (deadlines_.empty()) return std::nullopt;
  return deadlines_.front().at;
}

void Publish::handle_timeout(TimeMs now, Sessions& sessions, Outbox& out) {
  while (!deadlines_.empty() && deadlines_.front().at <= now) {
    Deadline d = std::move(deadlines_.front());
    deadlines_.pop_front();
    auto rit = robots_.find(d.robot);
    if (rit == robots_.end()) continue;
    auto it = rit->second.pending.find(d.relay_id);
    if (it == rit->second.pending.end()) continue;
    Pending p = std::move(it->second);
    rit->second.pending.erase(it);
    Session* v = sessions.find(p.viewer);
    if (!v) continue;
    if (auto vit = viewers_.find(p.viewer); vit != viewers_.end())
      vit->second.pending.erase(p.viewer_id);
    nack(*v, p.ch, p.viewer_id, ErrorCode::publish_timeout,
         "the robot did not answer within 5 s; retry with a new request id", out);
  }
  trim();
}

}  // namespace tether::cockpit
