// Seeds for fuzz_room_client: a flags byte (policy version 1, as in the transcripts), then what
// each connection of the relay transcripts (fixtures/room/messages.json, numbers.json) was sent,
// one message per line, with local writes ('W' and StoreOps JSON) after the first welcome, and a
// migration ('M', a root set) that a client of a newer schema (flags byte 5) may send.
export default function seeds({ read }) {
  const writes = [
    'W[{"kind":"set","path":["a"],"next":{"b":[1,2]}}]',
    'W[{"kind":"delete","path":["n"]},{"kind":"set","path":[],"next":{"title":"x"}}]',
    'W[{"kind":"clear","path":["a"]}]',
    'M[{"kind":"set","path":[],"next":{"shape":2}}]',
    'W[{"kind":"set","path":["after"],"next":1}]',
  ];
  const out = [];
  for (const name of ['messages.json', 'numbers.json', 'read_ack.json']) {
    const perConn = new Map();
    for (const step of read(`fixtures/room/${name}`).steps) {
      for (const s of step.sent) {
        if (s.text === undefined) continue;
        if (!perConn.has(s.to)) perConn.set(s.to, []);
        perConn.get(s.to).push(s.text);
        if (s.text.includes('"t":"welcome"') && perConn.get(s.to).length === 1)
          perConn.get(s.to).push(...writes);
      }
    }
    for (const lines of perConn.values()) {
      out.push(Buffer.concat([Buffer.from([1]), Buffer.from(lines.join('\n'))]));
      out.push(Buffer.concat([Buffer.from([5]), Buffer.from(lines.join('\n'))]));
      for (const l of lines) out.push(Buffer.concat([Buffer.from([1]), Buffer.from(l)]));
    }
  }
  return out;
}
