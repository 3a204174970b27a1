// The HTTP form of the explicit relay transport: the relay's member sessions and the peer's link
// (http_member.hpp says the protocol; docs/agent-bus.md § HTTP relay transport says it for users).
#include "room/http_member.hpp"

#include <algorithm>
#include <charconv>

#include "common/json.hpp"

namespace tether::room {
namespace {

constexpr std::size_t kTokenChars = kHttpSessionBytes * 2;

std::string hex(ByteView b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(b.size * 2);
  for (std::size_t i = 0; i < b.size; i++) {
    std::uint8_t c = b.data[i];
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

bool is_token(std::string_view s) {
  return s.size() == kTokenChars && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// A decimal up to 2^53 - 1 (what a JS peer can count to), digits only.
std::optional<std::uint64_t> decimal(std::string_view s) {
  if (s.empty() || s.size() > 16) return std::nullopt;
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  if (v > static_cast<std::uint64_t>(kMaxSafeInteger)) return std::nullopt;
  return v;
}

void append_number(std::string& out, std::uint64_t v) {
  out += std::to_string(v);
}

}  // namespace

const char* http_error_name(HttpError e) {
  switch (e) {
    case HttpError::none: return "none";
    case HttpError::bad_request: return "bad_request";
    case HttpError::bad_cursor: return "bad_cursor";
    case HttpError::unknown_session: return "unknown_session";
    case HttpError::method: return "method";
    case HttpError::out_of_order: return "out_of_order";
    case HttpError::gone: return "gone";
    case HttpError::too_large: return "too_large";
    case HttpError::room_full: return "room_full";
    case HttpError::host_full: return "host_full";
    case HttpError::ticket_expired: return "ticket_expired";
    case HttpError::wrong_writer: return "wrong_writer";
  }
  return "unknown";
}

int http_error_status(HttpError e) {
  switch (e) {
    case HttpError::none: return 200;
    case HttpError::bad_request:
    case HttpError::bad_cursor: return 400;
    case HttpError::unknown_session: return 404;
    case HttpError::method: return 405;
    case HttpError::out_of_order: return 409;
    case HttpError::gone: return 410;
    case HttpError::too_large: return 413;
    case HttpError::room_full: return 429;
    case HttpError::host_full: return 503;
    case HttpError::ticket_expired: return 401;
    case HttpError::wrong_writer: return 403;
  }
  return 500;
}

const char* http_error_fix(HttpError e) {
  switch (e) {
    case HttpError::none: return "";
    case HttpError::bad_request:
      return "the request is not one the HTTP relay transport reads (session= 32 hex digits, seq= "
             "and cursor= decimal, one non-empty frame as a send's body); use a tether client";
    case HttpError::bad_cursor:
      return "the cursor is past the last frame the relay sent; resume from the cursor of the last "
             "receive response";
    case HttpError::unknown_session:
      return "no such HTTP member in this room (it closed, sat idle past the expiry, or the relay "
             "restarted); open a new session with a ticket";
    case HttpError::method: return "open, send and close are POST, recv is GET";
    case HttpError::out_of_order:
      return "a send skipped a sequence number; send one frame at a time, each seq one above the "
             "last acknowledged";
    case HttpError::gone:
      return "the frames after this cursor were dropped; open a new session (the room resends its "
             "state on join)";
    case HttpError::too_large:
      return "the body is over the HTTP relay transport's bound; send smaller frames";
    case HttpError::room_full:
      return "this room has the most HTTP members it takes; use a WebSocket or retry later";
    case HttpError::host_full: return "this relay has the most HTTP members it takes; retry later";
    case HttpError::ticket_expired:
      return "the ticket this HTTP member was opened with has expired, so its session is over; "
             "get a fresh ticket and open a new session";
    case HttpError::wrong_writer:
      return "the ticket names another writer than the one this session was opened for; each call "
             "carries the ticket of the session's own writer";
  }
  return "";
}

HttpOp http_op(std::string_view name) {
  if (name == "open") return HttpOp::open;
  if (name == "send") return HttpOp::send;
  if (name == "recv") return HttpOp::recv;
  if (name == "close") return HttpOp::close;
  return HttpOp::unknown;
}

HttpQuery parse_http_query(std::string_view query) {
  HttpQuery q;
  if (query.size() > kMaxHttpQueryBytes) {
    q.error = HttpError::bad_request;
    return q;
  }
  bool have_session = false;
  while (!query.empty()) {
    std::size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    std::size_t eq = pair.find('=');
    std::string_view key = pair.substr(0, eq);
    std::string_view value =
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    bool dup = false, bad = false;
    if (key == "session") {
      dup = have_session;
      bad = eq == std::string_view::npos || !is_token(value);
      have_session = true;
      q.session = std::string(value);
    } else if (key == "seq" || key == "cursor") {
      std::optional<std::uint64_t>& slot = key == "seq" ? q.seq : q.cursor;
      dup = slot.has_value();
      slot = decimal(value);
      bad = !slot.has_value();
    }
    if (dup || bad) {
      q.error = HttpError::bad_request;
      return q;
    }
  }
  return q;
}

const char* http_action_name(HttpAction::Kind k) {
  switch (k) {
    case HttpAction::Kind::respond: return "respond";
    case HttpAction::Kind::attach: return "attach";
    case HttpAction::Kind::deliver: return "deliver";
    case HttpAction::Kind::detach: return "detach";
  }
  return "unknown";
}

const char* http_link_event_name(HttpLinkEvent::Kind k) {
  switch (k) {
    case HttpLinkEvent::Kind::open: return "open";
    case HttpLinkEvent::Kind::message: return "message";
    case HttpLinkEvent::Kind::closed: return "closed";
  }
  return "unknown";
}

// --- HttpMembers --------------------------------------------------------------------------------

void HttpMembers::respond(std::uint32_t req, int status, std::string body) {
  HttpAction& a = actions_.emplace();
  a.kind = HttpAction::Kind::respond;
  a.req = req;
  a.status = status;
  a.body = std::move(body);
}

void HttpMembers::refuse(std::uint32_t req, HttpError e) {
  stats_.refused++;
  std::string body = http_error_name(e);
  body += ": ";
  body += http_error_fix(e);
  body += '\n';
  respond(req, http_error_status(e), std::move(body));
}

void HttpMembers::set_deadline(Session& s, TimeMs at) {
  if (s.ticket_expires) at = std::min(at, s.ticket_expires);  // the ticket's end ends it first
  deadlines_.erase({s.deadline, s.token});
  s.deadline = at;
  deadlines_.insert({at, s.token});
}

HttpMembers::Session* HttpMembers::find(std::string_view token, std::string_view room) {
  auto it = sessions_.find(std::string(token));
  if (it == sessions_.end() || it->second.room != room) return nullptr;
  return &it->second;
}

std::size_t HttpMembers::members_in(std::string_view room) const {
  auto it = per_room_.find(room);
  return it == per_room_.end() ? 0 : it->second;
}

std::size_t HttpMembers::queued_bytes(std::string_view session) const {
  auto it = sessions_.find(std::string(session));
  return it == sessions_.end() ? 0 : it->second.queue_bytes;
}

void HttpMembers::handle_open(std::uint32_t req, std::string_view room, ByteView random, TimeMs now,
                              std::string_view writer, TimeMs ticket_expires) {
  if (random.size != kHttpSessionBytes) return refuse(req, HttpError::bad_request);
  if (ticket_expires && ticket_expires <= now) return refuse(req, HttpError::ticket_expired);
  if (sessions_.size() >= kMaxHttpMembers) return refuse(req, HttpError::host_full);
  if (members_in(room) >= kMaxHttpMembersPerRoom) return refuse(req, HttpError::room_full);
  std::string token = hex(random);
  if (sessions_.count(token)) return refuse(req, HttpError::host_full);  // a broken CSPRNG
  Session& s = sessions_[token];
  s.token = token;
  s.room = std::string(room);
  s.writer = std::string(writer);
  s.ticket_expires = ticket_expires;
  s.last_seen = now;
  set_deadline(s, now + kHttpIdleMs);
  per_room_[s.room]++;
  stats_.opened++;
  HttpAction& a = actions_.emplace();
  a.kind = HttpAction::Kind::attach;
  a.req = req;  // the host attaches the identity its ticket check gave this request
  a.session = token;
  a.room = s.room;
  std::string body = "{\"session\":\"" + token + "\",\"pollWaitMs\":";
  append_number(body, kHttpPollWaitMs);
  body += ",\"idleMs\":";
  append_number(body, kHttpIdleMs);
  body += ",\"maxBodyBytes\":";
  append_number(body, kMaxHttpBodyBytes);
  body += '}';
  respond(req, 200, std::move(body));
}

void HttpMembers::handle_request(std::uint32_t req, std::string_view method, std::string_view room,
                                 std::string_view op_name, std::string_view query, ByteView body,
                                 TimeMs now, std::string_view writer, TimeMs ticket_expires) {
  // Bounds first: nothing of an oversized body is looked at.
  if (body.size > kMaxHttpBodyBytes) return refuse(req, HttpError::too_large);
  HttpOp op = http_op(op_name);
  if (op == HttpOp::unknown || op == HttpOp::open) return refuse(req, HttpError::bad_request);
  if ((op == HttpOp::recv) != (method == "GET") || (method != "GET" && method != "POST"))
    return refuse(req, HttpError::method);
  HttpQuery q = parse_http_query(query);
  if (q.error != HttpError::none) return refuse(req, q.error);
  if (q.session.empty()) return refuse(req, HttpError::bad_request);
  Session* s = find(q.session, room);
  if (!s) return refuse(req, HttpError::unknown_session);
  if (!writer.empty() && !s->writer.empty() && writer != s->writer)
    return refuse(req, HttpError::wrong_writer);  // the session goes on: the caller is not it
  if (ticket_expires > s->ticket_expires && s->ticket_expires) s->ticket_expires = ticket_expires;
  if (s->ticket_expires && s->ticket_expires <= now) {
    stats_.expired++;
    forget(s->token, kHttpCloseTicket, "the ticket of the HTTP member expired", true);
    return refuse(req, HttpError::ticket_expired);
  }
  s->last_seen = now;
  if (!s->poll) set_deadline(*s, now + kHttpIdleMs);

  switch (op) {
    case HttpOp::send: {
      if (!q.seq || *q.seq == 0 || body.empty()) return refuse(req, HttpError::bad_request);
      if (*q.seq > s->received + 1) return refuse(req, HttpError::out_of_order);
      if (*q.seq == s->received + 1 && !s->closed) {
        s->received = *q.seq;
        stats_.delivered++;
        HttpAction& a = actions_.emplace();
        a.kind = HttpAction::Kind::deliver;
        a.session = s->token;
        a.text = std::string(body.as_chars());
      } else if (*q.seq == s->received + 1) {
        s->received = *q.seq;  // the member is closed: the frame goes nowhere, the recv says why
      }
      std::string out = "{\"seq\":";
      append_number(out, *q.seq);
      out += '}';
      return respond(req, 200, std::move(out));
    }
    case HttpOp::recv: {
      if (!q.cursor) return refuse(req, HttpError::bad_request);
      std::uint64_t acked = s->first - 1;
      if (*q.cursor < acked) return refuse(req, HttpError::gone);
      if (*q.cursor > acked + s->queue.size()) return refuse(req, HttpError::bad_cursor);
      while (s->first <= *q.cursor) {
        s->queue_bytes -= s->queue.front().size();
        s->queue.pop_front();
        s->first++;
      }
      if (s->poll) {
        // A newer receive replaces a parked one (the client gave up on it): it gets nothing.
        std::uint32_t old = *s->poll;
        s->poll.reset();
        answer_poll(*s, old, true);
      }
      if (!answer_poll(*s, req, false)) {
        s->poll = req;
        set_deadline(*s, now + kHttpPollWaitMs);
      }
      return;
    }
    case HttpOp::close: {
      forget(s->token, 1000, "the HTTP member closed", true);
      return respond(req, 200, "{}");
    }
    default: return refuse(req, HttpError::bad_request);
  }
}

bool HttpMembers::answer_poll(Session& s, std::uint32_t req, bool final_if_empty) {
  std::uint64_t cursor = s.first - 1;
  if (s.queue.empty() && !s.closed && !final_if_empty) return false;
  std::string body = "{\"cursor\":";
  std::size_t n = 0, bytes = 0;
  while (n < s.queue.size() && (n == 0 || bytes + s.queue[n].size() <= kMaxHttpPollBytes)) {
    bytes += s.queue[n].size();
    n++;
  }
  append_number(body, cursor + n);
  body += ",\"frames\":[";
  for (std::size_t i = 0; i < n; i++) {
    if (i) body += ',';
    append_json_string(body, s.queue[i]);
  }
  body += ']';
  bool closing = s.closed && n == 0;
  if (closing) {
    body += ",\"closed\":{\"code\":";
    body += std::to_string(s.close_code);
    body += ",\"reason\":";
    append_json_string(body, s.close_reason);
    body += '}';
  }
  body += '}';
  respond(req, 200, std::move(body));
  if (closing) forget(s.token, s.close_code, s.close_reason, false);
  return true;
}

void HttpMembers::forget(const std::string& token, int code, std::string_view reason, bool detach) {
  auto it = sessions_.find(token);
  if (it == sessions_.end()) return;
  Session& s = it->second;
  if (s.poll) {
    std::uint32_t req = *s.poll;
    s.poll.reset();
    if (!s.closed) {
      s.closed = true;
      s.close_code = code;
      s.close_reason = std::string(reason);
    }
    s.queue.clear();
    std::string body = "{\"cursor\":";
    append_number(body, s.first - 1);
    body += ",\"frames\":[],\"closed\":{\"code\":";
    body += std::to_string(s.close_code);
    body += ",\"reason\":";
    append_json_string(body, s.close_reason);
    body += "}}";
    respond(req, 200, std::move(body));
  }
  if (detach) {
    HttpAction& a = actions_.emplace();
    a.kind = HttpAction::Kind::detach;
    a.session = token;
    a.room = s.room;
    a.code = code;
    a.text = std::string(reason);
  }
  auto r = per_room_.find(s.room);
  if (r != per_room_.end() && --r->second == 0) per_room_.erase(r);
  deadlines_.erase({s.deadline, token});
  sessions_.erase(it);
}

void HttpMembers::handle_outbound(std::string_view session, std::string_view text, TimeMs now) {
  (void)now;
  auto it = sessions_.find(std::string(session));
  if (it == sessions_.end() || it->second.closed) return;
  Session& s = it->second;
  if (s.queue.size() >= kMaxHttpQueueFrames || s.queue_bytes + text.size() > kMaxHttpQueueBytes) {
    // Fell behind: the room connection ends (as a slow WebSocket reader's would); what was
    // queued is still fetched, then the receive says closed.
    s.closed = true;
    s.close_code = kHttpCloseSlow;
    s.close_reason = "the HTTP member fell behind the room; reconnect";
    HttpAction& a = actions_.emplace();
    a.kind = HttpAction::Kind::detach;
    a.session = s.token;
    a.room = s.room;
    a.code = s.close_code;
    a.text = s.close_reason;
    if (s.poll) {
      std::uint32_t req = *s.poll;
      s.poll.reset();
      answer_poll(s, req, true);
    }
    return;
  }
  s.queue.emplace_back(text);
  s.queue_bytes += text.size();
  stats_.queued++;
  if (s.poll) {
    std::uint32_t req = *s.poll;
    s.poll.reset();
    set_deadline(s, s.last_seen + kHttpIdleMs);
    answer_poll(s, req, true);
  }
}

void HttpMembers::handle_relay_close(std::string_view session, int code, std::string_view reason,
                                     TimeMs now) {
  (void)now;
  auto it = sessions_.find(std::string(session));
  if (it == sessions_.end() || it->second.closed) return;
  Session& s = it->second;
  s.closed = true;
  s.close_code = code;
  s.close_reason = std::string(reason);
  HttpAction& a = actions_.emplace();
  a.kind = HttpAction::Kind::detach;
  a.session = s.token;
  a.room = s.room;
  a.code = code;
  a.text = s.close_reason;
  if (s.poll) {
    std::uint32_t req = *s.poll;
    s.poll.reset();
    answer_poll(s, req, true);
  }
}

void HttpMembers::handle_timeout(TimeMs now) {
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    std::string token = deadlines_.begin()->second;
    auto it = sessions_.find(token);
    if (it == sessions_.end()) {
      deadlines_.erase(deadlines_.begin());
      continue;
    }
    Session& s = it->second;
    if (s.ticket_expires && s.ticket_expires <= now) {
      // Its ticket ran out: the session ends with it (a parked receive says so).
      stats_.expired++;
      forget(token, kHttpCloseTicket, "the ticket of the HTTP member expired", true);
      continue;
    }
    if (s.poll) {
      // The long-poll's wait is over: an empty answer, and the idle clock starts from now.
      std::uint32_t req = *s.poll;
      s.poll.reset();
      s.last_seen = now;
      set_deadline(s, now + kHttpIdleMs);
      answer_poll(s, req, true);
    } else {
      stats_.expired++;
      forget(token, kHttpCloseIdle, "the HTTP member sat idle past its expiry", true);
    }
  }
}

Timeout HttpMembers::poll_timeout() const {
  if (deadlines_.empty()) return std::nullopt;
  return deadlines_.begin()->first;
}

// --- HttpLink -----------------------------------------------------------------------------------

void HttpLink::handle_start(TimeMs now) {
  (void)now;
  if (state_ != State::idle) return;
  state_ = State::opening;
  issue_open();
}

void HttpLink::issue_open() {
  open_req_ = next_req_++;
  actions_.push(HttpLinkRequest{open_req_, "POST", "open", "", ""});
}

void HttpLink::issue_recv() {
  if (state_ != State::open || recv_req_ || (retrying_ & std::uint8_t(Pending::recv))) return;
  recv_req_ = next_req_++;
  actions_.push(HttpLinkRequest{recv_req_, "GET", "recv",
                                "session=" + session_ + "&cursor=" + std::to_string(cursor_), ""});
}

void HttpLink::issue_send() {
  if (state_ != State::open || send_req_ || queue_.empty() ||
      (retrying_ & std::uint8_t(Pending::send)))
    return;
  send_req_ = next_req_++;
  actions_.push(HttpLinkRequest{send_req_, "POST", "send",
                                "session=" + session_ + "&seq=" + std::to_string(seq_ + 1),
                                queue_.front()});
}

bool HttpLink::send(std::string_view text) {
  if (state_ != State::open || text.empty() || text.size() > kMaxHttpBodyBytes) return false;
  if (queued_bytes_ + text.size() > kMaxHttpLinkQueueBytes) return false;
  queue_.emplace_back(text);
  queued_bytes_ += text.size();
  issue_send();
  return true;
}

void HttpLink::fail(int code, std::string reason) {
  if (state_ == State::closed) return;
  state_ = State::closed;
  retry_at_.reset();
  retrying_ = 0;
  queue_.clear();
  queued_bytes_ = 0;
  HttpLinkEvent& e = events_.emplace();
  e.kind = HttpLinkEvent::Kind::closed;
  e.code = code;
  e.text = std::move(reason);
}

bool HttpLink::retry(Pending which, TimeMs now) {
  if (++failures_ > kHttpMaxRetries) return false;
  retrying_ |= std::uint8_t(which);
  retry_at_ = now + kHttpRetryMs;
  return true;
}

void HttpLink::handle_timeout(TimeMs now) {
  if (!retry_at_ || now < *retry_at_ || state_ == State::closed) return;
  retry_at_.reset();
  std::uint8_t bits = retrying_;
  retrying_ = 0;
  if (bits & std::uint8_t(Pending::open)) issue_open();
  if (bits & std::uint8_t(Pending::send)) issue_send();
  if (bits & std::uint8_t(Pending::recv)) issue_recv();
}

void HttpLink::close() {
  if (state_ == State::open)
    actions_.push(HttpLinkRequest{next_req_++, "POST", "close", "session=" + session_, ""});
  state_ = State::closed;
  retry_at_.reset();
  retrying_ = 0;
}

namespace {
bool retryable(int status) {
  return status == 0 || status == 502 || status == 503 || status == 504;
}

std::string refusal_text(int status, std::string_view body) {
  std::string out = "the HTTP relay answered ";
  out += status == 0 ? std::string("nothing (the request failed)") : std::to_string(status);
  if (!body.empty()) {
    out += ": ";
    out.append(body.substr(0, std::min<std::size_t>(body.size(), 512)));
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  }
  return out;
}
}  // namespace

void HttpLink::handle_response(std::uint32_t req, int status, std::string_view body, TimeMs now) {
  if (state_ == State::closed || req == 0) return;
  ByteView bytes(body);
  if (req == open_req_) {
    open_req_ = 0;
    if (status != 200) {
      if (retryable(status) && retry(Pending::open, now)) return;
      return fail(status == 0 ? 1006 : status, refusal_text(status, body));
    }
    JsonParse p = parse_json(bytes);
    const Json* session = p.ok() && p.value.is_object() && p.value.contains("session")
                              ? &p.value["session"]
                              : nullptr;
    std::optional<std::string_view> token = session ? json_string(*session) : std::nullopt;
    if (!token || !is_token(*token))
      return fail(1002, "the HTTP relay's open response names no session; is this a tether relay?");
    failures_ = 0;
    session_ = std::string(*token);
    state_ = State::open;
    events_.emplace().kind = HttpLinkEvent::Kind::open;
    issue_recv();
    issue_send();
    return;
  }
  if (req == send_req_) {
    send_req_ = 0;
    if (status != 200) {
      if (retryable(status) && retry(Pending::send, now)) return;  // the same seq goes again
      return fail(status == 0 ? 1006 : status, refusal_text(status, body));
    }
    failures_ = 0;
    seq_++;
    queued_bytes_ -= queue_.front().size();
    queue_.pop_front();
    issue_send();
    return;
  }
  if (req == recv_req_) {
    recv_req_ = 0;
    if (status != 200) {
      if (retryable(status) && retry(Pending::recv, now)) return;  // the same cursor resumes
      return fail(status == 0 ? 1006 : status, refusal_text(status, body));
    }
    JsonParse p = parse_json(bytes);
    const char* bad = "the HTTP relay's receive response is not {cursor, frames}";
    if (!p.ok() || !p.value.is_object()) return fail(1002, bad);
    const Json& v = p.value;
    auto c = v.find("cursor");
    auto f = v.find("frames");
    if (c == v.end() || f == v.end() || !f->is_array()) return fail(1002, bad);
    std::optional<std::int64_t> cursor = json_integer(*c, 0, kMaxSafeInteger);
    if (!cursor || static_cast<std::uint64_t>(*cursor) != cursor_ + f->size())
      return fail(1002, "the HTTP relay's receive response skipped or repeated frames");
    for (const Json& frame : *f)
      if (!frame.is_string()) return fail(1002, bad);
    failures_ = 0;
    for (const Json& frame : *f) {
      HttpLinkEvent& e = events_.emplace();
      e.kind = HttpLinkEvent::Kind::message;
      e.text = frame.get_ref<const std::string&>();
    }
    cursor_ = static_cast<std::uint64_t>(*cursor);
    auto closed = v.find("closed");
    if (closed != v.end()) {
      int code = 1000;
      std::string reason;
      if (closed->is_object()) {
        auto cc = closed->find("code");
        if (cc != closed->end()) code = static_cast<int>(json_integer(*cc, 0, 4999).value_or(1000));
        auto rr = closed->find("reason");
        if (rr != closed->end() && rr->is_string()) reason = rr->get_ref<const std::string&>();
      }
      return fail(code, reason);
    }
    issue_recv();
  }
}

}  // namespace tether::room
