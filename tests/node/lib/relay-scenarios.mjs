// Seeded scenarios for the room relay differential test: an abstract script (options + steps)
// chosen from the seed alone, and a world that plays one script against one relay
// implementation, recording every message each connection receives and every observer call.
// Two worlds (ours, the reference) play the same script; their records must match once instance
// nonces are replaced by their order of appearance.

// mulberry32: small, seedable, and the same everywhere.
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    chance: (p) => next() < p,
  };
}

const ROOMS = ['r1', 'r2'];
const WRITERS = [
  { writer: 'alice', kind: 'human' },
  { writer: 'bob', kind: 'human' },
  { writer: 'agent-7', kind: 'agent' },
];
const ORIGINS = ['o1', 'o2', 'o3', 'o4', 'o5'];
const PATHS = [
  [],
  ['notes'],
  ['notes', 'x'],
  ['cases', 1, 'plan'],
  ['cases', '1', 'plan'],
  ['a'],
  ['a', 'b'],
  [0],
  ['cases', 2],
];
const VALUES = [
  1,
  2.5,
  -3,
  'text',
  'forbidden',
  null,
  true,
  { k: [1, 'two'] },
  [],
  'ünï',
  1e21,
  0.1,
];

/** The script for one seed: options and a list of abstract steps. */
export function scenario(seed, length = 60) {
  const r = rng(seed);
  const options = {
    policyVersion: r.pick([0, 0, 1]),
    journalLimit: r.pick([1, 2, 3, 5, 1000]),
    maxOps: r.pick([undefined, undefined, 3]),
    rate: r.pick([undefined, undefined, undefined, 2]),
    ejection: r.pick(['writer', 'connection']),
    policy: r.pick(['none', 'none', 'acl', 'root', 'validate', 'bump', 'verify']),
    durability: r.pick(['none', 'sync', 'promise', 'promise']),
  };
  const steps = [];
  let conns = 0; // connection indices ever made (a restart does not reuse them)
  let alive = [];
  const gen = {
    next: new Map(), // origin -> next version
    sent: new Map(), // origin -> [envelope templates]
    holes: new Map(), // origin -> [versions skipped]
    dots: new Map(), // path key -> [{origin, hlc}]
    epochs: new Map(), // path key -> max epoch written
    schema: new Map(), // room -> schema (as the script believes)
    clock: 1000,
    origins: new Map(),
  };
  const connect = () => {
    const idx = conns++;
    alive.push(idx);
    steps.push({ t: 'connect', conn: idx, ctx: r.pick(WRITERS) });
    return idx;
  };
  for (let i = 0; i < 3; i++) connect();
  const keyOf = (p) => p.map(String).join('\u001f');
  const makeOps = (origin, hlc) => {
    const count = 1 + r.int(options.maxOps && r.chance(0.2) ? 5 : 3);
    const chosen = [];
    const used = new Set();
    for (let i = 0; i < count; i++) {
      const path = r.pick(PATHS);
      if (used.has(keyOf(path))) continue;
      used.add(keyOf(path));
      const kind = path.length === 0 ? 'set' : r.pick(['set', 'set', 'set', 'delete', 'clear']);
      const k = keyOf(path);
      const known = gen.dots.get(k) ?? [];
      const cites = known
        .filter(() => r.chance(0.6))
        .map((d) => ({ origin: d.origin, hlc: { ...d.hlc } }));
      if (r.chance(0.08)) cites.push({ origin: r.pick(ORIGINS), hlc: { p: 99999, l: r.int(3) } }); // forged
      let epoch = gen.epochs.get(k) ?? 0;
      if (r.chance(0.1)) epoch += 1;
      else if (r.chance(0.2)) epoch = 0;
      const op = { kind, path, cites, epoch };
      if (kind === 'set') op.next = r.pick(VALUES);
      if (kind !== 'clear' && r.chance(0.4)) op.prev = r.pick(VALUES);
      chosen.push(op);
      gen.dots.set(
        k,
        [...known.filter((d) => d.origin !== origin), { origin, hlc: { ...hlc } }].slice(-4),
      );
      gen.epochs.set(k, Math.max(gen.epochs.get(k) ?? 0, epoch));
    }
    return chosen;
  };
  for (let s = 0; s < length; s++) {
    gen.clock += r.pick([0, 1, 7, 300, 2000]);
    const room = r.pick(ROOMS);
    const roll = r.next();
    if (alive.length === 0 || roll < 0.05) {
      connect();
      continue;
    }
    const conn = r.pick(alive);
    if (roll < 0.2) {
      // One origin per connection and room: a connection that re-hellos a room under another
      // origin leaves a ghost member behind in the reference after it disconnects (pinned in
      // relay-readme.test.mjs), so the differential keeps to the honest client's shape.
      const originKey = `${conn}/${room}`;
      const origin = gen.origins.get(originKey) ?? r.pick(ORIGINS);
      gen.origins.set(originKey, origin);
      const hello = { t: 'hello', room, origin, proto: 3, policyVersion: options.policyVersion };
      const v = r.next();
      if (v < 0.05) hello.proto = 2;
      else if (v < 0.1) hello.policyVersion = options.policyVersion + 1;
      else if (v < 0.15) hello.schemaVersion = (gen.schema.get(room) ?? 0) - 1;
      else if (v < 0.25) hello.schemaVersion = gen.schema.get(room) ?? 0;
      steps.push({
        t: 'hello',
        conn,
        msg: hello,
        seq: r.pick(['none', 'last', 'last', 'zero', 'far', 'behind']),
      });
    } else if (roll < 0.62) {
      const origin = r.pick(ORIGINS);
      const variant = r.next();
      let version;
      let reuse = null;
      const next = gen.next.get(origin) ?? 1;
      const sent = gen.sent.get(origin) ?? [];
      const holes = gen.holes.get(origin) ?? [];
      if (variant < 0.1 && sent.length) reuse = r.pick(sent);
      else if (variant < 0.14 && holes.length) version = holes.shift();
      else if (variant < 0.18) {
        holes.push(next);
        version = next + 1;
        gen.next.set(origin, next + 2);
      } else {
        version = next;
        gen.next.set(origin, next + 1);
      }
      gen.holes.set(origin, holes);
      let env;
      let instance = 'current';
      if (reuse) {
        env = structuredClone(reuse.env);
        instance = reuse.instance;
      } else {
        const hlc = { p: gen.clock, l: r.int(3) };
        env = {
          proto: 3,
          origin,
          writer: 'SELF',
          version,
          hlc,
          policyVersion: options.policyVersion,
          ops: makeOps(origin, hlc),
        };
        const m = r.next();
        if (m < 0.04) instance = 'stale';
        else if (m < 0.06) instance = 'bogus';
        const schema = gen.schema.get(room) ?? 0;
        const sv = r.next();
        if (sv < 0.04) {
          env.schemaVersion = schema + 1;
          gen.schema.set(room, schema + 1);
        } else if (sv < 0.07) env.schemaVersion = schema - 1;
        else if (sv < 0.12) env.schemaVersion = schema;
        const bad = r.next();
        if (bad < 0.03) env.proto = 2;
        else if (bad < 0.05) env.policyVersion = options.policyVersion + 1;
        else if (bad < 0.07) env.writer = 'someone-else';
        else if (bad < 0.1) malform(env, r);
        sent.push({ env, instance });
        gen.sent.set(origin, sent.slice(-6));
      }
      steps.push({ t: 'env', conn, room, env, instance });
    } else if (roll < 0.7) {
      steps.push({ t: 'presence', conn, msg: { t: 'presence', room, data: r.pick(VALUES) } });
    } else if (roll < 0.75) {
      steps.push({
        t: 'signal',
        conn,
        msg: { t: 'signal', room, to: r.pick(ORIGINS), data: { sdp: r.pick(VALUES) } },
      });
    } else if (roll < 0.8) {
      alive = alive.filter((c) => c !== conn);
      steps.push({ t: 'disconnect', conn });
    } else if (roll < 0.86) {
      steps.push({ t: 'clock', ms: r.pick([100, 500, 1000, 5000]) });
    } else if (roll < 0.93) {
      steps.push({ t: r.chance(0.85) ? 'resolve' : 'reject', which: r.int(8) });
    } else if (roll < 0.95) {
      steps.push({ t: 'unload', room, discard: r.chance(0.5) });
    } else if (roll < 0.965) {
      steps.push({ t: 'hydrate', room });
    } else if (roll < 0.975) {
      alive = [];
      steps.push({ t: 'restart' });
    } else {
      steps.push({ t: 'room', room });
    }
  }
  steps.push({ t: 'resolve-all' });
  return { options, steps };
}

