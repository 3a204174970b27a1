// Limits and wire constants of the room relay (the room-relay spec, "The relay" and
// "Trust"). Every bound is enforced before the value it guards is stored.
#pragma once
#include <cstddef>

namespace tether::room {

// The op protocol version an envelope and a hello must carry (spec: "The envelope").
constexpr double kMeshProtoVersion = 3;

// RelayOptions defaults, as the spec's createRelay example documents them.
constexpr double kDefaultMaxOpsPerEnvelope = 1024;
constexpr double kDefaultJournalLimit = 1000;

// Bounded strings (spec: "Trust"): ids are opaque pseudonyms, never free text. The reference
// bounds none of these; a relay that retains whatever it is sent must, so an over-long id is
// the 'malformed' tripwire (detail "bounds"). Generous enough for any honest id scheme.
constexpr std::size_t kMaxIdBytes = 512;        // origin, writer, instance, cite origins
constexpr std::size_t kMaxRoomNameBytes = 512;  // the room a message names
constexpr std::size_t kMaxPathDepth = 48;       // segments in one op path
constexpr std::size_t kMaxPathSegmentBytes = 1024;
// One client message, as text. Adapters should cap frames lower; this is the core's own floor.
constexpr std::size_t kMaxMessageBytes = 8u << 20;

// While an envelope waits for a policy verdict, what its connection sends next waits behind it
// (per-connection FIFO). A host answers at once, or soon; a connection that sends this much
// meanwhile is refused (backlog_full), which the adapter answers by closing it.
constexpr std::size_t kMaxBacklogMessages = 1024;
constexpr std::size_t kMaxBacklogBytes = 16u << 20;

// The separator the register key joins path segments with (String(seg) per segment): the same
// key identifies a path for the dup-path check and for retention, so [1] and ["1"] are one path.
constexpr char kPathKeySeparator = '\x1f';

}  // namespace tether::room
