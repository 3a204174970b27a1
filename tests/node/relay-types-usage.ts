// Compiled by tests/node/relay-types.test.mjs under strict settings: a consumer of tether/relay type-checks.
import {
  canWriteRootOnly,
  checkEnvelope,
  createRanges,
  createRegisterStore,
  createRelay,
  createRoomClient,
  pathPrefixAcl,
  recordAdmission,
  validateEnvelope,
  type Hlc,
  type OpEnvelope,
  type Ranges,
  type RegisterStore,
  type ServerMsg,
} from '@tether-rt/tether/relay';
const relay = createRelay({
  policy: pathPrefixAcl([{ prefix: ['notes'], allow: (ctx) => ctx.kind !== 'agent' }]),
  journalLimit: 10,
  onCommit: async () => {},
});
const conn = relay.connect({ send: (m: ServerMsg) => void m.t, close: () => {} }, { writer: 'w' });
const err = conn.receive({ t: 'hello', room: 'r', origin: 'o', proto: 3, policyVersion: 0 });
if (err) console.log(err.reason);
const t = relay.connectText({ send: (s: string) => void s.length }, { writer: 'w' });
t.receive('{}');
const info = relay.room('r');
if (info)
  console.log(info.stalled, relay.unload('r', { discard: true }), relay.hydrate('r', { seq: 0 }));
const c = createRoomClient({ room: 'r', origin: 'o', writer: 'w' });
const m: string | null = c.write([{ kind: 'set', path: ['a'], next: 1 }]);
console.log(m, c.receive('{}').length, c.unacked, c.refused());
for (const e of c.events()) {
  if (e.kind === 'refused') console.log(e.env.version);
  else if (e.kind === 'rejected') console.log(e.reason, e.expected ?? 'none');
  else console.log(e.reason);
}
const seeded = createRoomClient({
  room: 'r',
  origin: 'o',
  writer: 'w',
  schemaVersion: 2,
  outbox: c.tail(),
});
console.log(seeded.unacked, relay.stats().rooms);
// A migration: the whole document in the new shape; null until welcomed.
const migration: string | null = seeded.migrate([{ kind: 'set', path: [], next: {} }]);
console.log(migration, seeded.roomSchemaVersion.toFixed(0));
// A policy that allows every path below the root says so: tether asks it about root ops only.
const rootOk = (ctx: { kind?: string }, path: readonly unknown[]) =>
  path.length > 0 || ctx.kind !== 'agent';
const rootOnly = createRelay({ policy: { canWrite: rootOk, [canWriteRootOnly]: rootOk } });
console.log(rootOnly.stats().rooms);
const env: OpEnvelope = {
  proto: 3,
  instance: 'g',
  origin: 'o',
  writer: 'w',
  version: 1,
  hlc: { p: 1, l: 0 },
  policyVersion: 0,
  ops: [],
};
const reason: string | null = validateEnvelope(env);
const v = checkEnvelope(undefined, env, { writer: 'w' }, 'r', { seq: 0 });
const ranges: Ranges = createRanges([[1, 2]]);
const evidence = {
  ranges: new Map<string, Ranges>([['o', ranges]]),
  settled: new Map<string, Hlc>(),
};
recordAdmission(evidence, env);
console.log(reason, v?.reason, ranges.max(), ranges.toJSON().length);
const registers: RegisterStore = createRegisterStore();
registers.ingest(env);
registers.load(registers.checkpoint());
registers.settle({ o: { p: 1, l: 0 } });
console.log(
  registers.maxEpoch(['a']),
  registers.covers(['a'], { origin: 'o', hlc: { p: 1, l: 0 } }),
);
