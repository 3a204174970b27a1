// Register retention and heap-indexed garbage collection (registers.hpp).
#include "room/registers.hpp"

#include <algorithm>
#include <cmath>

#include "room/limits.hpp"

namespace tether::room {

namespace {
// std::push_heap builds a max-heap; invert so the smallest stamp is on top.
struct Later {
  template <class C>
  bool operator()(const C& a, const C& b) const {
    return compare_hlc(a.hlc, b.hlc) > 0;
  }
};
// The register identity of a path (envelope.hpp), or none for a value that is not an array.
std::optional<std::string> path_key(const Json& path) {
  if (!path.is_array()) return std::nullopt;
  return path_register_key(path);
}

std::optional<std::string> path_key(std::string_view path_json) {
  JsonParse p = parse_json(ByteView(path_json));
  if (!p.ok()) return std::nullopt;
  return path_key(p.value);
}
}  // namespace

RegisterStore::Sibling* RegisterStore::sibling_of(Entry& e, OriginId o) {
  for (auto& s : e.siblings) {
    if (s.origin == o) return &s;
  }
  return nullptr;
}

RegisterStore::Water* RegisterStore::water_of(Entry& e, OriginId o) {
  for (auto& w : e.water) {
    if (w.origin == o) return &w;
  }
  return nullptr;
}

RegisterStore::OriginGc& RegisterStore::gc(OriginId o) {
  if (gc_.size() <= o) gc_.resize(o + 1);
  return gc_[o];
}

void RegisterStore::touch(OriginId o) {
  OriginGc& g = gc(o);
  if (!g.dirty) {
    g.dirty = true;
    dirty_.push_back(o);
  }
}

void RegisterStore::push(std::vector<Candidate>& heap, Candidate c) {
  heap.push_back(c);
  std::push_heap(heap.begin(), heap.end(), Later{});
}

std::uint32_t RegisterStore::entry_for(const std::string& key, const std::string& path_json) {
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  std::uint32_t i;
  if (!free_.empty()) {
    i = free_.back();
    free_.pop_back();
  } else {
    i = static_cast<std::uint32_t>(slab_.size());
    slab_.emplace_back();
  }
  Entry& e = slab_[i];
  e.key = key;
  e.path_json = path_json;
  index_.emplace(key, i);
  return i;
}

void RegisterStore::link_reg(std::uint32_t i) {
  Entry& e = slab_[i];
  e.has_reg = true;
  e.reg_prev = reg_tail_;
  e.reg_next = kNone;
  if (reg_tail_ != kNone)
    slab_[reg_tail_].reg_next = i;
  else
    reg_head_ = i;
  reg_tail_ = i;
  ++register_count_;
}

void RegisterStore::unlink_reg(std::uint32_t i) {
  Entry& e = slab_[i];
  if (e.reg_prev != kNone)
    slab_[e.reg_prev].reg_next = e.reg_next;
  else
    reg_head_ = e.reg_next;
  if (e.reg_next != kNone)
    slab_[e.reg_next].reg_prev = e.reg_prev;
  else
    reg_tail_ = e.reg_prev;
  e.has_reg = false;
  e.siblings.clear();
  e.siblings.shrink_to_fit();
  e.water.clear();
  e.water.shrink_to_fit();
  --register_count_;
}

void RegisterStore::raise_epoch(std::uint32_t i, double epoch) {
  if (epoch <= 0) return;
  Entry& e = slab_[i];
  if (!e.has_epoch) {
    e.has_epoch = true;
    e.epoch = epoch;
    e.ep_prev = ep_tail_;
    e.ep_next = kNone;
    if (ep_tail_ != kNone)
      slab_[ep_tail_].ep_next = i;
    else
      ep_head_ = i;
    ep_tail_ = i;
  } else if (epoch > e.epoch) {
    e.epoch = epoch;
  }
}

void RegisterStore::maybe_free(std::uint32_t i) {
  Entry& e = slab_[i];
  if (e.has_reg || e.has_epoch) return;
  index_.erase(e.key);
  e.key.clear();
  e.key.shrink_to_fit();
  e.path_json.clear();
  e.path_json.shrink_to_fit();
  ++e.gen;  // invalidates every heap candidate that still names this slot
  free_.push_back(i);
}

void RegisterStore::ingest(const JsonScan& scan, const EnvelopeView& env, OriginId origin_id,
                           const std::string& writer_json, const std::string& origin_json,
                           const std::vector<std::vector<OriginId>>& cite_ids) {
  for (std::size_t k = 0; k < env.n_ops; ++k) {
    const OpView& op = env.ops[k];
    if (op.depth == 0 && op.kind != OpKind::set) continue;
    auto found = index_.find(op.key);
    std::string path_scratch;
    std::uint32_t i = found != index_.end()
                          ? found->second
                          : entry_for(op.key, std::string(scan.json(op.path, path_scratch)));
    if (!slab_[i].has_reg) link_reg(i);
    raise_epoch(i, op.epoch);
    Entry& e = slab_[i];
    for (std::size_t c = 0; c < op.n_cites; ++c) {
      const Cite& cite = op.cites[c];
      OriginId co = cite_ids[k][c];
      if (co == origin_id && compare_hlc(cite.hlc, env.hlc) == 0) continue;
      Water* w = water_of(e, co);
      if (w && compare_hlc(cite.hlc, w->hlc) <= 0) continue;
      if (w)
        w->hlc = cite.hlc;
      else
        e.water.push_back(Water{co, cite.hlc});
      OriginGc& g = gc(co);
      push(g.water, Candidate{cite.hlc, i, e.gen});
      if (Sibling* s = sibling_of(e, co); s && hlc_le(s->hlc, cite.hlc)) {
        push(g.siblings, Candidate{s->hlc, i, e.gen});
      }
      touch(co);
    }
    Sibling* best = sibling_of(e, origin_id);
    if (!best || compare_hlc(env.hlc, best->hlc) > 0) {
      std::string text;
      text.reserve(96);
      text += "{\"kind\":\"";
      text += op_kind_name(op.kind);
      text += "\",\"writer\":";
      text += writer_json;
      text += ",\"origin\":";
      text += origin_json;
      text += ",\"hlc\":";
      append_hlc(text, env.hlc);
      text += ",\"epoch\":";
      append_number(text, op.epoch);
      // Values travel as the bytes the client sent (json_scan.hpp, json()).
      if (op.next != JsonScan::kNone) {
        text += ",\"value\":";
        scan.append_json(text, op.next);
      }
      if (op.prev != JsonScan::kNone) {
        text += ",\"prev\":";
        scan.append_json(text, op.prev);
      }
      text += '}';
      if (best) {
        best->hlc = env.hlc;
        best->epoch = op.epoch;
        best->text = std::move(text);
      } else {
        e.siblings.push_back(Sibling{origin_id, env.hlc, op.epoch, std::move(text)});
      }
      if (Water* w = water_of(e, origin_id); w && hlc_le(env.hlc, w->hlc)) {
        push(gc(origin_id).siblings, Candidate{env.hlc, i, e.gen});
        touch(origin_id);
      }
    }
  }
}

void RegisterStore::load(const std::string& key, const std::string& path_json, double epoch,
                         std::vector<LoadedSibling> siblings,
                         const std::vector<std::pair<OriginId, Hlc>>& water) {
  std::uint32_t i = entry_for(key, path_json);
  raise_epoch(i, epoch);
  for (const auto& s : siblings) raise_epoch(i, s.epoch);
  if (siblings.empty() && water.empty()) {
    maybe_free(i);
    return;
  }
  if (!slab_[i].has_reg) link_reg(i);
  Entry& e = slab_[i];
  for (auto& s : siblings) {
    Sibling* cur = sibling_of(e, s.origin);
    if (!cur)
      e.siblings.push_back(Sibling{s.origin, s.hlc, s.epoch, std::move(s.text)});
    else if (compare_hlc(s.hlc, cur->hlc) > 0)
      *cur = Sibling{s.origin, s.hlc, s.epoch, std::move(s.text)};
  }
  for (const auto& [o, h] : water) {
    Water* cur = water_of(e, o);
    if (!cur)
      e.water.push_back(Water{o, h});
    else if (compare_hlc(h, cur->hlc) > 0)
      cur->hlc = h;
  }
  // Every candidate this register now holds, once: the settle after hydrate sees them all.
  for (const auto& w : e.water) {
    push(gc(w.origin).water, Candidate{w.hlc, i, e.gen});
    touch(w.origin);
  }
  for (const auto& s : e.siblings) {
    const Water* w = water_of(e, s.origin);
    if (w && hlc_le(s.hlc, w->hlc)) {
      push(gc(s.origin).siblings, Candidate{s.hlc, i, e.gen});
      touch(s.origin);
    }
  }
}

void RegisterStore::collect_origin(OriginId o, const Hlc& settled) {
  OriginGc& g = gc_[o];
  // Siblings first, against the water marks as they stood before this settle (the reference
  // order): a sibling covered by a mark that this same settle collects still goes.
  std::vector<std::uint32_t> emptied;
  while (!g.siblings.empty() && hlc_le(g.siblings.front().hlc, settled)) {
    Candidate c = g.siblings.front();
    std::pop_heap(g.siblings.begin(), g.siblings.end(), Later{});
    g.siblings.pop_back();
    Entry& e = slab_[c.entry];
    if (e.gen != c.gen || !e.has_reg) continue;
    Sibling* s = sibling_of(e, o);
    Water* w = water_of(e, o);
    if (!s || !w || compare_hlc(s->hlc, c.hlc) != 0 || !hlc_le(s->hlc, w->hlc)) continue;
    e.siblings.erase(e.siblings.begin() + (s - e.siblings.data()));
    if (e.siblings.empty() && e.water.empty()) emptied.push_back(c.entry);
  }
  while (!g.water.empty() && hlc_le(g.water.front().hlc, settled)) {
    Candidate c = g.water.front();
    std::pop_heap(g.water.begin(), g.water.end(), Later{});
    g.water.pop_back();
    Entry& e = slab_[c.entry];
    if (e.gen != c.gen || !e.has_reg) continue;
    Water* w = water_of(e, o);
    if (!w || compare_hlc(w->hlc, c.hlc) != 0) continue;
    e.water.erase(e.water.begin() + (w - e.water.data()));
    if (e.siblings.empty() && e.water.empty()) emptied.push_back(c.entry);
  }
  for (std::uint32_t i : emptied) {
    if (slab_[i].has_reg && slab_[i].siblings.empty() && slab_[i].water.empty()) {
      unlink_reg(i);
      maybe_free(i);
    }
  }
}

void RegisterStore::reset() {
  slab_.clear();
  free_.clear();
  index_.clear();
  reg_head_ = reg_tail_ = ep_head_ = ep_tail_ = kNone;
  register_count_ = 0;
  gc_.clear();
  dirty_.clear();
}

double RegisterStore::max_epoch(const std::string& key) const {
  // The baseline is raised by every retained sibling's epoch, so it is the maximum.
  auto it = index_.find(key);
  if (it == index_.end()) return 0;
  const Entry& e = slab_[it->second];
  return e.has_epoch ? e.epoch : 0;
}

bool RegisterStore::covers(const std::string& key, OriginId origin, const Hlc& h) const {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  const Entry& e = slab_[it->second];
  if (!e.has_reg) return false;
  for (const auto& s : e.siblings) {
    if (s.origin == origin && hlc_le(h, s.hlc)) return true;
  }
  for (const auto& w : e.water) {
    if (w.origin == origin) return hlc_le(h, w.hlc);
  }
  return false;
}

void RegisterStore::append_register(std::string& out, const Entry& e) const {
  out += "{\"path\":";
  out += e.path_json;
  out += ",\"siblings\":[";
  for (std::size_t k = 0; k < e.siblings.size(); ++k) {
    if (k) out += ',';
    out += e.siblings[k].text;
  }
  out += "],\"water\":{";
  for (std::size_t k = 0; k < e.water.size(); ++k) {
    if (k) out += ',';
    append_quoted(out, (*names_)[e.water[k].origin]);
    out += ':';
    append_hlc(out, e.water[k].hlc);
  }
  out += '}';
  if (e.has_epoch) {
    out += ",\"epoch\":";
    append_number(out, e.epoch);
  }
  out += '}';
}

void RegisterStore::append_checkpoint(std::string& out) const {
  out += '[';
  bool first = true;
  for (std::uint32_t i = reg_head_; i != kNone; i = slab_[i].reg_next) {
    if (!first) out += ',';
    first = false;
    append_register(out, slab_[i]);
  }
  for (std::uint32_t i = ep_head_; i != kNone; i = slab_[i].ep_next) {
    const Entry& e = slab_[i];
    if (e.has_reg) continue;
    if (!first) out += ',';
    first = false;
    out += "{\"path\":";
    out += e.path_json;
    out += ",\"siblings\":[],\"water\":{},\"epoch\":";
    append_number(out, e.epoch);
    out += '}';
  }
  out += ']';
}

std::size_t RegisterStore::memory_bytes() const {
  std::size_t n = slab_.capacity() * sizeof(Entry) + index_.size() * (sizeof(std::string) + 32) +
                  index_.bucket_count() * sizeof(void*);
  for (const auto& e : slab_) {
    n += e.key.capacity() + e.path_json.capacity() + e.siblings.capacity() * sizeof(Sibling) +
         e.water.capacity() * sizeof(Water);
    for (const auto& s : e.siblings) n += s.text.capacity();
  }
  for (const auto& g : gc_) n += (g.siblings.capacity() + g.water.capacity()) * sizeof(Candidate);
  return n;
}

bool read_register_checkpoint(const Json& registers, std::vector<CheckpointRegister>& out) {
  if (!registers.is_array()) return false;
  std::vector<CheckpointRegister> regs;
  for (const auto& r : registers) {
    CheckpointRegister lr;
    const Json* path = field(r, "path");
    if (!path || !path->is_array() || path->size() > kMaxPathDepth) return false;
    lr.key = *path_key(*path);
    lr.path_json = value_text(*path);
    if (const Json* e = field(r, "epoch")) {
      auto ev = read_number(*e);
      if (!ev) return false;
      lr.epoch = *ev;
    }
    const Json* sibs = field(r, "siblings");
    if (!sibs || !sibs->is_array()) return false;
    for (const auto& s : *sibs) {
      const Json* o = field(s, "origin");
      const Json* h = field(s, "hlc");
      auto hv = h ? read_hlc(*h) : std::nullopt;
      if (!o || !clean_id(*o) || !hv) return false;
      double epoch = 0;
      if (const Json* e = field(s, "epoch")) {
        auto ev = read_number(*e);
        if (!ev) return false;
        epoch = *ev;
      }
      lr.siblings.emplace_back(o->get<std::string>(),
                               RegisterStore::LoadedSibling{0, *hv, epoch, value_text(s)});
    }
    if (const Json* water = field(r, "water")) {
      if (!water->is_object()) return false;
      for (auto it = water->begin(); it != water->end(); ++it) {
        auto hv = read_hlc(it.value());
        if (!hv) return false;
        lr.water.emplace_back(it.key(), *hv);
      }
    }
    regs.push_back(std::move(lr));
  }
  for (auto& lr : regs) out.push_back(std::move(lr));
  return true;
}

// ---- RegisterTable ------------------------------------------------------------------------------

OriginId RegisterTable::intern(const std::string& name) {
  auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  OriginId id = static_cast<OriginId>(names_->size());
  names_->push_back(name);
  ids_.emplace(name, id);
  return id;
}

const char* RegisterTable::ingest(std::string_view env_json) {
  if (!scan_.parse(env_json, kMaxJsonDepth)) return "envelope";
  if (const char* reason = validate_envelope(scan_, 0, view_)) return reason;
  OriginId origin = intern(view_.origin);
  if (cite_ids_.size() < view_.n_ops) cite_ids_.resize(view_.n_ops);
  for (std::size_t k = 0; k < view_.n_ops; ++k) {
    cite_ids_[k].clear();
    for (std::size_t c = 0; c < view_.ops[k].n_cites; ++c) {
      cite_ids_[k].push_back(intern(view_.ops[k].cites[c].origin));
    }
  }
  std::string writer_json, origin_json;
  append_quoted(writer_json, view_.writer);
  append_quoted(origin_json, view_.origin);
  store_.ingest(scan_, view_, origin, writer_json, origin_json, cite_ids_);
  return nullptr;
}

bool RegisterTable::load(std::string_view registers_json) {
  JsonParse p = parse_json(ByteView(registers_json));
  std::vector<CheckpointRegister> regs;
  if (!p.ok() || !read_register_checkpoint(p.value, regs)) return false;
  for (auto& lr : regs) {
    std::vector<RegisterStore::LoadedSibling> sibs;
    for (auto& [o, s] : lr.siblings) {
      s.origin = intern(o);
      sibs.push_back(std::move(s));
    }
    std::vector<std::pair<OriginId, Hlc>> water;
    for (auto& [o, h] : lr.water) water.emplace_back(intern(o), h);
    store_.load(lr.key, lr.path_json, lr.epoch, std::move(sibs), water);
  }
  return true;
}

bool RegisterTable::settle(std::string_view settled_json) {
  JsonParse p = parse_json(ByteView(settled_json));
  if (!p.ok() || !p.value.is_object()) return false;
  std::vector<std::pair<OriginId, Hlc>> stamps;
  for (auto it = p.value.begin(); it != p.value.end(); ++it) {
    auto h = read_hlc(it.value());
    if (!h) return false;
    auto id = ids_.find(it.key());
    // An origin the store never saw holds nothing to collect.
    if (id != ids_.end()) stamps.emplace_back(id->second, *h);
  }
  std::vector<const Hlc*> by_origin(names_->size(), nullptr);
  for (const auto& [o, h] : stamps) {
    by_origin[o] = &h;
    store_.touch(o);
  }
  store_.settle(
      [&](OriginId o) -> const Hlc* { return o < by_origin.size() ? by_origin[o] : nullptr; });
  return true;
}

std::string RegisterTable::checkpoint() const {
  std::string out;
  store_.append_checkpoint(out);
  return out;
}

double RegisterTable::max_epoch(std::string_view path_json) const {
  auto key = path_key(path_json);
  return key ? store_.max_epoch(*key) : std::nan("");
}

int RegisterTable::covers(std::string_view path_json, const std::string& origin,
                          std::string_view hlc_json) const {
  auto key = path_key(path_json);
  JsonParse p = parse_json(ByteView(hlc_json));
  auto h = p.ok() ? read_hlc(p.value) : std::nullopt;
  if (!key || !h) return -1;
  auto id = ids_.find(origin);
  return id != ids_.end() && store_.covers(*key, id->second, *h) ? 1 : 0;
}

}  // namespace tether::room
