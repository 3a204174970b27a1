// `tether/relay`: the room relay for JavaScript, a drop-in for @mmstack/mesh-protocol's
// createRelay (the room-relay spec). Every decision is made by the C++ core (src/room); this file
// runs the core through the one driver (web/glue/driver.js), carries its actions out (send, close,
// onCommit, the policy questions, answered at once from the caller's policy functions) and hands
// its events to the caller's observers (docs/design.md rule 4).
import { createDriver } from './driver.js';
import { loadTetherModule } from './load.js';
import { randomSeed } from './seed.js';

const ACL = Symbol.for('tether.relay.pathPrefixAcl');
// A policy whose canWrite allows every path below the room root says so by keeping that canWrite
// under this symbol (web/edge/policy.js; relay.d.ts `canWriteRootOnly`): the core then asks about
// root ops only, and a write below the root runs without a question (one JS call and a parked
// envelope fewer per envelope). The reference ignores it and asks about every op.
const ROOT_ONLY = Symbol.for('tether.relay.canWriteRootOnly');
const encoder = new TextEncoder();
const decoder = new TextDecoder();

let mod = null;
// What the core exports once loaded: its version and bounds, and the layout of its actions.
let shape = null;
/** The op protocol version of the core (the room-relay spec, "The envelope"): 3. */
export let MESH_PROTO_VERSION;
/** The core's room limits (src/room/limits.hpp), once the module is loaded. */
export let ROOM_LIMITS;

function adopt(m) {
  mod = m;
  const L = m.roomActionLayout();
  const kinds = m.roomActionKinds();
  shape = {
    L,
    SEND: kinds.indexOf('send'),
    CLOSE: kinds.indexOf('close'),
    COMMIT: kinds.indexOf('commit'),
    ASK_CAN_WRITE: kinds.indexOf('ask-can-write'),
    ASK_VALIDATE: kinds.indexOf('ask-validate'),
    ASK_CAN_BUMP: kinds.indexOf('ask-can-bump'),
    ASK_ACL: kinds.indexOf('ask-acl'),
    READ: kinds.indexOf('read'),
    events: m.roomEventKinds(),
    verdict: m.roomCommitVerdicts(),
  };
  ROOM_LIMITS = Object.freeze({ ...m.roomLimits() });
  MESH_PROTO_VERSION = ROOM_LIMITS.meshProtoVersion;
}

// A relay's core lives in WASM memory: free it when the relay object is collected. workerd has
// no FinalizationRegistry; there a relay lives as long as its Durable Object's isolate.
const registry = (free) =>
  typeof FinalizationRegistry === 'function' ? new FinalizationRegistry(free) : { register() {} };
const cores = registry((core) => core.delete());
const isServerRuntime = !!(globalThis.process?.versions?.node || globalThis.Deno);
if (isServerRuntime) adopt(await loadTetherModule({}, 'room'));

/**
 * Loads the WASM module where it cannot load itself (workerd: pass { wasmModule }, the imported
 * tether.wasm; browsers). Node and Deno load it on import.
 */
export async function initRelay(options) {
  adopt(await loadTetherModule(options, 'room'));
}

/** A hello as the room relay expects it; schemaVersion and seq are optional. */
export function helloText({ room, origin, policyVersion = 0, schemaVersion, seq }) {
  return mod.roomHelloText(
    String(room),
    String(origin),
    Number(policyVersion),
    schemaVersion ?? NaN,
    seq ?? NaN,
  );
}

/** A journal envelope ({...env, seq}, as JSON text) as the client message that wrote it. */
export function replayText(room, seqEnvText) {
  const text = mod.roomReplayMessage(String(room), String(seqEnvText));
  if (text === '') throw new Error('tether/relay: a journal envelope must be a JSON object');
  return text;
}

