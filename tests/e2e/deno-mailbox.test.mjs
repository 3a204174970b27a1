// The hosted mailbox self-hosted: web/host/mailbox.js under real Deno on one SQLite file. A
// restart is a SIGKILL (nothing gets to flush) and a new process on the same file; the Deno host
// keeps one mailbox in memory at a time (--max-loaded 1), so every scenario also crosses its
// unload and reload path (tests/e2e/lib/mailbox_scenarios.mjs).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { repoDir } from './lib/fixtures.mjs';
import { mailboxScenarios } from './lib/mailbox_scenarios.mjs';

const dir = mkdtempSync(join(tmpdir(), 'tether-mailbox-deno-'));
const children = new Set();
after(() => {
  for (const c of children) c.kill('SIGKILL'); // by PID: our children only
  rmSync(dir, { recursive: true, force: true });
});

async function startDeno() {
  const child = spawn(
    join(repoDir, 'node_modules/.bin/deno'),
    [
      'run',
      '--no-lock',
      '--allow-net=127.0.0.1',
      `--allow-read=${repoDir},${dir}`,
      `--allow-write=${dir}`,
      'web/host/mailbox.js',
      '--port',
      '0',
      '--db',
      join(dir, 'mailbox.sqlite'),
      '--max-loaded',
      '1',
      '--test-hooks',
    ],
    {
      cwd: repoDir,
      env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.add(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const port = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /tether mailbox ready: http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`deno exited ${code}: ${err}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    wsUrl: `ws://127.0.0.1:${port}`,
    async hook(mailbox, name, query = {}) {
      const q = new URLSearchParams(query).toString();
      const res = await fetch(`${url}/__test/mailboxes/${mailbox}/${name}${q ? `?${q}` : ''}`, {
        method: 'POST',
      });
      return res.json();
    },
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
      children.delete(child);
    },
  };
}

mailboxScenarios('deno', { sharedStorage: true, start: startDeno });
