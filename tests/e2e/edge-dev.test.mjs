// make edge-dev end to end: web/edge/dev.mjs (the Worker in workerd via Miniflare, storage in a
// folder, a page that mints dev tickets) serves a room that real Chromium joins and writes to,
// and a Node peer on the same room sees the write.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { chromium } from 'playwright-core';
import { repoDir } from './lib/fixtures.mjs';
import { Peer, until } from './lib/edge.mjs';
import { LAUNCH } from './lib/chromium.mjs';
import { watchOutput } from './lib/child_output.mjs';

const dir = mkdtempSync(join(tmpdir(), 'tether-edge-dev-'));
let child = null;
let browser = null;
after(async () => {
  await browser?.close();
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM'); // by PID: the runner we started; it disposes Miniflare itself
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

test(
  'edge-dev: a browser page joins a room and writes; a Node peer sees it',
  { timeout: 120_000 },
  async () => {
    const secret = 'dev-secret-0123456789abcdef0123456789';
    child = spawn(
      process.execPath,
      ['web/edge/dev.mjs', '--port', '0', '--page-port', '0', '--persist', dir],
      {
        cwd: repoDir,
        env: { ...process.env, TICKET_SECRET: secret },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const [, pageUrl, wsUrl] = await watchOutput(child, 'web/edge/dev.mjs').ready(
      /open (http:\/\/127\.0\.0\.1:\d+) \(rooms at (ws:\/\/127\.0\.0\.1:\d+)\/rooms/,
    );
    browser = await chromium.launch(LAUNCH);
    const page = await browser.newPage();
    await page.goto(pageUrl);
    await page.fill('#room', 'devroom');
    await page.fill('#writer', 'browser-user');
    await page.click('#join button');
    await page.waitForFunction(() =>
      document.getElementById('status').textContent.startsWith('in room'),
    );
    await page.fill('#path', '');
    await page.fill('#value', '{"from":"chromium"}');
    await page.click('#write');
    await page.waitForFunction(
      () =>
        document.getElementById('status').textContent.includes('0 unacknowledged') &&
        document.getElementById('doc').textContent.includes('chromium'),
    );
    // A Node peer with a ticket from the same secret sees the page's write.
    const { mintTicket } = await import('../../web/edge/tickets.js');
    const ticket = await mintTicket(secret, { room: 'devroom', writer: 'node-peer' });
    const peer = new Peer(wsUrl, 'devroom', { writer: 'node-peer', ticket });
    await until(() => peer.client.welcomed, 'welcome');
    assert.deepEqual(peer.client.value(), { from: 'chromium' });
    await peer.close();
  },
);
