// Embind surface of the HTTP relay transport's peer side (src/room/http_member.hpp): the link a
// peer's relay transport drives (HttpLinkCore, web/peer/relay-transport.js through
// web/glue/http-member.js). Peers only, never the rooms Worker (wasm/module.cmake); the relay's
// side is http_bindings.cpp. Marshalling only (docs/design.md rule 4).
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

}  // namespace

EMSCRIPTEN_BINDINGS(tether_http_link) {
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
}

}  // namespace tether::room::bindings
