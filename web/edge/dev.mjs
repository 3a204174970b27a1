// make edge-dev: the edge relay on this machine. The real Worker (worker.js) runs in real workerd
// through Miniflare, with its Durable Objects' SQLite storage persisted to a folder
// (build/edge-dev/ by default), plus a small page server that mints dev tickets, so a browser can
// join rooms. Both bind 127.0.0.1. Ctrl-C stops both.
//
//   node web/edge/dev.mjs [--port 8787] [--page-port 8788] [--persist build/edge-dev]
// The ticket secret comes from TICKET_SECRET, or a random one per run.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';
import { mintTicket } from './tickets.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
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

// The same settings as wrangler.toml, read from it so the two cannot drift.
const toml = readFileSync(join(repo, 'web/edge/wrangler.toml'), 'utf8');
const vars = {};
for (const m of toml.split('[vars]')[1].matchAll(/^([A-Z_]+)\s*=\s*"((?:[^"\\]|\\.)*)"/gm))
  vars[m[1]] = JSON.parse(`"${m[2]}"`);
const compatibilityDate = /compatibility_date\s*=\s*"([^"]+)"/.exec(toml)[1];

const mf = new Miniflare({
  modulesRoot: repo,
  scriptPath: join(repo, 'web/edge/worker.js'),
  modules: true,
  modulesRules: [
    { type: 'CompiledWasm', include: ['**/*.wasm'] },
    { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
  ],
  compatibilityDate,
  host: '127.0.0.1',
  port,
  cf: false,
  durableObjects: {
    ROOMS: { className: 'RoomObject', useSQLite: true },
    COCKPIT: { className: 'CockpitRelayObject', useSQLite: true },
  },
  durableObjectsPersist: persist,
  assets: { directory: join(repo, 'build/cockpit'), routerConfig: { has_user_worker: true } },
  bindings: { ...vars, TICKET_SECRET: secret },
});
const workerUrl = (await mf.ready).toString().replace(/\/$/, '');
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
        kind: p.get('kind') ?? 'human',
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
await new Promise((r) => page.listen(pagePort, '127.0.0.1', r));
console.log(
  `tether edge dev: open http://127.0.0.1:${page.address().port} (rooms at ${wsUrl}/rooms/<name>, state in ${persist}); ` +
    `cockpit at ${workerUrl}/ (robots: deno run -A --unstable-net web/host/demo-robot.js --relay ${workerUrl})`,
);

const stop = async () => {
  page.close();
  await mf.dispose();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
