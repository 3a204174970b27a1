// A validating JSON scanner for the relay's hot path (the room-relay spec, "The relay";
// docs/design.md rule 6). It checks a client message strictly (RFC 8259 grammar, UTF-8, bounded
// depth) and records every value as a span of the input in a flat node table it reuses, so a
// message costs one pass and no allocation once warm. The relay then forwards values as the exact
// bytes the client sent (an echo is the input envelope plus its seq) instead of building a DOM and
// serialising it again. Written here because nlohmann, the library used for every cold path
// (options, hydrate), builds a heap DOM per message, which costs more than the rest of the relay.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tether::room {

class JsonScan {
 public:
  enum class Type : std::uint8_t { null, boolean, number, string, array, object };
  static constexpr std::uint32_t kNone = 0xffffffffu;
  struct Node {
    Type type = Type::null;
    bool truthy = false;   // boolean value
    bool escaped = false;  // string (or member key) holds a backslash escape
    bool key_escaped = false;
    std::uint32_t begin = 0, end = 0;          // the value's bytes (strings include their quotes)
    std::uint32_t key_begin = 0, key_end = 0;  // object members: the key's content, no quotes
    std::uint32_t first = kNone;               // first child (array element or object member)
    std::uint32_t next = kNone;                // next sibling in the parent
    std::uint32_t count = 0;                   // children
  };

  // Scans `text` whole; false when it is not exactly one JSON value within `max_depth`.
  // The text must stay alive while nodes are read.
  bool parse(std::string_view text, std::size_t max_depth);

  // The text the last parse read. rebase() points the nodes at a copy of the same bytes (a
  // message kept beyond the buffer it arrived in).
  std::string_view text() const { return text_; }
  void rebase(std::string_view same_bytes) { text_ = same_bytes; }

  const Node& node(std::uint32_t i) const { return nodes_[i]; }
  std::string_view raw(std::uint32_t i) const {
    return text_.substr(nodes_[i].begin, nodes_[i].end - nodes_[i].begin);
  }
  // An object member's key as written (escapes kept), without quotes.
  std::string_view key_raw(std::uint32_t i) const {
    return text_.substr(nodes_[i].key_begin, nodes_[i].key_end - nodes_[i].key_begin);
  }
  // The member `key` of object `obj` (the last one, as JSON.parse keeps), or kNone.
  std::uint32_t field(std::uint32_t obj, std::string_view key) const;
  // A string's content; unescaped into `scratch` only when it holds escapes.
  std::string_view str(std::uint32_t i, std::string& scratch) const;
  std::string_view key(std::uint32_t i, std::string& scratch) const;
  // A number's value as JSON.parse reads it: +-Infinity beyond a double's range, 0 below it.
  double number(std::uint32_t i) const;
  // A value as text to send, store or echo: its bytes, except that a number beyond a double's
  // range is written as null, as JSON.stringify writes the Infinity JSON.parse read (the value
  // the reference relay's echo carries; docs/rooms.md, "Numbers out of range"). json() is raw()
  // when the message holds no such number, which is every message but a hostile one.
  void append_json(std::string& out, std::uint32_t i) const;
  std::string_view json(std::uint32_t i, std::string& scratch) const;
  bool has_overflow() const { return !overflow_.empty(); }
  bool is_object(std::uint32_t i) const { return i != kNone && nodes_[i].type == Type::object; }
  bool is_array(std::uint32_t i) const { return i != kNone && nodes_[i].type == Type::array; }
  bool is_string(std::uint32_t i) const { return i != kNone && nodes_[i].type == Type::string; }
  bool is_number(std::uint32_t i) const { return i != kNone && nodes_[i].type == Type::number; }

 private:
  std::uint32_t value(std::size_t depth);
  bool string_token(bool& escaped);
  void skip_ws();
  static void unescape(std::string_view content, std::string& out);

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t max_depth_ = 0;
  bool failed_ = false;
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> overflow_;  // numbers beyond a double's range, in text order
};

}  // namespace tether::room