function malform(env, r) {
  const pick = r.int(14);
  const op = env.ops[0];
  switch (pick) {
    case 0:
      delete env.hlc;
      break;
    case 1:
      env.version = 0;
      break;
    case 2:
      env.version = 1.5;
      break;
    case 3:
      env.ops = 'nope';
      break;
    case 4:
      if (op) op.kind = 'move';
      break;
    case 5:
      if (op) op.path = ['a\u0001'];
      break;
    case 6:
      if (op) op.path = ['__proto__'];
      break;
    case 7:
      if (op) {
        op.path = [];
        op.kind = 'delete';
      }
      break;
    case 8:
      if (op) op.epoch = -1;
      break;
    case 9:
      if (op) op.cites = 'x';
      break;
    case 10:
      if (op) op.cites = [{ origin: '', hlc: { p: 1, l: 0 } }];
      break;
    case 11:
      if (op) env.ops.push({ ...op });
      break;
    case 12:
      env.instance = 'bad\u0002';
      break;
    case 13:
      env.origin = '';
      break;
  }
}

const POLICIES = {
  none: () => undefined,
  acl: (lib) =>
    lib.pathPrefixAcl([
      { prefix: ['notes'], allow: () => true },
      { prefix: ['cases', '*', 'plan'], allow: (ctx) => ctx.kind !== 'agent' },
      { prefix: ['a'], allow: (ctx, room) => room === 'r1' || ctx.kind !== 'agent' },
      { prefix: [0], allow: () => true },
    ]),
  root: () => ({
    canWrite: (ctx, path, room, info) => path.length > 0 || ctx.kind !== 'agent' || info?.seq === 0,
  }),
  validate: () => ({ validate: (op) => !(op.kind === 'set' && op.next === 'forbidden') }),
  bump: () => ({ canBump: (ctx, path, epoch) => ctx.kind !== 'agent' || epoch < 2 }),
  verify: () => ({ verifyCitations: true, canBump: (ctx) => ctx.kind !== 'agent' }),
};

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Plays a script against one implementation ({createRelay, pathPrefixAcl}). */
export class World {
  constructor(lib, options) {
    this.lib = lib;
    this.options = options;
    this.clock = 1000;
    this.logs = new Map(); // conn index -> messages (JSON round-tripped)
    this.calls = []; // observer calls
    this.instances = [];
    this.conns = new Map(); // conn index -> { conn, closed, lastSeq }
    this.deferreds = [];
    this.persisted = new Map(); // room -> { state, journal }
    this.relay = this.makeRelay();
  }

