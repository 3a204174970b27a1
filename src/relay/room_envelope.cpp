// OpEnvelope validation and JSON helpers (room_envelope.hpp).
#include "relay/room_envelope.hpp"

#include <cmath>
#include <unordered_set>

#include "relay/room_limits.hpp"

namespace tether::relay {

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::set: return "set";
    case OpKind::del: return "delete";
    case OpKind::clear: return "clear";
  }
  return "set";
}

const Json* field(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  // ordered_json keeps a vector of pairs: a linear scan over a handful of keys, no allocation.
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (it.key() == key) return &it.value();
  }
  return nullptr;
}

std::optional<double> read_number(const Json& v) {
  if (!v.is_number()) return std::nullopt;
  double d = v.get<double>();
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

std::optional<Hlc> read_hlc(const Json& v) {
  // Any object with finite p and l (an array has neither, as in JS).
  const Json* p = field(v, "p");
  const Json* l = field(v, "l");
  if (!p || !l) return std::nullopt;
  auto pd = read_number(*p);
  auto ld = read_number(*l);
  if (!pd || !ld) return std::nullopt;
  return Hlc{*pd, *ld};
}

bool has_control_char(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20) return true;
  }
  return false;
}

bool clean_id(const Json& v) {
  if (!v.is_string()) return false;
  const auto& s = v.get_ref<const std::string&>();
  return !s.empty() && s.size() <= kMaxIdBytes && !has_control_char(s);
}

void append_number(std::string& out, double v) { append_js_number(out, v); }

void append_quoted(std::string& out, std::string_view s) {
  append_json(out, Json(std::string(s)));
}

void append_hlc(std::string& out, const Hlc& h) {
  out += "{\"p\":";
  append_js_number(out, h.p);
  out += ",\"l\":";
  append_js_number(out, h.l);
  out += '}';
}

void append_value(std::string& out, const Json& v) {
  switch (v.type()) {
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += ',';
        first = false;
        append_json(out, Json(it.key()));
        out += ':';
        append_value(out, it.value());
      }
      out += '}';
      return;
    }
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ',';
        first = false;
        append_value(out, e);
      }
      out += ']';
      return;
    }
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: append_js_number(out, v.get<double>()); return;
    default: append_json(out, v); return;
  }
}

std::string value_text(const Json& v) {
  std::string out;
  append_value(out, v);
  return out;
}

void append_js_string(std::string& out, const Json& v) {
  switch (v.type()) {
    case Json::value_t::string: out += v.get_ref<const std::string&>(); return;
    case Json::value_t::boolean: out += v.get<bool>() ? "true" : "false"; return;
    case Json::value_t::null: out += "null"; return;
    case Json::value_t::object: out += "[object Object]"; return;
    case Json::value_t::array: {
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ',';
        first = false;
        if (!e.is_null()) append_js_string(out, e);  // Array.prototype.join writes null as ""
      }
      return;
    }
    default: append_js_number(out, v.get<double>()); return;
  }
}

namespace {

const char* validate_op(const Json& op, OpView& view) {
  if (!op.is_object() && !op.is_array()) return "op";
  const Json* kind = field(op, "kind");
  if (!kind || !kind->is_string()) return "kind";
  const auto& k = kind->get_ref<const std::string&>();
  if (k == "set") view.kind = OpKind::set;
  else if (k == "delete") view.kind = OpKind::del;
  else if (k == "clear") view.kind = OpKind::clear;
  else return "kind";
  const Json* path = field(op, "path");
  if (!path || !path->is_array()) return "path";
  if (path->size() > kMaxPathDepth) return "bounds";
  view.depth = path->size();
  view.segments.reserve(path->size());
  for (const auto& seg : *path) {
    if (seg.is_string()) {
      const auto& s = seg.get_ref<const std::string&>();
      if (has_control_char(s)) return "path-control";
      if (s == "__proto__") return "path-proto";
    }
    std::string text;
    append_js_string(text, seg);
    if (text.size() > kMaxPathSegmentBytes) return "bounds";
    if (!view.key.empty() || !view.segments.empty()) view.key += kPathKeySeparator;
    view.key += text;
    view.segments.push_back(std::move(text));
  }
  if (view.depth == 0 && view.kind != OpKind::set) return "root-op";
  const Json* epoch = field(op, "epoch");
  if (!epoch) return "epoch";
  auto e = read_number(*epoch);
  if (!e || *e < 0) return "epoch";
  view.epoch = *e;
  const Json* cites = field(op, "cites");
  if (!cites || !cites->is_array()) return "cites";
  view.cites.reserve(cites->size());
  for (const auto& c : *cites) {
    const Json* origin = field(c, "origin");
    if (!origin || !clean_id(*origin)) return "cites";
    const Json* hlc = field(c, "hlc");
    auto h = hlc ? read_hlc(*hlc) : std::nullopt;
    if (!h) return "cites";
    view.cites.push_back(Cite{origin->get<std::string>(), *h});
  }
  return nullptr;
}

}  // namespace

const char* validate_envelope(const Json& env, EnvelopeView& out) {
  if (!env.is_object() && !env.is_array()) return "envelope";
  const Json* instance = field(env, "instance");
  if (!instance || !instance->is_string()) return "instance";
  const auto& inst = instance->get_ref<const std::string&>();
  if (has_control_char(inst)) return "instance";
  if (inst.size() > kMaxIdBytes) return "bounds";
  const Json* origin = field(env, "origin");
  if (!origin || !clean_id(*origin)) {
    return origin && origin->is_string() && origin->get_ref<const std::string&>().size() > kMaxIdBytes &&
                   !has_control_char(origin->get_ref<const std::string&>())
               ? "bounds"
               : "origin";
  }
  const Json* writer = field(env, "writer");
  if (!writer || !clean_id(*writer)) {
    return writer && writer->is_string() && writer->get_ref<const std::string&>().size() > kMaxIdBytes &&
                   !has_control_char(writer->get_ref<const std::string&>())
               ? "bounds"
               : "writer";
  }
  const Json* hlc = field(env, "hlc");
  auto h = hlc ? read_hlc(*hlc) : std::nullopt;
  if (!h) return "hlc";
  const Json* version = field(env, "version");
  auto v = version ? read_number(*version) : std::nullopt;
  if (!v || std::floor(*v) != *v || *v <= 0) return "version";
  const Json* ops = field(env, "ops");
  if (!ops || !ops->is_array()) return "ops";
  out.instance = inst;
  out.origin = origin->get<std::string>();
  out.writer = writer->get<std::string>();
  out.version = *v;
  out.hlc = *h;
  out.ops.clear();
  out.ops.reserve(ops->size());
  std::unordered_set<std::string_view> seen;
  for (const auto& op : *ops) {
    out.ops.emplace_back();
    OpView& view = out.ops.back();
    view.op = &op;
    if (const char* reason = validate_op(op, view)) return reason;
    // Keys live in out.ops, which was reserved, so the views stay valid.
    if (!seen.insert(view.key).second) return "dup-path";
  }
  return nullptr;
}

}  // namespace tether::relay
