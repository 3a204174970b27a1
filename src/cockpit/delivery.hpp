// The relay's delivery component (cockpit-wire-protocol.md § Delivery modes, workarounds 7, 11 and
// 12): who subscribes to which robot channel, latest streams (one per frame, never finished,
// superseded in place while wedged in creation, reset when stale or write-wedged) and reliable
// streams (one persistent ordered stream per viewer and channel, capped queues), and the counters
// of /api/stats. Its only clock is the reap deadline it reports through poll_timeout.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cockpit/outbox.hpp"
#include "cockpit/session.hpp"
#include "cockpit/types.hpp"
#include "common/drive.hpp"
#include "common/json.hpp"
#include "wire/frame.hpp"
#include "wire/limits.hpp"

namespace tether::cockpit {

// § Delivery modes and workaround 12: LATEST_STALE_MS. A written latest stream is reset this
// long after its write started; the relay reports that moment as its deadline.
constexpr TimeMs kLatestStaleMs = 500;
// § Delivery modes: the reliable queue per viewer and channel.
constexpr std::size_t kReliableMaxFrames = 64;
constexpr std::size_t kReliableMaxBytes = 16u * 1024 * 1024;
// Reliable frames handed to the transport before the first completes; writes complete in order.
constexpr std::size_t kReliableWritesInFlight = 8;
// Latest writes outstanding per viewer and channel: bounds what a transport that buffers without
// limit (quinn does) holds; a newer frame waits parked meanwhile.
constexpr std::size_t kMaxLatestWritesInFlight = 4;
constexpr std::size_t kMaxSubsPerViewer = wire::kMaxManifestChannels;
// Frames of a reliable channel held back while an earlier one-shot stream of the robot may still
// carry an earlier seq (one-shot streams complete in any order); past this the oldest goes on and
// the gap is given up.
constexpr std::size_t kReorderMaxFrames = kReliableMaxFrames;
constexpr std::size_t kReorderMaxBytes = kReliableMaxBytes;
// Over a WebSocket (v7 notes § Delivery reminders) a viewer stream "opens", and a write is done,
// once the socket buffers at most this much: meanwhile the core supersedes latest frames in place,
// so latest means the newest pending frame judged by the socket's buffered amount. The host
// compares; the number is the core's.
constexpr std::size_t kWebSocketHighWaterBytes = 1u << 20;

class Delivery {
 public:
  // --- subscriptions (v7 notes § Viewer session) ---
  bool subscribed(SessionId viewer, const std::string& ch) const;
  std::size_t subscription_count(SessionId viewer) const;
  void subscribe(SessionId viewer, const std::string& robot_id, const std::string& ch,
                 wire::Delivery mode);
  // Resets the channel's streams.
  void unsubscribe(SessionId viewer, const std::string& ch, Outbox& out);
  // Every subscription of the viewer, streams reset; returns whether it had any.
  bool unsubscribe_all(SessionId viewer, Outbox& out);
  // The viewer's transport is gone: its streams died with it, only the bookkeeping goes.
  // Returns whether it had any subscription.
  bool viewer_left(SessionId viewer);
  // The rx channels some viewer of the robot wants, in id order (a subs snapshot).
  std::vector<std::string> wanted(const std::string& robot_id,
                                  const std::map<std::string, ChannelInfo>& channels) const;
  // A robot registered again: subscriptions its new manifest no longer serves the same way go.
  void rebaseline(const std::string& robot_id, const std::map<std::string, ChannelInfo>& channels,
                  Outbox& out);
  // The robot's session ended: its counters go; its viewers keep their subscriptions.
  void robot_left(const std::string& robot_id);

  // --- frames ---
  // A data frame from a robot on a declared rx channel, fanned out to its subscribers. A viewer
  // whose reliable queue overflows is failed through `sessions`.
  //
  // Reliable channels reach viewers in seq order although the robot's one-shot streams complete
  // in any order: a frame that does not follow the last one forwarded waits while a stream the
  // robot opened before its own (`origin`) is still unfinished (`oldest_pending`, 0 for none),
  // since only such a stream can still carry an earlier seq (streams open in order, and QUIC
  // opens every lower-numbered stream with a higher one). No timer: a stream ends, or the robot's
  // session does, or kReorderMaxFrames gives the gap up. Reliable data is never dropped by seq:
  // a frame at or below the last one forwarded goes on as it comes. Over a WebSocket (origin 0)
  // frames are already in order.
  void on_frame(const std::string& robot_id, const ChannelInfo& info, const wire::DataFrame& f,
                StreamId origin, StreamId oldest_pending, Sessions& sessions, Outbox& out,
                TimeMs now);
  // One of the robot's incoming streams finished: held frames that no longer need to wait go.
  void release_held(const std::string& robot_id, StreamId oldest_pending, Sessions& sessions,
                    Outbox& out);
  bool holding(const std::string& robot_id) const;

