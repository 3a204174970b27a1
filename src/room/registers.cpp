// Register retention and heap-indexed garbage collection (registers.hpp).
#include "room/registers.hpp"

#include <algorithm>

namespace tether::room {

namespace {
// std::push_heap builds a max-heap; invert so the smallest stamp is on top.
struct Later {
  template <class C>
  bool operator()(const C& a, const C& b) const {
    return compare_hlc(a.hlc, b.hlc) > 0;
  }
};
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

}  // namespace tether::room
