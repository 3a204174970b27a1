#include "wire/manifest.hpp"

#include <set>
#include <vector>

#include "common/utf8.hpp"
#include "wire/frame.hpp"
#include "wire/limits.hpp"

namespace tether::wire {
namespace {

using C = ManifestErrorCode;

// One channel as a panel rule sees it.
struct ChannelFacts {
  std::string encoding;
  std::string dir;
  std::string delivery;
  bool publish = false;
};

class Checker {
 public:
  ManifestErrors errors;

  bool full() const { return errors.size() >= kMaxManifestErrors; }
  void add(C code, std::string path, std::string message) {
    if (!full()) errors.push_back({code, std::move(path), std::move(message)});
  }

  bool text(const Json& v, const std::string& path, std::size_t max_chars, bool non_empty) {
    if (!v.is_string()) {
      add(C::wrong_type, path, path + ": expected a string");
      return false;
    }
    const auto& s = v.get_ref<const std::string&>();
    if ((non_empty && s.empty()) || utf8_code_points(s) > max_chars) {
      add(C::bad_value, path,
          path + ": expected " + (non_empty ? "1" : "0") + " to " + std::to_string(max_chars) +
              " characters");
      return false;
    }
    return true;
  }

  bool one_of(const Json& v, const std::string& path, std::initializer_list<const char*> names) {
    if (v.is_string()) {
      for (const char* n : names) {
        if (v.get_ref<const std::string&>() == n) return true;
      }
    }
    std::string allowed;
    for (const char* n : names)
      allowed += std::string(allowed.empty() ? "" : " or ") + "\"" + n + "\"";
    add(C::bad_value, path, path + ": expected " + allowed);
    return false;
  }
};

Json normalise_channel(Checker& c, const Json& in, const std::string& path,
                       std::set<std::string>& ids, std::vector<ChannelFacts>& facts) {
  Json out = Json::object();
  if (!in.is_object()) {
    c.add(C::wrong_type, path, path + ": expected a channel object");
    return out;
  }
  // Keys v1 does not know are ignored and left out of the normal form (dimos v5's rule), so a
  // newer robot's manifest still validates here.
  ChannelFacts f{"", "rx", "latest", false};
  auto ch = in.find("ch");
  if (ch == in.end()) {
    c.add(C::missing_field, path + ".ch", path + ".ch is required");
  } else if (!ch->is_string()) {
    c.add(C::wrong_type, path + ".ch", path + ".ch: expected a string");
  } else {
    const auto& id = ch->get_ref<const std::string&>();
    if (id.empty() || utf8_code_points(id) > kMaxChannelIdChars) {
      c.add(C::bad_channel_id, path + ".ch", path + ".ch: channel ids are 1 to 64 characters");
    } else if (is_reserved_channel(id)) {
      c.add(C::bad_channel_id, path + ".ch",
            path + ".ch: ids starting with '@' are reserved for control frames");
    } else if (!ids.insert(id).second) {
      c.add(C::duplicate_channel, path + ".ch", path + ".ch: \"" + id + "\" is declared twice");
    }
    out["ch"] = id;
  }
  auto dir = in.find("dir");
  if (dir != in.end() && c.one_of(*dir, path + ".dir", {"rx", "tx"})) f.dir = *dir;
  out["dir"] = f.dir;
  auto enc = in.find("encoding");
  if (enc == in.end()) {
    c.add(C::missing_field, path + ".encoding", path + ".encoding is required (e.g. \"jpeg.v1\")");
  } else if (c.text(*enc, path + ".encoding", kMaxEncodingChars, true)) {
    f.encoding = *enc;
  }
  out["encoding"] = f.encoding;
  auto del = in.find("delivery");
  if (del != in.end() && c.one_of(*del, path + ".delivery", {"latest", "reliable"}))
    f.delivery = *del;
  out["delivery"] = f.delivery;
  auto hz = in.find("maxHz");
  if (hz != in.end()) {
    auto v = json_finite(*hz);
    if (!v || *v <= 0) {
      c.add(C::bad_value, path + ".maxHz", path + ".maxHz: expected a number above 0");
    } else {
      out["maxHz"] = *hz;
    }
  }
  auto params = in.find("params");
  if (params != in.end() && !params->is_object()) {
    c.add(C::wrong_type, path + ".params", path + ".params: expected an object");
  }
  out["params"] = params != in.end() && params->is_object() ? *params : Json::object();
  bool publish = false;
  auto pub = in.find("publish");
  if (pub != in.end()) {
    if (!pub->is_boolean()) {
      c.add(C::wrong_type, path + ".publish", path + ".publish: expected true or false");
    } else {
      publish = pub->get<bool>();
    }
  }
  if (publish && f.dir != "tx")
    c.add(C::publish_needs_tx, path + ".publish",
          path + ".publish: only tx channels can be published to");
  out["publish"] = publish;
  f.publish = publish;
  auto scope = in.find("requiredScope");
  if (scope != in.end() && !scope->is_null() &&
      c.text(*scope, path + ".requiredScope", kMaxShortTextChars, true))
    out["requiredScope"] = *scope;
  facts.push_back(f);
  return out;
}

// One slot of a panel kind's channel rule.
struct Slot {
  std::vector<const char*> encodings;
  const char* dir;
  const char* delivery;  // nullptr: either
  bool optional;
  bool shared = false;  // a tx channel viewers publish on: it must be declared publish: true
};

struct KindRule {
  const char* kind;
  std::vector<Slot> slots;
};

const std::vector<KindRule>& kind_rules() {
  static const std::vector<KindRule> rules = {
      {"video", {{{"jpeg.v1", "video.webrtc.v1"}, "rx", "latest", false}}},
      {"map2d",
       {{{"costmap.zlib.v1"}, "rx", "latest", false}, {{"pose.json.v1"}, "rx", nullptr, true}}},
      {"map3d",
       {{{"voxels.zlib.v1"}, "rx", "latest", false}, {{"pose.json.v1"}, "rx", nullptr, true}}},
      {"teleop", {{{"twist.json.v1"}, "tx", "latest", false}}},
      // The spec's "shared tx": the operator's text and audio reach the robot as publishes.
      {"chat",
       {{{"text.json.v1"}, "tx", "reliable", false, true},
        {{"chat.json.v1"}, "rx", "reliable", false},
        {{"json.v1"}, "rx", "latest", false},
        {{"audio.json.v1"}, "tx", "reliable", false, true}}},
      {"stats", {{{"stats.json.v1"}, "rx", "latest", false}}},
  };
  return rules;
}

std::string describe(const Slot& s) {
  std::string enc;
  for (const char* e : s.encodings) enc += std::string(enc.empty() ? "" : " or ") + e;
  return enc + " " + (s.delivery ? std::string(s.delivery) + " " : "") +
         (s.shared ? "shared " : "") + s.dir;
}

void check_kind(Checker& c, const std::string& kind, const std::vector<const ChannelFacts*>& chans,
                const std::string& path) {
  for (const KindRule& rule : kind_rules()) {
    if (kind != rule.kind) continue;
    std::size_t required = 0;
    for (const Slot& s : rule.slots) required += !s.optional;
    if (chans.size() < required || chans.size() > rule.slots.size()) {
      std::string want;
      for (const Slot& s : rule.slots)
        want += (want.empty() ? "" : ", ") + describe(s) + (s.optional ? " (optional)" : "");
      c.add(C::panel_rule, path, path + ": a " + kind + " panel takes " + want);
      return;
    }
    std::size_t i = 0;
    for (const Slot& s : rule.slots) {
      if (i >= chans.size()) break;
      const ChannelFacts& f = *chans[i];
      bool enc_ok = false;
      for (const char* e : s.encodings) enc_ok = enc_ok || f.encoding == e;
      if (!enc_ok || f.dir != s.dir || (s.delivery && f.delivery != s.delivery)) {
        c.add(C::panel_rule, path + "[" + std::to_string(i) + "]",
              path + "[" + std::to_string(i) + "]: a " + kind + " panel needs " + describe(s) +
                  " here, not " + f.encoding + " " + f.delivery + " " + f.dir);
      } else if (s.shared && !f.publish) {
        c.add(C::panel_rule, path + "[" + std::to_string(i) + "]",
              path + "[" + std::to_string(i) + "]: a " + kind + " panel's " + f.encoding +
                  " channel is shared: declare it with publish: true");
      }
      ++i;
    }
    return;
  }
  // Unknown kinds pass through; the cockpit renders them as unknown panels.
}

// Checks one layout node and returns it rebuilt without keys v1 does not know. `placed` is shared
// with the pages, so a panel appears at most once in the whole cockpit (dimos v5).
Json check_layout(Checker& c, const Json& node, const std::string& path,
                  const std::set<std::string>& panels, std::set<std::string>& placed,
                  std::size_t depth) {
  if (depth > kMaxLayoutDepth) {
    c.add(C::bad_layout, path, path + ": the layout nests deeper than 16 levels");
    return nullptr;
  }
  if (node.is_string()) {
    const auto& id = node.get_ref<const std::string&>();
    if (!panels.count(id)) {
      c.add(C::unknown_panel, path, path + ": no panel has id \"" + id + "\"");
    } else if (!placed.insert(id).second) {
      c.add(C::bad_layout, path, path + ": panel \"" + id + "\" is placed twice");
    }
    return node;
  }
  if (!node.is_object()) {
    c.add(C::bad_layout, path, path + ": expected a panel id, {row: [...]} or {col: [...]}");
    return nullptr;
  }
  const bool row = node.contains("row"), col = node.contains("col");
  if (row == col) {
    c.add(C::bad_layout, path, path + ": a layout node has exactly one of row or col");
    return nullptr;
  }
  const char* key = row ? "row" : "col";
  const Json& items = node[key];
  const std::string ipath = path + "." + key;
  if (!items.is_array() || items.empty()) {
    c.add(C::bad_layout, ipath, ipath + ": expected an array of at least one panel id or node");
    return nullptr;
  }
  if (items.size() > kMaxManifestPanels) {
    c.add(C::too_many, ipath, ipath + ": too many entries");
    return nullptr;
  }
  Json out = Json::object();
  auto shares = node.find("shares");
  if (shares != node.end()) {
    bool ok = shares->is_array() && shares->size() == items.size();
    for (std::size_t i = 0; ok && i < shares->size(); ++i) {
      auto v = json_finite((*shares)[i]);
      ok = v && *v > 0;
    }
    if (!ok)
      c.add(C::bad_layout, path + ".shares",
            path + ".shares: expected one positive number per entry of " + key);
  }
  Json children = Json::array();
  for (std::size_t i = 0; i < items.size() && !c.full(); ++i)
    children.push_back(check_layout(c, items[i], ipath + "[" + std::to_string(i) + "]", panels,
                                    placed, depth + 1));
  out[key] = std::move(children);
  if (shares != node.end()) out["shares"] = *shares;
  return out;
}

}  // namespace

std::string_view manifest_error_name(ManifestErrorCode code) {
  switch (code) {
    case C::not_an_object: return "not_an_object";
    case C::unsupported_version: return "unsupported_version";
    case C::missing_field: return "missing_field";
    case C::wrong_type: return "wrong_type";
    case C::bad_channel_id: return "bad_channel_id";
    case C::duplicate_channel: return "duplicate_channel";
    case C::bad_value: return "bad_value";
    case C::publish_needs_tx: return "publish_needs_tx";
    case C::duplicate_panel: return "duplicate_panel";
    case C::unknown_channel: return "unknown_channel";
    case C::panel_rule: return "panel_rule";
    case C::bad_layout: return "bad_layout";
    case C::unknown_panel: return "unknown_panel";
    case C::too_many: return "too_many";
  }
  return "bad_value";
}

Result<Json, ManifestErrors> validate_manifest(const Json& in) {
  Checker c;
  if (!in.is_object()) {
    c.add(C::not_an_object, "", "a manifest is a JSON object");
    return err(std::move(c.errors));
  }
  auto version = in.find("version");
  if (version == in.end() ||
      json_integer(*version, 0, kMaxSafeInteger).value_or(-1) != kManifestVersion) {
    c.add(C::unsupported_version, "version", "version: this relay reads manifest version 1");
    return err(std::move(c.errors));
  }

  Json out = Json::object();
  out["version"] = kManifestVersion;

  std::set<std::string> channel_ids;
  std::vector<ChannelFacts> facts;
  std::vector<std::string> fact_ids;
  Json channels = Json::array();
  auto ch_in = in.find("channels");
  if (ch_in == in.end()) {
    c.add(C::missing_field, "channels", "channels is required (an array, possibly empty)");
  } else if (!ch_in->is_array()) {
    c.add(C::wrong_type, "channels", "channels: expected an array");
  } else if (ch_in->size() > kMaxManifestChannels) {
    c.add(C::too_many, "channels", "channels: at most 256");
  } else {
    for (std::size_t i = 0; i < ch_in->size(); ++i) {
      Json ch = normalise_channel(c, (*ch_in)[i], "channels[" + std::to_string(i) + "]",
                                  channel_ids, facts);
      fact_ids.push_back(ch.value("ch", std::string()));
      channels.push_back(std::move(ch));
    }
  }
  out["channels"] = std::move(channels);

  std::set<std::string> panel_ids;
  std::vector<std::string> panel_order;
  Json panels = Json::array();
  auto p_in = in.find("panels");
  if (p_in != in.end() && !p_in->is_array()) {
    c.add(C::wrong_type, "panels", "panels: expected an array");
  } else if (p_in != in.end() && p_in->size() > kMaxManifestPanels) {
    c.add(C::too_many, "panels", "panels: at most 256");
  } else if (p_in != in.end()) {
    for (std::size_t i = 0; i < p_in->size(); ++i) {
      const std::string path = "panels[" + std::to_string(i) + "]";
      const Json& p = (*p_in)[i];
      if (!p.is_object()) {
        c.add(C::wrong_type, path, path + ": expected a panel object");
        continue;
      }
      Json po = Json::object();
      auto id = p.find("id");
      if (id == p.end()) {
        c.add(C::missing_field, path + ".id", path + ".id is required");
      } else if (c.text(*id, path + ".id", kMaxIdChars, true)) {
        if (!panel_ids.insert(*id).second)
          c.add(C::duplicate_panel, path + ".id",
                path + ".id: \"" + id->get<std::string>() + "\" is declared twice");
        else
          panel_order.push_back(*id);
        po["id"] = *id;
      }
      auto kind = p.find("kind");
      std::string kind_name;
      if (kind == p.end()) {
        c.add(C::missing_field, path + ".kind", path + ".kind is required");
      } else if (c.text(*kind, path + ".kind", kMaxEncodingChars, true)) {
        kind_name = *kind;
      }
      po["kind"] = kind_name;
      auto title = p.find("title");
      po["title"] = po.value("id", std::string());
      if (title != p.end() && c.text(*title, path + ".title", kMaxShortTextChars, false))
        po["title"] = *title;
      std::vector<const ChannelFacts*> used;
      Json pch = Json::array();
      auto pc = p.find("channels");
      if (pc != p.end() && !pc->is_array()) {
        c.add(C::wrong_type, path + ".channels",
              path + ".channels: expected an array of channel ids");
      } else if (pc != p.end()) {
        bool all_known = true;
        for (std::size_t k = 0; k < pc->size(); ++k) {
          const std::string cpath = path + ".channels[" + std::to_string(k) + "]";
          const Json& ref = (*pc)[k];
          if (!c.text(ref, cpath, kMaxChannelIdChars, true)) {
            all_known = false;
            continue;
          }
          const auto& name = ref.get_ref<const std::string&>();
          std::size_t at = 0;
          while (at < fact_ids.size() && fact_ids[at] != name) ++at;
          if (at == fact_ids.size()) {
            c.add(C::unknown_channel, cpath, cpath + ": no channel has id \"" + name + "\"");
            all_known = false;
          } else {
            used.push_back(&facts[at]);
          }
          pch.push_back(ref);
        }
        if (all_known) check_kind(c, kind_name, used, path + ".channels");
      } else {
        check_kind(c, kind_name, used, path + ".channels");
      }
      po["channels"] = std::move(pch);
      auto params = p.find("params");
      if (params != p.end() && !params->is_object())
        c.add(C::wrong_type, path + ".params", path + ".params: expected an object");
      po["params"] = params != p.end() && params->is_object() ? *params : Json::object();
      panels.push_back(std::move(po));
    }
  }
  out["panels"] = std::move(panels);

  std::set<std::string> placed;
  auto layout = in.find("layout");
  const bool authored = layout != in.end() && !layout->is_null();
  out["layout"] = nullptr;  // keeps the key order: layout before pages
  if (authored) out["layout"] = check_layout(c, *layout, "layout", panel_ids, placed, 1);

  Json pages = Json::array();
  auto pg = in.find("pages");
  if (pg != in.end() && !pg->is_array()) {
    c.add(C::wrong_type, "pages", "pages: expected an array of panel ids");
  } else if (pg != in.end()) {
    for (std::size_t i = 0; i < pg->size(); ++i) {
      const std::string path = "pages[" + std::to_string(i) + "]";
      if (!c.text((*pg)[i], path, kMaxIdChars, true)) continue;
      const auto& id = (*pg)[i].get_ref<const std::string&>();
      if (!panel_ids.count(id))
        c.add(C::unknown_panel, path, path + ": no panel has id " + (*pg)[i].dump());
      else if (!placed.insert(id).second)
        c.add(C::bad_layout, path,
              path + ": panel \"" + id +
                  "\" is placed twice (a panel is "
                  "placed once, in the layout or in the pages)");
      pages.push_back((*pg)[i]);
    }
  }
  out["pages"] = std::move(pages);

  if (!authored) {
    // Default: every panel the pages do not show, side by side in declaration order; null when
    // none is left (an empty row is no layout).
    Json row = Json::array();
    for (const auto& id : panel_order)
      if (!placed.count(id)) row.push_back(id);
    out["layout"] = row.empty() ? Json(nullptr) : Json::object({{"row", std::move(row)}});
  }

  if (!c.errors.empty()) return err(std::move(c.errors));
  return out;
}

}  // namespace tether::wire