  makeRelay() {
    const o = this.options;
    const opts = {
      policyVersion: o.policyVersion,
      journalLimit: o.journalLimit,
      ejection: o.ejection,
      limits: {
        ...(o.maxOps ? { maxOpsPerEnvelope: o.maxOps } : {}),
        ...(o.rate ? { maxEnvelopesPerSecond: o.rate } : {}),
      },
      now: () => this.clock,
      policy: POLICIES[o.policy](this.lib),
      onViolation: (room, v) => this.calls.push(['violation', room, v]),
      onDrop: (room, env, reason) =>
        this.calls.push(['drop', room, env.origin, env.version, reason]),
      onReject: (...args) => this.calls.push(['reject', args[0], args[1].writer, ...args.slice(2)]),
      onJoin: (room, ctx, origin) => this.calls.push(['join', room, ctx.writer, origin]),
      onDurabilityFailed: (room, env, cause) =>
        this.calls.push(['durability-failed', room, env.seq, String(cause)]),
    };
    if (o.durability !== 'none') {
      opts.onCommit = (room, env, state) => {
        this.calls.push([
          'commit',
          room,
          env.seq,
          state.seq,
          state.wm,
          state.ranges,
          state.settled,
          state.schemaVersion,
        ]);
        const saved = this.persisted.get(room) ?? { journal: [] };
        // A migration cuts the generation: the journal restarts with it.
        if (
          env.schemaVersion !== undefined &&
          saved.state &&
          env.schemaVersion > saved.state.schemaVersion
        )
          saved.journal = [];
        saved.journal.push(JSON.parse(JSON.stringify(env)));
        saved.state = {
          seq: state.seq,
          instance: state.instance,
          registers: state.checkpoint(),
          ranges: state.ranges,
          settled: state.settled,
          schemaVersion: state.schemaVersion,
        };
        this.persisted.set(room, saved);
        if (o.durability === 'sync') return undefined;
        const done = new Promise((resolve, reject) => this.deferreds.push({ resolve, reject }));
        // The reference awaits a promise only once it reaches the head of its queue; mark it
        // handled so a rejection behind a pending head is not an unhandled rejection.
        done.catch(() => {});
        return done;
      };
    }
    return this.lib.createRelay(opts);
  }

