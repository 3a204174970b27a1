// The self-hosted room relay as a request handler: GET /rooms/<name>?ticket=<t> (a WebSocket), the
// same tickets, limits, policy, journal, checkpoints and storage-failure recovery as the edge
// (web/edge/room-host.js, room-store.js), over one SQLite file (or memory alone, without one).
// Runtime-neutral: `admitSocket` and `openSocket` take a Fetch Request and any socket with
// send/close/bufferedAmount, so Deno (`handle`, through Deno.upgradeWebSocket: web/host/rooms.js,
// and beside the cockpit web/host/relay.js --rooms-db) and Node (`tether rooms serve`,
// web/host/rooms-node.js, over the `ws` package) serve the same relay.
import { createRelay, pathPrefixAcl } from '../glue/relay.js';
import { resolveLimits } from '../edge/limits.js';
import { parsePolicyConfig } from '../edge/policy.js';
import { createRoomHost } from '../edge/room-host.js';
import { RoomStore, sqliteSql } from '../edge/room-store.js';
import { checkHttpRoomRequest, checkRoomRequest } from '../edge/room-request.js';
import { createRoomHttp } from '../edge/room-http.js';

/** Why a ticket secret cannot be used, or null. */
export function ticketSecretProblem(secret) {
  return (secret ?? '').length < 32
    ? 'set TICKET_SECRET (at least 32 characters), the secret your server mints tickets with'
    : null;
}

/**
 * The relay over `database` (a node:sqlite DatabaseSync, opened by the caller: node:sqlite is not
 * in every Node this package runs on), or in memory when it is null: rooms then live as long as
 * the process. Returns `handle(req)` for /rooms/<name> requests under Deno, and the two halves a
 * host without Deno.upgradeWebSocket drives: `admitSocket(req)` and `openSocket(socket, who)`.
 * @param {{database: any, secret: string, policyText?: string, limits?: object,
 *   checkpointEvery?: number, testHooks?: boolean}} options
 */
export function createRoomsService({
  database,
  secret,
  policyText = '',
  limits = {},
  checkpointEvery = 64,
  testHooks = false,
}) {
  const db = database ?? null;
  const sql = db ? sqliteSql(db) : null;
  const resolved = resolveLimits(limits);
  const host = createRoomHost({
    relayImpl: { createRelay, pathPrefixAcl },
    store: sql ? new RoomStore(sql, { checkpointEvery }) : null,
    policyConfig: parsePolicyConfig(policyText),
    policyVersion: 1,
    limits: resolved,
  });
  const http = createRoomHttp(host); // the HTTP relay transport's members (docs/agent-bus.md)

  /**
   * A request for /rooms/<name>: `{response}` when it is answered over HTTP (a refused ticket,
   * room full, the HTTP relay transport, a test hook), else `{who}` for a WebSocket to accept.
   */
  async function admitSocket(req) {
    const url = new URL(req.url);
    if (testHooks && url.pathname.startsWith('/__test/')) return { response: testHook(url) };
    const h = await checkHttpRoomRequest(req, secret);
    if (h) return { response: h.response ?? (await http.handle(req, h)) };
    const v = await checkRoomRequest(req, secret);
    if ('response' in v) return { response: v.response };
    const refused = host.admit(v.room, v.writer);
    if (refused)
      return {
        response: new Response(`${refused.message}\n`, {
          status: refused.status,
          headers: { 'Retry-After': String(refused.retryAfter) },
        }),
      };
    return { who: { writer: v.writer, kind: v.kind, room: v.room } };
  }

  /** An accepted WebSocket (send, close, bufferedAmount): the room-host connection it feeds. */
  const openSocket = (socket, who) => host.open(socket, who);

  async function handle(req) {
    const a = await admitSocket(req);
    if (a.response) return a.response;
    const { socket, response } = Deno.upgradeWebSocket(req);
    let conn = null;
    socket.onopen = () => {
      conn = openSocket(
        {
          send: (text) => socket.send(text),
          close: (code, reason) => socket.close(code, reason),
          get bufferedAmount() {
            return socket.bufferedAmount;
          },
        },
        a.who,
      );
    };
    socket.onmessage = (e) => conn?.message(e.data);
    socket.onclose = () => conn?.closed();
    socket.onerror = () => conn?.closed();
    return response;
  }

  // Test-only (--test-hooks): the same storage fault as the Worker's, through a real SQLite trigger.
  function testHook(url) {
    const room = url.searchParams.get('room') ?? '';
    if (url.pathname === '/__test/info') return Response.json(host.info(room) ?? {});
    if (url.pathname === '/__test/rooms')
      return Response.json({
        loaded: host.loadedRooms(),
        relay: host.relay.stats(),
        droppedEphemeral: host.droppedEphemeral(),
        httpMembers: http.members(),
      });
    if (!db && url.pathname.endsWith('-storage'))
      return new Response('no storage: this relay keeps its rooms in memory\n', { status: 409 });
    if (url.pathname === '/__test/fail-storage') {
      db.exec(
        `CREATE TRIGGER IF NOT EXISTS tether_test_fail BEFORE INSERT ON tether_log BEGIN SELECT RAISE(ABORT, 'injected: disk full'); END`,
      );
      return Response.json({ ok: true });
    }
    if (url.pathname === '/__test/heal-storage') {
      db.exec('DROP TRIGGER IF EXISTS tether_test_fail');
      return Response.json({ ok: true });
    }
    return new Response('unknown test hook\n', { status: 404 });
  }

  return {
    handle,
    admitSocket,
    openSocket,
    maxFrameBytes: resolved.maxFrameBytes,
    cockpitState: sql ? cockpitState(sql) : null,
  };
}

// The cockpit relay's one persisted value beside the rooms, the newest teleop lease generation
// (the edge keeps it in its Durable Object's storage): read once at start as the core's floor,
// written synchronously (synchronous=FULL) on every persist_lease_gen, before the grant goes out.
function cockpitState(sql) {
  sql.run('CREATE TABLE IF NOT EXISTS tether_cockpit (key TEXT PRIMARY KEY, value REAL NOT NULL)');
  return {
    leaseGen: () =>
      sql.all("SELECT value FROM tether_cockpit WHERE key = 'leaseGen'")[0]?.value ?? 0,
    putLeaseGen: (gen) =>
      sql.run(
        "INSERT INTO tether_cockpit (key, value) VALUES ('leaseGen', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        gen,
      ),
  };
}
