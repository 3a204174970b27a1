// Launches the self-hosted mailbox (web/host/mailbox.js) under real Deno on a SQLite file in
// `dir`, for the mailbox suites. Children are tracked so a suite can kill them by PID, pass or fail.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoDir } from './fixtures.mjs';
import { watchOutput } from './child_output.mjs';

export const denoChildren = new Set();

/** Kills every Deno host still running (by PID: our children only). */
export function killDenoHosts() {
  for (const c of denoChildren) c.kill('SIGKILL');
  denoChildren.clear();
}

/**
 * @returns {Promise<{url: string, wsUrl: string, hook(mailbox, name, query?): Promise<any>, stop(): Promise<void>}>}
 */
export async function startDenoMailbox(dir, { maxLoaded = 256 } = {}) {
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
      String(maxLoaded),
      '--test-hooks',
    ],
    {
      cwd: repoDir,
      env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  denoChildren.add(child);
  const [, port] = await watchOutput(child, 'deno mailbox.js').ready(
    /tether mailbox ready: http:\/\/127\.0\.0\.1:(\d+)\//,
  );
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
      denoChildren.delete(child);
    },
  };
}
