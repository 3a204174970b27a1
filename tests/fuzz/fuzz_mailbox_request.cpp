// libFuzzer harness: the mailbox API's request parser and the core behind it (src/mailbox/). The
// input is a flags byte, then requests separated by NUL bytes, each "method \x01 target \x01
// authorization \x01 body". Tokens are replaced with live values so valid requests are reachable:
// $M the mailbox id, $O the owner key, $S an active sender's key, $Q a pending sender's key, $P
// the active pairing's id, $C an open pairing code. The flags pick the clock step between
// requests and whether writes fail. Properties: nothing crashes; the parser's and the front
// door's verdicts agree; every request is answered exactly once, with a JSON body whose `ok`
// matches its status; the core never passes a limit; while writes succeed storage holds exactly
// the core's state, and a core rebuilt from storage alone is the same core.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "common/rng.hpp"
#include "mailbox/mailbox.hpp"

using namespace tether;
using namespace tether::mailbox;

namespace {

struct Host {
  Mailbox core;
  std::map<std::string, std::string> store;
  bool fail_writes = false;
  std::vector<Respond> responses;
  std::size_t accepts = 0;
  TimeMs now = 1'700'000'000'000;

  void drain() {
    while (auto a = core.poll_action()) {
      if (auto* p = std::get_if<Persist>(&*a)) {
        if (!fail_writes) {
          for (const Put& put : p->puts) store[put.key] = put.value;
          for (const std::string& k : p->deletes) store.erase(k);
        }
        core.handle_persisted(p->token, !fail_writes, now);
      } else if (auto* r = std::get_if<Respond>(&*a)) {
        responses.push_back(std::move(*r));
      } else if (std::holds_alternative<AcceptReader>(*a)) {
        ++accepts;
      }
    }
    while (core.poll_event()) {
    }
  }
};

std::string replace_all(std::string s, std::string_view token, const std::string& value) {
  for (std::size_t at = s.find(token); at != std::string::npos;
       at = s.find(token, at + value.size())) {
    s.replace(at, token.size(), value);
  }
  return s;
}

std::string field(const Json& j, const char* k) {
  auto it = j.find(k);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t flags = data[0];
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  static const TimeMs kSteps[8] = {
      0, 1, 999, 60'000, kDayMs, kRetentionMs - 1, kRetentionMs, 3 * kDayMs};
  const TimeMs step = kSteps[flags & 7];

  Host h;
  SeededRng rng(flags);
  auto entropy = [&] {
    Bytes e(kEntropyBytes);
    for (auto& b : e) b = static_cast<std::uint8_t>(rng.below(256));
    return e;
  };
  RequestId next = 1;
  auto call = [&](std::string_view method, const std::string& target, const std::string& auth,
                  const std::string& body) -> Json {
    const std::size_t responses = h.responses.size(), accepts = h.accepts;
    const Bytes e = entropy();
    const RequestId id = next++;
    h.core.handle_request(id, method, target, auth, ByteView(std::string_view(body)), ByteView(e),
                          h.now);
    h.drain();
    // Exactly one answer per request (a response, or an accepted reader).
    if (h.responses.size() + h.accepts != responses + accepts + 1) __builtin_trap();
    if (h.responses.size() == responses) return Json();
    const Respond& r = h.responses.back();
    if (r.request != id) __builtin_trap();
    JsonParse p = parse_json(ByteView(std::string_view(r.body)));
    if (!p.ok() || !p.value.is_object()) __builtin_trap();
    const auto ok = p.value.find("ok");
    if (ok == p.value.end() || !ok->is_boolean() || ok->get<bool>() != (r.status < 400))
      __builtin_trap();
    return p.value;
  };

  // A mailbox with an active sender, a pending one and an open code.
  const Json made = call("POST", "/mailboxes", "", "");
  const std::string id = field(made, "mailbox");
  const std::string base = "/mailboxes/" + id;
  const std::string owner = "Bearer " + field(made, "ownerKey");
  const std::string code1 = field(call("POST", base + "/codes", owner, ""), "code");
  const Json active = call("POST", base + "/pairs", "", R"({"name":"a","code":")" + code1 + "\"}");
  const Json pending = call("POST", base + "/pairs", "", R"({"name":"q"})");
  const std::string code2 = field(call("POST", base + "/codes", owner, ""), "code");
  if (id.empty() || field(active, "senderKey").empty()) __builtin_trap();
  h.fail_writes = flags & 8;

  std::size_t start = 0;
  for (int n = 0; n < 64 && start <= input.size(); ++n) {
    std::size_t end = input.find('\0', start);
    if (end == std::string_view::npos) end = input.size();
    std::string req(input.substr(start, end - start));
    start = end + 1;
    for (auto [token, value] : {std::pair<std::string_view, std::string>{"$M", id},
                                {"$O", field(made, "ownerKey")},
                                {"$S", field(active, "senderKey")},
                                {"$Q", field(pending, "senderKey")},
                                {"$P", field(active, "pair")},
                                {"$C", code2}}) {
      req = replace_all(std::move(req), token, value);
    }
    std::string parts[4];
    std::size_t at = 0;
    for (int i = 0; i < 4; ++i) {
      const std::size_t sep = i < 3 ? req.find('\x01', at) : std::string::npos;
      parts[i] = req.substr(at, sep == std::string::npos ? std::string::npos : sep - at);
      if (sep == std::string::npos) {
        at = req.size();
        for (int j = i + 1; j < 4; ++j) parts[j].clear();
        break;
      }
      at = sep + 1;
    }
    const std::string& method = parts[0];
    const std::string& target = parts[1];

    // The parser and the front door agree on the route (the front door only adds length/upgrade).
    auto parsed = parse_request(method, target, parts[2], ByteView(std::string_view(parts[3])));
    auto door = front_door(method, target, -1, true);
    auto route = parse_route(method, target);
    if (route.ok() != door.ok()) __builtin_trap();
    if (parsed.ok() && !route.ok()) __builtin_trap();
    if (route.ok() && !route->mailbox.empty() && !is_mailbox_id(route->mailbox)) __builtin_trap();
    if (parsed.ok() && parsed->where.route == Route::send && parsed->text.size() > kMaxTextBytes)
      __builtin_trap();

    h.now += step;
    if (n % 7 == 6) {
      h.core.handle_timeout(h.now);
      h.drain();
    }
    call(method, target, parts[2], parts[3]);

    if (h.core.stored_messages() > kMaxStoredMessages || h.core.stored_bytes() > kMaxStoredBytes ||
        h.core.records() > kMaxRecords || h.core.readers() > kMaxReaders) {
      __builtin_trap();
    }
    if (!h.fail_writes && h.core.snapshot() != h.store) __builtin_trap();
  }

  // A core rebuilt from storage alone is the same core.
  h.core.handle_timeout(h.now);
  h.drain();
  if (!h.fail_writes) {
    Mailbox again;
    for (const auto& [k, v] : h.store) again.load_record(k, v);
    again.loaded(h.now);
    while (auto a = again.poll_action()) {
      if (std::holds_alternative<Persist>(*a)) __builtin_trap();  // nothing left to expire
    }
    if (again.snapshot() != h.store) __builtin_trap();
  }
  return 0;
}
