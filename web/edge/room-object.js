// The Durable Object holding one room (room-relay.md § Adapter recipes, Cloudflare): hibernatable
// WebSockets (ctx.acceptWebSocket), the room's SQLite storage (ctx.storage.sql) and the shared
// room endpoint (room-host.js). A factory, so the same object can be built around tether's WASM
// relay (worker.js) or the reference implementation (bench/lib/edge_mesh_worker.js).
//
// Wake-up: a hibernated object loses the relay in memory. The constructor rebuilds it inside
// blockConcurrencyWhile (no event is delivered before it finishes): the room is hydrated from its
// checkpoint (instance nonce, registers, ranges, settled, journal tail) and the journal after it
// is replayed, then every surviving socket rejoins silently with the hello kept in its
// attachment, and the admission core counts on from the read state kept there (what the socket
// was handed and its reader acknowledged). Clients never notice; a client that reconnects gets a
// `delta`.
//
// Identity arrives in X-Tether-* headers set by the Worker after it verified the ticket; the
// object is reachable only through the Worker's binding.
import { CLOSE, resolveLimits } from './limits.js';
import { parsePolicyConfig } from './policy.js';
import { createRoomHost } from './room-host.js';
import { createRoomHttp } from './room-http.js';
import { RoomStore, durableObjectSql } from './room-store.js';

export const HEADER_WRITER = 'X-Tether-Writer';
export const HEADER_KIND = 'X-Tether-Kind';
export const HEADER_ROOM = 'X-Tether-Room';
export const HEADER_HTTP_OP = 'X-Tether-Http-Op';
// The verified ticket's `exp` (Unix seconds) on HTTP calls: the HTTP members core ends a session
// at its ticket's expiry, waiting receive included (docs/agent-bus.md § HTTP relay transport).
export const HEADER_EXPIRES = 'X-Tether-Expires';

function config(env) {
  const limits = resolveLimits(
    typeof env.ROOM_LIMITS === 'string' ? JSON.parse(env.ROOM_LIMITS || '{}') : env.ROOM_LIMITS,
  );
  return {
    limits,
    policyConfig: parsePolicyConfig(env.ROOM_POLICY),
    policyVersion: Number(env.POLICY_VERSION ?? 1),
    durable: env.ROOM_DURABILITY !== 'off', // off only for measuring (bench/edge.bench.mjs)
    checkpointEvery: Number(env.CHECKPOINT_EVERY ?? 64),
    testHooks: env.TETHER_TEST_HOOKS === '1',
  };
}

// What a socket keeps through a hibernation: its identity, its hello and its read state. Over the
// runtime's attachment limit (2 KiB), the read state goes first (the woken object then holds the
// socket to the bound as if it were full, and it reconnects), then the hello (it must reconnect).
function keep(conn) {
  const { writer, kind, room, hello } = conn.attachment;
  for (const a of [conn.attachment, { writer, kind, room, hello }, { writer, kind, room }]) {
    try {
      conn.ws.serializeAttachment(a);
      return;
    } catch {
      // too large: try with less
    }
  }
}

/** `{exp}` from the Worker's X-Tether-Expires header, or nothing when it carries none. */
function expiresHeader(request) {
  const exp = Number(request.headers.get(HEADER_EXPIRES) ?? NaN);
  return Number.isFinite(exp) && exp > 0 ? { exp } : {};
}

/**
 * @param {{relayImpl: {createRelay, pathPrefixAcl}, init?: (env) => Promise<void>}} o
 */
