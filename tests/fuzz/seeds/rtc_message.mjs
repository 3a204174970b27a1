// Seeds for fuzz_rtc_message: offers and answers from each sender, the SDP at, under and over
// kMaxSdpBytes (bytes 1-2 place it: 256 is exactly the bound), track lists at and past their bound,
// and SDP endings that are multi-byte, escaped or not UTF-8. See the harness for the layout.
const msg = (offer, sender, tracks, at, tail) => {
  const head = Buffer.alloc(3);
  head[0] = (offer ? 1 : 0) | (sender << 1) | (tracks << 3);
  head.writeUInt16LE(at, 1);
  return Buffer.concat([head, Buffer.from(tail)]);
};
export default function seeds() {
  const out = [];
  for (const [offer, sender] of [
    [1, 0],
    [1, 1],
    [1, 2],
    [0, 1],
    [0, 2],
    [0, 0],
  ])
    for (const at of [0, 255, 256, 257, 511])
      out.push(msg(offer, sender, offer ? 1 : 0, at, 'a=end\r\n'));
  for (const tracks of [0, 8, 9, 15]) out.push(msg(1, 0, tracks, 256, 'a=mid:0\r\n'));
  out.push(msg(1, 0, 2, 255, 'a=é\r\n'), msg(1, 0, 2, 256, 'a="\\\u0001\r\n'));
  out.push(
    msg(1, 0, 2, 100, Buffer.from([0x61, 0xc3, 0x28])),
    msg(0, 1, 0, 300, Buffer.from([0xed, 0xa0, 0x80])),
  );
  return out;
}
