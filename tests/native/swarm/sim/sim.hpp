// A deterministic network simulator around the real swarm core (src/swarm/), for the regression
// tests that reproduce agent-bus-and-swarm.md's measured findings and for bench/swarm_native.cpp.
// Header-only so both link it without a library of their own.
//
// Model: every node has an uplink of fixed bandwidth with two lanes (control first, then binary
// frames), and every link a one-way latency. Messages are real bytes: control payloads are the
// core's JSON, chunk answers are real binary frames or base64 messages, and receivers parse them
// with the core's parsers. Faults: single dropped chunks, random loss, silent dead paths (the send
// is accepted and the bytes vanish), our own transport reconnecting, and connection rebuilds that
// take a fixed time. Time is simulated milliseconds; nothing reads a clock.
//
// A node may also be a ninja-p2p-shaped peer (NodeSpec::ninja): no tether core at all, but the
// public implementation's behaviour as agent-bus-notes.md records it, with its own bitfield
// encoder and decoder (ninja_bits / ninja_held below, never Bitfield), so a test sees what a real
// mixed swarm sees when the two sides disagree on the bit order.
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "common/base64.hpp"
#include "common/json.hpp"
#include "common/rng.hpp"
#include "swarm/messages.hpp"
#include "swarm/resume.hpp"
#include "swarm/session.hpp"

namespace tether::swarm::sim {

struct NodeSpec {
  double up_bytes_per_ms = 8000;  // 8 MB/s
  bool seeder = false;
  std::int64_t start_ms = 0;  // when a downloader asks for the file
  bool binary_lane = true;
  std::size_t max_message_size = 262'144;
  // Resume: the part file's chunks as they would read back (absent = never written).
  std::map<std::uint32_t, Bytes> part_file;
  // A ninja-p2p-shaped peer. With `seeder` it holds `holds` (any subset: a sparse source), else it
  // downloads, asking only peers whose bitfields (read by its own decoder) say they hold a chunk.
  bool ninja = false;
  std::set<std::uint32_t> holds;
};

// The public implementation's bitfield, written out as it does (agent-bus-notes.md § Swarm
// messages): chunk i at bit (i & 7) of byte (i >> 3). Deliberately not Bitfield.
inline Bytes ninja_bits(std::uint32_t total, const std::set<std::uint32_t>& held) {
  Bytes out((std::size_t(total) + 7) / 8, 0);
  for (std::uint32_t i : held)
    if (i < total) out[i >> 3] = std::uint8_t(out[i >> 3] | (1u << (i & 7)));
  return out;
}
inline std::set<std::uint32_t> ninja_held(std::uint32_t total, const Bytes& bits) {
  std::set<std::uint32_t> out;
  for (std::uint32_t i = 0; i < total && (i >> 3) < bits.size(); ++i)
    if (bits[i >> 3] & (1u << (i & 7))) out.insert(i);
  return out;
}

struct DropOnce {  // the first answer carrying `index` from `from` to `to` vanishes
  std::uint32_t from, to, index;
};
struct DeadPath {  // from `at_ms`, bytes from `from` to `to` vanish until the connection is rebuilt
  std::uint32_t from, to;
  std::int64_t at_ms;
};
struct Outage {  // `node`'s own transport reconnects; every path to and from it goes silently dead
  std::uint32_t node;
  std::int64_t down_ms, up_ms;
};

struct Scenario {
  std::uint64_t file_size = 8u << 20;
  std::uint32_t chunk_size = kDefaultChunkSize;
  std::uint64_t seed = 1;
  std::int64_t latency_ms = 20;
  std::vector<NodeSpec> nodes;
  SwarmConfig swarm;  // seed is mixed with the node index
  std::vector<DropOnce> drops;
  double loss = 0;  // probability a chunk answer vanishes
  std::vector<DeadPath> dead_paths;
  std::vector<Outage> outages;
  std::int64_t rebuild_ms = 260;  // § Surviving a network drop: "~260 ms"
  std::int64_t tick_ms = 50;
  std::int64_t limit_ms = 600'000;
  std::size_t envelope_bytes = 200;  // what the agent-bus envelope adds to each control payload
};

struct NodeResult {
  std::int64_t completed_ms = -1;
  std::int64_t manifest_ready_ms = -1;
  std::int64_t first_chunk_ms = -1;
  SwarmStats stats;
  std::uint64_t bytes_from_seeders = 0;
  std::uint64_t bytes_from_peers = 0;  // from other downloaders: peer-to-peer exchange
  std::uint64_t bytes_uploaded = 0;
  std::vector<std::uint32_t> requested;    // chunk indexes, in request order
  std::vector<std::int64_t> requested_ms;  // when each left
  std::vector<std::int64_t> rebuild_ms;    // when this node asked for a rebuild
  std::vector<std::string> failures;
  std::uint32_t resumed_chunks = 0;
  bool file_intact = false;  // every stored chunk equals the source
  // A ninja-shaped node: requests it got for chunks it does not hold (it ignores them, as the
  // public implementation does), and its own requests nobody answered within its timeout.
  std::uint32_t requests_for_missing = 0;
  std::uint32_t unanswered = 0;
};

struct SimResult {
  std::vector<NodeResult> nodes;
  std::int64_t end_ms = 0;
  std::uint64_t control_messages = 0;
  std::size_t largest_control_message = 0;
  std::size_t largest_binary_message = 0;
  bool all_complete = false;
};

// The file's bytes, made from the seed, one chunk at a time.
inline Bytes chunk_content(std::uint64_t seed, const FileShape& shape, std::uint32_t index) {
  Bytes out(shape.chunk_length(index));
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + index * 0xBF58476D1CE4E5B9ull + 1;
  for (std::size_t i = 0; i < out.size(); i += 8) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    for (std::size_t k = 0; k < 8 && i + k < out.size(); ++k)
      out[i + k] = std::uint8_t(x >> (8 * k));
  }
  return out;
}

