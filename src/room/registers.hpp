// Per-path register retention of one room (the room-relay spec, "What it is", "Persistence"):
// per path, the best sibling per origin plus per-origin citation water marks, an epoch baseline
// per path that collection never lowers, and garbage collection against the settled vector.
//
// Cost model (docs/design.md rule 6): ingest touches only the paths an envelope names. Collection
// never walks the registers: every (origin, stamp) that could become collectable is pushed on a
// per-origin min-heap when it appears, and a settle pops only the entries at or below that
// origin's settled stamp, validating them lazily (an entry whose register moved on is skipped).
// Checkpoints keep the reference's order (registers by first retention, then epoch-only paths).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "room/envelope.hpp"

namespace tether::room {

using OriginId = std::uint32_t;

class RegisterStore {
 public:
  // Interns origin names: the same table as the room's, so ids agree.
  explicit RegisterStore(std::vector<std::string>* origin_names) : names_(origin_names) {}

  // Folds one sequenced envelope's ops in (retention only). `origin_id` interns env.origin;
  // `cite_ids` parallels each op's cites.
  void ingest(const JsonScan& scan, const EnvelopeView& env, OriginId origin_id,
              const std::string& writer_json, const std::string& origin_json,
              const std::vector<std::vector<OriginId>>& cite_ids);

  // Merges one checkpointed register in (hydrate). Values are already validated.
  struct LoadedSibling {
    OriginId origin;
    Hlc hlc;
    double epoch;
    std::string text;
  };
  void load(const std::string& key, const std::string& path_json, double epoch,
            std::vector<LoadedSibling> siblings,
            const std::vector<std::pair<OriginId, Hlc>>& water);

  // Collects what `settled` makes garbage, for the origins touched since the last call.
  // `settled_of` answers an origin's settled stamp.
  template <class SettledOf>
  void settle(SettledOf settled_of);

  // The origin's settled stamp moved: its candidates are examined at the next settle.
  void touch(OriginId o);

  void reset();
  void append_checkpoint(std::string& out) const;
  double max_epoch(const std::string& key) const;
  bool covers(const std::string& key, OriginId origin, const Hlc& h) const;

  std::size_t register_count() const { return register_count_; }
  // Approximate heap bytes held, for the benchmark's bytes-per-register figure.
  std::size_t memory_bytes() const;

 private:
  struct Sibling {
    OriginId origin;
    Hlc hlc;
    double epoch;
    std::string text;  // the sibling object as it goes on the wire
  };
  struct Water {
    OriginId origin;
    Hlc hlc;
  };
  static constexpr std::uint32_t kNone = 0xffffffffu;
  struct Entry {
    std::string key;
    std::string path_json;
    std::uint32_t gen = 0;
    bool has_reg = false;
    bool has_epoch = false;
    double epoch = 0;
    std::vector<Sibling> siblings;  // insertion order by origin
    std::vector<Water> water;       // insertion order by origin
    std::uint32_t reg_prev = kNone, reg_next = kNone;
    std::uint32_t ep_prev = kNone, ep_next = kNone;
  };
  struct Candidate {
    Hlc hlc;
    std::uint32_t entry;
    std::uint32_t gen;
  };
  struct OriginGc {
    std::vector<Candidate> siblings;  // min-heaps by hlc
    std::vector<Candidate> water;
    bool dirty = false;
  };

  std::uint32_t entry_for(const std::string& key, const std::string& path_json);
  void link_reg(std::uint32_t i);
  void unlink_reg(std::uint32_t i);
  void raise_epoch(std::uint32_t i, double epoch);
  void maybe_free(std::uint32_t i);
  void push(std::vector<Candidate>& heap, Candidate c);
  OriginGc& gc(OriginId o);
  void collect_origin(OriginId o, const Hlc& settled);
  static Sibling* sibling_of(Entry& e, OriginId o);
  static Water* water_of(Entry& e, OriginId o);
  void append_register(std::string& out, const Entry& e) const;

  std::vector<std::string>* names_;
  std::vector<Entry> slab_;
  std::vector<std::uint32_t> free_;
  std::unordered_map<std::string, std::uint32_t> index_;
  std::uint32_t reg_head_ = kNone, reg_tail_ = kNone;
  std::uint32_t ep_head_ = kNone, ep_tail_ = kNone;
  std::size_t register_count_ = 0;
  std::vector<OriginGc> gc_;
  std::vector<OriginId> dirty_;
};

// One register of a checkpoint as read back, origins still by name (hydrate and RegisterTable).
struct CheckpointRegister {
  std::string key, path_json;
  double epoch = 0;
  std::vector<std::pair<std::string, RegisterStore::LoadedSibling>> siblings;
  std::vector<std::pair<std::string, Hlc>> water;
};
// Reads a checkpoint's `registers` array whole: false on anything malformed (a path that is not
// an array or is deeper than kMaxPathDepth, a sibling without a clean origin or an hlc, a
// non-number epoch, water that is not an object of hlcs), and then `out` is left as it was.
bool read_register_checkpoint(const Json& registers, std::vector<CheckpointRegister>& out);

// The reference's standalone createRegisterStore (the room-relay spec, "Persistence"): the same
// RegisterStore the relay runs, with its own origin table and JSON in and out. Where the relay
// tells the store which origins' settled stamps moved, a caller of settle() passes a whole
// settled record, so every origin it names is examined; collection still pops only candidates at
// or below each stamp, never walking the registers.
class RegisterTable {
 public:
  RegisterTable() : names_(std::make_unique<std::vector<std::string>>()), store_(names_.get()) {}
  RegisterTable(const RegisterTable&) = delete;
  RegisterTable& operator=(const RegisterTable&) = delete;

  // Folds one envelope in; nullptr when done, else the validateEnvelope reason it was refused
  // for ("envelope" for text that is not one JSON value), and nothing changed.
  const char* ingest(std::string_view env_json);
  // Merges a checkpoint (the array checkpoint() writes) in; false, and nothing changed, when
  // read_register_checkpoint refuses it.
  bool load(std::string_view registers_json);
  // Collects against `settled_json`, an object of origin to hlc; false, and nothing collected,
  // when it is not one.
  bool settle(std::string_view settled_json);
  void reset() { store_.reset(); }
  std::string checkpoint() const;
  // `path_json` is the path as a JSON array; NaN when it is not one.
  double max_epoch(std::string_view path_json) const;
  // -1 when `path_json` is not a path or `hlc_json` not an hlc, else 0 or 1.
  int covers(std::string_view path_json, const std::string& origin,
             std::string_view hlc_json) const;

 private:
  OriginId intern(const std::string& name);
  std::unique_ptr<std::vector<std::string>> names_;  // the store keeps a pointer: never moves
  std::unordered_map<std::string, OriginId> ids_;
  RegisterStore store_;
  JsonScan scan_;
  EnvelopeView view_;
  std::vector<std::vector<OriginId>> cite_ids_;
};

template <class SettledOf>
void RegisterStore::settle(SettledOf settled_of) {
  std::vector<OriginId> dirty;
  dirty.swap(dirty_);
  for (OriginId o : dirty) {
    gc_[o].dirty = false;
    const Hlc* s = settled_of(o);
    if (s) collect_origin(o, *s);
  }
}

}  // namespace tether::room
