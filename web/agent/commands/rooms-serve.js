// `tether rooms serve`: a room relay in this process (web/host/rooms-node.js), so the agent and
// room quickstarts work from the npm package alone: the edge's tickets, limits and policy over
// WebSockets on loopback, with the rooms in a SQLite file (--db, where node:sqlite exists) or in
// memory. Runs until interrupted. A deployment runs the edge Worker (docs/rooms.md).
import fs from 'node:fs';
import { openRoomsDatabase, serveRooms } from '../../host/rooms-node.js';
import { fail } from '../cli/context.js';
import { SECRET_FILE_OPTION, relaySecret } from './relay-secret.js';

export default {
  name: 'serve',
  usage: '[--port 8787] [--host 127.0.0.1] [--db FILE] [--policy FILE] [--limits JSON]',
  summary: 'run a room relay here (tickets from $TICKET_SECRET), until interrupted',
  details: [
    'Serves ws://HOST:PORT/rooms/<name>?ticket=<ticket>, the endpoint `tether agent join --relay` and',
    'the room clients dial; mint tickets for it with `tether rooms ticket` and the same secret.',
    'Rooms live in memory unless --db names a SQLite file (Node 22.5 or newer: node:sqlite).',
    'A deployment runs the edge Worker instead (docs/rooms.md § Deploying).',
  ].join('\n'),
  options: {
    port: {
      type: 'string',
      value: 'PORT',
      help: 'the TCP port (default 8787; 0 picks a free one)',
    },
    host: {
      type: 'string',
      value: 'HOST',
      help: 'the address to listen on (default 127.0.0.1: this machine only)',
    },
    db: { type: 'string', value: 'FILE', help: 'keep the rooms in this SQLite file' },
    policy: { type: 'string', value: 'FILE', help: 'a ROOM_POLICY JSON file (docs/rooms.md)' },
    limits: {
      type: 'string',
      value: 'JSON',
      help: 'admission limits, e.g. \'{"maxFrameBytes":65536}\'',
    },
    'secret-file': SECRET_FILE_OPTION,
  },
  async run({ v, out, progress }) {
    const secret = relaySecret(
      v,
      'the secret tickets are minted with',
      '; e.g. TICKET_SECRET=$(openssl rand -hex 32)',
    );
    const port = v.port === undefined ? 8787 : Number(v.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      fail(`--port is a TCP port, 0 to 65535 (got '${v.port}')`);
    let limits = {};
    if (v.limits !== undefined) {
      try {
        limits = JSON.parse(v.limits);
      } catch (err) {
        fail(`--limits is JSON, e.g. '{"maxFrameBytes":65536}' (${err.message})`);
      }
    }
    let policyText = '';
    if (v.policy !== undefined) {
      try {
        policyText = fs.readFileSync(v.policy, 'utf8');
      } catch (err) {
        fail(`cannot read --policy ${v.policy} (${err.code})`);
      }
    }
    let database = null;
    if (v.db !== undefined) {
      const opened = await openRoomsDatabase(v.db);
      if ('error' in opened) return fail(opened.error);
      database = opened.database;
    }
    let relay;
    try {
      relay = await serveRooms({
        port,
        hostname: v.host ?? '127.0.0.1',
        database,
        secret,
        policyText,
        limits,
      });
    } catch (err) {
      const busy = err.code === 'EADDRINUSE';
      fail(
        busy
          ? `port ${port} is in use; pick another with --port (0 picks a free one)`
          : `the relay could not start (${err.message})`,
      );
    }
    const where = database ? `rooms in ${v.db}` : 'rooms in memory: a restart loses them';
    out(
      { ok: true, url: relay.url, port: relay.port, db: v.db ?? null },
      `tether rooms ready: ${relay.url}rooms/<name>?ticket=<ticket> (${where}; Ctrl-C stops)`,
    );
    await new Promise((resolve) => {
      for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, resolve);
    });
    progress('tether rooms: stopping');
    await relay.close();
  },
};