class Simulator {
 public:
  explicit Simulator(Scenario s) : sc_(std::move(s)), rng_(sc_.seed ^ 0x5eed) {
    shape_.size = sc_.file_size;
    shape_.chunk_size = sc_.chunk_size;
    shape_.total_chunks = std::uint32_t((sc_.file_size + sc_.chunk_size - 1) / sc_.chunk_size);
    hashes_.reserve(shape_.total_chunks);
    for (std::uint32_t i = 0; i < shape_.total_chunks; ++i)
      hashes_.push_back(sha256(chunk_content(sc_.seed, shape_, i)));
    FileId id = sha256(ByteView(std::string_view("sim-file-" + std::to_string(sc_.seed))));
    offer_ = make_offer(id, "sim.bin", "application/octet-stream", shape_, hashes_).value();
    offer_payload_ = encode_payload(Message{offer_});
    const std::size_t n = sc_.nodes.size();
    nodes_.resize(n);
    result_.nodes.resize(n);
    for (std::size_t a = 0; a < n; ++a) {
      nodes_[a].spec = sc_.nodes[a];
      nodes_[a].gen.assign(n, 0);
      nodes_[a].connected.assign(n, true);
      nodes_[a].dead_to.assign(n, false);
    }
  }

  SimResult run() {
    for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
      const std::int64_t t = nodes_[i].spec.seeder ? 0 : nodes_[i].spec.start_ms;
      at(t, [this, i] { start(i); });
    }
    for (const auto& d : sc_.dead_paths)
      at(d.at_ms, [this, d] { nodes_[d.from].dead_to[d.to] = true; });
    for (const auto& o : sc_.outages) {
      at(o.down_ms, [this, o] {
        Node& me = nodes_[o.node];
        me.transport_down = true;
        for (std::uint32_t b = 0; b < nodes_.size(); ++b) {
          me.dead_to[b] = true;
          nodes_[b].dead_to[o.node] = true;
        }
        if (me.swarm) {
          me.swarm->handle_transport_down(now_);
          drain(o.node);
        }
      });
      at(o.up_ms, [this, o] {
        Node& me = nodes_[o.node];
        me.transport_down = false;
        if (me.swarm) {
          me.swarm->handle_transport_up(now_);
          drain(o.node);
        }
      });
    }
    std::uint64_t guard = 0;
    while (!events_.empty() && guard++ < 200'000'000ull) {
      Event e = events_.top();
      events_.pop();
      if (e.t > sc_.limit_ms) break;
      now_ = e.t;
      e.fn();
      if (all_done()) break;
    }
    result_.end_ms = now_;
    result_.all_complete = all_done();
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].swarm) result_.nodes[i].stats = nodes_[i].swarm->stats();
      bool intact = (nodes_[i].swarm && nodes_[i].swarm->complete()) ||
                    (nodes_[i].spec.ninja && nodes_[i].held.size() == shape_.total_chunks);
      for (const auto& [index, bytes] : nodes_[i].stored)
        if (bytes != hashes_[index]) intact = false;
      result_.nodes[i].file_intact = intact || nodes_[i].spec.seeder;
    }
    return result_;
  }

  const Offer& offer() const { return offer_; }
  const std::vector<ChunkHash>& hashes() const { return hashes_; }
  const FileShape& shape() const { return shape_; }
  Swarm* swarm(std::uint32_t node) { return nodes_[node].swarm.get(); }

 private:
  struct Event {
    std::int64_t t;
    std::uint64_t seq;
    std::function<void()> fn;
    bool operator<(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  struct Wire {  // one message on an uplink
    std::uint32_t to;
    std::uint64_t gen;
    bool binary;
    std::size_t bytes;
    std::function<void()> deliver;
    std::optional<std::uint32_t> chunk;  // for drops and loss
  };
  struct Node {
    NodeSpec spec;
    std::unique_ptr<Swarm> swarm;
    std::deque<Wire> control, binary;
    bool sending = false;
    double carry_ms = 0;
    bool transport_down = false;
    std::vector<std::uint64_t> gen;  // connection generation, per peer
    std::vector<bool> connected, dead_to;
    std::int64_t next_tick = INT64_MAX;
    std::map<std::uint32_t, ChunkHash> stored;  // hash of what was written, per chunk
    // A ninja-shaped node's state: what it holds, what it believes each peer holds, and its
    // outstanding requests (chunk -> {peer, sent at}).
    std::set<std::uint32_t> held;
    std::map<std::uint32_t, std::set<std::uint32_t>> view;
    std::map<std::uint32_t, std::pair<std::uint32_t, std::int64_t>> asked;
    bool started = false;
  };

  void at(std::int64_t t, std::function<void()> fn) {
    events_.push(Event{t, seq_++, std::move(fn)});
  }

  bool all_done() const {
    for (const auto& n : nodes_) {
      if (n.spec.seeder) continue;
      if (n.spec.ninja ? n.held.size() < shape_.total_chunks : !(n.swarm && n.swarm->complete()))
        return false;
    }
    return true;
  }

  void start(std::uint32_t i) {
    Node& me = nodes_[i];
    if (me.spec.ninja) return ninja_start(i);
    SwarmConfig cfg = sc_.swarm;
    cfg.seed = sc_.swarm.seed * 1000003u + i;
    cfg.binary_lane = me.spec.binary_lane;
    if (me.spec.seeder) {
      me.swarm = std::make_unique<Swarm>(std::move(Swarm::seed(offer_, hashes_, cfg).value()));
    } else {
      // The offer arrived earlier as a message; asking for the file parses it and fetches.
      auto parsed = parse_json(ByteView(std::string_view(offer_payload_)));
      auto m = parse_message("swarm_offer", parsed.value);
      const Offer& o = std::get<Offer>(m.value());
      std::uint32_t source = 0;
      for (std::uint32_t k = 0; k < nodes_.size(); ++k)
        if (nodes_[k].spec.seeder) {
          source = k;
          break;
        }
      me.swarm = std::make_unique<Swarm>(std::move(Swarm::fetch(o, source, cfg, now_).value()));
    }
    for (std::uint32_t b = 0; b < nodes_.size(); ++b)
      if (b != i && me.connected[b]) me.swarm->handle_peer_open(b, caps_of(b), now_);
    drain(i);
    schedule_tick(i);
  }

  PeerCaps caps_of(std::uint32_t node) const {
    return PeerCaps{nodes_[node].spec.binary_lane, nodes_[node].spec.max_message_size};
  }

  void schedule_tick(std::uint32_t i) {
    Node& me = nodes_[i];
    const std::int64_t t = now_ + sc_.tick_ms;
    if (me.next_tick <= t && me.next_tick > now_) return;
    me.next_tick = t;
    at(t, [this, i] {
      Node& n = nodes_[i];
      n.next_tick = INT64_MAX;
      if (n.spec.ninja) {
        ninja_tick(i);
        if (!all_done()) schedule_tick(i);
        return;
      }
      if (!n.swarm) return;
      n.swarm->handle_timeout(now_);
      drain(i);
      if (!all_done()) schedule_tick(i);
    });
  }

  std::size_t limit(std::uint32_t a, std::uint32_t b) const {
    return std::min(nodes_[a].spec.max_message_size, nodes_[b].spec.max_message_size);
  }

  void send(std::uint32_t from, std::uint32_t to, bool binary, std::size_t bytes,
            std::function<void()> deliver, std::optional<std::uint32_t> chunk = std::nullopt) {
    Node& me = nodes_[from];
    if (binary)
      result_.largest_binary_message = std::max(result_.largest_binary_message, bytes);
    else {
      ++result_.control_messages;
      result_.largest_control_message = std::max(result_.largest_control_message, bytes);
    }
    // A message over the negotiated limit would be refused by the peer's SCTP stack.
    if (bytes > limit(from, to)) return;
    Wire w{to, me.gen[to], binary, bytes, std::move(deliver), chunk};
    (binary ? me.binary : me.control).push_back(std::move(w));
    pump(from);
  }

  void pump(std::uint32_t from) {
    Node& me = nodes_[from];
    if (me.sending || (me.control.empty() && me.binary.empty())) return;
    std::deque<Wire>& q = me.control.empty() ? me.binary : me.control;
    Wire w = std::move(q.front());
    q.pop_front();
    me.sending = true;
    // Whole simulated milliseconds, carrying the remainder so the long-run rate is exact.
    const double exact = double(w.bytes) / me.spec.up_bytes_per_ms + me.carry_ms;
    const std::int64_t dur = std::int64_t(exact);
    me.carry_ms = exact - double(dur);
    at(now_ + dur, [this, from, w = std::move(w)]() mutable {
      Node& n = nodes_[from];
      n.sending = false;
      if (w.chunk) result_.nodes[from].bytes_uploaded += w.bytes;
      bool lost = n.dead_to[w.to] || !n.connected[w.to] || n.gen[w.to] != w.gen;
      if (!lost && w.chunk) {
        for (auto it = drops_left_.begin(); it != drops_left_.end(); ++it)
          if (it->from == from && it->to == w.to && it->index == *w.chunk) {
            drops_left_.erase(it);
            lost = true;
            break;
          }
        if (!lost && sc_.loss > 0 && double(rng_.below(1'000'000)) < sc_.loss * 1e6) lost = true;
      }
      if (!lost) {
        const std::uint32_t to = w.to;
        const std::uint64_t gen = w.gen;
        auto deliver = std::move(w.deliver);
        at(now_ + sc_.latency_ms, [this, from, to, gen, deliver = std::move(deliver)] {
          if (nodes_[to].gen[from] != gen || !nodes_[to].connected[from]) return;
          deliver();
        });
      }
      pump(from);
    });
  }

  void drain(std::uint32_t i) {
    Node& me = nodes_[i];
    if (!me.swarm) return;
    for (int rounds = 0; rounds < 64; ++rounds) {
      auto actions = drain_actions(*me.swarm);
      if (actions.empty()) break;
      for (auto& a : actions) perform(i, a);
    }
    schedule_tick(i);
  }

  void perform(std::uint32_t i, Action& a) {
    Node& me = nodes_[i];
    NodeResult& r = result_.nodes[i];
    if (auto* c = std::get_if<SendControl>(&a)) {
      for (std::uint32_t b = 0; b < nodes_.size(); ++b) {
        if (b == i || (c->to && *c->to != b) || !me.connected[b]) continue;
        const bool directed = c->to.has_value();
        send(i, b, false, c->payload.size() + sc_.envelope_bytes,
             [this, i, b, type = c->type, payload = c->payload, directed] {
               receive_control(b, i, type, payload, directed);
             });
      }
    } else if (auto* q = std::get_if<SendRequest>(&a)) {
      const bool accepted = me.connected[q->to] && !me.transport_down;
      me.swarm->handle_send_result(q->token, accepted, now_);
      if (!accepted) return;
      r.requested.push_back(q->index);
      r.requested_ms.push_back(now_);
      send(i, q->to, false, q->payload.size() + sc_.envelope_bytes,
           [this, i, to = q->to, payload = q->payload] {
             receive_control(to, i, "swarm_request", payload, true);
           });
    } else if (auto* s = std::get_if<ServeChunk>(&a)) {
      Bytes data = chunk_content(sc_.seed, shape_, s->index);
      const std::uint32_t to = s->to, index = s->index;
      if (s->binary) {
        auto frame = std::make_shared<Bytes>(encode_chunk_frame(offer_.file_id, index, data));
        send(
            i, to, true, frame->size(),
            [this, i, to, frame] {
              auto f = parse_chunk_frame(ByteView(*frame));
              if (f) receive_chunk(to, i, f->index, f->data);
            },
            index);
      } else {
        ChunkMessage cm{offer_.file_id, index, std::move(data)};
        auto payload = std::make_shared<std::string>(encode_payload(Message{std::move(cm)}));
        send(
            i, to, false, payload->size() + sc_.envelope_bytes,
            [this, i, to, payload] {
              auto parsed = parse_json(ByteView(std::string_view(*payload)));
              auto m = parse_message("swarm_chunk", parsed.value);
              if (!m) return;
              const auto& c = std::get<ChunkMessage>(m.value());
              receive_chunk(to, i, c.index, ByteView(c.data));
            },
            index);
      }
    } else if (std::get_if<ManifestReady>(&a)) {
      r.manifest_ready_ms = now_;
      // The glue opens the part file and runs the resume pass only now.
      ResumeVerifier v(shape_, me.swarm->hashes());
      for (const auto& [index, bytes] : me.spec.part_file)
        if (v.feed(index, ByteView(bytes))) me.stored[index] = sha256(ByteView(bytes));
      r.resumed_chunks = v.verified().count();
      me.swarm->handle_resume_done(v.verified(), now_);
    } else if (auto* rb = std::get_if<RebuildPeer>(&a)) {
      r.rebuild_ms.push_back(now_);
      rebuild(i, rb->peer);
    } else if (std::get_if<Completed>(&a)) {
      if (r.completed_ms < 0) r.completed_ms = now_;
    } else if (auto* f = std::get_if<Failed>(&a)) {
      r.failures.push_back(f->code);
    }
  }

  void receive_control(std::uint32_t at_node, std::uint32_t from, const std::string& type,
                       const std::string& payload, bool directed) {
    Node& me = nodes_[at_node];
    if (me.spec.ninja) return ninja_control(at_node, from, type, payload, directed);
    if (!me.swarm) return;  // transient: nobody here cares yet
    auto parsed = parse_json(ByteView(std::string_view(payload)));
    if (!parsed.ok()) return;
    auto m = parse_message(type, parsed.value);
    if (!m) return;
    me.swarm->handle_message(from, m.value(), directed, now_);
    drain(at_node);
  }

  void receive_chunk(std::uint32_t at_node, std::uint32_t from, std::uint32_t index,
                     ByteView data) {
    Node& me = nodes_[at_node];
    if (me.spec.ninja) return ninja_chunk(at_node, from, index, data);
    if (!me.swarm) return;
    NodeResult& r = result_.nodes[at_node];
    const ChunkOutcome out = me.swarm->handle_chunk(from, index, data, now_);
    if (out == ChunkOutcome::stored) {
      me.stored[index] = sha256(data);
      if (r.first_chunk_ms < 0) r.first_chunk_ms = now_;
      (nodes_[from].spec.seeder ? r.bytes_from_seeders : r.bytes_from_peers) += data.size;
    }
    drain(at_node);
  }

  // --- the ninja-p2p-shaped peer (agent-bus-notes.md; none of it uses Bitfield) ----------------
  static constexpr std::int64_t kNinjaTimeoutMs = 3'000;
  static constexpr std::size_t kNinjaPerPeer = 4;

  std::string fid_hex() const { return to_hex(offer_.file_id); }

  void ninja_control_send(std::uint32_t from, std::optional<std::uint32_t> to,
                          const std::string& type, const std::string& payload) {
    for (std::uint32_t b = 0; b < nodes_.size(); ++b) {
      if (b == from || (to && *to != b) || !nodes_[from].connected[b]) continue;
      const bool directed = to.has_value();
      send(from, b, false, payload.size() + sc_.envelope_bytes,
           [this, from, b, type, payload, directed] {
             receive_control(b, from, type, payload, directed);
           });
    }
  }

  std::string ninja_announce_payload(const Node& me) const {
    return "{\"fileId\":\"" + fid_hex() +
           "\",\"totalChunks\":" + std::to_string(shape_.total_chunks) + ",\"chunks\":\"" +
           base64_encode(ninja_bits(shape_.total_chunks, me.held)) + "\"}";
  }

  void ninja_start(std::uint32_t i) {
    Node& me = nodes_[i];
    me.started = true;
    if (me.spec.seeder) {
      me.held = me.spec.holds;
      for (std::uint32_t c : me.held) me.stored[c] = hashes_[c];
    }
    ninja_control_send(i, std::nullopt, "swarm_announce", ninja_announce_payload(me));
    schedule_tick(i);
  }

  void ninja_tick(std::uint32_t i) {
    Node& me = nodes_[i];
    if (!me.started) return;
    // Requests nobody answered in time are given up and asked again, perhaps elsewhere.
    for (auto it = me.asked.begin(); it != me.asked.end();) {
      if (now_ - it->second.second >= kNinjaTimeoutMs) {
        ++result_.nodes[i].unanswered;
        it = me.asked.erase(it);
      } else {
        ++it;
      }
    }
    if (now_ % kAnnounceIntervalMs < sc_.tick_ms)
      ninja_control_send(i, std::nullopt, "swarm_announce", ninja_announce_payload(me));
    if (me.spec.seeder) return;
    std::map<std::uint32_t, std::size_t> per_peer;
    for (const auto& [c, a] : me.asked) ++per_peer[a.first];
    for (std::uint32_t c = 0; c < shape_.total_chunks; ++c) {
      if (me.held.count(c) || me.asked.count(c)) continue;
      for (const auto& [peer, has] : me.view) {
        if (!has.count(c) || per_peer[peer] >= kNinjaPerPeer || !me.connected[peer]) continue;
        ++per_peer[peer];
        me.asked[c] = {peer, now_};
        ninja_control_send(
            i, peer, "swarm_request",
            "{\"fileId\":\"" + fid_hex() + "\",\"index\":" + std::to_string(c) + ",\"bin\":1}");
        break;
      }
    }
  }

  void ninja_control(std::uint32_t at_node, std::uint32_t from, const std::string& type,
                     const std::string& payload, bool directed) {
    Node& me = nodes_[at_node];
    if (!me.started) return;
    auto j = parse_json(ByteView(std::string_view(payload)));
    if (!j.ok() || !j.value.is_object()) return;
    const Json& p = j.value;
    if (type == "swarm_announce") {
      // Its own validation: exactly ceil(totalChunks / 8) bytes, else ignored.
      auto bits = base64_decode(p.value("chunks", std::string()));
      if (!bits || p.value("totalChunks", 0u) != shape_.total_chunks ||
          bits->size() != (std::size_t(shape_.total_chunks) + 7) / 8)
        return;
      me.view[from] = ninja_held(shape_.total_chunks, *bits);
      if (!directed)
        ninja_control_send(at_node, from, "swarm_announce", ninja_announce_payload(me));
      ninja_tick(at_node);
    } else if (type == "swarm_have") {
      for (const auto& v : p.value("indexes", Json::array()))
        if (v.is_number_unsigned()) me.view[from].insert(v.get<std::uint32_t>());
      ninja_tick(at_node);
    } else if (type == "swarm_request") {
      const std::uint32_t index = p.value("index", 0u);
      if (!me.held.count(index)) {
        ++result_.nodes[at_node].requests_for_missing;  // ignored: the asker times out
        return;
      }
      Bytes data = chunk_content(sc_.seed, shape_, index);
      if (p.value("bin", 0) == 1 && me.spec.binary_lane && nodes_[from].spec.binary_lane) {
        auto frame = std::make_shared<Bytes>(encode_chunk_frame(offer_.file_id, index, data));
        send(
            at_node, from, true, frame->size(),
            [this, at_node, from, frame] {
              auto f = parse_chunk_frame(ByteView(*frame));
              if (f) receive_chunk(from, at_node, f->index, f->data);
            },
            index);
      } else {
        auto body = std::make_shared<std::string>("{\"fileId\":\"" + fid_hex() +
                                                  "\",\"index\":" + std::to_string(index) +
                                                  ",\"data\":\"" + base64_encode(data) + "\"}");
        send(
            at_node, from, false, body->size() + sc_.envelope_bytes,
            [this, at_node, from, body] {
              receive_control(from, at_node, "swarm_chunk", *body, true);
            },
            index);
      }
    }
  }

  void ninja_chunk(std::uint32_t at_node, std::uint32_t from, std::uint32_t index, ByteView data) {
    Node& me = nodes_[at_node];
    auto it = me.asked.find(index);
    if (it != me.asked.end() && it->second.first == from) me.asked.erase(it);
    if (index >= shape_.total_chunks || me.held.count(index) || sha256(data) != hashes_[index])
      return;
    me.held.insert(index);
    me.stored[index] = sha256(data);
    NodeResult& r = result_.nodes[at_node];
    if (r.first_chunk_ms < 0) r.first_chunk_ms = now_;
    if (me.held.size() == shape_.total_chunks && r.completed_ms < 0) r.completed_ms = now_;
    (nodes_[from].spec.seeder ? r.bytes_from_seeders : r.bytes_from_peers) += data.size;
    ninja_tick(at_node);
  }

  void rebuild(std::uint32_t a, std::uint32_t b) {
    // Both ends see the connection close, then a fresh one open rebuild_ms later.
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
      nodes_[x].connected[y] = false;
      ++nodes_[x].gen[y];
      if (nodes_[x].swarm) nodes_[x].swarm->handle_peer_closed(y, now_);
    }
    at(now_ + sc_.rebuild_ms, [this, a, b] {
      for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
        nodes_[x].connected[y] = true;
        nodes_[x].dead_to[y] = false;
      }
      for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}})
        if (nodes_[x].swarm) {
          nodes_[x].swarm->handle_peer_open(y, caps_of(y), now_);
          drain(x);
        }
    });
  }

  Scenario sc_;
  SeededRng rng_;
  FileShape shape_;
  std::vector<ChunkHash> hashes_;
  Offer offer_;
  std::string offer_payload_;
  std::vector<Node> nodes_;
  std::vector<DropOnce> drops_left_ = sc_.drops;
  std::priority_queue<Event> events_;
  std::uint64_t seq_ = 0;
  std::int64_t now_ = 0;
  SimResult result_;
};

inline SimResult simulate(Scenario s) {
  return Simulator(std::move(s)).run();
}

}  // namespace tether::swarm::sim
