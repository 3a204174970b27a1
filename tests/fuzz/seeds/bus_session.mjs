// Seeds for fuzz_bus_session: sessions of records separated by 0x1E, each a step byte and its
// text (see the harness for what the byte picks). Built from fuzz_bus_envelope's seeds (the
// golden envelopes, the ninja-p2p exchanges, the scanner's edge shapes) in groups of eight on
// changing connections and clocks, plus sessions aimed at what reads the clock: a held channel's
// wake, handoff expiry and retries through timers, pings and history requests.
import envelopeSeeds from './bus_envelope.mjs';

const SEP = Buffer.from([0x1e]);
// The step byte: kind (bits 5-7: 0-3 text, 4 open, 5 closed, 6 roster, 7 timer), connection
// (bits 3-4: c1, c2, c3) and the clock's move (op % 7, times ~5 s).
const text = (conn, clock, t) =>
  Buffer.concat([Buffer.from([(conn << 3) | clock]), Buffer.from(t)]);
const open = (conn) => Buffer.from([(4 << 5) | (conn << 3)]);
const closed = (conn) => Buffer.from([(5 << 5) | (conn << 3)]);
const roster = (mask) => Buffer.from([(6 << 5) | mask]); // mask: bit i lists connection c(i+1)
const timer = (clock) => Buffer.from([(7 << 5) | clock]);
const session = (records) => Buffer.concat(records.flatMap((r, i) => (i ? [SEP, r] : [r])));

const from = (streamId) => ({ streamId, role: 'agent', name: streamId, instanceId: 'i1' });
const env = (id, type, sender, to, payload) =>
  JSON.stringify({ v: 1, id, type, from: from(sender), to, topic: null, ts: 5000, payload });

export default function seeds(helpers) {
  const texts = envelopeSeeds(helpers);
  const groups = [];
  for (let i = 0; i < texts.length; i += 8) {
    groups.push(session(texts.slice(i, i + 8).map((t, k) => text(k % 3, (i + k) % 7, t))));
  }
  return [
    ...groups,
    // A held channel: c2 leaves the roster and comes back with its channel open, so it is held
    // until it carries something; q's first message wakes it (and needs the time).
    session([
      roster(0b101),
      roster(0b111),
      text(1, 1, env('q1', 'chat', 'q', null, { text: 'back' })),
      text(1, 1, env('q2', 'ping', 'q', 'me', {})),
    ]),
    // Handoffs in and out, their expiries and retries: a handoff to us, timers past its expiry,
    // our outstanding handoff to p retried after p's channel closed and opened again.
    session([
      text(0, 0, env('h1', 'handoff', 'p', 'me', { request: 'do it', expiresAt: 20000 })),
      closed(0),
      timer(6),
      open(0),
      text(0, 2, env('an1', 'announce', 'p', null, { skills: ['handoff-v1'] })),
      timer(6),
      timer(6),
      text(0, 1, env('h1', 'handoff', 'p', 'me', { request: 'do it', expiresAt: 20000 })),
    ]),
    // What answers with the time: a ping, a history request and replay, on every connection.
    session([
      text(0, 1, env('g1', 'ping', 'p', 'me', { ts: 1 })),
      text(0, 1, env('g2', 'history_request', 'p', 'me', { count: 3 })),
      text(
        0,
        1,
        env('g3', 'history_replay', 'p', 'me', JSON.parse(env('o1', 'chat', 'x', null, { t: 1 }))),
      ),
      text(2, 3, env('g4', 'chat', 'r', null, { text: 'on c3' })),
      open(2),
      text(2, 3, env('g5', 'announce', 'r', null, { skills: [] })),
      text(1, 0, env('g6', 'ack', 'p', 'me', { messageId: 'nothing' })),
    ]),
  ];
}
