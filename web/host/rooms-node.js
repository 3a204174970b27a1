// The self-hosted room relay under Node (`tether rooms serve`): the relay of web/host/rooms-service.js
// (the edge's tickets, limits, policy, journal and checkpoints) over node:http and the `ws`
// package, so a user with only the npm package has a relay for the agent and room quickstarts.
// Storage is a SQLite file through node:sqlite where this Node has it (22.5 and newer), else
// memory: the rooms then live as long as the process, and the status line says so.
import http from 'node:http';
import { Readable } from 'node:stream';
import { WebSocketServer } from 'ws';
import { createRoomsService, ticketSecretProblem } from './rooms-service.js';

/**
 * Opens the SQLite file at `path`, or explains why this Node cannot.
 * @returns {Promise<{database: any} | {error: string}>}
 */
export async function openRoomsDatabase(path) {
  let sqlite;
  try {
    sqlite = await import('node:sqlite');
  } catch {
    return {
      error: `--db needs node:sqlite, which Node ${process.versions.node} lacks (Node 22.5 or newer has it); upgrade Node, or leave out --db to keep the rooms in memory`,
    };
  }
  try {
    return { database: new sqlite.DatabaseSync(path) };
  } catch (err) {
    return { error: `cannot open --db ${path} (${err.message}); give a writable file path` };
  }
}

// A Fetch Request for what node:http received (the service speaks Fetch, as Deno and workerd do).
function fetchRequest(req, origin, withBody) {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) for (const one of v) headers.append(k, one);
    else if (v !== undefined) headers.set(k, v);
  }
  const body = withBody && req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(new URL(req.url ?? '/', origin), {
    method: req.method,
    headers,
    ...(body ? { body: /** @type {any} */ (Readable.toWeb(req)), duplex: 'half' } : {}),
  });
}

async function writeResponse(res, response) {
  const body = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(body);
}

// A refused upgrade is answered on the raw socket, as an HTTP response (the client reads its
// status and body: that is how a refused ticket says why).
async function refuseUpgrade(socket, response) {
  const body = Buffer.from(await response.arrayBuffer());
  const lines = [`HTTP/1.1 ${response.status} ${response.statusText || 'Refused'}`];
  for (const [k, v] of response.headers) lines.push(`${k}: ${v}`);
  lines.push(`content-length: ${body.length}`, 'connection: close', '', '');
  socket.end(Buffer.concat([Buffer.from(lines.join('\r\n')), body]));
}

/**
 * Serves the rooms on `hostname:port` (0: any free port). Resolves once listening with
 * `{port, url, close()}`.
 * @param {{port?: number, hostname?: string, database?: any, secret: string, policyText?: string,
 *   limits?: object, checkpointEvery?: number}} o
 */
export async function serveRooms({
  port = 8787,
  hostname = '127.0.0.1',
  database = null,
  secret,
  policyText = '',
  limits = {},
  checkpointEvery = 64,
}) {
  const problem = ticketSecretProblem(secret);
  if (problem) throw new Error(problem);
  const service = createRoomsService({ database, secret, policyText, limits, checkpointEvery });
  const origin = `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`;
  // ws refuses a frame past maxPayload itself (1009); anything a UTF-16 frame within the limit
  // can be in UTF-8 gets through to the admission core, which judges it as on every host.
  const wss = new WebSocketServer({ noServer: true, maxPayload: service.maxFrameBytes * 3 });
  const server = http.createServer((req, res) => {
    service
      .admitSocket(fetchRequest(req, origin, true))
      .then((a) =>
        writeResponse(
          res,
          a.response ?? new Response('upgrade to a WebSocket here\n', { status: 426 }),
        ),
      )
      .catch((err) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`the relay failed this request (${err.message})\n`);
      });
  });
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => {}); // a peer that hangs up mid-answer
    service
      .admitSocket(fetchRequest(req, origin, false))
      .then((a) => {
        if (a.response) return refuseUpgrade(socket, a.response);
        wss.handleUpgrade(req, socket, head, (ws) => {
          const conn = service.openSocket(
            {
              send: (text) => ws.send(text),
              close: (code, reason) => ws.close(code, reason),
              get bufferedAmount() {
                return ws.bufferedAmount;
              },
            },
            a.who,
          );
          ws.on('message', (data, binary) => conn.message(binary ? data : data.toString()));
          ws.on('close', () => conn.closed());
          ws.on('error', () => conn.closed());
        });
      })
      .catch(() => socket.destroy());
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, hostname, () => resolve(undefined));
  });
  const bound = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  const host = hostname.includes(':') ? `[${hostname}]` : hostname;
  return {
    port: bound,
    url: `ws://${host}:${bound}/`,
    close: () =>
      new Promise((resolve) => {
        for (const ws of wss.clients) ws.close(1001, 'the relay is shutting down; reconnect');
        server.close(() => resolve(undefined));
        server.closeAllConnections?.();
      }),
  };
}
