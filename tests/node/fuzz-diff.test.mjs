// The WASM build against the native one over the saved fuzz corpora and the seeds
// (tests/fuzz/diff.mjs): the bus envelope parser, the room envelope check and the room journal
// replay must answer every input byte for byte alike in both builds. Needs `make native` (the
// tether_fuzz_diff tool) and `make wasm`, which `make test` builds first.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { differential, inputFiles } from '../fuzz/diff.mjs';

const root = new URL('../../', import.meta.url).pathname;
const tool = join(root, 'build/native/tether_fuzz_diff');

test('fuzz-diff: the saved corpora and seeds parse alike in the native and the WASM build', async () => {
  assert.ok(existsSync(tool), `${tool} is missing: run \`make native\` first`);
  const seeds = mkdtempSync(join(tmpdir(), 'tether-fuzz-diff-'));
  try {
    execFileSync('node', [join(root, 'tests/fuzz/seeds.mjs'), seeds], { stdio: 'ignore' });
    const files = inputFiles([join(root, 'tests/fuzz/corpus'), seeds]);
    assert.ok(files.length > 500, `only ${files.length} inputs: the corpora or seeds are missing`);
    const { compared, disagreements } = await differential(tool, files);
    assert.ok(compared >= files.length * 3);
    assert.deepEqual(
      disagreements.slice(0, 5),
      [],
      `${disagreements.length} answers differ between the builds (make fuzz-diff lists them)`,
    );
  } finally {
    rmSync(seeds, { recursive: true, force: true });
  }
});