// The room client and the reference's checking helpers are the room_client binding
// (wasm/module.cmake): in the full module beside the relay, never in the rooms Worker's module,
// which hosts rooms only. The constructor or function `name` of the loaded module, or the fix.
function clientSide(name) {
  if (!mod)
    throw new Error(
      'tether/relay: the WASM module is not loaded; `await initRelay({ wasmModule })` first',
    );
  if (!mod[name])
    throw new Error(
      `tether/relay: ${name} is not in the WASM module this runtime loaded (the rooms Worker's, ` +
        'tether-rooms, holds the relay side only: wasm/module.cmake); a room client and the ' +
        "reference's checks run on the full module (Node, Deno, browsers)",
    );
  return mod[name];
}

/**
 * The reference's validateEnvelope: the core's whole-envelope check (the one the relay runs
 * before anything else). null when well-formed, else the reason (the `malformed` details, and
 * ours, `bounds`, for an id or path over the core's limits).
 */
export function validateEnvelope(env) {
  let text;
  try {
    text = JSON.stringify(env);
  } catch {
    return 'envelope'; // a cycle or a BigInt: no envelope a peer could have sent
  }
  if (typeof text !== 'string') return 'envelope';
  const reason = clientSide('roomValidateEnvelope')(text);
  return reason === '' ? null : reason;
}

/**
 * The reference's checkEnvelope: null when clean, else the violation. The core decides the order
 * (the writer first, then canWrite and validate per op) and asks each policy function it needs;
 * they get the caller's own objects, as the reference passes them.
 */
export function checkEnvelope(policy, env, ctx, room, info) {
  const writer = JSON.stringify(ctx?.writer) ?? '';
  const Check = clientSide('RoomEnvelopeCheck');
  const check = new Check(
    JSON.stringify(env) ?? '',
    writer,
    !!policy,
    typeof policy?.canWrite === 'function',
    typeof policy?.validate === 'function',
  );
  try {
    for (let q = check.question(); q >= 0; q = check.question()) {
      const op = env.ops[q >> 1];
      check.verdict(
        (q & 1) === 0
          ? !!policy.canWrite(ctx, op.path, room, info)
          : !!policy.validate(op, ctx, room, info),
      );
    }
    if (check.unreadable())
      throw new TypeError('tether/relay: checkEnvelope needs an envelope whose ops are an array');
    const reason = check.reason();
    if (reason === '') return null;
    const violation = { writer: ctx.writer, reason };
    if (reason !== 'writer-mismatch') violation.path = env.ops[check.op()].path;
    return violation;
  } finally {
    check.delete();
  }
}

const rangeCores = registry((core) => core.delete());
const RANGES = Symbol('tether.relay.ranges');

/**
 * The reference's createRanges: one origin's admitted versions as inclusive ranges (the core's
 * VersionRanges, the same the relay keeps).
 */
export function createRanges(initial = []) {
  const Ranges = clientSide('RoomRanges');
  const core = new Ranges(JSON.stringify(initial));
  if (core.invalid()) {
    core.delete();
    throw new TypeError('tether/relay: createRanges takes an array of [from, to] version pairs');
  }
  const ranges = {
    has: (v) => core.has(Number(v)),
    add: (v) => core.add(Number(v)),
    max: () => core.max(),
    prefix: () => core.prefix(),
    toJSON: () => JSON.parse(core.json()),
    [RANGES]: core,
  };
  rangeCores.register(ranges, core);
  return ranges;
}

/**
 * The reference's recordAdmission: the envelope's version joins its origin's ranges and, when
 * the first contiguous run grew (the core decides), its hlc becomes the origin's settled stamp.
 */
export function recordAdmission(evidence, env) {
  let held = evidence.ranges.get(env.origin);
  if (!held) evidence.ranges.set(env.origin, (held = createRanges()));
  const core = held[RANGES];
  if (!core) throw new TypeError('tether/relay: recordAdmission needs ranges made by createRanges');
  if (core.record(Number(env.version))) evidence.settled.set(env.origin, env.hlc);
}

const registerCores = registry((core) => core.delete());

