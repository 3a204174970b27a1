// Test harness for the edge relay: the real Workers (web/edge/workers.mjs: the rooms Worker in
// front, the cockpit relay and the mailbox behind it) under real workerd through Miniflare, on
// 127.0.0.1, and room peers that are Node `ws` clients driving the WASM room client (tether/relay
// createRoomClient). Shared by tests/e2e/edge-*.test.mjs and the bench.
import { Miniflare } from 'miniflare';
import WebSocket from 'ws';
import { createRoomClient } from '@tether-rt/tether/relay';
import { mintTicket } from '../../../web/edge/tickets.js';
import { FRONT, miniflareWorkers } from '../../../web/edge/workers.mjs';
import { repoDir } from './fixtures.mjs';
import { watchOutput } from './child_output.mjs';

export const SECRET = 'test-secret-0123456789abcdef0123456789abcdef';

/** Miniflare running one of the repo's Workers under real workerd, on 127.0.0.1. */
export function workerdOptions(scriptPath, port = 0) {
  return {
    // The worker imports build/ and web/glue with '..' paths: the root is the repo.
    modulesRoot: repoDir,
    scriptPath,
    modules: true,
    modulesRules: [
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
      { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
    ],
    compatibilityDate: '2025-01-01',
    host: '127.0.0.1',
    port,
    cf: false, // otherwise Miniflare fetches request.cf data from the network
  };
}

/**
 * Miniflare options for the edge as deployed: every Worker of web/edge/workers.mjs under one
 * workerd, the rooms Worker in front (Miniflare's URL) with the cockpit as its static assets and
 * service bindings to the others. `scriptPath` replaces the front door's script (the bench's
 * reference-relay Worker); `bindings` go to every Worker.
 */
export function edgeOptions({
  persist = false,
  bindings = {},
  scriptPath = `${repoDir}${FRONT.main}`,
  port = 0,
} = {}) {
  return {
    host: '127.0.0.1',
    port,
    cf: false, // otherwise Miniflare fetches request.cf data from the network
    durableObjectsPersist: persist,
    workers: miniflareWorkers({
      // The Workers import build/ and web/glue with '..' paths: the root is the repo.
      scriptFor: (w) => ({
        modulesRoot: repoDir,
        scriptPath: w.front ? scriptPath : `${repoDir}${w.main}`,
      }),
      bindings: { TICKET_SECRET: SECRET, TETHER_TEST_HOOKS: '1', POLICY_VERSION: '1', ...bindings },
      // wrangler.toml's [assets]: the cockpit, served before the front door runs.
      extra: (w) =>
        w.front
          ? {
              assets: {
                directory: `${repoDir}build/cockpit`,
                routerConfig: { has_user_worker: true },
              },
            }
          : {},
    }),
  };
}

/** Starts the edge's Workers; returns { mf, url (http://127.0.0.1:port), wsUrl, hook(path, room) }. */
export async function startEdge(opts = {}) {
  const mf = new Miniflare(edgeOptions(opts));
  const url = (await mf.ready).toString().replace(/\/$/, '');
  return {
    mf,
    url,
    wsUrl: url.replace(/^http/, 'ws'),
    async hook(path, room) {
      const res = await fetch(`${url}/__test/${path}?room=${encodeURIComponent(room)}`);
      return res.json();
    },
    stop: () => mf.dispose(),
  };
}

export const ticketFor = (room, writer, kind = 'human', extra = {}) =>
  mintTicket(SECRET, { room, writer, kind, ...extra });

/** Polls `fn` until it returns truthy; a hung runtime fails the test instead of hanging it. */
export async function until(fn, what, tries = 400) {
  for (let i = 0; i < tries; i++) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * A room peer: a WebSocket to /rooms/<room> with a ticket, and a room client that keeps its
 * unacknowledged tail across reconnects (pass the same `client` to a new Peer). `record: false`
 * (the bench) keeps no parsed copy of what arrives: the room client alone reads it.
 */
export class Peer {
  constructor(
    wsUrl,
    room,
    { writer, origin = writer, kind = 'human', client = null, ticket = null, record = true } = {},
  ) {
    this.room = room;
    this.writer = writer;
    this.client = client ?? createRoomClient({ room, origin, writer, policyVersion: 1 });
    this.welcomes = []; // the mode of every welcome
    this.messages = []; // every server message, parsed
    this.closed = null; // { code, reason }
    this.httpStatus = null;
    this.ready = (async () => {
      const t = ticket ?? (await ticketFor(room, writer, kind));
      this.ws = new WebSocket(
        `${wsUrl}/rooms/${encodeURIComponent(room)}?ticket=${encodeURIComponent(t)}`,
      );
      this.ws.on('unexpected-response', (req, res) => {
        this.httpStatus = res.statusCode;
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => {
          this.httpBody = body;
          this.closed = { code: 0, reason: `http ${res.statusCode}` };
        });
      });
      this.ws.on('error', () => {});
      this.ws.on('close', (code, reason) => (this.closed ??= { code, reason: String(reason) }));
      this.ws.on('message', (data) => {
        const text = String(data);
        if (record) {
          const msg = JSON.parse(text);
          this.messages.push(msg);
          if (msg.t === 'welcome') this.welcomes.push(msg.mode);
        }
        for (const out of this.client.receive(text)) this.send(out);
      });
      await new Promise((resolve) => {
        this.ws.once('open', resolve);
        this.ws.once('close', resolve);
        this.ws.once('unexpected-response', resolve);
      });
      if (this.ws.readyState === WebSocket.OPEN) this.send(this.client.hello());
    })();
  }
  send(text) {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(text);
  }
  /** Writes ops; null when not welcomed yet (the client refuses to write blind). */
  write(ops) {
    const m = this.client.write(ops);
    if (m !== null) this.send(m);
    return m;
  }
  get open() {
    return this.ws?.readyState === WebSocket.OPEN;
  }
  async close() {
    await this.ready;
    if (this.ws.readyState === WebSocket.CLOSED) return;
    const done = new Promise((r) => this.ws.once('close', r));
    this.ws.close();
    await done;
  }
  terminate() {
    this.ws?.terminate();
  }
}

/**
 * A raw WebSocket upgrade request (fetch refuses an Upgrade header): resolves with the HTTP
 * answer when the server refuses, or { status: 101 } when it accepts (the socket is destroyed).
 */
export async function upgradeAnswer(url) {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(url, {
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'Sec-WebSocket-Version': '13',
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: 101, body: '', headers: res.headers });
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * The self-hosted twin (web/host/rooms.js) under real Deno on 127.0.0.1, over the SQLite file
 * `db` in `dir`: { child, url, wsUrl, hook(path, room), kill() }. `children` collects the process
 * so the caller's after() can stop it by PID.
 */
export async function startDenoRooms({ dir, db, args = [], children = new Set() }) {
  const { spawn } = await import('node:child_process');
  const child = spawn(
    `${repoDir}node_modules/.bin/deno`,
    [
      'run',
      '--no-lock',
      '--allow-net=127.0.0.1',
      `--allow-read=${repoDir},${dir}`,
      `--allow-write=${dir}`,
      '--allow-env',
      'web/host/rooms.js',
      '--port',
      '0',
      '--db',
      db,
      '--test-hooks',
      ...args,
    ],
    {
      cwd: repoDir,
      env: { ...process.env, TICKET_SECRET: SECRET, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.add(child);
  const [, port] = await watchOutput(child, 'deno rooms.js').ready(
    /tether rooms ready: ws:\/\/127\.0\.0\.1:(\d+)\//,
  );
  const url = `http://127.0.0.1:${port}`;
  return {
    child,
    url,
    wsUrl: `ws://127.0.0.1:${port}`,
    hook: (path, room) =>
      fetch(`${url}/__test/${path}?room=${encodeURIComponent(room)}`).then((r) => r.json()),
    async kill() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL'); // by PID: this child only
      await exited;
      children.delete(child);
    },
  };
}