  log(idx, msg) {
    this.logs.get(idx).push(msg);
  }

  noteInstances() {
    for (const name of ROOMS) {
      const info = this.relay.room(name);
      if (info && !this.instances.includes(info.instance)) this.instances.push(info.instance);
    }
  }

  async step(s) {
    switch (s.t) {
      case 'connect': {
        this.logs.set(s.conn, []);
        const entry = { closed: false, lastSeq: new Map() };
        entry.conn = this.relay.connect(
          {
            send: (m) => {
              const msg = JSON.parse(JSON.stringify(m));
              if (msg.t === 'welcome' || msg.t === 'env') {
                const seq = msg.t === 'welcome' ? msg.seq : msg.env.seq;
                entry.lastSeq.set(msg.room, Math.max(entry.lastSeq.get(msg.room) ?? 0, seq));
              }
              this.log(s.conn, msg);
            },
            close: () => {
              if (!entry.closed) this.log(s.conn, 'CLOSE');
              entry.closed = true;
            },
          },
          { ...s.ctx },
        );
        this.conns.set(s.conn, entry);
        break;
      }
      case 'hello': {
        const c = this.conns.get(s.conn);
        if (!c || c.closed) break;
        const msg = { ...s.msg };
        const last = c.lastSeq.get(msg.room);
        if (s.seq === 'last' && last !== undefined) msg.seq = last;
        else if (s.seq === 'zero') msg.seq = 0;
        else if (s.seq === 'far') msg.seq = 100000;
        else if (s.seq === 'behind' && last !== undefined) msg.seq = Math.max(0, last - 2);
        c.conn.receive(msg);
        break;
      }
      case 'env': {
        const c = this.conns.get(s.conn);
        if (!c || c.closed) break;
        const env = structuredClone(s.env);
        const info = this.relay.room(s.room);
        env.instance =
          s.instance === 'current'
            ? (info?.instance ?? 'none')
            : s.instance === 'stale'
              ? (this.instances.find((x) => x !== info?.instance) ?? 'bogus')
              : 'bogus';
        if (env.writer === 'SELF') env.writer = this.ctxWriter(s.conn);
        // Keep key order stable: instance right after proto, as a client writes it.
        c.conn.receive({ t: 'env', room: s.room, env });
        break;
      }
      case 'presence':
      case 'signal': {
        const c = this.conns.get(s.conn);
        if (!c || c.closed) break;
        c.conn.receive(structuredClone(s.msg));
        break;
      }
      case 'disconnect': {
        const c = this.conns.get(s.conn);
        if (!c) break;
        c.conn.disconnect();
        c.closed = true;
        break;
      }
      case 'clock':
        this.clock += s.ms;
        break;
      case 'resolve':
      case 'reject': {
        if (this.deferreds.length === 0) break;
        const [d] = this.deferreds.splice(s.which % this.deferreds.length, 1);
        if (s.t === 'resolve') d.resolve();
        else d.reject(new Error('disk full'));
        break;
      }
      case 'resolve-all':
        for (const d of this.deferreds.splice(0)) d.resolve();
        break;
      case 'unload':
        this.calls.push([
          'unload',
          s.room,
          s.discard,
          this.relay.unload(s.room, { discard: s.discard }),
        ]);
        break;
      case 'hydrate':
        this.calls.push(['hydrate', s.room, this.relay.hydrate(s.room, this.snapshotOf(s.room))]);
        break;
      case 'restart': {
        for (const d of this.deferreds.splice(0)) d.resolve();
        await tick();
        for (const c of this.conns.values()) c.closed = true;
        this.relay = this.makeRelay();
        for (const name of ROOMS) {
          if (this.persisted.has(name))
            this.calls.push(['hydrate', name, this.relay.hydrate(name, this.snapshotOf(name))]);
        }
        break;
      }
      case 'room': {
        const info = this.relay.room(s.room);
        this.calls.push(['room', s.room, info ? { ...info } : null]);
        break;
      }
    }
    await tick();
    await tick();
    // The adapter's close handler: a socket the relay closed is disconnected.
    for (const c of this.conns.values()) {
      if (c.closed && !c.disconnected) {
        c.disconnected = true;
        c.conn.disconnect();
      }
    }
    await tick();
    this.noteInstances();
  }

