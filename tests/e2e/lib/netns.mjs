// WebRTC tests run inside a private network namespace that has only `lo` (TOOLCHAIN.md): there
// Chromium and the Node WebRTC library can pair nothing but 127.0.0.1. A test file calls
// `inNetns(import.meta.url)`: outside the namespace it re-runs itself under
// `unshare -n sh -c 'ip link set lo up; exec node --test FILE'` as one test, and returns false;
// inside it returns true and the file registers its real tests.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const FLAG = 'TETHER_IN_NETNS';

export function inNetns(fileUrl, { timeoutMs = 900_000 } = {}) {
  if (process.env[FLAG] === '1') return true;
  const file = fileURLToPath(fileUrl);
  test(
    `${file.split('/').pop()} in a private network namespace (unshare -n)`,
    { timeout: timeoutMs + 10_000 },
    async (t) => {
      const child = spawn(
        'unshare',
        [
          '-n',
          'sh',
          '-c',
          `ip link set lo up && exec "${process.execPath}" --test --test-reporter=spec "$0"`,
          file,
        ],
        { env: { ...process.env, [FLAG]: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      // A hang guard, not a performance check: the child (unshare execs sh, sh execs node, so this
      // PID is the inner node) is killed by its PID; its browsers die with their pipes.
      const guard = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await new Promise((resolve) => child.on('exit', (c, s) => resolve(c ?? s)));
      clearTimeout(guard);
      for (const line of out.split('\n'))
        if (/^\s*(✔|✖|ℹ (tests|pass|fail))/.test(line)) t.diagnostic(line.trim());
      assert.equal(code, 0, `the namespaced run failed (exit ${code}):\n${out}`);
    },
  );
  return false;
}
