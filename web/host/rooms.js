// The self-hosted twin of the edge room relay (web/edge/): the same endpoint
// (GET /rooms/<name>?ticket=<t>, a WebSocket), the same tickets, limits, policy, journal,
// checkpoints and storage-failure recovery (web/edge/room-host.js, room-store.js), over
// Deno.serve WebSockets and a SQLite file (node:sqlite, WAL, synchronous=FULL: a commit that
// returned is fsync'd, so an echo never precedes the write it confirms).
//
// Run: deno run --allow-net=127.0.0.1 --allow-read --allow-write=DIR --allow-env web/host/rooms.js
//        --db DIR/rooms.sqlite [--port 8787] [--policy policy.json] [--limits '{"maxFrameBytes":65536}']
//      with the ticket secret in the TICKET_SECRET environment variable.
// The relay itself is web/host/rooms-service.js; web/host/relay.js serves the same beside the
// cockpit (--rooms-db).
import { DatabaseSync } from 'node:sqlite';
import { createRoomsService, ticketSecretProblem } from './rooms-service.js';

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
if (ticketSecretProblem(secret)) {
  console.error(`tether rooms: ${ticketSecretProblem(secret)}`);
  Deno.exit(2);
}
if (!flags.db) {
  console.error('tether rooms: --db FILE is required (the SQLite file holding every room)');
  Deno.exit(2);
}

const { handle } = createRoomsService({
  database: new DatabaseSync(flags.db),
  secret,
  policyText: flags.policy ? await Deno.readTextFile(flags.policy) : '',
  limits: JSON.parse(flags.limits),
  checkpointEvery: flags.checkpointEvery,
  testHooks: flags.testHooks,
});

const server = Deno.serve(
  { hostname: flags.hostname, port: flags.port, onListen: () => {} },
  handle,
);
console.log(
  `tether rooms ready: ws://${flags.hostname}:${server.addr.port}/rooms/<name>?ticket=<ticket> (db ${flags.db})`,
);