  ctxWriter(idx) {
    return this.ctxs?.get(idx) ?? 'unknown';
  }

  snapshotOf(room) {
    const saved = this.persisted.get(room);
    if (!saved) return { seq: 0 };
    return { ...structuredClone(saved.state), journal: structuredClone(saved.journal) };
  }

  /**
   * What was recorded since the last call, with instance nonces replaced by their order of
   * appearance and object keys sorted (JSON objects are unordered). Per connection, one stream
   * per room: the order between two rooms' messages is an accident of promise scheduling when
   * durability promises of both settle in the same tick.
   */
  delta() {
    const map = (v) => {
      if (typeof v === 'string') {
        const i = this.instances.indexOf(v);
        return i >= 0 ? `<instance ${i}>` : v;
      }
      if (Array.isArray(v)) return v.map(map);
      if (v && typeof v === 'object') {
        return Object.fromEntries(
          Object.entries(v)
            .map(([k, x]) => [map(k), map(x)])
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        );
      }
      return v;
    };
    this.seen ??= new Map();
    const streams = [];
    for (const [conn, log] of this.logs) {
      const from = this.seen.get(conn) ?? 0;
      this.seen.set(conn, log.length);
      if (from === log.length) continue;
      const fresh = log.slice(from);
      for (const room of [...ROOMS, null]) {
        const part = fresh.filter((m) => (m === 'CLOSE' ? room === null : m.room === room));
        if (part.length) streams.push([`${conn}/${room ?? 'close'}`, part]);
      }
    }
    streams.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const calls = this.calls.slice(this.callsSeen ?? 0);
    this.callsSeen = this.calls.length;
    return { logs: map(streams), calls: map(calls) };
  }
}

/** Plays `script` in a world for `lib`, returning what each step recorded. */
export async function play(lib, script) {
  const world = new World(lib, script.options);
  world.ctxs = new Map(
    script.steps.filter((s) => s.t === 'connect').map((s) => [s.conn, s.ctx.writer]),
  );
  const after = [];
  for (const s of script.steps) {
    await world.step(s);
    after.push(JSON.stringify(world.delta()));
  }
  return after;
}
