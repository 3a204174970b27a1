// Seeds for fuzz_mcp_tool_input: the arguments the `tether mcp` tools pass to the bus core, as the
// harness reads them (a tool byte, then `u16-LE len | bytes` fields: peer, payload or count or
// request, topic, and a handoff's four-byte expires_in_ms). Valid calls, the bounds each side of
// the line (a 128-character peer, a 256-character topic, a 32,000-byte request, a 24-hour
// expiry, count 200), and refusals (an empty peer, NUL, too deep, our own id).
const TYPES = [
  'chat',
  'announce',
  'skill_update',
  'command',
  'command_response',
  'file_offer',
  'file_chunk',
  'file_complete',
  'file_ack',
  'event',
];
const field = (s) => {
  const b = Buffer.from(s);
  const head = Buffer.alloc(2);
  head.writeUInt16LE(b.length);
  return Buffer.concat([head, b]);
};
const u32 = (n) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
const call = (tool, type, topic, peer, body, topicText = '', tail = Buffer.alloc(0)) =>
  Buffer.concat([
    Buffer.from([tool | (topic ? 4 : 0) | (TYPES.indexOf(type) << 3)]),
    field(peer),
    field(body),
    field(topicText),
    tail,
  ]);
const DAY = 24 * 60 * 60 * 1000;

export default function seeds() {
  const deep = (n) => '['.repeat(n) + ']'.repeat(n);
  return [
    call(0, 'chat', false, 'p', JSON.stringify({ text: 'hello' })),
    call(0, 'chat', true, 'p', JSON.stringify({ text: 'hi' }), 'news'),
    call(0, 'command', false, 'p', JSON.stringify({ command: 'ping', args: {} })),
    call(0, 'event', true, 'p', JSON.stringify({ n: 1.5, big: 1e308, list: [1, 'a', null] }), 't'),
    call(0, 'chat', false, 'x'.repeat(128), JSON.stringify({ text: 'a' })),
    call(0, 'chat', false, 'x'.repeat(129), JSON.stringify({ text: 'a' })),
    call(0, 'chat', true, 'p', JSON.stringify({ text: 'a' }), 't'.repeat(256)),
    call(0, 'chat', true, 'p', JSON.stringify({ text: 'a' }), 't'.repeat(257)),
    call(0, 'chat', false, 'p\u0000', JSON.stringify({ text: 'a' })),
    call(0, 'chat', false, '', JSON.stringify({ text: 'a' })),
    call(0, 'chat', false, 'me', JSON.stringify({ text: 'self' })),
    call(0, 'chat', false, 'p', JSON.stringify({ a: JSON.parse(deep(40)) })),
    call(0, 'chat', false, 'p', `{"text":"${'é'.repeat(300)}"}`),
    call(1, 'chat', false, '', JSON.stringify({ text: 'all' })),
    call(1, 'event', true, '', JSON.stringify({ kind: 'x' }), 'topic'),
    call(2, 'chat', false, 'p', '10'),
    call(2, 'chat', false, 'p', '200'),
    call(2, 'chat', false, 'p', '201'),
    call(2, 'chat', false, 'p', '0'),
    call(2, 'chat', false, 'p', '-1'),
    call(2, 'chat', false, 'p', '1.5'),
    call(2, 'chat', false, 'p', 'null'),
    call(2, 'chat', false, 'nobody', '5'),
    call(3, 'chat', false, 'p', 'review the patch', '', u32(60_000)),
    call(3, 'chat', false, 'p', 'x'.repeat(31_998), '', u32(DAY)),
    call(3, 'chat', false, 'p', 'x'.repeat(31_999), '', u32(DAY + 1)),
    call(3, 'chat', false, 'p', '"\u0001'.repeat(100), '', u32(1)),
    call(3, 'chat', false, 'p', 'now', '', u32(0)),
    call(3, 'chat', false, 'nobody', 'work', '', u32(1000)),
  ];
}
