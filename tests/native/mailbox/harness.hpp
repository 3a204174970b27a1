// A host for the mailbox core in tests: a map for storage (every Persist applied at once, or held
// for the test to answer), a clock the test moves, seeded entropy, and helpers that speak the
// HTTP API the way the JS hosts do. restart() rebuilds the core from storage alone, as a host
// does at start-up.
#pragma once
#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/json.hpp"
#include "common/rng.hpp"
#include "common/sha256.hpp"
#include "mailbox/mailbox.hpp"

namespace tether::mailbox::test {

struct Reply {
  int status = 0;
  Json body;
  TimeMs retry_after_ms = -1;
  std::string error() const {
    auto it = body.find("error");
    return it == body.end() ? std::string() : it->get<std::string>();
  }
};

struct Box {
  std::string id;
  std::string owner;  // "Bearer <owner key>"
};

struct Sender {
  std::string pair;
  std::string auth;  // "Bearer <sender key>"
};

inline std::string bearer(const std::string& key) {
  return "Bearer " + key;
}

class Harness {
 public:
  static constexpr TimeMs kStart = 1'700'000'000'000;

  Mailbox core;
  std::map<std::string, std::string> store;
  TimeMs now = kStart;
  SeededRng rng{7};
  bool auto_persist = true;    // false: Persists wait in `pending` for the test
  bool fail_persists = false;  // answer every Persist with ok=false
  std::vector<Persist> pending;
  std::vector<Respond> responses;
  std::vector<AcceptReader> accepts;
  std::vector<Push> pushes;
  std::vector<CloseReader> closes;
  std::vector<Event> events;
  std::size_t persists = 0;

  Bytes entropy() {
    Bytes b(kEntropyBytes);
    for (auto& x : b) x = static_cast<std::uint8_t>(rng.below(256));
    return b;
  }

  void apply(const Persist& p) {
    for (const Put& put : p.puts) store[put.key] = put.value;
    for (const std::string& key : p.deletes) store.erase(key);
  }

  void drain() {
    while (auto a = core.poll_action()) {
      if (auto* p = std::get_if<Persist>(&*a)) {
        ++persists;
        if (!auto_persist) {
          pending.push_back(std::move(*p));
        } else if (fail_persists) {
          core.handle_persisted(p->token, false, now);
        } else {
          apply(*p);
          core.handle_persisted(p->token, true, now);
        }
      } else if (auto* r = std::get_if<Respond>(&*a)) {
        responses.push_back(std::move(*r));
      } else if (auto* acc = std::get_if<AcceptReader>(&*a)) {
        accepts.push_back(*acc);
      } else if (auto* push = std::get_if<Push>(&*a)) {
        pushes.push_back(std::move(*push));
      } else if (auto* c = std::get_if<CloseReader>(&*a)) {
        closes.push_back(std::move(*c));
      }
    }
    while (auto e = core.poll_event()) events.push_back(std::move(*e));
  }

  // Answers the oldest held Persist (tests with auto_persist = false).
  void persist_one(bool ok = true) {
    REQUIRE_FALSE(pending.empty());
    Persist p = std::move(pending.front());
    pending.erase(pending.begin());
    if (ok) apply(p);
    core.handle_persisted(p.token, ok, now);
    drain();
  }

  std::optional<Reply> reply_for(RequestId id) const {
    for (const Respond& r : responses) {
      if (r.request != id) continue;
      JsonParse p = parse_json(ByteView(std::string_view(r.body)));
      REQUIRE(p.ok());
      return Reply{r.status, p.value, r.retry_after_ms};
    }
    return std::nullopt;
  }

  RequestId next_request = 1;
  RequestId submit(const std::string& method, const std::string& target,
                   const std::string& auth = "", const std::string& body = "") {
    const RequestId id = next_request++;
    const Bytes e = entropy();
    core.handle_request(id, method, target, auth, ByteView(std::string_view(body)), ByteView(e),
                        now);
    drain();
    return id;
  }

  Reply call(const std::string& method, const std::string& target, const std::string& auth = "",
             const std::string& body = "") {
    const RequestId id = submit(method, target, auth, body);
    auto r = reply_for(id);
    REQUIRE(r.has_value());
    return *r;
  }

  void advance(TimeMs ms) {
    now += ms;
    core.handle_timeout(now);
    drain();
  }

  // A new core from storage alone, as a host builds one at start-up.
  void restart() {
    core = Mailbox();
    for (const auto& [k, v] : store) core.load_record(k, v);
    core.loaded(now);
    drain();
  }

  bool storage_matches_core() const { return core.snapshot() == store; }

  // --- the API, as a client uses it
  // ---------------------------------------------------------------
  Box create() {
    Reply r = call("POST", "/mailboxes");
    REQUIRE(r.status == 201);
    return Box{r.body["mailbox"].get<std::string>(), bearer(r.body["ownerKey"].get<std::string>())};
  }
  std::string base(const Box& b) const { return "/mailboxes/" + b.id; }
  std::string code(const Box& b) {
    Reply r = call("POST", base(b) + "/codes", b.owner);
    REQUIRE(r.status == 201);
    return r.body["code"].get<std::string>();
  }
  Reply pair_request(const Box& b, const std::string& name, const std::string& code = "") {
    Json body{{"name", name}};
    if (!code.empty()) body["code"] = code;
    return call("POST", base(b) + "/pairs", "", to_json(body));
  }
  Sender paired(const Box& b, const std::string& name) {
    Reply r = pair_request(b, name, code(b));
    REQUIRE(r.status == 201);
    REQUIRE(r.body["state"] == "active");
    return Sender{r.body["pair"].get<std::string>(),
                  bearer(r.body["senderKey"].get<std::string>())};
  }
  Reply send(const Box& b, const Sender& s, const std::string& id, const std::string& text) {
    return call("POST", base(b) + "/messages", s.auth, to_json(Json{{"id", id}, {"text", text}}));
  }
  Reply status(const Box& b, const Sender& s, const std::string& id) {
    return call("GET", base(b) + "/status/" + id, s.auth);
  }
  Reply list(const Box& b, std::int64_t since = 0, const std::string& extra = "") {
    return call("GET", base(b) + "/messages?since=" + std::to_string(since) + extra, b.owner);
  }
  Reply ack(const Box& b, const std::vector<std::int64_t>& seqs, const std::string& status) {
    return call("POST", base(b) + "/ack", b.owner,
                to_json(Json{{"seqs", seqs}, {"status", status}}));
  }
};

}  // namespace tether::mailbox::test
