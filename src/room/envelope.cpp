// OpEnvelope validation and JSON helpers (envelope.hpp).
#include "room/envelope.hpp"

#include <cmath>
#include <unordered_set>

#include "room/limits.hpp"

namespace tether::room {

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

void append_number(std::string& out, double v) {
  append_js_number(out, v);
}

void append_quoted(std::string& out, std::string_view s) {
  append_json_string(out, s);  // JSON.stringify's escaping (common/json)
}

void append_hlc(std::string& out, const Hlc& h) {
  out += "{\"p\":";
  append_js_number(out, h.p);
  out += ",\"l\":";
  append_js_number(out, h.l);
  out += '}';
}

// Numbers as the JavaScript reference writes them (every number a double).
void append_value(std::string& out, const Json& v) {
  append_json(out, v, JsonNumbers::js_double);
}

std::string value_text(const Json& v) {
  std::string out;
  append_value(out, v);
  return out;
}

std::string path_register_key(const Json& path) {
  std::string key;
  bool first = true;
  for (const auto& seg : path) {
    if (!first) key += kPathKeySeparator;
    first = false;
    append_js_string(key, seg);
  }
  return key;
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

std::optional<double> read_number(const JsonScan& scan, std::uint32_t v) {
  if (!scan.is_number(v)) return std::nullopt;
  double d = scan.number(v);
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

std::optional<Hlc> read_hlc(const JsonScan& scan, std::uint32_t v) {
  if (!scan.is_object(v)) return std::nullopt;  // an array has no p or l either
  auto p = read_number(scan, scan.field(v, "p"));
  auto l = read_number(scan, scan.field(v, "l"));
  if (!p || !l) return std::nullopt;
  return Hlc{*p, *l};
}

bool clean_id(const JsonScan& scan, std::uint32_t v, std::string& out) {
  if (!scan.is_string(v)) return false;
  std::string_view s = scan.str(v, out);
  if (s.data() != out.data()) out.assign(s.data(), s.size());
  return !out.empty() && out.size() <= kMaxIdBytes && !has_control_char(out);
}

void append_js_string(std::string& out, const JsonScan& scan, std::uint32_t v) {
  const auto& n = scan.node(v);
  switch (n.type) {
    case JsonScan::Type::string: {
      std::string scratch;
      out += scan.str(v, scratch);
      return;
    }
    case JsonScan::Type::boolean: out += n.truthy ? "true" : "false"; return;
    case JsonScan::Type::null: out += "null"; return;
    case JsonScan::Type::object: out += "[object Object]"; return;
    case JsonScan::Type::array: {
      bool first = true;
      for (std::uint32_t c = n.first; c != JsonScan::kNone; c = scan.node(c).next) {
        if (!first) out += ',';
        first = false;
        if (scan.node(c).type != JsonScan::Type::null) append_js_string(out, scan, c);
      }
      return;
    }
    case JsonScan::Type::number: {
      // String(x), which differs from JSON.stringify only beyond a double's range.
      const double d = scan.number(v);
      if (std::isinf(d))
        out += d > 0 ? "Infinity" : "-Infinity";
      else
        append_js_number(out, d);
      return;
    }
  }
}

namespace {

const char* id_reason(const JsonScan& scan, std::uint32_t v, std::string& out, const char* reason) {
  if (clean_id(scan, v, out)) return nullptr;
  // Over-long but otherwise clean: our bound, not the reference's shape rule.
  if (scan.is_string(v) && out.size() > kMaxIdBytes && !has_control_char(out)) return "bounds";
  return reason;
}

const char* validate_op(const JsonScan& scan, std::uint32_t op, OpView& view) {
  view.op = op;
  view.key.clear();
  view.n_cites = 0;
  view.next = view.prev = JsonScan::kNone;
  const auto& n = scan.node(op);
  if (n.type != JsonScan::Type::object && n.type != JsonScan::Type::array) return "op";
  std::uint32_t kind = scan.field(op, "kind");
  if (!scan.is_string(kind)) return "kind";
  std::string scratch;
  std::string_view k = scan.str(kind, scratch);
  if (k == "set")
    view.kind = OpKind::set;
  else if (k == "delete")
    view.kind = OpKind::del;
  else if (k == "clear")
    view.kind = OpKind::clear;
  else
    return "kind";
  std::uint32_t path = scan.field(op, "path");
  if (!scan.is_array(path)) return "path";
  view.path = path;
  if (scan.node(path).count > kMaxPathDepth) return "bounds";
  view.depth = scan.node(path).count;
  if (view.segments.size() < view.depth) view.segments.resize(view.depth);
  std::size_t i = 0;
  for (std::uint32_t seg = scan.node(path).first; seg != JsonScan::kNone;
       seg = scan.node(seg).next, ++i) {
    std::string& text = view.segments[i];
    text.clear();
    if (scan.is_string(seg)) {
      std::string_view s = scan.str(seg, text);
      if (s.data() != text.data()) text.assign(s.data(), s.size());
      if (has_control_char(text)) return "path-control";
      if (text == "__proto__") return "path-proto";
    } else {
      append_js_string(text, scan, seg);
    }
    if (text.size() > kMaxPathSegmentBytes) return "bounds";
    if (i) view.key += kPathKeySeparator;
    view.key += text;
  }
  if (view.depth == 0 && view.kind != OpKind::set) return "root-op";
  auto epoch = read_number(scan, scan.field(op, "epoch"));
  if (!epoch || *epoch < 0) return "epoch";
  view.epoch = *epoch;
  std::uint32_t cites = scan.field(op, "cites");
  if (!scan.is_array(cites)) return "cites";
  for (std::uint32_t c = scan.node(cites).first; c != JsonScan::kNone; c = scan.node(c).next) {
    if (view.cites.size() <= view.n_cites) view.cites.emplace_back();
    Cite& cite = view.cites[view.n_cites];
    if (!clean_id(scan, scan.field(c, "origin"), cite.origin)) return "cites";
    auto h = read_hlc(scan, scan.field(c, "hlc"));
    if (!h) return "cites";
    cite.hlc = *h;
    ++view.n_cites;
  }
  if (view.kind == OpKind::set) view.next = scan.field(op, "next");
  if (view.kind != OpKind::clear) view.prev = scan.field(op, "prev");
  return nullptr;
}

}  // namespace

const char* validate_envelope(const JsonScan& scan, std::uint32_t env, EnvelopeView& out) {
  out.n_ops = 0;
  if (env == JsonScan::kNone) return "envelope";
  const auto& n = scan.node(env);
  if (n.type != JsonScan::Type::object && n.type != JsonScan::Type::array) return "envelope";
  std::uint32_t instance = scan.field(env, "instance");
  if (!scan.is_string(instance)) return "instance";
  {
    std::string_view s = scan.str(instance, out.instance);
    if (s.data() != out.instance.data()) out.instance.assign(s.data(), s.size());
    if (has_control_char(out.instance)) return "instance";
    if (out.instance.size() > kMaxIdBytes) return "bounds";
  }
  if (const char* r = id_reason(scan, scan.field(env, "origin"), out.origin, "origin")) return r;
  if (const char* r = id_reason(scan, scan.field(env, "writer"), out.writer, "writer")) return r;
  auto h = read_hlc(scan, scan.field(env, "hlc"));
  if (!h) return "hlc";
  out.hlc = *h;
  auto v = read_number(scan, scan.field(env, "version"));
  if (!v || std::floor(*v) != *v || *v <= 0) return "version";
  out.version = *v;
  std::uint32_t ops = scan.field(env, "ops");
  if (!scan.is_array(ops)) return "ops";
  out.schema = scan.field(env, "schemaVersion");
  for (std::uint32_t op = scan.node(ops).first; op != JsonScan::kNone; op = scan.node(op).next) {
    if (out.ops.size() <= out.n_ops) out.ops.emplace_back();
    OpView& view = out.ops[out.n_ops];
    if (const char* reason = validate_op(scan, op, view)) return reason;
    // Envelopes carry a handful of ops: a pairwise scan beats hashing, up to a point.
    if (out.n_ops < 16) {
      for (std::size_t k = 0; k < out.n_ops; ++k) {
        if (out.ops[k].key == view.key) return "dup-path";
      }
    }
    ++out.n_ops;
  }
  if (out.n_ops >= 16) {
    std::unordered_set<std::string_view> seen;
    seen.reserve(out.n_ops);
    for (std::size_t k = 0; k < out.n_ops; ++k) {
      if (!seen.insert(out.ops[k].key).second) return "dup-path";
    }
  }
  return nullptr;
}

const char* validate_envelope(const Json& env, EnvelopeView& out, JsonScan& scan,
                              std::string& text) {
  text = value_text(env);
  if (!scan.parse(text, kMaxJsonDepth)) return "envelope";
  return validate_envelope(scan, 0, out);
}

}  // namespace tether::room
