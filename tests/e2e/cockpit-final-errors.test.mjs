// Final errors stop the real cockpit (docs/cockpit-protocol.md § Errors; the spec's "Errors": a
// client must not retry what no retry can fix). The real cockpit in Chromium meets a relay that
// refuses it for good: a bad token (auth_failed) on the Deno relay over WebTransport and on the
// edge Worker under workerd over its WebSocket, and a hello of another protocol version
// (version_mismatch) over the WebSocket twin. Each time the banner names the error and its fix,
// the link says it stopped, and the page opens no second connection: the viewer core's backoff
// would reconnect after 250 ms, 500 ms, 1 s..., so a page that keeps retrying shows it within the
// wait below many times over.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { wire } from './lib/cockpit_clients.mjs';
import { LAUNCH } from './lib/chromium.mjs';
import { killAll, startRelay } from './lib/cockpit_procs.mjs';
import { startEdge } from './lib/edge.mjs';

const TOKEN = 'operator-token-0123456789';
const auth = JSON.stringify({ tokens: [{ token: TOKEN, name: 'ops', roles: ['viewer'] }] });
const dir = mkdtempSync(join(tmpdir(), 'tether-cockpit-final-'));
const authFile = join(dir, 'auth.json');
writeFileSync(authFile, auth);

let browser;
let relay;
let edge;
before(async () => {
  [relay, edge, browser] = await Promise.all([
    startRelay(['--auth', authFile]),
    startEdge({ bindings: { COCKPIT_AUTH: auth } }),
    chromium.launch(LAUNCH),
  ]);
});
after(async () => {
  await browser?.close().catch(() => {});
  killAll();
  await edge?.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

// Longer than the first four reconnect delays together (250 + 500 + 1000 + 2000 ms).
const RETRY_WINDOW_MS = 4000;

/**
 * Opens the cockpit at `base` (query `search`), counting every transport the page constructs;
 * `prepare(page)` may route requests first. Resolves once the banner shows the relay's error.
 */
async function openRefused(base, search, prepare = async () => {}) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.addInitScript(() => {
    window.__connects = [];
    for (const name of ['WebTransport', 'WebSocket']) {
      const Real = window[name];
      if (!Real) continue;
      window[name] = class extends Real {
        constructor(url, ...rest) {
          super(url, ...rest);
          window.__connects.push(`${name} ${url}`);
        }
      };
    }
  });
  await prepare(page);
  await page.goto(`${base}/${search}`);
  await page.waitForFunction(() => document.querySelector('#errors')?.textContent, null, {
    timeout: 30_000,
  });
  return { context, page };
}

async function assertStopped(page, code, fix) {
  // The core reports the stop once the transport has closed, a moment after the error shows.
  await page
    .waitForFunction(() => document.querySelector('#errors')?.dataset.final, null, {
      timeout: 5000,
    })
    .catch(() => {});
  const banner = await page.$eval('#errors', (e) => e.textContent);
  assert.match(banner, new RegExp(`^${code}: `), banner);
  assert.ok(banner.includes(wire.errorCodes[code].fix), `the banner names the fix: ${banner}`);
  assert.match(banner, fix, banner);
  assert.match(banner, /stopped reconnecting/, banner);
  assert.equal(await page.$eval('#status-link', (e) => e.textContent), `stopped: ${code}`);
  const first = await page.evaluate(() => window.__connects.slice());
  await page.waitForTimeout(RETRY_WINDOW_MS);
  const all = await page.evaluate(() => window.__connects.slice());
  assert.deepEqual(all, first, 'no reconnect after a final error');
  assert.equal(all.filter((c) => /\/viewer/.test(c)).length, 1, `one viewer connection: ${all}`);
  assert.equal(await page.$eval('#status-link', (e) => e.dataset.state), 'closed');
}

describe('a final error stops the cockpit and names the fix', { timeout: 120_000 }, () => {
  test('auth_failed on the Deno relay (WebTransport)', async () => {
    const { context, page } = await openRefused(relay.http, '?token=not-a-listed-token-000');
    try {
      assert.ok(
        (await page.evaluate(() => window.__connects)).some((c) => c.startsWith('WebTransport')),
        'the cockpit took WebTransport',
      );
      await assertStopped(page, 'auth_failed', /token listed in the relay's auth file/);
    } finally {
      await context.close();
    }
  });

  test('auth_failed at the edge under workerd (WebSocket)', async () => {
    const { context, page } = await openRefused(edge.url, '?token=not-a-listed-token-000');
    try {
      await assertStopped(page, 'auth_failed', /token listed in the relay's auth file/);
    } finally {
      await context.close();
    }
  });

  test('version_mismatch over the WebSocket twin: a cockpit of protocol v6', async () => {
    // The page takes the WebSocket twin (no wtUrl), and its hello reaches the real relay as a
    // cockpit of the previous protocol version would send it; everything else passes untouched.
    const prepare = async (page) => {
      await page.route('**/api/info', async (route) => {
        const res = await route.fetch();
        const { wtUrl, certHash, ...info } = await res.json();
        await route.fulfill({ response: res, json: info });
      });
      await page.routeWebSocket(/\/ws\/viewer/, (ws) => {
        const server = ws.connectToServer();
        ws.onMessage((m) => {
          const d = typeof m === 'string' ? null : wire.decodeDataFrame(new Uint8Array(m));
          if (d?.ok && d.header.ch === '@control') {
            const body = JSON.parse(new TextDecoder().decode(d.payload));
            if (body.t === 'hello') {
              body.v = 6;
              const bytes = new TextEncoder().encode(JSON.stringify(body));
              const f = wire.encodeDataFrame(d.header, bytes);
              assert.ok(f.ok, 'the rewritten hello encodes');
              server.send(Buffer.from(f.bytes));
              return;
            }
          }
          server.send(m);
        });
      });
    };
    const { context, page } = await openRefused(relay.http, `?token=${TOKEN}`, prepare);
    try {
      await assertStopped(page, 'version_mismatch', /upgrade the client to protocol v7/);
    } finally {
      await context.close();
    }
  });
});
