// libFuzzer harness: the WebRTC signaling messages rtc_offer and rtc_answer at their bounds
// (cockpit-wire-protocol.md § WebRTC media: an SDP of at most kMaxSdpBytes bytes of UTF-8, at most
// kMaxRtcTracks tracks, a control message of at most kMaxControlBytes), against an oracle.
// fuzz_message finds the shapes; its seeds stop at 4 KiB, so it never stands at the 48 KiB line.
// Here the harness builds the message: byte 0 picks the type and sender (bit 0: offer or answer;
// bits 1-2: the sender; bits 3-6: the number of tracks, 0 to 15); bytes 1-2 (u16-LE) place the
// SDP's length within 256 bytes either side of kMaxSdpBytes, filled with SDP lines; the rest of
// the input ends the SDP as raw bytes (escaped as JSON needs, invalid UTF-8 left invalid). The
// relay's own fuzz_cockpit_rtc drives the brokering behind these messages.
//
// Properties: the parser's verdict is the oracle's (an SDP within the bound and valid UTF-8, a
// track list within its bound and only on an offer, a sender that may send the type, the whole
// text within kMaxControlBytes); a refusal names the rule it broke (too_large at "sdp",
// out_of_range at "tracks", invalid_utf8); an accepted message keeps its SDP byte for byte and
// its tracks, and its canonical form parses again to itself.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/utf8.hpp"
#include "wire/limits.hpp"
#include "wire/messages.hpp"

using namespace tether;
using namespace tether::wire;

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// A JSON string literal of `s`, bytes as they are except what JSON must escape.
void append_literal(std::string& out, std::string_view s) {
  static const char* kHex = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += char(c);
    }
  }
  out += '"';
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const bool offer = data[0] & 1;
  constexpr Sender kSenders[] = {Sender::robot, Sender::viewer, Sender::relay, Sender::viewer};
  const Sender from = kSenders[(data[0] >> 1) & 3];
  const std::size_t tracks = (data[0] >> 3) & 15;
  const std::size_t tail = size - 3;
  const std::size_t target = kMaxSdpBytes - 256 + ((data[1] | data[2] << 8) % 512);

  std::string sdp = "v=0\r\n";
  const std::size_t fill = target > sdp.size() + tail ? target - sdp.size() - tail : 0;
  while (sdp.size() < fill) sdp += "a=x-fill:0123456789abcdef0123456789\r\n";
  sdp.resize(std::max(fill, std::size_t(5)));
  sdp.append(reinterpret_cast<const char*>(data + 3), tail);

  std::string text = offer ? R"({"t":"rtc_offer","sdp":)" : R"({"t":"rtc_answer","sdp":)";
  append_literal(text, sdp);
  if (tracks) {
    text += R"(,"tracks":[)";
    for (std::size_t i = 0; i < tracks; ++i)
      text += (i ? "," : "") + std::string(R"({"mid":")") + std::to_string(i) + R"(","ch":"c"})";
    text += ']';
  }
  text += '}';

  const bool utf8 = is_valid_utf8(ByteView(std::string_view(sdp)));
  const bool sdp_fits = sdp.size() <= kMaxSdpBytes;
  const bool tracks_ok = tracks == 0 || (offer && tracks <= kMaxRtcTracks);
  const bool sender_ok = offer || from != Sender::robot;
  const bool text_fits = text.size() <= kMaxControlBytes;
  const bool expect = utf8 && sdp_fits && tracks_ok && sender_ok && text_fits;

  auto m = parse_message(ByteView(std::string_view(text)), from);
  check(m.ok() == expect);
  if (!m) {
    check(!m.error().detail.empty());
    // One rule broken alone is named.
    if (!utf8 && text_fits) check(m.error().reason == DropReason::invalid_utf8);
    if (utf8 && !sdp_fits && text_fits && tracks_ok && sender_ok)
      check(m.error().reason == DropReason::too_large && m.error().field == "sdp");
    if (utf8 && sdp_fits && text_fits && sender_ok && offer && tracks > kMaxRtcTracks)
      check(m.error().reason == DropReason::out_of_range && m.error().field == "tracks");
    if (utf8 && sdp_fits && text_fits && tracks_ok && !sender_ok)
      check(m.error().reason == DropReason::wrong_sender);
    return 0;
  }
  check(m->type == (offer ? MessageType::rtc_offer : MessageType::rtc_answer));
  check(m->body["sdp"].get_ref<const std::string&>() == sdp);
  check(tracks == 0 ? !m->body.contains("tracks") : m->body["tracks"].size() == tracks);
  const std::string canonical = encode_message(m.value());
  auto again = parse_message(ByteView(std::string_view(canonical)), from);
  check(again.ok() && encode_message(again.value()) == canonical);
  return 0;
}
