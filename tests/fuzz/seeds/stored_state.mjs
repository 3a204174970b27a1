// Seeds for fuzz_stored_state: every mailbox record of the golden conversation
// (fixtures/mailbox/conversation.json, the records each step persists and the final ones), each
// under its own key and under a wrong one; admission configurations, saved budgets and sockets'
// read states, valid and not; base64 with and without padding. Byte 0 picks the parser (see the harness).
const record = (key, value) => {
  const k = Buffer.from(key);
  const head = Buffer.from([0, k.length & 0xff, k.length >> 8]);
  return Buffer.concat([head, k, Buffer.from(value)]);
};
const tagged = (tag, text) => Buffer.concat([Buffer.from([tag]), Buffer.from(text)]);

export default function seeds({ read }) {
  const c = read('fixtures/mailbox/conversation.json');
  const pairs = new Map();
  for (const s of c.steps)
    for (const a of s.actions ?? [])
      for (const [k, v] of a.puts ?? []) pairs.set(k + '\n' + v, [k, v]);
  const finals = Array.isArray(c.records) ? c.records : Object.entries(c.records);
  for (const r of finals) {
    const [k, v] = Array.isArray(r) ? r : [r.key, r.value];
    pairs.set(k + '\n' + v, [k, v]);
  }
  const out = [];
  for (const [k, v] of pairs.values()) {
    out.push(record(k, v));
    out.push(record(k === 'meta' ? 'msg/1' : 'meta', v));
  }
  out.push(
    tagged(1, '{}'),
    tagged(1, '{"maxFrameBytes":65536,"connectionBurst":20}'),
    tagged(1, '{"cooldownMs":0}'),
    tagged(1, '{"principalBurst":1e999}'),
    tagged(1, '{"maxBufferedBytes":-1}'),
    tagged(1, '{"nope":1}'),
    tagged(1, '[1]'),
    tagged(2, '{"tokens":3,"at":1700000000000,"cooldownUntil":0}'),
    tagged(2, '{"tokens":-1e308,"at":1,"cooldownUntil":2}'),
    tagged(2, '{"tokens":"x"}'),
    tagged(2, '{"sent":6700,"acked":3000,"claimed":true,"marks":[4500,6700]}'),
    tagged(2, '{"sent":10,"acked":0,"claimed":false,"marks":[]}'),
    tagged(2, '{"sent":10,"acked":20,"claimed":true,"marks":[5]}'),
    tagged(2, '{"sent":100,"acked":0,"claimed":true,"marks":[1,2,3,4,5,6,7,8,9]}'),
    tagged(1, '{"requireReadAck":false}'),
    tagged(1, '{"requireReadAck":"yes"}'),
    tagged(3, 'aGVsbG8='),
    tagged(3, 'aGVsbG8'),
    tagged(3, 'QR=='),
    tagged(3, 'a===\n'),
  );
  return out;
}
