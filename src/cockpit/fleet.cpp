#include "cockpit/fleet.hpp"

#include <utility>

namespace tether::cockpit {

namespace {

bool short_string(const Json& o, const char* key, std::size_t max) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() && it->get_ref<const std::string&>().size() <= max;
}

}  // namespace

std::string encode_ticket(const Ticket& t) {
  Json o = Json::object();
  o["robotId"] = t.robot_id;
  o["hello"] = t.hello;
  o["welcomed"] = t.welcomed;
  o["watch"] = t.watch;
  o["genFloor"] = t.gen_floor;
  return to_json(o);
}

Result<Ticket, std::string> decode_ticket(ByteView text) {
  if (text.size > kMaxTicketBytes)
    return err(std::string("a handoff ticket over ") + std::to_string(kMaxTicketBytes) +
               " bytes; only a relay object writes tickets");
  JsonParse p = parse_json(text);
  if (!p.ok() || !p.value.is_object())
    return err(std::string("a handoff ticket is not a JSON object"));
  const Json& o = p.value;
  if (!short_string(o, "robotId", wire::kMaxIdChars) ||
      o["robotId"].get_ref<const std::string&>().empty())
    return err(std::string("a handoff ticket names no robot (robotId)"));
  auto hello = o.find("hello");
  if (hello == o.end() || !hello->is_object())
    return err(std::string("a handoff ticket carries no hello"));
  auto flag = [&](const char* key) {
    auto it = o.find(key);
    return it != o.end() && it->is_boolean() && it->get<bool>();
  };
  Ticket t;
  t.robot_id = o["robotId"].get<std::string>();
  t.hello = *hello;
  t.welcomed = flag("welcomed");
  t.watch = flag("watch");
  auto gen = o.find("genFloor");
  if (gen != o.end() && gen->is_number_unsigned()) t.gen_floor = gen->get<std::uint64_t>();
  return t;
}

Result<bool, std::string> FleetTable::report(std::uint64_t link, ByteView text, TimeMs now) {
  if (text.size > wire::kMaxControlBytes)
    return err(std::string("a presence report over the control payload bound"));
  JsonParse p = parse_json(text);
  if (!p.ok()) return err(std::string("a presence report is not JSON"));
  if (p.value.is_null()) return link_closed(link, now);
  const Json& o = p.value;
  if (!o.is_object() || !short_string(o, "id", wire::kMaxIdChars) ||
      !short_string(o, "name", wire::kMaxShortTextChars) ||
      !short_string(o, "model", wire::kMaxShortTextChars))
    return err(std::string("a presence report is not a robot identity {id, name, model}"));
  const std::string id = o["id"].get<std::string>();
  auto it = online_.find(id);
  if (it == online_.end() && online_.size() >= wire::kMaxListEntries)
    return err(std::string("the fleet lists its maximum number of robots"));
  Json identity = Json::object();
  identity["id"] = o["id"];
  identity["name"] = o["name"];
  identity["model"] = o["model"];
  if (it != online_.end() && it->second.link == link && it->second.identity == identity)
    return false;
  // A newer link for the same robot wins: the older object is on its way out.
  online_[id] = Entry{link, std::move(identity)};
  last_seen_.erase(id);
  return true;
}

bool FleetTable::link_closed(std::uint64_t link, TimeMs now) {
  for (auto it = online_.begin(); it != online_.end(); ++it)
    if (it->second.link == link) return drop(it->first, now);
  return false;
}

// `id` by value: link_closed passes the key of the entry this erases (found under ASan,
// make test-sanitize: a read of the freed key).
bool FleetTable::drop(std::string id, TimeMs now) {
  online_.erase(id);
  if (last_seen_.size() >= kMaxLastSeen) {
    auto oldest = last_seen_.begin();
    for (auto it = last_seen_.begin(); it != last_seen_.end(); ++it)
      if (it->second < oldest->second) oldest = it;
    last_seen_.erase(oldest);
  }
  last_seen_[id] = now;
  return true;
}

Json FleetTable::robots() const {
  Json list = Json::array();
  for (const auto& [id, e] : online_) list.push_back(e.identity);
  return list;
}

Json FleetTable::stats() const {
  Json robots = Json::array();
  for (const auto& [id, e] : online_) {
    Json r = e.identity;
    r["link"] = e.link;
    robots.push_back(std::move(r));
  }
  Json seen = Json::object();
  for (const auto& [id, t] : last_seen_) seen[id] = t;
  Json o = Json::object();
  o["robots"] = std::move(robots);
  o["lastSeenMs"] = std::move(seen);
  return o;
}

}  // namespace tether::cockpit
