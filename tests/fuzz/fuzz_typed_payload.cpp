// libFuzzer harness: what the agent CLI and the MCP tools hand the bus core as words
// (src/bus/typed_payload.hpp: typed_payload, command_response_from), the share paths the core
// reads on both ends of a get-file (src/bus/shares.hpp: share_path), and the names a share
// holds and is given (valid_share_name, list_files_result, name_collation.hpp). Every one is text
// a person, an MCP client or a file system wrote, so any bytes may arrive.
//
// Input: one byte (low three bits: which call and which optionals are given), then fields
// `u16-LE len | bytes`. Properties: nothing crashes or leaks; an accepted payload is a JSON
// object within the envelope bound and the shape its type fixes (a command's `command` and an
// ack's `messageId` one word without JS whitespace, an answer's `requestId` the id given, `ok`
// a boolean); a refusal has a name; share_path never grows its input and holds
// no backslash, no empty, `.` segment, or outer slash; a valid share name is one word of ASCII
// letters, digits, '.', '_' and '-'; the name order is a total preorder (reflexive, antisymmetric,
// transitive over the three fields) and list_files_result lists by it, folders first.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>

#include "bus/limits.hpp"
#include "bus/name_collation.hpp"
#include "bus/shares.hpp"
#include "bus/typed_payload.hpp"
#include "common/utf8.hpp"

using namespace tether;
using namespace tether::bus;

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

struct Reader {
  const std::uint8_t* data;
  std::size_t size, pos = 1;
  std::string field() {
    if (pos + 2 > size) return {};
    std::size_t n = data[pos] | (std::size_t(data[pos + 1]) << 8);
    pos += 2;
    if (n > size - pos) n = size - pos;
    std::string out(reinterpret_cast<const char*>(data + pos), n);
    pos += n;
    return out;
  }
};

bool has_js_space(const std::string& s) {
  if (!is_valid_utf8(ByteView(s))) return false;
  for (std::size_t i = 0, len = 0; i < s.size(); i += len)
    if (js_space(utf8_code_point_at(s, i, len))) return true;
  return false;
}

void check_share_path(const std::string& raw) {
  const std::string p = share_path(raw);
  check(p.size() <= raw.size());
  check(p.find('\\') == std::string::npos);
  check(p.empty() || (p.front() != '/' && p.back() != '/'));
  check(p.find("//") == std::string::npos);
  check(p != "." && p.find("/./") == std::string::npos && p.rfind("./", 0) != 0 &&
        (p.size() < 2 || p.compare(p.size() - 2, 2, "/.") != 0));
}

void check_names(const std::string& a, const std::string& b, const std::string& c) {
  if (valid_share_name(a)) {
    check(!a.empty() && a.size() <= kMaxShareNameChars && a != "." && a != "..");
    for (char ch : a)
      check(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-');
  }
  check(compare_names(a, a) == 0);
  const int ab = compare_names(a, b), bc = compare_names(b, c), ac = compare_names(a, c);
  check(ab == -compare_names(b, a));
  if (ab <= 0 && bc <= 0) check(ac <= 0);
  if (ab >= 0 && bc >= 0) check(ac >= 0);
  const Json r = list_files_result("s", "", {{a, false, 1}, {b, true, 0}, {c, false, 2}}, 0);
  const Json& e = r["entries"];
  check(e.size() == 3 && !r["truncated"].get<bool>());
  check(e[0]["name"].get<std::string>() == b && e[0]["type"] == "dir");
  check(compare_names(e[1]["name"].get<std::string>(), e[2]["name"].get<std::string>()) <= 0);
  for (const auto& x : e) check(x["path"] == x["name"]);
}

const char* const kTypes[] = {"chat", "event", "command", "ack", "command_response", "announce"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  Reader r{data, size};
  const unsigned flags = data[0];
  const std::string a = r.field(), b = r.field(), c = r.field();
  check_share_path(a);
  check_names(a, b, c);
  if ((flags & 1) == 0) {
    const std::string type = kTypes[(flags >> 1) % 6];
    const bool with_args = flags & 0x10;
    auto got =
        typed_payload(type, a, with_args ? std::optional<std::string_view>(b) : std::nullopt);
    if (!got) {
      check(!words_error_name(got.error().code).empty());
      return 0;
    }
    const Json& p = got.value();
    check(p.is_object());
    if (type == "command") {
      check(p.contains("command") && p["command"].is_string());
      const std::string word = p["command"].get<std::string>();
      check(!word.empty() && !has_js_space(word));
      check(with_args == p.contains("args"));
    } else if (type == "ack") {
      const std::string id = p["messageId"].get<std::string>();
      check(!id.empty() && !has_js_space(id) && utf16_units(id) <= kMaxIdChars);
    } else {
      check(type == "chat" || type == "event");
      check(p["text"].get<std::string>() == a);
    }
    return 0;
  }
  const bool with_result = flags & 2, with_error = flags & 4;
  auto got =
      command_response_from(a, with_result ? std::optional<std::string_view>(b) : std::nullopt,
                            with_error ? std::optional<std::string_view>(c) : std::nullopt);
  if (!got) {
    check(!words_error_name(got.error().code).empty());
    return 0;
  }
  const Json& p = got.value();
  check(p.is_object() && p["requestId"].get<std::string>() == a);
  check(p["ok"].is_boolean() && p["ok"].get<bool>() == !with_error);
  check(with_error ? p.contains("error") && !p.contains("result") : p.contains("result"));
  return 0;
}
