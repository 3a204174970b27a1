#include "mailbox/records.hpp"

#include <cstdio>

#include "common/json.hpp"

namespace tether::mailbox {
namespace {

bool is_hex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Reads of one decoded record; the first failure is kept as the reason.
struct Reader {
  const Json& j;
  std::string why;

  const Json* at(const char* k) {
    auto it = j.find(k);
    if (it == j.end()) {
      if (why.empty()) why = std::string("missing ") + k;
      return nullptr;
    }
    return &*it;
  }
  std::string str(const char* k, std::size_t max, bool may_be_empty = false) {
    const Json* v = at(k);
    auto s = v ? json_string(*v) : std::nullopt;
    if (!s || s->size() > max || (s->empty() && !may_be_empty)) {
      if (why.empty()) why = std::string("bad ") + k;
      return std::string();
    }
    return std::string(*s);
  }
  std::string hash(const char* k) {
    std::string s = str(k, 64);
    if (!is_hex64(s) && why.empty()) why = std::string("bad ") + k;
    return s;
  }
  std::int64_t num(const char* k, std::int64_t min = 0) {
    const Json* v = at(k);
    auto n = v ? json_integer(*v, min, kMaxSafeInteger) : std::nullopt;
    if (!n) {
      if (why.empty()) why = std::string("bad ") + k;
      return 0;
    }
    return *n;
  }
  std::int64_t opt_num(const char* k) {
    auto it = j.find(k);
    if (it == j.end()) return -1;
    auto n = json_integer(*it, 0, kMaxSafeInteger);
    if (!n) {
      if (why.empty()) why = std::string("bad ") + k;
      return -1;
    }
    return *n;
  }
};

Json base() {
  return Json{{"v", kRecordVersion}};
}

}  // namespace

std::string_view pair_state_name(PairState s) {
  switch (s) {
    case PairState::pending: return "pending";
    case PairState::active: return "active";
    case PairState::revoked: return "revoked";
  }
  return "pending";
}

std::string meta_key() {
  return "meta";
}
std::string pair_key(std::string_view pair) {
  return "pair/" + std::string(pair);
}
std::string code_key(std::string_view hash) {
  return "code/" + std::string(hash);
}
std::string message_key(std::int64_t seq) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "msg/%016lld", static_cast<long long>(seq));
  return buf;
}

std::string encode_record(const Meta& m) {
  Json j = base();
  j["id"] = m.id;
  j["owner"] = m.owner_hash;
  j["created"] = m.created;
  j["next"] = m.next_seq;
  return to_json(j);
}

std::string encode_record(const Pairing& p) {
  Json j = base();
  j["pair"] = p.pair;
  j["name"] = p.name;
  j["key"] = p.key_hash;
  j["state"] = pair_state_name(p.state);
  j["created"] = p.created;
  j["changed"] = p.changed;
  return to_json(j);
}

std::string encode_record(const Code& c) {
  Json j = base();
  j["expires"] = c.expires;
  return to_json(j);
}

std::string encode_record(const Message& m) {
  Json j = base();
  j["seq"] = m.seq;
  j["pair"] = m.pair;
  j["name"] = m.sender_name;
  j["id"] = m.id;
  j["hash"] = m.text_hash;
  if (m.text) j["text"] = *m.text;
  j["status"] = status_name(m.status);
  j["stored"] = m.stored;
  if (m.delivered >= 0) j["delivered"] = m.delivered;
  if (m.read >= 0) j["read"] = m.read;
  return to_json(j);
}

Result<Record, std::string> decode_record(std::string_view key, std::string_view value) {
  // A message record is the largest: its text JSON-escaped plus its fields.
  if (value.size() > kMaxRequestBytes + 4096) return err(std::string("record too large"));
  JsonParse p = parse_json(ByteView(value));
  if (!p.ok() || !p.value.is_object()) return err(std::string("not a JSON object"));
  Reader r{p.value, {}};
  if (r.num("v") != kRecordVersion) {
    return err(r.why.empty() ? std::string("unknown record version") : r.why);
  }
  if (key == meta_key()) {
    Meta m;
    m.id = r.str("id", 2 * kMailboxIdBytes);
    m.owner_hash = r.hash("owner");
    m.created = r.num("created");
    m.next_seq = r.num("next", 1);
    if (r.why.empty() && !is_mailbox_id(m.id)) r.why = "bad id";
    if (!r.why.empty()) return err(r.why);
    return Record(std::move(m));
  }
  if (key.substr(0, 5) == "pair/") {
    Pairing pr;
    pr.pair = r.str("pair", 2 * kPairIdBytes);
    pr.name = r.str("name", kMaxNameBytes);
    pr.key_hash = r.hash("key");
    const std::string state = r.str("state", 16);
    pr.created = r.num("created");
    pr.changed = r.num("changed");
    if (state == "pending")
      pr.state = PairState::pending;
    else if (state == "active")
      pr.state = PairState::active;
    else if (state == "revoked")
      pr.state = PairState::revoked;
    else if (r.why.empty())
      r.why = "bad state";
    if (r.why.empty() && (!is_pair_id(pr.pair) || key != pair_key(pr.pair))) r.why = "key mismatch";
    if (!r.why.empty()) return err(r.why);
    return Record(std::move(pr));
  }
  if (key.substr(0, 5) == "code/") {
    Code c;
    c.hash = std::string(key.substr(5));
    c.expires = r.num("expires");
    if (r.why.empty() && !is_hex64(c.hash)) r.why = "bad code key";
    if (!r.why.empty()) return err(r.why);
    return Record(std::move(c));
  }
  if (key.substr(0, 4) == "msg/") {
    Message m;
    m.seq = r.num("seq", 1);
    m.pair = r.str("pair", 2 * kPairIdBytes);
    m.sender_name = r.str("name", kMaxNameBytes);
    m.id = r.str("id", kMaxMessageIdBytes);
    m.text_hash = r.hash("hash");
    if (auto it = p.value.find("text"); it != p.value.end()) {
      auto t = json_string(*it);
      if (!t || t->size() > kMaxTextBytes) {
        if (r.why.empty()) r.why = "bad text";
      } else {
        m.text = std::string(*t);
      }
    }
    auto status = status_from_name(r.str("status", 16));
    m.stored = r.num("stored");
    m.delivered = r.opt_num("delivered");
    m.read = r.opt_num("read");
    if (r.why.empty() && !status) r.why = "bad status";
    if (r.why.empty()) {
      m.status = *status;
      // A stored message holds its text; a read or expired one has none; a delivered one holds
      // it until retention ends.
      const bool must = m.status == Status::stored;
      const bool may = must || m.status == Status::delivered;
      if ((must && !m.text) || (!may && m.text))
        r.why = "text and status disagree";
      else if (key != message_key(m.seq))
        r.why = "key mismatch";
      else if (!is_pair_id(m.pair))
        r.why = "bad pair";
    }
    if (!r.why.empty()) return err(r.why);
    return Record(std::move(m));
  }
  return err(std::string("unknown record key"));
}

}  // namespace tether::mailbox
