// `tether/relay`: the room relay for JavaScript, a drop-in for @mmstack/mesh-protocol's
// createRelay (shared/spec/room-relay.md). Every decision is made by the C++ core (src/relay);
// this file only moves JSON text between sockets and the core, and maps the core's actions onto
// the caller's callbacks and promises (DESIGN.md rule 4).
import { loadTetherModule } from './load.js';

export const MESH_PROTO_VERSION = 3;

const ACL = Symbol.for('tether.relay.pathPrefixAcl');
const KIND = ['send', 'close', 'commit', 'drop', 'violation', 'reject', 'join', 'durability-failed'];
const SEND = 0;
const STRIDE = 9; // doubles per packed action (bindings/relay_bindings.cpp)
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const OK = 0;
const PENDING = 1;
const FAILED = 2;

let mod = null;
// A relay's core lives in WASM memory: free it when the relay object is collected. workerd has
// no FinalizationRegistry; there a relay lives as long as its Durable Object's isolate.
const registry = (free) => (typeof FinalizationRegistry === 'function' ? new FinalizationRegistry(free) : { register() {} });
const cores = registry((core) => core.delete());
const isServerRuntime = !!(globalThis.process?.versions?.node || globalThis.Deno);
if (isServerRuntime) mod = await loadTetherModule({}, 'relay');

/**
 * Loads the WASM module where it cannot load itself (workerd: pass { wasmModule }, the imported
 * tether.wasm; browsers). Node and Deno load it on import.
 */
export async function initRelay(options) {
  mod = await loadTetherModule(options, 'relay');
}

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

function randomSeed() {
  const words = new Uint32Array(2);
  globalThis.crypto.getRandomValues(words);
  return (words[0] % 0x200000) * 0x100000000 + words[1];
}