export function defineRoomObject({ relayImpl, init = async () => {} }) {
  return class RoomObject {
    constructor(ctx, env) {
      this.ctx = ctx;
      this.env = env;
      this.sockets = new Map(); // WebSocket -> room-host connection
      this.incarnation = crypto.randomUUID(); // new per object instance: tells a real wake-up apart
      ctx.blockConcurrencyWhile(() => this.boot());
    }

    async boot() {
      await init(this.env);
      this.cfg = config(this.env);
      this.store = this.cfg.durable
        ? new RoomStore(durableObjectSql(this.ctx.storage), {
            checkpointEvery: this.cfg.checkpointEvery,
          })
        : null;
      this.host = createRoomHost({
        relayImpl,
        store: this.store,
        policyConfig: this.cfg.policyConfig,
        policyVersion: this.cfg.policyVersion,
        limits: this.cfg.limits,
        onHello: (conn, hello) => {
          conn.attachment.hello = hello;
          keep(conn);
        },
        // The socket's read acknowledgements, so the woken object counts on where its reader
        // does: a structured clone of some 400 bytes into the runtime's memory (no storage
        // write). Once per socket at most every second (room-host.js): workerd hibernates an
        // object only when no timer is pending (the Durable Object lifecycle), so the timer
        // that writes them always runs before a hibernation could drop them.
        onReadState: (conn, read) => {
          conn.attachment.read = read;
          keep(conn);
        },
      });
      // HTTP members live in memory only: after an eviction their sessions are unknown (404) and
      // the clients open new ones (docs/agent-bus.md § HTTP relay transport).
      this.http = createRoomHttp(this.host);
      this.wakes = (this.wakes ?? 0) + 1;
      for (const ws of this.ctx.getWebSockets()) {
        const a = ws.deserializeAttachment();
        if (!a?.room) {
          ws.close(CLOSE.STORAGE, "the room restarted without this socket's identity; reconnect");
          continue;
        }
        try {
          this.attach(ws, a, { rejoin: a.hello ?? null, resumed: true, readState: a.read ?? null });
        } catch (e) {
          // The room could not be rebuilt (storage unreadable): the client reconnects, and
          // admit() answers 503 until the room loads.
          console.error(
            JSON.stringify({
              event: 'rejoin failed',
              room: a.room,
              cause: String(e?.message ?? e),
            }),
          );
          ws.close(CLOSE.STORAGE, 'the room could not be loaded from storage; reconnect');
        }
      }
    }

    /**
     * @param {any} ws  workerd's server end (its attachment is not in the DOM's WebSocket type)
     * @param {{writer: string, kind: string, room: string, hello?: string, read?: string}} kept
     * @param {{rejoin?: string | null, resumed?: boolean, readState?: string | null}} resume
     */
    attach(ws, { writer, kind, room, hello, read }, resume) {
      const socket = {
        send: (text) => ws.send(text),
        close: (code, reason) => ws.close(code, reason),
        // workerd queues outgoing frames inside the runtime and exposes no bufferedAmount (nor
        // bounds that queue itself): the admission core counts what each socket's reader has
        // acknowledged (requireReadAck, on by default, holds every reader to that), or with it
        // off models the queue of one that never does (the slow-reader rule, docs/rooms.md §
        // Limits).
        bufferedAmount: undefined,
      };
      const identity = { writer, kind, room };
      const conn = this.host.open(socket, identity, resume);
      conn.ws = ws;
      conn.attachment = { ...identity, hello, read };
      this.sockets.set(ws, conn);
      return conn;
    }

    async fetch(request) {
      const url = new URL(request.url);
      if (this.cfg.testHooks && url.pathname.startsWith('/__test/')) return this.testHook(url);
      const writer = decodeURIComponent(request.headers.get(HEADER_WRITER) ?? '');
      const kind = request.headers.get(HEADER_KIND) ?? '';
      const room = decodeURIComponent(request.headers.get(HEADER_ROOM) ?? '');
      const op = request.headers.get(HEADER_HTTP_OP);
      if (op && room) {
        // The HTTP relay transport: an open carries the identity the Worker verified.
        return this.http.handle(request, {
          room,
          op,
          // Every call's ticket is verified by the Worker; its writer and expiry bind the session.
          identity: writer ? { writer, kind, room, ...expiresHeader(request) } : undefined,
        });
      }
      if (!writer || !room)
        return new Response('the room object is reached through the Worker only\n', {
          status: 403,
        });
      const refused = this.host.admit(room, writer);
      if (refused) {
        return new Response(`${refused.message}\n`, {
          status: refused.status,
          headers: { 'Retry-After': String(refused.retryAfter) },
        });
      }
      // workerd's server end carries the hibernation attachment (not in the DOM's WebSocket type).
      const [client, server] = /** @type {any[]} */ (Object.values(new WebSocketPair()));
      this.ctx.acceptWebSocket(server);
      const identity = { writer, kind, room };
      server.serializeAttachment(identity);
      this.attach(server, identity, {});
      return new Response(null, { status: 101, webSocket: client });
    }

    webSocketMessage(ws, message) {
      const conn = this.sockets.get(ws);
      if (conn) conn.message(message);
      else ws.close(CLOSE.STORAGE, 'unknown socket; reconnect');
    }

    webSocketClose(ws, code) {
      this.sockets.get(ws)?.closed();
      this.sockets.delete(ws);
      try {
        ws.close(code === 1005 ? 1000 : code, 'bye');
      } catch {
        // already closed
      }
    }

    webSocketError(ws) {
      this.sockets.get(ws)?.closed();
      this.sockets.delete(ws);
    }

    // Test-only (TETHER_TEST_HOOKS=1, never in wrangler.toml): storage faults through a real
    // SQLite trigger, and an eviction that rebuilds the object's memory exactly as a wake-up does.
    async testHook(url) {
      const room = url.searchParams.get('room') ?? '';
      switch (url.pathname) {
        case '/__test/info':
          return Response.json({
            ...(this.host.info(room) ?? {}),
            wakes: this.wakes,
            incarnation: this.incarnation,
            storageSync: typeof this.ctx.storage.sync === 'function',
          });
        case '/__test/rooms':
          return Response.json({
            loaded: this.host.loadedRooms(),
            relay: this.host.relay.stats?.() ?? null,
            droppedEphemeral: this.host.droppedEphemeral(),
            httpMembers: this.http.members(),
          });
        case '/__test/fail-storage':
          this.ctx.storage.sql.exec(
            `CREATE TRIGGER IF NOT EXISTS tether_test_fail BEFORE INSERT ON tether_log BEGIN SELECT RAISE(ABORT, 'injected: disk full'); END`,
          );
          return Response.json({ ok: true });
        case '/__test/heal-storage':
          this.ctx.storage.sql.exec('DROP TRIGGER IF EXISTS tether_test_fail');
          return Response.json({ ok: true });
        case '/__test/evict':
          // What hibernation does to memory: the relay and every connection object are gone;
          // only storage and the sockets (with their attachments) survive. A hibernation waits
          // for pending timers, the read-state one included: it runs first.
          this.host.saveReadStates();
          this.sockets = new Map();
          await this.boot();
          return Response.json({ ok: true, wakes: this.wakes, sockets: this.sockets.size });
        default:
          return new Response('unknown test hook\n', { status: 404 });
      }
    }
  };
}
