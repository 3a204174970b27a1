// The room endpoint, independent of the runtime: one relay, its durable store, the abuse limits
// and the recovery from storage failures (room-relay.md § Adapter recipes, § Persistence, § Telling
// a client a write is safe). The Durable Object (room-object.js) and the Deno host
// (web/host/rooms.js) only turn their sockets into { send(text), close(code, reason),
// bufferedAmount?, exactBufferedAmount? } and call open / message / closed. Readers that
// acknowledge what they read (docs/rooms.md § The slow-reader rule) are credited by the admission
// core through the relay's `read` callback.
//
// Identity comes in from a verified ticket ({writer, kind, room}); the connection is bound to
// that room inside the relay core, so a client cannot name, read or create any other. Admission
// (frame size, rates, principal budgets, connection counts) is the room core's admission
// component (limits.js); the hello and the messages replayed from the journal are built by the
// core (relay.js helloText, replayText), whichever relay implementation serves the room.
import { helloText, replayText } from '../glue/relay.js';
import { CLOSE, createAdmission } from './limits.js';
import { buildPolicy } from './policy.js';

const clip = (s) => {
  // A close reason is at most 123 UTF-8 bytes.
  let out = String(s);
  while (new TextEncoder().encode(out).length > 123) out = out.slice(0, -1);
  return out;
};

/**
 * @param {object} o
 * @param {{createRelay: Function, pathPrefixAcl: Function}} o.relayImpl  tether/relay (or the reference)
 * @param {import('./room-store.js').RoomStore | null} o.store  null: memory only (durability off)
 * @param {{rules, agentRoot}} o.policyConfig  from policy.js parsePolicyConfig
 * @param {object} o.limits  from limits.js resolveLimits
 * @param {number} [o.policyVersion]  the policy version hellos must carry
 * @param {number} [o.journalLimit]  the relay's journal bound (its default when absent)
 * @param {{error: Function, warn?: Function, info?: Function}} [o.log]
 * @param {() => number} [o.now]
 * @param {((conn: object, hello: string) => void) | null} [o.onHello]
 * @param {((conn: object, readState: string) => void) | null} [o.onReadState]
 */
