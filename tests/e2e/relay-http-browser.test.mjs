// The HTTP form of the encrypted relay transport from a real browser (docs/agent-bus.md § HTTP
// relay transport): a Chromium page (tests/e2e/pages/relay-http.js, the page's own fetch and
// WebCrypto) joins a sealed room on the self-hosted Deno relay over HTTP, and trades texts with a
// Node member over WebSocket. The page is served from another origin than the relay, as an app
// is. The relay's view is every byte that crossed its edge: the page's requests and the answers
// (seen by the browser's own network layer) and the Node member's WebSocket messages; it holds
// no plaintext and no secret.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { chromium } from 'playwright-core';
import WebSocket from 'ws';
import { createRelayTransport } from '../../web/peer/relay-transport.js';
import { waitFor } from '../node/lib/agent-harness.mjs';
import { LAUNCH } from './lib/chromium.mjs';
import { startDenoRooms, ticketFor } from './lib/edge.mjs';
import { repoDir } from './lib/fixtures.mjs';
import { startStaticServer } from './lib/static_server.mjs';

const ROOM_SECRET = 'the browser HTTP transport room secret, out of band';

// A WebSocket class that records every message both ways (the relay's view of this member).
function recordingWebSocket(view) {
  return class extends WebSocket {
    constructor(...a) {
      super(...a);
      this.on('message', (d) => view.push(String(d)));
    }
    send(data, ...rest) {
      view.push(String(data));
      return super.send(data, ...rest);
    }
  };
}

// The timeout only guards against a page that never answers; it is not a performance check.
test(
  'chromium: a page over the HTTP form and a Node member over WebSocket trade sealed texts; the relay sees no plaintext',
  { timeout: 180_000 },
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tether-http-browser-'));
    const children = new Set();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const deno = await startDenoRooms({ dir, db: path.join(dir, 'rooms.sqlite'), children });
    t.after(() => deno.kill());
    const server = await startStaticServer(repoDir);
    t.after(() => server.close());
    const browser = await chromium.launch(LAUNCH);
    t.after(() => browser.close());

    const view = [];
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    // The relay's side of the page's traffic: each request body and each answer, as sent.
    const relayRequests = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(deno.url)) return;
      relayRequests.push(r.url());
      const body = r.postData();
      if (body) view.push(body);
    });
    page.on('response', (res) => {
      if (res.url().startsWith(deno.url))
        res.text().then(
          (b) => view.push(b),
          () => {},
        );
    });
    await page.goto(`${server.origin}/tests/e2e/pages/relay-http.html`);
    await page.waitForFunction(() => window.relayReady === true);

    const log = { open: [], text: [], errors: [] };
    const bob = createRelayTransport({
      url: `${deno.wsUrl}/rooms/lab?ticket=${encodeURIComponent(await ticketFor('lab', 'bob', 'agent'))}`,
      room: 'lab',
      selfId: 'bob',
      secret: ROOM_SECRET,
      WebSocket: recordingWebSocket(view),
      reconnectMinMs: 50,
      reconnectMaxMs: 500,
      onError: (e) => log.errors.push(e),
    });
    bob.subscribe({
      open: (p) => log.open.push(p),
      text: (p, s) => log.text.push([p, s]),
    });
    t.after(() => bob.close());
    t.after(() => page.evaluate(() => window.relayApi.close()).catch(() => {}));

    const ticket = await ticketFor('lab', 'alice', 'human');
    const started = await page.evaluate((o) => window.relayApi.start(o), {
      url: `${deno.wsUrl}/rooms/lab?ticket=${encodeURIComponent(ticket)}`,
      room: 'lab',
      id: 'alice',
      secret: ROOM_SECRET,
    });
    assert.deepEqual(started, { transport: 'http', encrypted: true });
    // Bounded: a page whose requests never reach the room (a relay a browser may not read, say)
    // fails here with what the page saw, instead of hanging.
    await waitFor(
      'the page joined the room over HTTP',
      () => page.evaluate(() => window.relayApi.joined()),
      {
        timeoutMs: 30_000,
      },
    ).catch(async (err) => {
      const errors = await page.evaluate(() => window.relayApi.errors());
      throw new Error(
        `${err.message}: ${JSON.stringify(errors)} ${problems.slice(0, 3).join('; ')}`,
      );
    });
    await waitFor(
      'the lanes open both ways (the epoch handshake done)',
      async () =>
        log.open.includes('alice') &&
        (await page.evaluate(() => window.relayApi.opened())).includes('bob'),
      { timeoutMs: 60_000 },
    );

    const words = (i) => `PLAINTEXT-CANARY-${i} "é" ${'z'.repeat(i * 5)}`;
    const N = 20;
    for (let i = 0; i < N; i++) {
      assert.equal(
        await page.evaluate((s) => window.relayApi.send('bob', s), `from the page ${words(i)}`),
        true,
      );
      assert.equal(bob.send('alice', `from node ${words(i)}`), true);
    }
    await waitFor(
      `${N} each way`,
      async () =>
        log.text.length === N &&
        (await page.evaluate(() => window.relayApi.received())).length === N,
      { timeoutMs: 60_000 },
    );
    assert.deepEqual(
      log.text,
      Array.from({ length: N }, (_, i) => ['alice', `from the page ${words(i)}`]),
    );
    assert.deepEqual(
      await page.evaluate(() => window.relayApi.received()),
      Array.from({ length: N }, (_, i) => ['bob', `from node ${words(i)}`]),
    );
    assert.deepEqual(await page.evaluate(() => window.relayApi.errors()), []);
    assert.deepEqual(log.errors, []);
    assert.deepEqual(problems, []);

    // The page really went over HTTP (its open, sends and long-polls), to the relay's origin.
    assert.ok(relayRequests.some((u) => u.includes('/rooms/lab/http/open?')));
    assert.ok(relayRequests.some((u) => u.includes('/rooms/lab/http/send?')));
    assert.ok(relayRequests.some((u) => u.includes('/rooms/lab/http/recv?')));
    assert.equal((await deno.hook('rooms', 'lab')).httpMembers, 1);
    // The relay's view: real traffic of both members, and nothing readable in it.
    await waitFor('the answers read', () => view.some((v) => v.includes('"frames":[')));
    const all = view.join('\n');
    assert.ok(view.length > 2 * N, `the relay's view recorded ${view.length} texts`);
    assert.match(all, /tether-env/);
    assert.ok(!all.includes('PLAINTEXT-CANARY'), 'no plaintext crossed the relay');
    assert.ok(!all.includes('from the page') && !all.includes('from node'));
    assert.ok(!all.includes(ROOM_SECRET));
  },
);