/**
 * The reference's createRegisterStore: one room's register retention, the core's RegisterStore
 * (the one the relay runs). Envelopes must be well-formed (validateEnvelope); settle takes the
 * whole settled record and examines every origin it names.
 */
export function createRegisterStore() {
  const Registers = clientSide('RoomRegisters');
  const core = new Registers();
  const pathText = (path, what) => {
    if (!Array.isArray(path)) throw new TypeError(`tether/relay: ${what} takes a path (an array)`);
    return JSON.stringify(path);
  };
  const store = {
    ingest(env) {
      const reason = core.ingest(JSON.stringify(env) ?? '');
      if (reason !== '')
        throw new TypeError(
          `tether/relay: registers.ingest needs a well-formed envelope (validateEnvelope says ${reason})`,
        );
    },
    checkpoint: () => JSON.parse(core.checkpoint()),
    load(registers) {
      if (!core.load(JSON.stringify(registers) ?? ''))
        throw new TypeError(
          'tether/relay: registers.load takes what checkpoint() returns: [{path, siblings, water, epoch?}]',
        );
    },
    settle(settled) {
      if (!core.settle(JSON.stringify(settled) ?? ''))
        throw new TypeError('tether/relay: registers.settle takes an object of origin to {p, l}');
    },
    reset: () => core.reset(),
    maxEpoch: (path) => core.maxEpoch(pathText(path, 'maxEpoch')),
    covers(path, dot) {
      const answer = core.covers(
        pathText(path, 'covers'),
        String(dot?.origin),
        JSON.stringify(dot?.hlc) ?? '',
      );
      if (answer < 0) throw new TypeError('tether/relay: covers takes a dot {origin, hlc: {p, l}}');
      return answer === 1;
    },
  };
  registerCores.register(store, core);
  return store;
}

/** The key under which a policy keeps its canWrite to say it allows every path below the root. */
export const canWriteRootOnly = ROOT_ONLY;

/** Write access by path prefix; '*' matches one segment. Runs natively inside the relay. */
export function pathPrefixAcl(rules) {
  const list = rules.map((r) => ({ prefix: [...r.prefix], allow: r.allow }));
  const canWrite = (ctx, path, room) =>
    list.some((rule) => {
      if (rule.prefix.length > path.length) return false;
      for (let i = 0; i < rule.prefix.length; i++) {
        if (rule.prefix[i] !== '*' && String(rule.prefix[i]) !== String(path[i])) return false;
      }
      return rule.allow(ctx, room);
    });
  return { canWrite, [ACL]: { canWrite, rules: list } };
}

// What onCommit is handed: seq and instance as values; wm, ranges, settled and schemaVersion read
// from the core once, at the first that is asked for; checkpoint() walks the registers. A Proxy
// over a plain object rather than a literal with getters: V8 defines each accessor of a literal
// through the runtime, some 5-8 us per commit in Node (bench/README.md § The edge relay, fourth
// pass), where this costs well under one. Spread, Object.keys and JSON.stringify see the same
// own enumerable properties the literal had.
const LAZY_STATE = ['wm', 'ranges', 'settled', 'schemaVersion'];
const STATE_KEYS = ['seq', 'instance', ...LAZY_STATE, 'checkpoint'];
const FROM = Symbol('tether.relay.stateFrom'); // {core, room, full}: where the lazy values come from
const lazy = (t, key) => (t[FROM].full ??= JSON.parse(t[FROM].core.stateJson(t[FROM].room)))[key];
const unset = (t, key) => LAZY_STATE.includes(key) && !Object.hasOwn(t, key);
// Writes and deletes land on the target itself (the default traps), as on the literal.
const stateHandler = {
  get: (t, key) => (unset(t, key) ? lazy(t, key) : t[key]),
  has: (t, key) => unset(t, key) || key in t,
  ownKeys: (t) => [...new Set([...STATE_KEYS, ...Reflect.ownKeys(t)])].filter((k) => k !== FROM),
  getOwnPropertyDescriptor: (t, key) =>
    unset(t, key)
      ? { value: lazy(t, key), writable: true, enumerable: true, configurable: true }
      : Reflect.getOwnPropertyDescriptor(t, key),
};
function commitState(core, room, seq, instance) {
  const checkpoint = () => JSON.parse(core.checkpointJson(room));
  return new Proxy({ seq, instance, checkpoint, [FROM]: { core, room, full: null } }, stateHandler);
}

