// Deno smoke test: the one WASM module loads in real Deno through web/glue (Deno.readFile path)
// and round-trips every golden and compat data-frame vector byte for byte.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertAllVectors, loadSets, nodeReference, repoDir } from './lib/fixtures.mjs';

// Generous: this is a hang guard, not a performance assertion.
const CHILD_TIMEOUT_MS = 60_000;

test('deno: tether.wasm loads and round-trips every data-frame vector', async () => {
  const deno = join(repoDir, 'node_modules/.bin/deno'); // the real binary, so its PID is Deno's
  const child = spawnSync(
    deno,
    [
      'run',
      '--no-lock', // never write a deno.lock into the repo
      `--allow-read=${repoDir}`,
      'tests/e2e/deno/wire_smoke.js',
    ],
    {
      cwd: repoDir,
      encoding: 'utf8',
      // spawnSync sends killSignal to the child's PID once the timeout passes.
      timeout: CHILD_TIMEOUT_MS,
      killSignal: 'SIGKILL',
      // No update check: the test must not reach beyond the machine.
      env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
    },
  );
  assert.equal(child.error, undefined, `deno did not run: ${child.error}`);
  assert.equal(
    child.status,
    0,
    `deno exited with ${child.status} ${child.signal ?? ''}\n${child.stderr}`,
  );

  const summary = JSON.parse(child.stdout.trim().split('\n').at(-1));
  assert.equal(summary.runtime, 'deno');
  assert.equal(summary.limits.protocolVersion, 7);
  assert.equal(summary.allValidSameBytes, true);
  const sets = loadSets();
  assertAllVectors(summary.results, sets, await nodeReference(sets));
});
