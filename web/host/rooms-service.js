// The self-hosted room relay as a request handler: GET /rooms/<name>?ticket=<t> (a WebSocket), the
// same tickets, limits, policy, journal, checkpoints and storage-failure recovery as the edge
// (web/edge/room-host.js, room-store.js), over Deno.serve WebSockets and one SQLite file. Served
// alone by web/host/rooms.js and beside the cockpit by web/host/relay.js (--rooms-db), so one
// self-hosted process answers both, as the edge Worker does.
import { DatabaseSync } from 'node:sqlite';
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
 * Opens the rooms' SQLite file and returns `handle(req)` for /rooms/<name> requests.
 * @param {{db: string, secret: string, policyText?: string, limits?: object,
 *   checkpointEvery?: number, testHooks?: boolean}} options
 */
export function createRoomsService({
  db: dbPath,
  secret,
  policyText = '',
  limits = {},
  checkpointEvery = 64,
  testHooks = false,
}) {
  const db = new DatabaseSync(dbPath);
  const sql = sqliteSql(db);
  const host = createRoomHost({
    relayImpl: { createRelay, pathPrefixAcl },
    store: new RoomStore(sql, { checkpointEvery }),
    policyConfig: parsePolicyConfig(policyText),
    policyVersion: 1,
    limits: resolveLimits(limits),
  });
  const http = createRoomHttp(host); // the HTTP relay transport's members (docs/agent-bus.md)

  async function handle(req) {
    const url = new URL(req.url);
    if (testHooks && url.pathname.startsWith('/__test/')) return testHook(url);
    const h = await checkHttpRoomRequest(req, secret);
    if (h) return h.response ?? http.handle(req, h);
    const v = await checkRoomRequest(req, secret);
    if ('response' in v) return v.response;
    const { room } = v;
    const refused = host.admit(room, v.writer);
    if (refused)
      return new Response(`${refused.message}\n`, {
        status: refused.status,
        headers: { 'Retry-After': String(refused.retryAfter) },
      });
    const { socket, response } = Deno.upgradeWebSocket(req);
    let conn = null;
    socket.onopen = () => {
      conn = host.open(
        {
          send: (text) => socket.send(text),
          close: (code, reason) => socket.close(code, reason),
          get bufferedAmount() {
            return socket.bufferedAmount;
          },
        },
        { writer: v.writer, kind: v.kind, room },
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

  return { handle, cockpitState: cockpitState(sql) };
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
