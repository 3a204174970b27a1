// A tiny static file server for browser tests: GET only, bound to 127.0.0.1 on a free port,
// serving files under one root (no directory listings, no escaping the root, symlinks included)
// plus a few named files from outside it (a bench's generated page and data).
import { createServer } from 'node:http';
import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, relative } from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  // Chromium compiles while downloading only when the type is exactly application/wasm.
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/** The file under `root` that `urlPath` names, or null when it would leave the root. */
async function resolveUnder(root, urlPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const candidate = join(root, decoded); // join normalises away '..' segments...
  const rel = relative(root, candidate); // ...so check the result is still inside the root
  if (rel.startsWith('..') || isAbsolute(rel)) return null;
  try {
    // A symlink could still point outside: compare real paths.
    const real = await realpath(candidate);
    const realRel = relative(await realpath(root), real);
    if (realRel.startsWith('..') || isAbsolute(realRel)) return null;
    return (await stat(real)).isFile() ? real : null;
  } catch {
    return null;
  }
}

/**
 * Starts the server. `routes` maps exact URL paths to absolute file paths outside the root.
 * Returns { origin, served, close }; `served` records every request as {path, status, type}.
 */
export async function startStaticServer(root, routes = {}) {
  const served = [];
  const server = createServer(async (req, res) => {
    const path = new URL(req.url, 'http://127.0.0.1').pathname;
    const reply = (status, type, body) => {
      served.push({ path, status, type });
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET') return reply(405, 'text/plain', 'GET only');
    const file = Object.hasOwn(routes, path) ? routes[path] : await resolveUnder(root, path);
    if (!file) return reply(404, 'text/plain', 'not found');
    try {
      const body = await readFile(file);
      reply(200, TYPES[extname(file)] ?? 'application/octet-stream', body);
    } catch {
      reply(404, 'text/plain', 'not found');
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    origin: `http://127.0.0.1:${port}`,
    served,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections(); // keep-alive sockets from the browser would hold close open
        server.close(() => resolve());
      }),
  };
}
