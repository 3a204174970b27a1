// Compiled by tests/node/relay-types.test.mjs under strict settings: a consumer of tether/relay type-checks.
import { createRelay, createRoomClient, pathPrefixAcl, type ServerMsg } from '@tether-rt/tether/relay';
const relay = createRelay({ policy: pathPrefixAcl([{ prefix: ['notes'], allow: (ctx) => ctx.kind !== 'agent' }]), journalLimit: 10, onCommit: async () => {} });
const conn = relay.connect({ send: (m: ServerMsg) => void m.t, close: () => {} }, { writer: 'w' });
const err = conn.receive({ t: 'hello', room: 'r', origin: 'o', proto: 3, policyVersion: 0 });
if (err) console.log(err.reason);
const t = relay.connectText({ send: (s: string) => void s.length }, { writer: 'w' });
t.receive('{}');
const info = relay.room('r');
if (info) console.log(info.stalled, relay.unload('r', { discard: true }), relay.hydrate('r', { seq: 0 }));
const c = createRoomClient({ room: 'r', origin: 'o', writer: 'w' });
const m: string | null = c.write([{ kind: 'set', path: ['a'], next: 1 }]);
console.log(m, c.receive('{}').length, c.unacked, c.refused());
