// tether/relay's declarations (web/glue/relay.d.ts) as a consumer sees them through the package
// "exports", under the strictest settings: relay-types-usage.ts must compile.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repoDir = fileURLToPath(new URL('../../', import.meta.url));

test('tsc: a consumer of tether/relay type-checks', () => {
  // A hang guard, not a performance assertion: spawnSync kills the child after it.
  const r = spawnSync(
    process.execPath,
    [join(repoDir, 'node_modules/.bin/tsc'), '-p', 'tests/node/tsconfig.relay-types.json'],
    {
      cwd: repoDir,
      encoding: 'utf8',
      timeout: 120_000,
      killSignal: 'SIGKILL',
    },
  );
  assert.equal(r.error, undefined, `tsc did not run: ${r.error}`);
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
});