  // --- what the host reports; each returns false when `st` is none of its streams ---
  bool stream_opened(StreamId st, TimeMs now, Outbox& out);
  bool write_done(StreamId st, TimeMs now, Outbox& out);
  // Writes handed to the transport on `st` and not yet done (0 for none of its streams).
  std::size_t writes_outstanding(StreamId st) const;
  bool stream_failed(StreamId st, Sessions& sessions, Outbox& out);
  // The viewer an outgoing stream belongs to, or 0.
  SessionId owner(StreamId st) const;

  // --- time: the next latest stream to reap (workaround 12) ---
  Timeout poll_timeout() const;
  void handle_timeout(TimeMs now, Outbox& out);

  // --- counters ---
  ChannelCounters counters(const std::string& robot_id, const std::string& ch) const;
  Json channel_stats(const std::string& robot_id) const;
  std::uint64_t frames_on_track(const std::string& robot_id) const;

 private:
  // One relay-to-viewer latest stream. It is never finished, only reset.
  struct LatestStream {
    bool writing = true;    // the write started and has not completed
    TimeMs started_ms = 0;  // when the payload bound
  };
  // A viewer's subscription to one channel of the robot it watches.
  struct Sub {
    wire::Delivery mode = wire::Delivery::latest;
    // latest: the one stream still in creation and the newest payload, bound when creation ends
    // (superseded in place while the creation wedges), a newer frame parked while
    // kMaxLatestWritesInFlight writes are outstanding, and the streams whose write started.
    StreamId creating = 0;
    SharedBytes creating_payload;
    SharedBytes parked;
    std::map<StreamId, LatestStream> live;
    TimeMs last_abort_ms = INT64_MIN / 2;
    // reliable: one persistent stream and its queue; the first `writing` frames of the queue have
    // been handed to the transport and are not yet done (they still count against the caps).
    StreamId stream = 0;
    bool open = false;
    std::size_t writing = 0;
    std::deque<SharedBytes> queue;
    std::size_t queued_bytes = 0;
  };
  struct ViewerSubs {
    std::string robot_id;
    std::map<std::string, Sub> by_channel;
  };
  struct Held {
    StreamId origin;
    SharedBytes frame;
  };
  struct ChannelFeed {
    std::set<SessionId> viewers;
    bool seen = false;  // a frame arrived since the robot registered (listed in /api/stats)
    ChannelCounters counters;
    std::optional<std::int64_t> last_seq;  // the newest seq forwarded
    // reliable: frames waiting for an earlier seq, by seq
    std::map<std::int64_t, Held> held;
    std::size_t held_bytes = 0;
  };
  struct RobotFeed {
    std::map<std::string, ChannelFeed> channels;
    std::set<std::string> holding;  // reliable channels with held frames
    std::uint64_t frames_on_track = 0;
  };
  struct Located {
    SessionId viewer;
    const std::string* ch;
    Sub* sub;
    ChannelCounters* counters;
  };

  std::optional<Located> locate(StreamId st);
  void fan_out(const std::string& ch, wire::Delivery mode, ChannelFeed& feed,
               const SharedBytes& frame, Sessions& sessions, Outbox& out, TimeMs now);
  // Forwards the held frames of one channel that may go; true when some are still held.
  bool release(const std::string& ch, ChannelFeed& feed, StreamId oldest_pending,
               Sessions& sessions, Outbox& out);
  ChannelCounters* counters_of(const std::string& robot_id, const std::string& ch);
  void open_stream(SessionId viewer, const std::string& ch, wire::Delivery mode, StreamId st,
                   Outbox& out);
  void end_stream(SessionId viewer, StreamId st, StreamEnd why, Outbox& out);
  void forget_streams(Sub& sub);
  void drop_streams(SessionId viewer, Sub& sub, Outbox& out);
  // `ch` by value: callers pass keys of the map it erases from.
  void remove(SessionId viewer, ViewerSubs& subs, std::string ch, bool reset, Outbox* out);
  void reap(SessionId viewer, Sub& sub, ChannelCounters& counters, TimeMs now, Outbox& out);
  void erase_live(Sub& sub, std::map<StreamId, LatestStream>::iterator it);
  void deliver_latest(SessionId viewer, const std::string& ch, Sub& sub, const SharedBytes& frame,
                      ChannelCounters& counters, TimeMs now, Outbox& out);
  bool deliver_reliable(SessionId viewer, const std::string& ch, Sub& sub, const SharedBytes& frame,
                        ChannelCounters& counters, Outbox& out);
  void pump_reliable(SessionId viewer, Sub& sub, ChannelCounters* counters, Outbox& out);

  std::unordered_map<SessionId, ViewerSubs> viewers_;
  // Kept while a robot is away, so one that reconnects is re-baselined with what its viewers
  // still want.
  std::map<std::string, RobotFeed> feeds_;
  std::unordered_map<StreamId, std::pair<SessionId, std::string>> outgoing_;  // -> viewer, ch
  // Written latest streams by the time they go stale: the reap's deadlines, earliest first.
  std::set<std::pair<TimeMs, StreamId>> reap_;
};

}  // namespace tether::cockpit
