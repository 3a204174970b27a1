// Browser smoke test: the one WASM module loads in real Chromium through web/glue (emscripten
// fetches tether.wasm from locateFile) and round-trips every golden and compat data-frame vector.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { assertAllVectors, loadSets, nodeReference, repoDir } from './lib/fixtures.mjs';
import { startStaticServer } from './lib/static_server.mjs';
import { LAUNCH } from './lib/chromium.mjs';

let server;
let browser;
// A file outside the served root, reachable only through its named route.
const outsideDir = mkdtempSync(join(tmpdir(), 'tether-static-'));
const outsideFile = join(outsideDir, 'outside.json');
writeFileSync(outsideFile, '{}');

before(async () => {
  server = await startStaticServer(repoDir, { '/outside.json': outsideFile });
  browser = await chromium.launch(LAUNCH);
});

// Runs even when `before` or the test failed part-way; each step guards against what never started.
after(async () => {
  await browser?.close();
  await server?.close();
  rmSync(outsideDir, { recursive: true, force: true });
});

// The timeout only guards against a page that never answers; it is not a performance check.
test(
  'chromium: tether.wasm loads and round-trips every data-frame vector',
  { timeout: 120_000 },
  async () => {
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    // Everything the page asks for must come from our server on 127.0.0.1.
    const foreign = [];
    page.on('request', (r) => !r.url().startsWith(server.origin) && foreign.push(r.url()));

    await page.goto(`${server.origin}/tests/e2e/pages/wire-smoke.html`);
    const report = await page.evaluate(() => window.wireSmoke);
    await page.close();

    assert.equal(report.ok, true, `page failed: ${report.error}\n${problems.join('\n')}`);
    const missing = server.served.filter((s) => s.status !== 200).map((s) => s.path);
    assert.deepEqual(problems, [], `missing: ${missing.join(', ')}`);
    assert.deepEqual(foreign, []);
    assert.equal(report.runtime, 'chromium');
    assert.equal(report.limits.protocolVersion, 7);

    // The module really came over HTTP as WASM, not from some cache or inline copy.
    const wasm = server.served.filter((s) => s.path === '/build/wasm/tether.wasm');
    assert.deepEqual(wasm, [
      { path: '/build/wasm/tether.wasm', status: 200, type: 'application/wasm' },
    ]);

    const sets = loadSets();
    assertAllVectors(report.results, sets, await nodeReference(sets));
  },
);

test('static server: GET only, nothing outside the repo but the named route', async () => {
  const get = (path, method = 'GET') => fetch(`${server.origin}${path}`, { method });
  const js = 'text/javascript; charset=utf-8';
  assert.equal((await get('/web/glue/wire.js')).headers.get('content-type'), js);
  assert.equal((await get('/build/wasm/tether.mjs')).headers.get('content-type'), js);
  assert.equal((await get('/web/glue/wire.js', 'POST')).status, 405);
  assert.equal((await get('/web/glue')).status, 404); // no directory listings
  // A file outside the repo: reachable through its route, never through a path.
  assert.equal((await get('/outside.json')).status, 200);
  // URL parsing removes literal and %2e '..' segments before the server sees them; an encoded
  // slash survives it, so this is the request that reaches the server's own root check.
  const up = '..%2f'.repeat(repoDir.split('/').length);
  assert.equal(
    (await get(`/${up}${outsideDir.slice(1).replaceAll('/', '%2f')}%2f${basename(outsideFile)}`))
      .status,
    404,
  );
  assert.equal((await get('/web/..%2f..%2f..%2f..%2fetc%2fpasswd')).status, 404);
});