export function createRelay(opt = {}) {
  if (!mod) {
    throw new Error(
      'tether/relay: the WASM module is not loaded; `await initRelay({ wasmModule })` first',
    );
  }
  const { L, SEND, CLOSE, COMMIT, ASK_CAN_WRITE, ASK_VALIDATE, ASK_ACL, READ, events, verdict } =
    shape;
  const STRIDE = L.stride;
  const policy = opt.policy;
  const acl = policy?.[ACL] && policy.canWrite === policy[ACL].canWrite ? policy[ACL] : null;
  const conns = new Map(); // conn id -> { socket, ctx, text }
  const causes = new Map(); // commit ticket -> rejection cause
  const ctxOf = (conn) => conns.get(conn)?.ctx ?? {};
  const core = new mod.RoomRelayCore(
    JSON.stringify({
      policyVersion: opt.policyVersion ?? 0,
      journalLimit: opt.journalLimit ?? ROOM_LIMITS.defaultJournalLimit,
      maxOpsPerEnvelope: opt.limits?.maxOpsPerEnvelope ?? ROOM_LIMITS.defaultMaxOpsPerEnvelope,
      maxEnvelopesPerSecond: opt.limits?.maxEnvelopesPerSecond ?? 0,
      ejectConnection: opt.ejection === 'connection',
      durable: typeof opt.onCommit === 'function',
      hasPolicy: !!policy,
      canWrite: !acl && typeof policy?.canWrite === 'function',
      canWriteRootOnly: !acl && !!policy?.canWrite && policy[ROOT_ONLY] === policy.canWrite,
      validate: typeof policy?.validate === 'function',
      canBump: typeof policy?.canBump === 'function',
      verifyCitations: !!policy?.verifyCitations,
      ...(acl ? { acl: acl.rules.map((r) => r.prefix) } : {}),
      seed: randomSeed(),
      readAckBytes: opt.readAckBytes ?? 0,
    }),
  );
  // The host's admission core (web/edge/limits.js, its `boundary`), which then judges the
  // frames and the sends of connections bound with `judgedBy` inside the calls that already
  // cross: one call per inbound message, one per batch (bindings/room_bindings.cpp).
  if (opt.admission) core.useAdmission(opt.admission);

  // pollAction in batches: the bindings pack the core's next actions (up to a commit or a
  // question) into an array in WASM memory, read in place through one view of the heap (rebuilt
  // when memory grew); each action handed to the driver is its index there. Texts of one batch
  // are decoded once each (an echo goes to every member).
  // The view is refreshed once per action (growing memory replaces HEAPU8), and every field an
  // action needs is read before any callback that could grow it runs.
  const outboxAt = core.outbox() / 8;
  let heap = null;
  let h = null;
  const H = () => {
    if (mod.HEAPU8 !== heap) {
      heap = mod.HEAPU8;
      h = new Float64Array(heap.buffer);
    }
    return h;
  };
  let at = 0;
  let end = 0;
  let eventReady = true; // the last empty batch said whether the core holds an event
  let settled = false; // the last batch said no action is ready, and no input ran since
  let receiveError = 0;
  let frameRefused = 0; // the admission core's close code for a frame it refused
  const strCache = [];
  const objCache = [];
  function adopt(n) {
    H();
    at = h[outboxAt] / 8;
    end = at + n;
    strCache.length = 0;
    objCache.length = 0;
    if (n > 0 && h[at] === L.none) {
      eventReady = h[at + 1] !== 0;
      receiveError = h[at + 2];
      frameRefused = h[at + 3];
      settled = true;
      end = at;
    }
  }
  const driven = {
    pollAction() {
      if (at >= end) {
        if (settled) return null;
        adopt(core.packActions(driver.now()));
        if (at >= end) return null;
      }
      const k = at;
      at += STRIDE;
      H();
      return k;
    },
    pollEvent() {
      if (!eventReady) return null;
      const e = core.pollEvent();
      if (e === null) eventReady = false;
      return e;
    },
  };
  const textAt = (k) => {
    const id = h[k + L.text];
    let v = strCache[id];
    if (v === undefined) {
      const addr = h[k + L.textAddr];
      v = strCache[id] = decoder.decode(heap.subarray(addr, addr + h[k + L.textLen]));
    }
    return v;
  };
  const objAt = (k) => {
    const id = h[k + L.text];
    let v = objCache[id];
    if (v === undefined) v = objCache[id] = JSON.parse(textAt(k));
    return v;
  };
  // Room names by incarnation (never reused in one relay), decoded once; bounded.
  const roomNames = new Map();
  const roomAt = (k) => {
    const id = h[k + L.roomId];
    let name = roomNames.get(id);
    if (name === undefined) {
      const addr = h[k + L.roomAddr];
      name = decoder.decode(heap.subarray(addr, addr + h[k + L.roomLen]));
      if (roomNames.size >= 1024) roomNames.clear();
      roomNames.set(id, name);
    }
    return name;
  };

  // The verdict goes straight back from inside perform, and the batch it released is what the
  // driver carries out next (a question is always the last action of its batch).
  function answer(token, ok) {
    adopt(core.policyVerdictPack(token, ok, driver.now()));
  }
  // A policy that throws refuses: the envelope is judged like any other refused write.
  function refuse(error) {
    console.error('tether/relay: a policy function threw; the write is refused', error);
    return false;
  }

  function perform(k) {
    const kind = h[k + L.kind];
    const conn = h[k + L.conn];
    if (kind === SEND) {
      // The hot case, without closures.
      const c = conns.get(conn);
      if (c === undefined) return;
      const judged = h[k + L.verdict];
      // Judged by the admission core inside the batch (0 send, 1 drop, else the close code).
      if (judged > 1) return c.socket.refused(judged, core.refusalReason(h[k + L.reason]));
      if (judged === 1) return;
      // The second argument says a frame is ephemeral (a presence update): an adapter bounding
      // a slow reader's queue may drop it first. The reference's sockets take one argument.
      if (c.text) c.socket.send(textAt(k), h[k + L.ephemeral] === 1, judged === 0);
      else c.socket.send(objAt(k), h[k + L.ephemeral] === 1);
      return;
    }
    if (kind === CLOSE) {
      conns.get(conn)?.socket.close?.();
      return;
    }
    if (kind === READ) {
      // A reader's acknowledgement (the relay option readAckBytes): the socket's own admission
      // judges it (web/edge/room-host.js). A socket without `read` has no use for it.
      const judged = h[k + L.verdict];
      if (judged === -1) conns.get(conn)?.socket.read?.(h[k + L.seq]);
      else if (judged === 1) conns.get(conn)?.socket.credited?.();
      return;
    }
    if (kind === COMMIT) return commit(k);
    const token = h[k + L.token];
    const info = { seq: h[k + L.seq] };
    const room = roomAt(k);
    let ok;
    try {
      if (kind === ASK_ACL) ok = acl.rules[h[k + L.rule]].allow(ctxOf(conn), room);
      else {
        const value = JSON.parse(textAt(k));
        if (kind === ASK_CAN_WRITE) ok = policy.canWrite(ctxOf(conn), value, room, info);
        else if (kind === ASK_VALIDATE) ok = policy.validate(value, ctxOf(conn), room, info);
        else ok = policy.canBump(ctxOf(conn), value, h[k + L.epoch], room, info);
      }
    } catch (error) {
      ok = refuse(error);
    }
    answer(token, !!ok);
  }

  // The instance of the generation the last commit was made in. The commit action's `epoch` is
  // the core's serial for the room's instance, new whenever the instance is assigned (relay.hpp),
  // so one string crosses Embind per generation, not per envelope (bench/README.md § The edge
  // relay, fourth pass).
  let instanceOf = { serial: -1, instance: '' };
  function commit(k) {
    const ticket = h[k + L.token];
    // Read before core.instance below, which may grow the heap.
    const seq = h[k + L.seq];
    const serial = h[k + L.epoch];
    const room = roomAt(k);
    // `commitText`: the envelope as the core's JSON text, for a callback that stores it as text
    // (web/edge/room-store.js), which spares a parse and a stringify per envelope.
    const env = opt.commitText === true ? textAt(k) : objAt(k);
    if (instanceOf.serial !== serial) instanceOf = { serial, instance: core.instance(room) };
    let done;
    try {
      // seq and the instance come with the commit; the vectors (which grow with the room's
      // origins) and the registers only when the callback asks, inside it. It behaves as an object
      // with own enumerable values, as the reference's: a store may spread it (the README's).
      done = opt.onCommit(room, env, commitState(core, room, seq, instanceOf.instance));
    } catch (cause) {
      done = Promise.reject(cause);
    }
    if (done === undefined || done === null) {
      adopt(core.commitResultPack(ticket, verdict.ok, driver.now())); // released at once: the echoes are next
      return;
    }
    // Each verdict and the batch it releases in one call (a commit is the last action of its
    // batch, so the batch read here replaces nothing unread).
    adopt(core.commitResultPack(ticket, verdict.pending, driver.now()));
    Promise.resolve(done).then(
      () => input((now) => adopt(core.commitResultPack(ticket, verdict.ok, now))),
      (cause) => {
        causes.set(ticket, cause);
        input((now) => adopt(core.commitResultPack(ticket, verdict.failed, now)));
      },
    );
  }

  function event(e) {
    switch (events[e.kind]) {
      case 'join':
        opt.onJoin?.(e.room, ctxOf(e.conn), e.text);
        break;
      case 'reject': {
        const args = [e.room, ctxOf(e.conn), e.reason];
        if (!Number.isNaN(e.expected)) args.push(e.expected);
        opt.onReject?.(...args);
        break;
      }
      case 'drop':
        opt.onDrop?.(e.room, JSON.parse(e.text), e.reason);
        break;
      case 'violation':
        opt.onViolation?.(e.room, JSON.parse(e.text));
        break;
      case 'durability-failed': {
        const cause = causes.get(e.token);
        causes.delete(e.token);
        opt.onDurabilityFailed?.(e.room, JSON.parse(e.text), cause);
        break;
      }
    }
  }

  const driver = createDriver(driven, { perform, event }, { now: opt.now ?? Date.now });

  // Every input from outside (a socket's message, a disconnect, a promise that settled) goes
  // through here: one that arrives while actions are being carried out (a socket that answers
  // synchronously from send) waits until they are all done, as with the reference's callbacks.
  function input(fn) {
    // Connections reach the core through here; naming `relay` keeps it (and so the core) alive
    // for as long as any connection is.
    if (relay === null) return undefined;
    return driver.defer((now) => {
      settled = false; // an input may queue actions: the next poll asks the core
      return fn(now);
    });
  }

  // Encodes a message into the core's staging buffer; returns its length in bytes.
  let staged = null;
  function stage(message) {
    const max = message.length * 3; // UTF-16 code units to UTF-8 bytes, at most
    if (staged === null || staged.length < max) staged = core.stage(Math.max(max, 4096));
    // ASCII by hand, the rest by encodeInto: on workerd TextEncoder is a runtime binding, and its
    // call was the larger part of a message's staging (bench/README.md § The edge relay, fourth
    // pass). The slice starts at a whole code point (the first non-ASCII unit).
    const n = message.length;
    let i = 0;
    for (let c; i < n && (c = message.charCodeAt(i)) < 0x80; i++) staged[i] = c;
    return i === n ? n : i + encoder.encodeInto(message.slice(i), staged.subarray(i)).written;
  }

  function attach(socket, ctx, text) {
    // ctx.room (an adapter's ticket) binds the connection to that one room. ctx.replay: the
    // adapter replaying its own journal, which the core does not judge again (docs/rooms.md
    // § Durability at the edge).
    const conn = core.connect(
      String(ctx.writer),
      ctx.room == null ? '' : String(ctx.room),
      ctx.replay === true,
    );
    conns.set(conn, { socket, ctx, text });
    const disconnect = () => {
      if (!conns.has(conn)) return;
      conns.delete(conn);
      input(() => core.disconnect(conn));
    };
    let judged = false;
    // `units` >= 0: the admission core checks the frame first (judgedBy), in the same call, and
    // a frame it refuses reaches the socket's `refused` (deferred behind a drain or not).
    const receiveText = (message, units = -1) => {
      // null: accepted (or queued behind what is being carried out); else what to fix.
      const code = input((now) => {
        receiveError = frameRefused = 0;
        adopt(core.receiveStagedPack(conn, stage(message), now, units));
        if (frameRefused !== 0) socket.refused(frameRefused, core.refusalReason(0));
        return receiveError;
      });
      return code
        ? { reason: mod.roomReceiveError(code), message: mod.roomReceiveErrorText(code) }
        : null;
    };
    return {
      conn,
      disconnect,
      receive: (msg) => receiveText(JSON.stringify(msg)),
      receiveText: (message) => receiveText(String(message)),
      // The socket's frames and sends judged by the relay's admission core (opt.admission) as
      // its connection `id` there: sends arrive as send(text, ephemeral, true) once passed,
      // refusals as refused(code, reason), credited reads as credited(). From then on
      // receiveFrame(text) checks a text frame and hands it to the relay in one call: null or a
      // receive error {reason, message}; a refused frame goes to the socket's refused().
      judgedBy(id) {
        return (judged = !!opt.admission && core.judge(conn, id));
      },
      receiveFrame: (message) => receiveText(message, judged ? message.length : -1),
    };
  }

  const relay = {
    connect(socket, ctx) {
      const c = attach(socket, ctx, false);
      return { receive: c.receive, disconnect: c.disconnect };
    },
    /** The JSON-text fast path: socket.send gets strings; receive takes the frame's text. */
    connectText(socket, ctx) {
      const c = attach(socket, ctx, true);
      return { ...c, receive: c.receiveText };
    },
    room: (name) => core.room(String(name)),
    hydrate: (name, snapshot) =>
      core.hydrate(String(name), JSON.stringify(snapshot ?? null), driver.now()),
    unload: (name, options) => core.unload(String(name), options?.discard === true),
    /** While true, the admission core judges nothing: the host drops every frame unsent. */
    pauseJudging: (paused) => core.pauseJudging(!!paused),
    /** Rooms in memory, and the registers they retain and the bytes those hold (measurement). */
    stats: () => ({
      rooms: core.roomCount(),
      registers: core.registerCount(),
      registerBytes: core.registerBytes(),
    }),
  };
  cores.register(relay, core);
  return relay;
}

