#include "mailbox/request.hpp"

#include <array>

#include "common/json.hpp"
#include "common/sha256.hpp"
#include "common/utf8.hpp"

namespace tether::mailbox {
namespace {

bool is_lower_hex(std::string_view s, std::size_t n) {
  if (s.size() != n) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Strict percent-decoding of one path segment or query part: a stray or short %XX is refused,
// and the result must be valid UTF-8 (it ends up in JSON the hosts send back).
std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      const int hi = hex_value(s[i + 1]);
      const int lo = hex_value(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += c;
    }
  }
  if (!is_valid_utf8(ByteView(std::string_view(out)))) return std::nullopt;
  return out;
}

bool has_control(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

// The path's segments after the leading '/', or nullopt for an empty segment ("//", a trailing
// '/'), which no route has.
std::optional<std::vector<std::string_view>> segments(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.empty() || path[0] != '/') return std::nullopt;
  std::size_t start = 1;
  for (;;) {
    const std::size_t end = path.find('/', start);
    const std::string_view seg =
        path.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (seg.empty()) return std::nullopt;
    out.push_back(seg);
    if (out.size() > 5) return std::nullopt;  // deeper than any route
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

ApiError not_found(std::string_view path) {
  return api_error(ErrorCode::not_found, "no mailbox route is " + shown(path));
}

ApiError wrong_method(std::string_view method, std::string_view allowed) {
  return api_error(
      ErrorCode::method_not_allowed,
      shown(method) + " is not allowed here; this route takes " + std::string(allowed));
}

// method -> route for one path shape; `allowed` names the methods for the 405 message.
struct Choice {
  std::string_view method;
  Route route;
};
template <std::size_t N>
Result<Route, ApiError> choose(std::string_view method, const std::array<Choice, N>& choices) {
  std::string allowed;
  for (const Choice& c : choices) {
    if (c.method == method) return c.route;
    if (!allowed.empty()) allowed += " or ";
    allowed += c.method;
  }
  return err(wrong_method(method, allowed));
}

// ---- body fields --------------------------------------------------------------------------------

struct Body {
  bool present = false;  // false: an empty body where one may be empty
  Json value;
};

Result<Body, ApiError> parse_body(ByteView body, bool may_be_empty) {
  Body b;
  if (body.empty()) {
    if (may_be_empty) return b;
    return err(api_error(ErrorCode::bad_request, "the request needs a JSON object body"));
  }
  JsonParse p = parse_json(body);
  if (!p.ok()) {
    return err(api_error(ErrorCode::bad_request,
                         std::string("the body is not JSON (") + json_error_name(p.error) + ")"));
  }
  if (!p.value.is_object()) {
    return err(api_error(ErrorCode::bad_request, "the body must be a JSON object"));
  }
  b.value = std::move(p.value);
  b.present = true;
  return b;
}

// Refuses a field outside `known`: a typo ("txt") is a clear error rather than a missing text.
template <std::size_t N>
std::optional<ApiError> only_fields(const Body& b, const std::array<std::string_view, N>& known) {
  if (!b.present) return std::nullopt;
  for (auto it = b.value.begin(); it != b.value.end(); ++it) {
    bool ok = false;
    for (std::string_view k : known) ok = ok || it.key() == k;
    if (!ok) {
      std::string names;
      for (std::string_view k : known) names += (names.empty() ? "" : ", ") + std::string(k);
      return api_error(
          ErrorCode::bad_request,
          "unknown field " + shown(it.key()) +
              (names.empty() ? "; this route takes an empty body" : "; this route takes " + names));
    }
  }
  return std::nullopt;
}

const Json* get(const Body& b, std::string_view key) {
  if (!b.present) return nullptr;
  auto it = b.value.find(key);
  return it == b.value.end() ? nullptr : &*it;
}

// A required (or optional) short string: 1..max UTF-8 bytes, no control characters.
Result<std::string, ApiError> short_string(const Body& b, std::string_view key, std::size_t max,
                                           bool required) {
  const Json* v = get(b, key);
  if (!v) {
    if (!required) return std::string();
    return err(api_error(ErrorCode::bad_request, "the body needs \"" + std::string(key) + "\""));
  }
  auto s = json_string(*v);
  if (!s) {
    return err(api_error(ErrorCode::bad_request, "\"" + std::string(key) + "\" must be a string"));
  }
  if (s->empty() || s->size() > max || has_control(*s)) {
    return err(api_error(ErrorCode::bad_request,
                         "\"" + std::string(key) + "\" must be 1 to " + std::to_string(max) +
                             " bytes of text without control characters",
                         static_cast<std::int64_t>(max)));
  }
  return std::string(*s);
}

std::optional<std::int64_t> parse_uint(std::string_view s) {
  if (s.empty() || s.size() > 16) return std::nullopt;
  std::int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v > kMaxSafeInteger) return std::nullopt;
  return v;
}

// ?since=N&limit=M on the routes that take them; any other parameter is refused.
std::optional<ApiError> parse_query(std::string_view query, ApiRequest& r) {
  const bool takes_since = r.where.route == Route::list || r.where.route == Route::stream;
  const bool takes_limit = r.where.route == Route::list;
  bool seen_since = false, seen_limit = false;
  std::size_t start = 0;
  while (start < query.size()) {
    std::size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view part = query.substr(start, end - start);
    start = end + 1;
    if (part.empty()) continue;
    const std::size_t eq = part.find('=');
    auto key = percent_decode(part.substr(0, eq), true);
    auto value = percent_decode(eq == std::string_view::npos ? "" : part.substr(eq + 1), true);
    if (!key || !value) {
      return api_error(ErrorCode::bad_request, "the query is not valid percent-encoding");
    }
    if (*key == "since" && takes_since && !seen_since) {
      auto v = parse_uint(*value);
      if (!v) {
        return api_error(
            ErrorCode::bad_request,
            "since must be a message seq (a whole number, 0 or more); got " + shown(*value));
      }
      r.since = *v;
      seen_since = true;
    } else if (*key == "limit" && takes_limit && !seen_limit) {
      auto v = parse_uint(*value);
      if (!v || *v < 1 || *v > static_cast<std::int64_t>(kMaxListCount)) {
        return api_error(ErrorCode::bad_request,
                         "limit must be a whole number from 1 to " + std::to_string(kMaxListCount) +
                             "; got " + shown(*value),
                         kMaxListCount);
      }
      r.limit = static_cast<std::size_t>(*v);
      seen_limit = true;
    } else {
      return api_error(ErrorCode::bad_request,
                       "unknown or repeated query parameter " + shown(*key) +
                           (takes_limit   ? "; this route takes since and limit"
                            : takes_since ? "; this route takes since"
                                          : "; this route takes none"));
    }
  }
  return std::nullopt;
}

std::optional<ApiError> parse_body_for(ByteView body, ApiRequest& r) {
  switch (r.where.route) {
    case Route::create: {
      auto b = parse_body(body, true);
      if (!b) return b.error();
      return only_fields(b.value(), std::array<std::string_view, 0>{});
    }
    case Route::pair: {
      auto b = parse_body(body, false);
      if (!b) return b.error();
      if (auto e = only_fields(b.value(), std::array<std::string_view, 2>{"name", "code"}))
        return e;
      auto name = short_string(b.value(), "name", kMaxNameBytes, true);
      if (!name) return name.error();
      auto code = short_string(b.value(), "code", 256, false);
      if (!code) return code.error();
      r.name = std::move(name.value());
      r.code = std::move(code.value());
      return std::nullopt;
    }
    case Route::send: {
      auto b = parse_body(body, false);
      if (!b) return b.error();
      if (auto e = only_fields(b.value(), std::array<std::string_view, 2>{"id", "text"})) return e;
      auto id = short_string(b.value(), "id", kMaxMessageIdBytes, true);
      if (!id) return id.error();
      const Json* t = get(b.value(), "text");
      auto text = t ? json_string(*t) : std::nullopt;
      if (!text) return api_error(ErrorCode::bad_request, "the body needs \"text\", a string");
      if (text->size() > kMaxTextBytes) {
        return api_error(ErrorCode::oversize,
                         "the text is " + std::to_string(text->size()) +
                             " bytes of UTF-8; a message holds at most " +
                             std::to_string(kMaxTextBytes),
                         kMaxTextBytes);
      }
      if (text->empty()) return api_error(ErrorCode::bad_request, "\"text\" is empty");
      r.id = std::move(id.value());
      r.text = std::string(*text);
      return std::nullopt;
    }
    case Route::ack: {
      auto b = parse_body(body, false);
      if (!b) return b.error();
      if (auto e = only_fields(b.value(), std::array<std::string_view, 2>{"seqs", "status"}))
        return e;
      const Json* st = get(b.value(), "status");
      auto name = st ? json_string(*st) : std::nullopt;
      auto status = name ? status_from_name(*name) : std::nullopt;
      if (!status || (*status != Status::delivered && *status != Status::read)) {
        return api_error(ErrorCode::bad_request, "\"status\" must be \"delivered\" or \"read\"");
      }
      const Json* seqs = get(b.value(), "seqs");
      if (!seqs || !seqs->is_array() || seqs->empty() || seqs->size() > kMaxAckBatch) {
        return api_error(
            ErrorCode::bad_request,
            "\"seqs\" must be an array of 1 to " + std::to_string(kMaxAckBatch) + " message seqs",
            kMaxAckBatch);
      }
      r.seqs.reserve(seqs->size());
      for (const Json& s : *seqs) {
        auto v = json_integer(s, 1, kMaxSafeInteger);
        if (!v)
          return api_error(ErrorCode::bad_request, "every seq must be a whole number, 1 or more");
        r.seqs.push_back(*v);
      }
      r.ack_status = *status;
      return std::nullopt;
    }
    default: return std::nullopt;  // the other routes take no body; one sent anyway is ignored
  }
}

}  // namespace

std::string_view status_name(Status s) {
  switch (s) {
    case Status::stored: return "stored";
    case Status::delivered: return "delivered";
    case Status::read: return "read";
    case Status::expired: return "expired";
  }
  return "stored";
}

std::optional<Status> status_from_name(std::string_view name) {
  for (Status s : {Status::stored, Status::delivered, Status::read, Status::expired}) {
    if (status_name(s) == name) return s;
  }
  return std::nullopt;
}

std::string_view route_name(Route r) {
  switch (r) {
    case Route::create: return "create";
    case Route::info: return "info";
    case Route::issue_code: return "issue_code";
    case Route::pair: return "pair";
    case Route::list_pairs: return "list_pairs";
    case Route::accept_pair: return "accept_pair";
    case Route::unpair: return "unpair";
    case Route::send: return "send";
    case Route::list: return "list";
    case Route::ack: return "ack";
    case Route::status: return "status";
    case Route::stream: return "stream";
  }
  return "create";
}

bool is_mailbox_id(std::string_view s) {
  return is_lower_hex(s, 2 * kMailboxIdBytes);
}
bool is_pair_id(std::string_view s) {
  return is_lower_hex(s, 2 * kPairIdBytes);
}

std::string mailbox_id_for(ByteView entropy) {
  if (entropy.size < kMailboxIdBytes) return std::string();
  return to_hex(entropy.sub(0, kMailboxIdBytes));
}

Result<RouteInfo, ApiError> parse_route(std::string_view method, std::string_view target) {
  if (target.size() > kMaxTargetBytes) {
    return err(api_error(ErrorCode::bad_request,
                         "the request target is " + std::to_string(target.size()) +
                             " bytes; at most " + std::to_string(kMaxTargetBytes),
                         kMaxTargetBytes));
  }
  RouteInfo info;
  const std::size_t q = target.find('?');
  const std::string_view path = target.substr(0, q);
  if (q != std::string_view::npos) info.query = std::string(target.substr(q + 1));
  auto segs = segments(path);
  if (!segs || (*segs)[0] != "mailboxes") return err(not_found(path));
  const auto& s = *segs;
  if (s.size() == 1) {
    auto r = choose(method, std::array<Choice, 1>{{{"POST", Route::create}}});
    if (!r) return err(r.error());
    info.route = r.value();
    return info;
  }
  if (!is_mailbox_id(s[1])) {
    return err(api_error(ErrorCode::unknown_mailbox,
                         shown(s[1]) + " is not a mailbox id (ids are " +
                             std::to_string(2 * kMailboxIdBytes) + " lowercase hex characters)"));
  }
  info.mailbox = std::string(s[1]);
  Result<Route, ApiError> r = err(not_found(path));
  if (s.size() == 2) {
    r = choose(method, std::array<Choice, 1>{{{"GET", Route::info}}});
  } else if (s[2] == "codes" && s.size() == 3) {
    r = choose(method, std::array<Choice, 1>{{{"POST", Route::issue_code}}});
  } else if (s[2] == "pairs" && s.size() == 3) {
    r = choose(method, std::array<Choice, 2>{{{"POST", Route::pair}, {"GET", Route::list_pairs}}});
  } else if (s[2] == "pairs" && s.size() >= 4) {
    if (s.size() == 4) {
      r = choose(method, std::array<Choice, 1>{{{"DELETE", Route::unpair}}});
    } else if (s[4] == "accept") {
      r = choose(method, std::array<Choice, 1>{{{"POST", Route::accept_pair}}});
    }
    if (r && !is_pair_id(s[3])) {
      return err(api_error(ErrorCode::unknown_pair, shown(s[3]) + " is not a pair id (" +
                                                        std::to_string(2 * kPairIdBytes) +
                                                        " lowercase hex characters)"));
    }
    info.pair = std::string(s[3]);
  } else if (s[2] == "messages" && s.size() == 3) {
    r = choose(method, std::array<Choice, 2>{{{"POST", Route::send}, {"GET", Route::list}}});
  } else if (s[2] == "ack" && s.size() == 3) {
    r = choose(method, std::array<Choice, 1>{{{"POST", Route::ack}}});
  } else if (s[2] == "status" && s.size() == 4) {
    r = choose(method, std::array<Choice, 1>{{{"GET", Route::status}}});
    if (r) {
      auto id = percent_decode(s[3], false);
      if (!id || id->empty() || id->size() > kMaxMessageIdBytes || has_control(*id)) {
        return err(api_error(ErrorCode::bad_request,
                             "the message id in the path must be 1 to " +
                                 std::to_string(kMaxMessageIdBytes) +
                                 " bytes, percent-encoded, without control characters",
                             kMaxMessageIdBytes));
      }
      info.message_id = std::move(*id);
    }
  } else if (s[2] == "stream" && s.size() == 3) {
    r = choose(method, std::array<Choice, 1>{{{"GET", Route::stream}}});
  }
  if (!r) return err(r.error());
  info.route = r.value();
  return info;
}

Result<RouteInfo, ApiError> front_door(std::string_view method, std::string_view target,
                                       std::int64_t content_length, bool websocket_upgrade) {
  auto r = parse_route(method, target);
  if (!r) return r;
  if (content_length > static_cast<std::int64_t>(kMaxRequestBytes)) {
    return err(api_error(ErrorCode::oversize,
                         "the request body is " + std::to_string(content_length) +
                             " bytes; a request holds at most " + std::to_string(kMaxRequestBytes),
                         kMaxRequestBytes));
  }
  if (r->route == Route::stream && !websocket_upgrade) {
    return err(
        api_error(ErrorCode::upgrade_required, "the stream route takes a WebSocket upgrade"));
  }
  return r;
}

Credential parse_authorization(std::string_view header) {
  Credential c;
  if (header.empty()) return c;
  c.kind = KeyKind::malformed;
  if (header.size() > kMaxAuthorizationBytes || header.size() < 7) return c;
  std::string scheme(header.substr(0, 7));
  for (char& ch : scheme) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
  if (scheme != "bearer ") return c;
  std::string_view key = header.substr(7);
  while (!key.empty() && key.front() == ' ') key.remove_prefix(1);
  while (!key.empty() && key.back() == ' ') key.remove_suffix(1);
  const auto keyed = [&](std::string_view prefix) {
    return key.substr(0, prefix.size()) == prefix &&
           is_lower_hex(key.substr(prefix.size()), 2 * kKeyBytes);
  };
  if (keyed(kOwnerKeyPrefix))
    c.kind = KeyKind::owner;
  else if (keyed(kSenderKeyPrefix))
    c.kind = KeyKind::sender;
  else
    return c;
  c.key = std::string(key);
  return c;
}

Result<ApiRequest, ApiError> parse_request(std::string_view method, std::string_view target,
                                           std::string_view authorization, ByteView body) {
  if (body.size > kMaxRequestBytes) {
    return err(api_error(ErrorCode::oversize,
                         "the request body is " + std::to_string(body.size) +
                             " bytes; a request holds at most " + std::to_string(kMaxRequestBytes),
                         kMaxRequestBytes));
  }
  auto where = parse_route(method, target);
  if (!where) return err(where.error());
  ApiRequest r;
  r.where = std::move(where.value());
  r.auth = parse_authorization(authorization);
  if (auto e = parse_query(r.where.query, r)) return err(std::move(*e));
  if (auto e = parse_body_for(body, r)) return err(std::move(*e));
  return r;
}

}  // namespace tether::mailbox
