// Every bound of cockpit wire protocol v7, in one place (cockpit-wire-protocol.md § Framing,
// § Manifest, § WebRTC video). Each is enforced before anything is allocated for it.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tether::wire {

constexpr int kProtocolVersion = 7;
constexpr int kManifestVersion = 1;

constexpr std::size_t kDataPrefixBytes = 8;     // u32-LE headerLen | u32-LE payloadLen
constexpr std::size_t kControlPrefixBytes = 4;  // u32-LE length
constexpr std::size_t kMaxHeaderBytes = 64 * 1024;
// A whole data frame, prefix included.
constexpr std::size_t kMaxFrameBytes = 64 * 1024 * 1024;
// A control-stream message, an @control payload, and a datagram.
constexpr std::size_t kMaxControlBytes = 64 * 1024;
constexpr std::size_t kMaxPublishBytes = 32 * 1024;

constexpr std::size_t kMaxChannelIdChars = 64;
constexpr char kControlChannel[] = "@control";

// WebRTC (cockpit-wire-protocol.md § WebRTC video).
constexpr std::size_t kMaxSdpBytes = 48 * 1024;
constexpr std::size_t kMaxRtcTracks = 8;

// Bounds this project adds where the spec is silent; a manifest must still fit in 64 KiB.
constexpr std::size_t kMaxIdChars = 128;         // robot, panel and request ids
constexpr std::size_t kMaxShortTextChars = 256;  // names, models, titles, scopes
// Encodings and panel kinds are registry keys; dimos v5, the protocol's predecessor, bounds them
// (with its ids) at 64 characters, and v7 is silent, so v5 decides.
constexpr std::size_t kMaxEncodingChars = 64;
constexpr std::size_t kMaxMessageTextChars = 4096;  // error messages, tokens
constexpr std::size_t kMaxManifestChannels = 256;
constexpr std::size_t kMaxManifestPanels = 256;
constexpr std::size_t kMaxLayoutDepth = 16;
constexpr std::size_t kMaxListEntries = 1024;   // robots, subs, ice servers
constexpr std::size_t kMaxManifestErrors = 32;  // errors reported for one manifest

}  // namespace tether::wire