const clients = registry((core) => core.delete());

/** What to do about a write the client core refused (WriteRefusal in src/room/client.hpp). */
function writeRefusalFix(refusal, room, ours) {
  switch (refusal) {
    case 'ops':
      return 'ops must be a non-empty array of {kind: "set" | "delete" | "clear", path: [...], next?}';
    case 'needs-migration':
      return (
        `the room holds schema ${room} and this client writes schema ${ours}; ` +
        'call migrate(ops) once with the document in the new shape (a set at the root path []), ' +
        `or create the client with schemaVersion ${room}`
      );
    case 'outdated':
      return (
        `the room holds schema ${room}, newer than this client's ${ours}; ` +
        'load the code that writes the new shape and create the client with its schemaVersion'
      );
    case 'no-migration':
      return `the room already holds schema ${room} (this client's is ${ours}): write() instead`;
    case 'migration-root':
      return (
        'a migration replaces the whole document: include a set at the root path [] ' +
        'with the document in the new shape'
      );
    default:
      return `refused (${refusal})`;
  }
}

/**
 * A room client (the peer side of the protocol): builds envelopes with cites and epoch, keeps the
 * unacknowledged tail and resends it after every welcome, handles drops, hydrates from welcomes,
 * and folds the registers last-writer-wins. Text in, text out; `receive` returns what to send.
 */
