// Scaling the edge relay past one object (docs/cockpit-fleet.md): the parts of a fleet split over
// Durable Objects, the handoff ticket that moves a session from one object to another, and the
// directory's table of which robots are connected (cockpit-wire-v7-notes.md § Viewer session:
// the `robots` list). The wire stays v7: a client never sees a ticket or a part; the host's
// switchboard (web/edge/cockpit.js) carries a ticket from the object that wrote it to the object
// it names, and every decision about where a session belongs is made here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "common/bytes.hpp"
#include "common/drive.hpp"
#include "common/json.hpp"
#include "common/result.hpp"
#include "wire/limits.hpp"

namespace tether::cockpit {

// What one relay instance serves.
enum class FleetPart {
  whole,      // every robot and viewer (the Deno relay; the edge with COCKPIT_OBJECTS unset)
  directory,  // the fleet's robots list: hellos arrive here and are handed to a robot's object
  robot,      // one robot's sessions: the robot and the viewers watching it
};

// A ticket carries a hello (at most a control payload) and a few fields beside it.
constexpr std::size_t kMaxTicketBytes = wire::kMaxControlBytes + 1024;
// Robots the directory remembers as last seen after they left (oldest forgotten first).
constexpr std::size_t kMaxLastSeen = wire::kMaxListEntries;
// The directory's robots list as a robot object takes it: kMaxListEntries identities of at most
// an id, a name and a model each, with room to spare.
constexpr std::size_t kMaxFleetRobotsBytes = 1024 * 1024;
// Client messages the switchboard holds while a session moves (one round trip to the old object);
// past this the client is closed and reconnects.
constexpr std::size_t kMaxHandoffQueuedMessages = 1024;

// A session moving to the object of `robot_id`. The receiving object replays `hello` (checking it
// again, token and all) without answering a welcome when `welcomed` (the viewer already has one),
// then watches `robot_id` when `watch`. `gen_floor` is the newest lease generation the sender
// knows of; the receiver's generations start above it.
struct Ticket {
  std::string robot_id;
  Json hello;
  bool welcomed = false;
  bool watch = false;
  std::uint64_t gen_floor = 0;
};

std::string encode_ticket(const Ticket& t);
// Errors name what is wrong; nothing throws. Bounded by kMaxTicketBytes before parsing.
Result<Ticket, std::string> decode_ticket(ByteView text);

// The directory's view of the fleet: which robot is connected, reported over the link its
// robot's object keeps open (one link per robot object; a link that closes takes its robot off).
class FleetTable {
 public:
  // A report on `link`: the robot's identity {id, name, model}, or null when it left. True when
  // the robots list changed.
  Result<bool, std::string> report(std::uint64_t link, ByteView text, TimeMs now);
  // The link closed (its object was evicted or restarted). True when the list changed.
  bool link_closed(std::uint64_t link, TimeMs now);
  bool has(const std::string& robot_id) const { return online_.count(robot_id) != 0; }
  std::size_t size() const { return online_.size(); }
  // The identities in id order, as `robots` lists them.
  Json robots() const;
  // {robots: [{id, name, model, link}], lastSeenMs: {id: now_ms}} for /api/stats.
  Json stats() const;

 private:
  bool drop(std::string id, TimeMs now);

  struct Entry {
    std::uint64_t link = 0;
    Json identity;
  };
  std::map<std::string, Entry> online_;
  std::map<std::string, TimeMs> last_seen_;
};

}  // namespace tether::cockpit
