// The hosted mailbox self-hosted: web/host/mailbox.js under real Deno on one SQLite file. A
// restart is a SIGKILL (nothing gets to flush) and a new process on the same file; the Deno host
// keeps one mailbox in memory at a time (--max-loaded 1), so every scenario also crosses its
// unload and reload path (tests/e2e/lib/mailbox_scenarios.mjs).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { killDenoHosts, startDenoMailbox } from './lib/mailbox_hosts.mjs';
import { mailboxScenarios } from './lib/mailbox_scenarios.mjs';

const dir = mkdtempSync(join(tmpdir(), 'tether-mailbox-deno-'));
after(() => {
  killDenoHosts();
  rmSync(dir, { recursive: true, force: true });
});

mailboxScenarios('deno', {
  sharedStorage: true,
  start: () => startDenoMailbox(dir, { maxLoaded: 1 }),
});