export function createRoomClient(options) {
  const Client = clientSide('RoomClientCore');
  const { outbox, ...coreOptions } = options;
  const core = new Client(JSON.stringify(coreOptions));
  if (outbox !== undefined) {
    const error = core.seed(outbox, (options.now ?? Date.now)());
    if (error !== '') {
      core.delete();
      throw new Error(`tether/relay: createRoomClient: ${error}`);
    }
  }
  // Every refusal the core reported, in order: refused writes, rejected hellos, ejections.
  const events = [];
  // The client's transmits are returned to the caller, who owns the socket.
  let out = [];
  const driver = createDriver(
    {
      pollAction: () => core.pollTransmit(),
      pollEvent: () => core.pollEvent(),
    },
    {
      perform: (text) => out.push(text),
      event: (r) =>
        events.push(
          r.kind === 'refused'
            ? { kind: r.kind, reason: r.reason, env: JSON.parse(r.env) }
            : r.kind === 'lost'
              ? { kind: r.kind, reason: r.reason, value: JSON.parse(r.value) }
              : r,
        ),
    },
    { now: options.now ?? Date.now },
  );
  const run = (fn) => {
    out = [];
    driver.input(fn);
    return out;
  };
  // A write or a migration: the client message, null while the client cannot write yet (not
  // welcomed, or our migration's generation not yet open), and an error naming the fix for a
  // refusal that waiting does not cure (docs/rooms.md § Migrations).
  const queued = (call, ops, fn) => {
    let refusal = '';
    const sent = run((now) => {
      refusal = fn(JSON.stringify(ops), now);
    });
    if (refusal === '') return sent[0];
    if (refusal === 'not-welcomed' || refusal === 'migrating') return null;
    const room = core.roomSchemaVersion();
    const ours = coreOptions.schemaVersion ?? 0;
    throw new Error(`tether/relay: ${call}: ${writeRefusalFix(refusal, room, ours)}`);
  };
  const client = {
    // Once per socket: the hello also starts that socket's read count (docs/rooms.md § The
    // slow-reader rule), which the client acknowledges to a relay that asks for it.
    hello: () => core.connect(),
    write: (ops) => queued('write', ops, (text, now) => core.write(text, now)),
    migrate: (ops) => queued('migrate', ops, (text, now) => core.migrate(text, now)),
    // A frame's own text counts towards what the socket read; a parsed message does not (its
    // serialisation need not be the frame's bytes), and stops acknowledgements on this socket.
    receive: (message) =>
      run((now) =>
        typeof message === 'string'
          ? core.receive(message, now, true)
          : core.receive(JSON.stringify(message), now, false),
      ),
    tail: () => core.tail(),
    value: () => JSON.parse(core.value()),
    get unacked() {
      return core.unacked();
    },
    get seq() {
      return core.seq();
    },
    get welcomed() {
      return core.welcomed();
    },
    /** The schema the room holds, from the last welcome (-1 before the first). */
    get roomSchemaVersion() {
      return core.roomSchemaVersion();
    },
    refused: () =>
      events.filter((e) => e.kind === 'refused').map(({ reason, env }) => ({ reason, env })),
    events: () => events.slice(),
  };
  clients.register(client, core);
  return client;
}
