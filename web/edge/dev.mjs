// make edge-dev: the edge relay on this machine. Its Workers (web/edge/workers.mjs: the rooms
// Worker in front, the cockpit relay and the mailbox beside it) run under one pinned `wrangler dev`
// (web/edge/wrangler-cli.mjs), in real workerd, from the same wrangler configs that deploy them,
// with their Durable Objects' SQLite storage persisted to a folder (build/edge-dev/ by default),
// plus a small page server that mints dev tickets, so a browser can join rooms. Both
// bind 127.0.0.1 and stay offline. Ctrl-C stops both (wrangler by its PID).
//
//   node web/edge/dev.mjs [--port 8787] [--page-port 8788] [--persist build/edge-dev]
// The ticket secret comes from TICKET_SECRET, or a random one per run; wrangler reads it from a
// 0600 env file in the persist folder, never from its command line.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, resolve } from 'node:path';
import { mintTicket } from './tickets.js';
import { EDGE_WORKERS, FRONT } from './workers.mjs';
import { repoDir as repo, wranglerCommand, wranglerEnv } from './wrangler-cli.mjs';

const args = process.argv.slice(2);
const flag = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const port = Number(flag('--port', 8787));
const pagePort = Number(flag('--page-port', 8788));
const persist = resolve(repo, flag('--persist', 'build/edge-dev'));
const secret = process.env.TICKET_SECRET ?? randomBytes(32).toString('hex');
mkdirSync(persist, { recursive: true });
const secretsFile = join(persist, 'dev-secrets.env');
writeFileSync(secretsFile, `TICKET_SECRET=${secret}\n`, { mode: 0o600 });

// Every edge Worker in one `wrangler dev`: the first config is the primary, the front door on
// --port; the others run beside it, reached over its service bindings (web/edge/routes.js).
const configs = [FRONT, ...EDGE_WORKERS.filter((w) => !w.front)].flatMap((w) => [
  '-c',
  join(repo, w.config),
]);
const [cmd, argv] = wranglerCommand([
  'dev',
  ...configs,
  '--ip',
  '127.0.0.1',
  '--port',
  String(port),
  '--persist-to',
  persist,
  '--env-file',
  secretsFile,
  '--show-interactive-dev-session=false',
]);
const wrangler = spawn(cmd, argv, {
  cwd: repo,
  // The dev registry lets Workers in other dev sessions find each other; all of ours are in this one.
  env: wranglerEnv({ WRANGLER_REGISTRY_PATH: join(persist, 'registry') }),
  stdio: ['ignore', 'pipe', 'pipe'],
});
let wranglerLog = '';
const workerUrl = await new Promise((resolveUrl, reject) => {
  const scan = (chunk) => {
    wranglerLog += chunk;
    if (process.env.TETHER_EDGE_DEV_VERBOSE) process.stderr.write(chunk);
    const m = /Ready on (http:\/\/127\.0\.0\.1:\d+)/.exec(wranglerLog);
    if (m) resolveUrl(m[1]);
  };
  wrangler.stdout.on('data', scan);
  wrangler.stderr.on('data', scan);
  wrangler.once('exit', (code) =>
    reject(
      new Error(
        `tether edge dev: wrangler dev exited (${code}) before it was ready:\n${wranglerLog}`,
      ),
    ),
  );
}).catch((e) => {
  console.error(e.message);
  process.exit(1);
});
// After start-up, wrangler's request log goes to our stderr.
wrangler.stdout.removeAllListeners('data');
wrangler.stderr.removeAllListeners('data');
wrangler.stdout.on('data', (d) => process.stderr.write(d));
wrangler.stderr.on('data', (d) => process.stderr.write(d));
const wsUrl = workerUrl.replace(/^http/, 'ws');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
};
// Only what the page needs: itself, the glue and the WASM module.
const ALLOWED = /^\/(web\/glue\/[\w.-]+\.js|build\/wasm\/tether\.(mjs|wasm))$/;
const page = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  const send = (status, type, body) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  };
  try {
    if (url.pathname === '/')
      return send(200, TYPES['.html'], readFileSync(join(repo, 'web/edge/dev.html')));
    if (url.pathname === '/config') return send(200, 'application/json', JSON.stringify({ wsUrl }));
    if (url.pathname === '/ticket') {
      const p = url.searchParams;
      const ticket = await mintTicket(secret, {
        room: p.get('room') ?? '',
        writer: p.get('writer') ?? '',
        // Any other kind is refused by the ticket core (mintTicket throws: a 400 below).
        kind: /** @type {'human' | 'agent'} */ (p.get('kind') ?? 'human'),
      });
      return send(200, 'application/json', JSON.stringify({ ticket }));
    }
    if (ALLOWED.test(url.pathname))
      return send(200, TYPES[extname(url.pathname)], readFileSync(join(repo, url.pathname)));
    send(404, 'text/plain', 'not found\n');
  } catch (e) {
    send(400, 'text/plain', `${e.message}\n`);
  }
});
await new Promise((r) => page.listen(pagePort, '127.0.0.1', () => r(undefined)));
const pageAddress = /** @type {import('node:net').AddressInfo} */ (page.address());
console.log(
  `tether edge dev: open http://127.0.0.1:${pageAddress.port} (rooms at ${wsUrl}/rooms/<name>, state in ${persist}); ` +
    `cockpit at ${workerUrl}/ (robots: deno run -A --unstable-net web/host/demo-robot.js --relay ${workerUrl})`,
);

let stopping = false;
const stop = async () => {
  stopping = true;
  page.close();
  if (wrangler.exitCode === null) {
    const exited = new Promise((r) => wrangler.once('exit', r));
    wrangler.kill('SIGTERM'); // by PID: the wrangler we started, which stops its workerd
    await exited;
  }
  process.exit(0);
};
wrangler.once('exit', (code) => {
  if (stopping) return;
  console.error(`tether edge dev: wrangler dev exited (${code ?? 'killed'}); stopping`);
  page.close();
  process.exit(code ?? 1);
});
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