export function createRoomHost({
  relayImpl,
  store = null,
  policyConfig = { rules: null, agentRoot: 'seq0' },
  policyVersion = 1,
  journalLimit, // the relay's default (the core's) unless configured
  limits,
  log = console,
  now = Date.now,
  onHello = null, // (conn, helloText): the DO keeps it in the socket's attachment for wake-ups
  // (conn, readState): likewise the admission core's read state, so a woken object counts each
  // socket on exactly (docs/rooms.md § The slow-reader rule). It changes with every frame sent:
  // handed over once per socket per turn, after the turn's sends.
  onReadState = null,
}) {
  const rooms = new Map(); // name -> { loaded, conns: Set, recovering }
  const connOf = new WeakMap(); // the ctx a connection was opened with -> its conn
  let replaying = false;
  let muted = false;
  // While muted, every frame is dropped unsent, so the admission core must not count any.
  const mute = (on) => {
    muted = on;
    relay.pauseJudging?.(on);
  };
  const admission = createAdmission(limits, store ? store.budgetStore() : null, { now });
  const unsaved = new Set(); // connections whose read state changed this turn
  function readStateChanged(conn) {
    if (!onReadState) return;
    // On a timer, at most once a second: the host that keeps read states (a Durable Object) is
    // never hibernated with a timer pending, so they are handed over before any hibernation
    // could drop them, and a write per socket per envelope becomes one per socket per second
    // (bench/README.md § The edge relay under workerd).
    if (unsaved.size === 0) setTimeout(saveReadStates, 1000);
    unsaved.add(conn);
  }
  function saveReadStates() {
    for (const conn of unsaved) conn.saveReadState();
    unsaved.clear();
  }

  const relay = relayImpl.createRelay({
    policyVersion,
    journalLimit,
    // Readers acknowledge what they read at this interval (the slow-reader rule; the reference
    // relay ignores the option and its clients never acknowledge).
    readAckBytes: admission.readAckBytes,
    ejection: 'connection', // spec: one bug in one tab must not lock a human out
    // Tether's relay runs the admission core's frame and send checks inside its own calls for
    // sockets without a bufferedAmount (workerd's): one WASM call per inbound message and one per
    // batch instead of one per recipient (bench/README.md § The edge relay under workerd). The
    // reference ignores it, and this host judges each frame itself.
    admission: admission.boundary,
    policy: buildPolicy(policyConfig, relayImpl.pathPrefixAcl),
    commitText: true, // the store keeps the core's text (the reference relay ignores this)
    onCommit: store
      ? (room, env, state) => {
          if (replaying) return undefined;
          const durable = store.append(room, env, state);
          // The relay refuses to unload a room that still owes an echo; once this commit is
          // released (the relay's own reaction to the same promise runs first), try again if
          // nobody is left in the room.
          durable.then(
            () => rooms.get(room)?.conns.size === 0 && queueMicrotask(() => idle(room)),
            () => {},
          );
          return durable;
        }
      : undefined,
    onDurabilityFailed: (room, env, cause) => {
      log.error(
        JSON.stringify({
          event: 'room stalled',
          room,
          seq: env?.seq,
          cause: String(cause?.message ?? cause),
        }),
      );
      recover(room, env?.seq);
    },
    onViolation: (room, v) => log.warn?.(JSON.stringify({ event: 'policy violation', room, ...v })),
    // The hello the relay accepted, kept for a wake-up (rebuilt by the core from its origin).
    onJoin: (room, ctx, origin) => {
      const conn = connOf.get(ctx);
      if (conn && onHello && !muted) onHello(conn, helloText({ room, origin, policyVersion }));
    },
  });

  function roomOf(name) {
    let r = rooms.get(name);
    if (!r) {
      r = { loaded: false, conns: new Set(), recovering: false };
      rooms.set(name, r);
    }
    return r;
  }

  // Rebuilds a room from the store before anyone is answered: hydrate the checkpoint (instance,
  // registers, ranges, settled, journal tail), then replay the envelopes after it through
  // connections that carry ctx.replay, with commits not written again. The relay core does not
  // judge those again: each envelope carries the policyVersion it was written under, which may
  // since have been bumped (docs/rooms.md § Durability at the edge).
  function load(name) {
    const r = roomOf(name);
    if (r.loaded) return;
    const saved = store ? store.load(name) : null;
    if (saved) {
      if (!relay.hydrate(name, saved.snapshot)) {
        throw new Error(
          `tether rooms: the relay refused the stored checkpoint of ${JSON.stringify(name)} (seq ${saved.snapshot.seq})`,
        );
      }
      replay(name, saved.snapshot, saved.after);
    }
    r.loaded = true;
  }

  function replay(name, snapshot, envs) {
    if (envs.length === 0) return;
    const conns = new Map(); // writer \0 origin -> connection
    replaying = true;
    mute(true);
    try {
      for (const env of envs) {
        const k = `${env.writer}\u0000${env.origin}`;
        let c = conns.get(k);
        if (!c) {
          c = relay.connectText(
            { send() {}, close() {} },
            { writer: env.writer, kind: 'replay', replay: true, room: name },
          );
          c.receive(
            helloText({
              room: name,
              origin: env.origin,
              policyVersion,
              schemaVersion: snapshot.schemaVersion ?? 0,
            }),
          );
          conns.set(k, c);
        }
        const err = c.receive(replayText(name, JSON.stringify(env)));
        if (err) throw new Error(`replaying seq ${env.seq}: ${err.reason}`);
      }
    } finally {
      for (const c of conns.values()) c.disconnect();
      replaying = false;
      mute(false);
    }
    const last = envs[envs.length - 1].seq;
    const seq = relay.room(name)?.seq;
    if (seq !== last) {
      throw new Error(
        `tether rooms: replaying ${JSON.stringify(name)} ended at seq ${seq}, the journal at ${last}; the store and the relay disagree`,
      );
    }
  }

  // A storage failure stalled the room: close its sockets (clients reconnect and resend their
  // unacknowledged tails), drop the stalled room with unload({discard: true}), and load it again
  // from the store, which holds exactly what was acknowledged. The unload is tried once the kicks
  // have run, and again as each of the room's connections finishes (the relay refuses it while a
  // member is still leaving): no timer.
  function recover(name, seq) {
    const r = roomOf(name);
    if (r.recovering) return;
    r.recovering = true;
    for (const c of [...r.conns])
      c.kick(CLOSE.STORAGE, `room storage failed at seq ${seq}; reconnect to resend`);
    queueMicrotask(() => tryReload(name));
  }

  function tryReload(name) {
    const r = roomOf(name);
    if (!r.recovering) return;
    if (!relay.unload(name, { discard: true })) {
      if (r.conns.size === 0)
        log.error(JSON.stringify({ event: 'room recovery stuck', room: name }));
      return;
    }
    store?.reset(name);
    r.loaded = false;
    r.recovering = false;
    try {
      load(name);
      log.info?.(
        JSON.stringify({ event: 'room recovered', room: name, seq: relay.room(name)?.seq ?? 0 }),
      );
    } catch (e) {
      // Loads again on the next connection attempt.
      log.error(
        JSON.stringify({ event: 'room reload failed', room: name, cause: String(e?.message ?? e) }),
      );
    }
  }

  // Idle rooms unload (room-relay.md § Persistence, unload): once a room's last socket is gone
  // and it owes nobody an answer, the relay drops it and so does this host, so memory is bounded
  // by the rooms somebody is in. Everything it held is in the store (an echo waits for the write),
  // and the next admit loads it back from there. A memory-only host (no store) keeps its rooms:
  // its memory is the only copy.
  function idle(name) {
    const r = rooms.get(name);
    if (!store || !r || r.conns.size > 0 || r.recovering || !r.loaded) return;
    if (!relay.unload(name)) return; // a commit is still in flight; its release tries again
    rooms.delete(name);
    store.reset(name);
  }

  /**
   * Before accepting a socket: null to accept, else {status, message, retryAfter} to answer over
   * HTTP. Loads the room from storage first, so nobody is answered from a half-built room.
   */
  function admit(name, writer) {
    const r = roomOf(name);
    if (r.recovering)
      return {
        status: 503,
        message: 'the room is recovering from a storage failure; retry shortly',
        retryAfter: 1,
      };
    try {
      load(name);
    } catch (e) {
      log.error(
        JSON.stringify({ event: 'room load failed', room: name, cause: String(e?.message ?? e) }),
      );
      return {
        status: 503,
        message: 'the room could not be loaded from storage; retry shortly',
        retryAfter: 5,
      };
    }
    return admission.attempt(name, writer);
  }

  /**
   * A socket whose ticket was verified (and that `admit` accepted, or that survived a hibernation).
   * `rejoin`: the hello this socket sent before the object was evicted; replayed silently, since
   * the client already holds everything the relay sent it. `resumed`: it survived a hibernation
   * (with or without a hello); `readState`: what onReadState was last handed for it.
   * `socket.exactBufferedAmount`: its bufferedAmount counts every byte its reader has not taken
   * (an HTTP member), so the core needs no acknowledgements from it.
   */
  function open(
    socket,
    { writer, kind, room },
    { rejoin = null, resumed = rejoin !== null, readState = null } = {},
  ) {
    const r = roomOf(room);
    load(room);
    const admitted = admission.opened(room, writer, {
      resumed,
      readState,
      exactBuffered: socket.exactBufferedAmount === true,
    });
    let closed = false;
    let rc = null;
    let judged = false; // the relay's admission judges this socket's frames and sends
    const conn = {
      writer,
      room,
      kick(code, reason) {
        if (closed) return;
        finish();
        try {
          socket.close(code, clip(reason));
        } catch {
          // already closed by the peer
        }
      },
      message(data) {
        if (closed) return;
        // A text frame no longer than the limit in UTF-16 units may still be too large in
        // UTF-8: checked with the receive, in one call. A longer one is refused before staging.
        if (judged && typeof data === 'string' && data.length <= limits.maxFrameBytes) {
          const err = rc.receiveFrame(data); // a refused frame kicks through `refused`
          if (err) conn.kick(CLOSE.INVALID, `${err.reason}: ${err.message}`);
          return;
        }
        const refused = admission.frame(admitted, data);
        if (refused) return conn.kick(refused.code, refused.reason);
        const err = rc.receive(data);
        if (err) conn.kick(CLOSE.INVALID, `${err.reason}: ${err.message}`);
      },
      /** The peer closed or the socket errored. */
      closed() {
        finish();
      },
      saveReadState() {
        if (!closed) onReadState?.(conn, admission.readState(admitted));
      },
    };
    function finish() {
      if (closed) return;
      closed = true;
      r.conns.delete(conn);
      admission.closed(admitted);
      rc?.disconnect();
      if (r.recovering) queueMicrotask(() => tryReload(room));
      else if (r.conns.size === 0) queueMicrotask(() => idle(room));
    }
    const ctx = { writer, kind, room };
    connOf.set(ctx, conn);
    r.conns.add(conn);
    rc = relay.connectText(
      {
        send(text, ephemeral, passed) {
          if (closed || muted) return;
          // The slow-reader rule (the admission core): a presence update a slow reader cannot
          // take is dropped, any other frame that would overfill its queue closes it (4010).
          // `passed`: the relay's admission already judged it (judgedBy).
          if (passed !== true) {
            const verdict = admission.send(admitted, text, ephemeral, socket.bufferedAmount);
            if (verdict === 'drop') return;
            if (verdict !== null) return conn.kick(verdict.code, verdict.reason);
          }
          try {
            socket.send(text);
          } catch {
            // The peer is already gone; its close event finishes the connection.
          }
          readStateChanged(conn);
        },
        // The core closes a connection it ejected (a hostile or broken envelope).
        close: () => conn.kick(CLOSE.EJECTED, 'ejected by the room policy'),
        // A reader's acknowledgement, judged by the admission core.
        read(bytes) {
          if (!closed && admission.read(admitted, bytes)) readStateChanged(conn);
        },
        // The same two, judged by the relay's admission (judgedBy).
        refused: (code, reason) => conn.kick(code, reason),
        credited() {
          if (!closed) readStateChanged(conn);
        },
      },
      ctx,
    );
    if (rejoin) {
      mute(true);
      try {
        rc.receive(rejoin);
      } finally {
        mute(false);
      }
    }
    // Only a socket the runtime reports no queue for (workerd): the admission core's counts are
    // then the whole rule, with nothing to read per send.
    if (socket.bufferedAmount === undefined && socket.exactBufferedAmount !== true)
      judged = rc.judgedBy?.(admitted) === true;
    return conn;
  }

  return {
    relay,
    admit,
    open,
    load,
    /** The rooms this host holds in memory (idle ones are unloaded). */
    loadedRooms: () => [...rooms.keys()].filter((n) => rooms.get(n).loaded),
    /** Hands every changed read state over now (what a timer would, before a hibernation). */
    saveReadStates,
    /** Presence updates dropped for slow readers since start. */
    droppedEphemeral: () => admission.droppedEphemeral(),
    /** For tests and stats: the room's relay info plus its live socket count. */
    info(name) {
      const r = rooms.get(name);
      const i = relay.room(name);
      return i ? { ...i, sockets: r?.conns.size ?? 0, recovering: r?.recovering ?? false } : null;
    },
  };
}
