// The owner's side of the shared-folder commands (agent-bus-notes.md § Bus messages): which names
// a share may have, the list-files answer in the public implementation's shape and cap, and the
// types a person or an MCP client sends directly (typed_payload.hpp). These were JavaScript
// (web/agent/share.js, sidecar.js) before the bus core decided them.
#include <catch2/catch.hpp>

#include "bus/limits.hpp"
#include "bus/name_collation.hpp"
#include "bus/shares.hpp"
#include "bus/typed_payload.hpp"

using namespace tether::bus;
using tether::Json;

TEST_CASE("bus shares: a share name is one plain word of at most 64 characters") {
  for (const char* ok : {"docs", "a", "my.share_2-final", "..a", "a..", "..."})
    CHECK(valid_share_name(ok));
  CHECK(valid_share_name(std::string(kMaxShareNameChars, 'x')));
  CHECK_FALSE(valid_share_name(std::string(kMaxShareNameChars + 1, 'x')));
  for (const char* bad : {"", ".", "..", "a/b", "a\\b", "my docs", "caf\xc3\xa9", "a\tb", "~x"})
    CHECK_FALSE(valid_share_name(bad));
  CHECK_FALSE(valid_share_name(std::string("a\0b", 3)));
}

TEST_CASE("bus shares: list-files lists folders first, then files, each by name") {
  std::vector<ShareEntry> read = {{"b.txt", false, 3},
                                  {"z", true, 0},
                                  {"a.txt", false, 0},
                                  {"B", true, 99},
                                  {"\xc3\xa9", false, 1}};
  Json r = list_files_result("docs", "sub/dir", read, 2);
  CHECK(r["share"] == "docs");
  CHECK(r["path"] == "sub/dir");
  CHECK(r["truncated"] == false);
  CHECK(r["omitted"] == 2);
  const Json& e = r["entries"];
  REQUIRE(e.size() == 5);
  std::vector<std::string> names;
  for (const auto& x : e) names.push_back(x["name"].get<std::string>());
  CHECK(names == std::vector<std::string>{"B", "z", "a.txt", "b.txt", "\xc3\xa9"});
  CHECK(e[0] == Json{{"name", "B"}, {"path", "sub/dir/B"}, {"type", "dir"}, {"size", nullptr}});
  CHECK(e[3] == Json{{"name", "b.txt"}, {"path", "sub/dir/b.txt"}, {"type", "file"}, {"size", 3}});
}

TEST_CASE("bus shares: list-files at the share's root names entries by name alone") {
  Json r = list_files_result("docs", "", {{"guide.md", false, 10}}, 0);
  CHECK(r["path"] == "");
  CHECK(r["entries"][0]["path"] == "guide.md");
  CHECK(list_files_result("docs", "", {}, 0)["entries"] == Json::array());
}

TEST_CASE("bus shares: list-files names at most 200 entries and says it cut the rest") {
  std::vector<ShareEntry> read;
  for (int i = 0; i < 250; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "f%03d", 249 - i);
    read.push_back({name, i == 0, 1});  // f249 is a folder: it sorts first even so
  }
  Json r = list_files_result("s", "", read, 0);
  REQUIRE(r["entries"].size() == kShareLevelMaxEntries);
  CHECK(r["truncated"] == true);
  CHECK(r["entries"][0]["name"] == "f249");
  CHECK(r["entries"][1]["name"] == "f000");
  CHECK(r["entries"][199]["name"] == "f198");
  read.resize(kShareLevelMaxEntries);
  CHECK(list_files_result("s", "", read, 0)["truncated"] == false);
}

TEST_CASE("bus typed payloads: a person sends chat, command, command_response, event and ack") {
  std::vector<std::string> names;
  for (MessageType t : kDirectSendTypes) names.emplace_back(message_type_name(t));
  CHECK(names == std::vector<std::string>{"chat", "command", "command_response", "event", "ack"});
  // Each of them is mail a peer may be written (typed_payload takes all but command_response,
  // which command_response_from writes); none is a type the bus sends at its own step.
  for (MessageType t : kDirectSendTypes) CHECK_FALSE(is_transient(t));
}

TEST_CASE(
    "bus shares: names are ordered as the public implementation's localeCompare orders them") {
  // Node's `[...].sort((a, b) => a.localeCompare(b))` of these names (ICU root collation):
  // punctuation before digits before letters, case and accents after the letters themselves,
  // æ as "ae" and ß as "ss", letters past Latin after every Latin one.
  const std::vector<std::string> want = {
      "_x",      "~x", "$x",   "10",   "9",    "a",      "a b",    "a_b",    "a-b",     "a.txt",
      "ab",      "aB", "Ab",   "aeon", "æon",  "afon",   "b",      "B",      "é",       "émile",
      "Émile",   "f",  "lodz", "łódź", "mz",   "resume", "Resume", "résumé", "strasse", "straße",
      "strasze", "x$", "Z",    "zz",   "þorn", "α",      "μ",      "µ",      "ж",       "中"};
  std::vector<ShareEntry> read;
  for (auto it = want.rbegin(); it != want.rend(); ++it) read.push_back({*it, false, 0});
  Json r = list_files_result("s", "", read, 0);
  std::vector<std::string> got;
  for (const auto& e : r["entries"]) got.push_back(e["name"].get<std::string>());
  CHECK(got == want);
  for (std::size_t i = 1; i < want.size(); ++i) {
    INFO(want[i - 1] << " before " << want[i]);
    CHECK(compare_names(want[i - 1], want[i]) < 0);
    CHECK(compare_names(want[i], want[i - 1]) > 0);
  }
  CHECK(compare_names("a\x01"
                      "b",
                      "ab") == 0);  // a control character is ignored, as ICU does
  CHECK(compare_names("x\xff", "x\xef\xbf\xbd") == 0);  // bytes that are not UTF-8 read as U+FFFD
}
