// The hosted mailbox at the edge: the real Worker (web/edge/worker.js) under real workerd
// (Miniflare), one SQLite-backed Durable Object per mailbox persisted to a folder, so stopping
// and starting the runtime is a real restart (tests/e2e/lib/mailbox_scenarios.mjs).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { startEdge } from './lib/edge.mjs';
import { mailboxScenarios } from './lib/mailbox_scenarios.mjs';

const dir = mkdtempSync(join(tmpdir(), 'tether-mailbox-edge-'));
after(() => rmSync(dir, { recursive: true, force: true }));

mailboxScenarios('edge', {
  sharedStorage: false,
  async start() {
    const edge = await startEdge({ persist: dir });
    return {
      url: edge.url,
      wsUrl: edge.wsUrl,
      async hook(mailbox, name, query = {}) {
        const q = new URLSearchParams(query).toString();
        const res = await fetch(
          `${edge.url}/__test/mailboxes/${mailbox}/${name}${q ? `?${q}` : ''}`,
          {
            method: 'POST',
          },
        );
        return res.json();
      },
      stop: () => edge.stop(),
    };
  },
});
