// Seeds for fuzz_http_member: scripts of opens, sends, receives, relay frames, closes and clock
// steps (the tag bytes of tests/fuzz/fuzz_http_member.cpp).
const field = (s) => {
  const b = Buffer.from(s);
  return Buffer.concat([Buffer.from([b.length]), b]);
};
const open = (seed) => Buffer.from([0, 0, ...Array.from({ length: 16 }, (_, i) => seed + i)]);
// A request in room "lab" with the first session's token prepended to the query.
const req = (method, op, query, body = '') =>
  Buffer.concat([
    Buffer.from([1, 0, method]),
    field(op),
    field(query),
    Buffer.from([1]),
    field(body),
  ]);
const frame = (s) => Buffer.concat([Buffer.from([2, 0]), field(s)]);
const tick = (seconds) => Buffer.from([4, 0, seconds]);

export default function seeds() {
  return [
    Buffer.concat([
      open(1),
      req(1, 'send', '&seq=1', 'hello'),
      req(0, 'recv', '&cursor=0'),
      frame('x'),
    ]),
    Buffer.concat([
      open(1),
      req(0, 'recv', '&cursor=0'),
      tick(30),
      tick(70),
      req(0, 'recv', '&cursor=0'),
    ]),
    Buffer.concat([
      open(1),
      frame('a'),
      frame('b'),
      req(0, 'recv', '&cursor=1'),
      req(0, 'recv', '&cursor=9'),
    ]),
    Buffer.concat([
      open(1),
      req(1, 'send', '&seq=2', 'x'),
      req(1, 'send', '&seq=1&seq=1', 'x'),
      req(1, 'close', ''),
    ]),
    Buffer.concat([
      open(1),
      open(1),
      open(2),
      Buffer.from([3, 0, 10, 3]),
      Buffer.from('bye'),
      req(0, 'recv', '&cursor=0'),
    ]),
    Buffer.concat([
      Buffer.from([5, 0]),
      field('frame'),
      Buffer.from([6, 0, 1, 1]),
      field('{"session":"00000000000000000000000000000000"}'),
    ]),
  ];
}
