// A JS string as UTF-8 bytes for the cores, shared by every glue module that stages text. A lone
// surrogate has no UTF-8 form: it is written as the 3-byte sequence of its code unit (WTF-8),
// which the cores refuse as invalid UTF-8. Embind's own std::string conversion would turn it into
// another character (and swallow the next one), and TextEncoder into U+FFFD: both repair text a
// peer must not get away with (cockpit-wire-v7-notes.md § Framing reminders, agent-bus-and-swarm.md
// § Untrusted wire input).
const utf8Encoder = new TextEncoder();

export function textBytes(s) {
  if (s.isWellFormed()) return utf8Encoder.encode(s);
  const out = [];
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    const next = s.charCodeAt(i + 1);
    if (c >= 0xd800 && c < 0xdc00 && next >= 0xdc00 && next < 0xe000) {
      c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
      i++;
    }
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else
      out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return Uint8Array.from(out);
}