export function createRelay(opt = {}) {
  if (!mod) {
    throw new Error('tether/relay: the WASM module is not loaded; `await initRelay({ wasmModule })` first');
  }
  const policy = opt.policy;
  const acl = policy?.[ACL] && policy.canWrite === policy[ACL].canWrite ? policy[ACL] : null;
  const now = opt.now ?? Date.now;
  const conns = new Map(); // conn id -> { socket, ctx, text }
  const causes = new Map(); // ticket -> rejection cause
  const ctxOf = (conn) => conns.get(conn)?.ctx ?? {};
  const hooks = {
    canWrite: (conn, path, room, seq) => !!policy.canWrite(ctxOf(conn), JSON.parse(path), room, { seq }),
    validate: (conn, op, room, seq) => !!policy.validate(JSON.parse(op), ctxOf(conn), room, { seq }),
    canBump: (conn, path, epoch, room, seq) =>
      !!policy.canBump(ctxOf(conn), JSON.parse(path), epoch, room, { seq }),
    aclAllow: (conn, rule, room) => !!acl.rules[rule].allow(ctxOf(conn), room),
  };
  const core = new mod.RoomRelayCore(
    JSON.stringify({
      policyVersion: opt.policyVersion ?? 0,
      journalLimit: opt.journalLimit ?? 1000,
      maxOpsPerEnvelope: opt.limits?.maxOpsPerEnvelope ?? 1024,
      maxEnvelopesPerSecond: opt.limits?.maxEnvelopesPerSecond ?? 0,
      ejectConnection: opt.ejection === 'connection',
      durable: typeof opt.onCommit === 'function',
      hasPolicy: !!policy,
      canWrite: !acl && typeof policy?.canWrite === 'function',
      validate: typeof policy?.validate === 'function',
      canBump: typeof policy?.canBump === 'function',
      verifyCitations: !!policy?.verifyCitations,
      ...(acl ? { acl: acl.rules.map((r) => r.prefix) } : {}),
      seed: randomSeed(),
    }),
    hooks,
  );
  const reasons = mod.relayReasonNames();

  let flushing = false;
  const deferred = [];
  // The envelope of the message being processed, for onDrop.
  let currentEnv = () => undefined;

  // Texts of the current delivery, decoded once each (an echo goes to every member).
  const strCache = [];
  const objCache = [];
  function flush() {
    flushing = true;
    strCache.length = 0;
    objCache.length = 0;
    try {
      let i = 0;
      while (i < core.actionCount()) {
        // Copied out: a callback below may grow WASM memory, which detaches views into it.
        const packed = Float64Array.from(core.packActions(i));
        for (let k = 0; k < packed.length; k += STRIDE, i++) {
          const kind = packed[k];
          const conn = packed[k + 1];
          const t = packed[k + 2];
          if (kind === SEND) {
            // The hot case, without closures: one decode per distinct text.
            const c = conns.get(conn);
            if (c === undefined) continue;
            let v = strCache[t];
            if (v === undefined) v = strCache[t] = decoder.decode(mod.HEAPU8.subarray(packed[k + 7], packed[k + 7] + packed[k + 8]));
            if (c.text) c.socket.send(v);
            else {
              let o = objCache[t];
              if (o === undefined) o = objCache[t] = JSON.parse(v);
              c.socket.send(o);
            }
            continue;
          }
          const str = () => {
            let v = strCache[t];
            if (v === undefined) {
              const at = packed[k + 7];
              v = strCache[t] = decoder.decode(mod.HEAPU8.subarray(at, at + packed[k + 8]));
            }
            return v;
          };
          const obj = () => {
            let v = objCache[t];
            if (v === undefined) v = objCache[t] = JSON.parse(str());
            return v;
          };
          const roomName = () => core.text(packed[k + 3]);
          switch (KIND[kind]) {
            case 'close':
              conns.get(conn)?.socket.close?.();
              break;
            case 'commit': {
              const ticket = packed[k + 4];
              const room = roomName();
              let done;
              try {
                // seq and instance are read per commit; the vectors (which grow with the room's
                // origins) and the registers only when the callback asks, inside it.
                const info = core.room(room);
                let full = null;
                const all = () => (full ??= JSON.parse(core.stateJson(room)));
                const state = {
                  seq: info.seq,
                  instance: info.instance,
                  get wm() {
                    return all().wm;
                  },
                  get ranges() {
                    return all().ranges;
                  },
                  get settled() {
                    return all().settled;
                  },
                  get schemaVersion() {
                    return all().schemaVersion;
                  },
                  checkpoint: () => JSON.parse(core.checkpointJson(room)),
                };
                done = opt.onCommit(room, obj(), state);
              } catch (cause) {
                done = Promise.reject(cause);
              }
              if (done === undefined || done === null) {
                core.commitResult(ticket, OK);
              } else {
                core.commitResult(ticket, PENDING);
                Promise.resolve(done).then(
                  () => later(() => core.commitResult(ticket, OK)),
                  (cause) => {
                    causes.set(ticket, cause);
                    later(() => core.commitResult(ticket, FAILED));
                  },
                );
              }
              break;
            }
            case 'drop':
              opt.onDrop?.(roomName(), currentEnv(), reasons[packed[k + 5]]);
              break;
            case 'violation':
              opt.onViolation?.(roomName(), obj());
              break;
            case 'reject': {
              const expected = packed[k + 6];
              const args = [roomName(), ctxOf(conn), reasons[packed[k + 5]]];
              if (!Number.isNaN(expected)) args.push(expected);
              opt.onReject?.(...args);
              break;
            }
            case 'join':
              opt.onJoin?.(roomName(), ctxOf(conn), str());
              break;
            case 'durability-failed': {
              const ticket = packed[k + 4];
              const cause = causes.get(ticket);
              causes.delete(ticket);
              opt.onDurabilityFailed?.(roomName(), obj(), cause);
              break;
            }
          }
        }
      }
    } finally {
      core.clearActions();
      flushing = false;
    }
    while (deferred.length > 0 && !flushing) deferred.shift()();
  }

  // Runs `fn` (a core call) and then delivers its actions; a call made from inside a callback
  // (a socket that answers synchronously) waits until the current delivery is done.
  function later(fn) {
    // Connections reach the core through here; naming `relay` keeps it (and so the core) alive
    // for as long as any connection is.
    if (relay === null) return;
    if (flushing) {
      deferred.push(() => later(fn));
      return;
    }
    fn();
    flush();
  }

  // Encodes a message into the core's staging buffer; returns its length in bytes.
  let staged = null;
  function stage(message) {
    const max = message.length * 3; // UTF-16 code units to UTF-8 bytes, at most
    if (staged === null || staged.length < max) staged = core.stage(Math.max(max, 4096));
    return encoder.encodeInto(message, staged).written;
  }

  function attach(socket, ctx, text) {
    // ctx.room (an adapter's ticket) binds the connection to that one room.
    const conn = core.connect(String(ctx.writer), ctx.room == null ? '' : String(ctx.room));
    conns.set(conn, { socket, ctx, text });
    const disconnect = () => {
      if (!conns.has(conn)) return;
      later(() => core.disconnect(conn));
      conns.delete(conn);
    };
    const receiveText = (message, env) => {
      later(() => {
        currentEnv = env;
        const code = core.receiveStaged(conn, stage(message), now());
        if (code !== 0) lastError = { reason: mod.relayReceiveError(code), message: mod.relayReceiveErrorText(code) };
        else lastError = null;
      });
      return lastError;
    };
    let lastError = null;
    return {
      conn,
      disconnect,
      receive: (msg) => receiveText(JSON.stringify(msg), () => msg?.env),
      receiveText: (message) => {
        let env;
        return receiveText(String(message), () => (env ??= JSON.parse(message)?.env));
      },
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
      return { receive: c.receiveText, disconnect: c.disconnect };
    },
    room: (name) => core.room(String(name)),
    hydrate: (name, snapshot) => core.hydrate(String(name), JSON.stringify(snapshot ?? null), now()),
    unload: (name, options) => core.unload(String(name), options?.discard === true),
    /** Retained registers across rooms and the bytes they hold (measurement). */
    stats: () => ({ registers: core.registerCount(), registerBytes: core.registerBytes() }),
  };
  cores.register(relay, core);
  return relay;
}

const clients = registry((core) => core.delete());

/**
 * A room client (the peer side of the protocol): builds envelopes with cites and epoch, keeps the
 * unacknowledged tail and resends it after every welcome, handles drops, hydrates from welcomes,
 * and folds the registers last-writer-wins. Text in, text out; `receive` returns what to send.
 */
export function createRoomClient(options) {
  if (!mod) {
    throw new Error('tether/relay: the WASM module is not loaded; `await initRelay({ wasmModule })` first');
  }
  const core = new mod.RoomClientCore(JSON.stringify(options));
  const now = options.now ?? Date.now;
  const client = {
    hello: () => core.hello(),
    write: (ops) => core.write(JSON.stringify(ops), now()),
    receive: (message) => core.receive(typeof message === 'string' ? message : JSON.stringify(message), now()),
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
    refused: () => JSON.parse(core.refused()),
  };
  clients.register(client, core);
  return client;
}
