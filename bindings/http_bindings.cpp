// Embind surface of the HTTP relay transport's cores (src/room/http_member.hpp): the relay's
// member sessions (HttpMembersCore, in the rooms hosts) and the peer's link (HttpLinkCore, in
// web/peer/relay-transport.js). Marshalling only (docs/design.md rule 4); the public API is
// web/glue/http-member.js, driven by web/glue/driver.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "room/http_member.hpp"

namespace tether::room::bindings {
namespace {

using emscripten::val;

class HttpMembersCore {
 public:
  // writer and ticket_expires (Unix ms, 0: none) are those of the ticket the host verified.
  void open(double req, const std::string& room, const std::string& random, double now,
            const std::string& writer, double ticket_expires) {
    m_.handle_open(static_cast<std::uint32_t>(req), room, ByteView(std::string_view(random)),
                   static_cast<TimeMs>(now), writer, static_cast<TimeMs>(ticket_expires));
  }
  void request(double req, const std::string& method, const std::string& room,
               const std::string& op, const std::string& query, const std::string& body, double now,
               const std::string& writer, double ticket_expires) {
    m_.handle_request(static_cast<std::uint32_t>(req), method, room, op, query,
                      ByteView(std::string_view(body)), static_cast<TimeMs>(now), writer,
                      static_cast<TimeMs>(ticket_expires));
  }
  void outbound(const std::string& session, const std::string& text, double now) {
    m_.handle_outbound(session, text, static_cast<TimeMs>(now));
  }
  void relay_close(const std::string& session, int code, const std::string& reason, double now) {
    m_.handle_relay_close(session, code, reason, static_cast<TimeMs>(now));
  }
  void timeout(double now) { m_.handle_timeout(static_cast<TimeMs>(now)); }
  val poll_action() {
    std::optional<HttpAction> a = m_.poll_action();
    if (!a) return val::null();
    val o = val::object();
    o.set("kind", std::string(http_action_name(a->kind)));
    o.set("req", static_cast<double>(a->req));
    o.set("status", a->status);
    o.set("body", a->body);
    o.set("session", a->session);
    o.set("room", a->room);
    o.set("text", a->text);
    o.set("code", a->code);
    return o;
  }
  val poll_timeout() const {
    Timeout t = m_.poll_timeout();
    return t ? val(static_cast<double>(*t)) : val::null();
  }
  double queued_bytes(const std::string& session) const {
    return static_cast<double>(m_.queued_bytes(session));
  }
  double members() const { return static_cast<double>(m_.members()); }
  double members_in(const std::string& room) const {
    return static_cast<double>(m_.members_in(room));
  }

 private:
  HttpMembers m_;
};

class HttpLinkCore {
 public:
  void start(double now) { l_.handle_start(static_cast<TimeMs>(now)); }
  bool send(const std::string& text) { return l_.send(text); }
  void response(double req, int status, const std::string& body, double now) {
    l_.handle_response(static_cast<std::uint32_t>(req), status, body, static_cast<TimeMs>(now));
  }
  void timeout(double now) { l_.handle_timeout(static_cast<TimeMs>(now)); }
  void close() { l_.close(); }
  val poll_action() {
    std::optional<HttpLinkRequest> r = l_.poll_action();
    if (!r) return val::null();
    val o = val::object();
    o.set("req", static_cast<double>(r->req));
    o.set("method", r->method);
    o.set("op", r->op);
    o.set("query", r->query);
    o.set("body", r->body);
    return o;
  }
  val poll_event() {
    std::optional<HttpLinkEvent> e = l_.poll_event();
    if (!e) return val::null();
    val o = val::object();
    o.set("kind", std::string(http_link_event_name(e->kind)));
    o.set("text", e->text);
    o.set("code", e->code);
    return o;
  }
  val poll_timeout() const {
    Timeout t = l_.poll_timeout();
    return t ? val(static_cast<double>(*t)) : val::null();
  }
  bool is_open() const { return l_.is_open(); }
  double buffered_bytes() const { return static_cast<double>(l_.buffered_bytes()); }

 private:
  HttpLink l_;
};

val http_limits() {
  val o = val::object();
  o.set("maxBodyBytes", static_cast<double>(kMaxHttpBodyBytes));
  o.set("maxQueryBytes", static_cast<double>(kMaxHttpQueryBytes));
  o.set("pollWaitMs", static_cast<double>(kHttpPollWaitMs));
  o.set("idleMs", static_cast<double>(kHttpIdleMs));
  o.set("maxMembersPerRoom", static_cast<double>(kMaxHttpMembersPerRoom));
  o.set("maxMembers", static_cast<double>(kMaxHttpMembers));
  o.set("maxQueueBytes", static_cast<double>(kMaxHttpQueueBytes));
  o.set("maxQueueFrames", static_cast<double>(kMaxHttpQueueFrames));
  o.set("maxPollBytes", static_cast<double>(kMaxHttpPollBytes));
  o.set("sessionBytes", static_cast<double>(kHttpSessionBytes));
  o.set("maxRetries", kHttpMaxRetries);
  o.set("retryMs", static_cast<double>(kHttpRetryMs));
  o.set("maxLinkQueueBytes", static_cast<double>(kMaxHttpLinkQueueBytes));
  return o;
}
// The refusal of a request the host cannot hand the core (a body over the bound it stopped
// reading at, a path with no operation): the same status and text the core would answer.
val http_refusal(const std::string& code) {
  for (int i = 1; i < kHttpErrorKinds; i++) {
    auto e = static_cast<HttpError>(i);
    if (code != http_error_name(e)) continue;
    val o = val::object();
    o.set("status", http_error_status(e));
    o.set("body", std::string(http_error_name(e)) + ": " + http_error_fix(e) + "\n");
    return o;
  }
  return val::null();
}

}  // namespace

EMSCRIPTEN_BINDINGS(tether_http) {
  emscripten::class_<HttpMembersCore>("HttpMembersCore")
      .constructor<>()
      .function("open", &HttpMembersCore::open)
      .function("request", &HttpMembersCore::request)
      .function("outbound", &HttpMembersCore::outbound)
      .function("relayClose", &HttpMembersCore::relay_close)
      .function("timeout", &HttpMembersCore::timeout)
      .function("pollAction", &HttpMembersCore::poll_action)
      .function("pollTimeout", &HttpMembersCore::poll_timeout)
      .function("queuedBytes", &HttpMembersCore::queued_bytes)
      .function("members", &HttpMembersCore::members)
      .function("membersIn", &HttpMembersCore::members_in);
  emscripten::class_<HttpLinkCore>("HttpLinkCore")
      .constructor<>()
      .function("start", &HttpLinkCore::start)
      .function("send", &HttpLinkCore::send)
      .function("response", &HttpLinkCore::response)
      .function("timeout", &HttpLinkCore::timeout)
      .function("close", &HttpLinkCore::close)
      .function("pollAction", &HttpLinkCore::poll_action)
      .function("pollEvent", &HttpLinkCore::poll_event)
      .function("pollTimeout", &HttpLinkCore::poll_timeout)
      .function("isOpen", &HttpLinkCore::is_open)
      .function("bufferedBytes", &HttpLinkCore::buffered_bytes);
  emscripten::function("httpLimits", &http_limits);
  emscripten::function("httpRefusal", &http_refusal);
}

}  // namespace tether::room::bindings
