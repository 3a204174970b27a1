// The native half of the WASM-versus-native differential (tests/fuzz/diff.mjs, `make fuzz-diff`):
// for every input file named on the command line, the answers of the parsers the WASM build
// exports as pure functions, computed here with the same core calls the bindings make, one line
// each: `<file>\t<piece>\t<parser>\t<answer as hex>`. A piece is the whole file, then, when the
// file holds several lines, each line (the room harnesses' corpora are newline-separated
// messages). Parsers: `bus` (busSerializeEnvelope: parse_envelope, then encode_envelope, answered
// as JSON text), `room` (roomValidateEnvelope: the room scanner and validate_envelope, answered
// as the reason or ""), `replay` (roomReplayMessage: a journal envelope as the client message
// that wrote it). diff.mjs asks the WASM build the same questions and compares byte for byte.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bus/envelope.hpp"
#include "bus/json_out.hpp"
#include "room/envelope.hpp"
#include "room/json_scan.hpp"
#include "room/relay.hpp"

using namespace tether;

namespace {

constexpr std::size_t kMaxPieces = 64;  // lines per file (diff.mjs splits the same way)

std::string js_text(const Json& j) {
  std::string out;
  append_json(out, j, JsonNumbers::js_double);
  return out;
}

std::string bus_answer(const std::string& s) {
  auto e = bus::parse_envelope(ByteView(std::string_view(s)));
  if (!e) return js_text(bus::error_json(e.error()));
  auto t = bus::encode_envelope(e.value());
  if (!t) return js_text(bus::error_json(t.error()));
  return js_text(Json{{"ok", true}, {"text", t.value()}});
}

std::string room_answer(const std::string& s) {
  room::JsonScan scan;
  if (!scan.parse(s, kMaxJsonDepth)) return "envelope";
  room::EnvelopeView view;
  const char* reason = room::validate_envelope(scan, 0, view);
  return reason ? reason : "";
}

std::string hex(const std::string& s) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() * 2);
  for (unsigned char c : s) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::ifstream f(argv[i], std::ios::binary);
    if (!f) {
      std::fprintf(stderr, "tether_fuzz_diff: cannot read %s: name input files that exist\n",
                   argv[i]);
      return 2;
    }
    const std::string whole((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::vector<std::string> pieces{whole};
    if (whole.find('\n') != std::string::npos) {
      std::size_t at = 0;
      while (pieces.size() <= kMaxPieces) {
        const std::size_t nl = whole.find('\n', at);
        pieces.push_back(whole.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
        if (nl == std::string::npos) break;
        at = nl + 1;
      }
    }
    for (std::size_t p = 0; p < pieces.size(); ++p) {
      const std::string& s = pieces[p];
      std::printf("%s\t%zu\tbus\t%s\n", argv[i], p, hex(bus_answer(s)).c_str());
      std::printf("%s\t%zu\troom\t%s\n", argv[i], p, hex(room_answer(s)).c_str());
      std::printf("%s\t%zu\treplay\t%s\n", argv[i], p, hex(room::replay_message("r", s)).c_str());
    }
  }
  return 0;
}
