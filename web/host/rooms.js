// The self-hosted twin of the edge room relay (web/edge/): the same endpoint
// (GET /rooms/<name>?ticket=<t>, a WebSocket), the same tickets, limits, policy, journal,
// checkpoints and storage-failure recovery (web/edge/room-host.js, room-store.js), over
// Deno.serve WebSockets and a SQLite file (node:sqlite, WAL, synchronous=FULL: a commit that
// returned is fsync'd, so an echo never precedes the write it confirms).
//
// Run: deno run --allow-net=127.0.0.1 --allow-read --allow-write=DIR --allow-env web/host/rooms.js
//        --db DIR/rooms.sqlite [--port 8787] [--policy policy.json] [--limits '{"maxFrameBytes":65536}']
//      with the ticket secret in the TICKET_SECRET environment variable.
import { DatabaseSync } from 'node:sqlite';
import { createRelay, pathPrefixAcl } from '../glue/relay.js';
import { resolveLimits } from '../edge/limits.js';
import { parsePolicyConfig } from '../edge/policy.js';
import { createRoomHost } from '../edge/room-host.js';
import { RoomStore, sqliteSql } from '../edge/room-store.js';
import { checkRoomRequest } from '../edge/room-request.js';

const flags = {
  port: 8787,
  db: '',
  policy: '',
  limits: '{}',
  checkpointEvery: 64,
  hostname: '127.0.0.1',
  testHooks: false,
};
for (let i = 0; i < Deno.args.length; i++) {
  const a = Deno.args[i];
  const next = () => Deno.args[++i];
  if (a === '--port') flags.port = Number(next());
  else if (a === '--db') flags.db = next();
  else if (a === '--policy') flags.policy = next();
  else if (a === '--limits') flags.limits = next();
  else if (a === '--checkpoint-every') flags.checkpointEvery = Number(next());
  else if (a === '--test-hooks') flags.testHooks = true;
  else {
    console.error(`tether rooms: unknown flag ${a}; see the header of web/host/rooms.js`);
    Deno.exit(2);
  }
}
const secret = Deno.env.get('TICKET_SECRET') ?? '';
if (secret.length < 32) {
  console.error(
    'tether rooms: set TICKET_SECRET (at least 32 characters), the secret your server mints tickets with',
  );
  Deno.exit(2);
}
if (!flags.db) {
  console.error('tether rooms: --db FILE is required (the SQLite file holding every room)');
  Deno.exit(2);
}

const db = new DatabaseSync(flags.db);
const host = createRoomHost({
  relayImpl: { createRelay, pathPrefixAcl },
  store: new RoomStore(sqliteSql(db), { checkpointEvery: flags.checkpointEvery }),
  policyConfig: parsePolicyConfig(flags.policy ? await Deno.readTextFile(flags.policy) : ''),
  policyVersion: 1,
  limits: resolveLimits(JSON.parse(flags.limits)),
});

async function handle(req) {
  const url = new URL(req.url);
  if (flags.testHooks && url.pathname.startsWith('/__test/')) return testHook(url);
  const v = await checkRoomRequest(req, secret);
  if (v.response) return v.response;
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
    });
  if (url.pathname === '/__test/fail-storage') {
    db.exec(
      `CREATE TRIGGER IF NOT EXISTS tether_test_fail BEFORE INSERT ON tether_journal BEGIN SELECT RAISE(ABORT, 'injected: disk full'); END`,
    );
    return Response.json({ ok: true });
  }
  if (url.pathname === '/__test/heal-storage') {
    db.exec('DROP TRIGGER IF EXISTS tether_test_fail');
    return Response.json({ ok: true });
  }
  return new Response('unknown test hook\n', { status: 404 });
}

const server = Deno.serve(
  { hostname: flags.hostname, port: flags.port, onListen: () => {} },
  handle,
);
console.log(
  `tether rooms ready: ws://${flags.hostname}:${server.addr.port}/rooms/<name>?ticket=<ticket> (db ${flags.db})`,
);
