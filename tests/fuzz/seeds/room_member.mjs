// Seeds for fuzz_room_member: a flags byte (bit 0: lanes), then the relay messages of the member
// sessions in fixtures/room/member.json, one per line.
export default function seeds({ read }) {
  const f = read('fixtures/room/member.json');
  const out = [];
  for (const s of f.sessions) {
    const lines = s.steps.filter((st) => st.input.in === 'message').map((st) => st.input.text);
    const text = Buffer.from(lines.join('\n'));
    out.push(Buffer.concat([Buffer.from([s.options.lanes ? 1 : 0]), text]));
    out.push(Buffer.concat([Buffer.from([s.options.lanes ? 6 : 7]), text]));
    for (const l of lines) out.push(Buffer.concat([Buffer.from([1]), Buffer.from(l)]));
  }
  return out;
}
