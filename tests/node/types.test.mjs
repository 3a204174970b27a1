// Type checks for the shipped declarations (web/glue/*.d.ts):
// 1. a consumer's code that imports 'tether/wire' compiles under strict settings;
// 2. the closed sets the declarations spell out (error codes, frame error reasons, limits, API
//    members) equal what the loaded WASM module reports, so the C++ enums and the .d.ts cannot
//    drift apart unnoticed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { loadTetherModule } from '../../web/glue/load.js';
import { createWire } from '../../web/glue/wire.js';

const repoDir = fileURLToPath(new URL('../../', import.meta.url));
const tsc = join(repoDir, 'node_modules/.bin/tsc');

function runTsc(args) {
  // A hang guard, not a performance assertion: spawnSync kills the child's PID after it.
  const r = spawnSync(process.execPath, [tsc, ...args], {
    cwd: repoDir,
    encoding: 'utf8',
    timeout: 120_000,
    killSignal: 'SIGKILL',
  });
  assert.equal(r.error, undefined, `tsc did not run: ${r.error}`);
  assert.equal(r.status, 0, `tsc failed (${r.status} ${r.signal ?? ''}):\n${r.stdout}${r.stderr}`);
}

test('tsc: a consumer of tether/wire type-checks', () => {
  runTsc(['--noEmit', '-p', 'tests/node/tsconfig.types.json']);
});

test('tsc: the declared unions match what the WASM module reports', async (t) => {
  const mod = await loadTetherModule();
  const wire = createWire(mod);
  // `satisfies Record<K, true>` on an object literal fails on a missing key and on an extra one,
  // so each line below holds exactly when the runtime set equals the declared union.
  const exact = (keys, type) =>
    `export const runtime_${type.replace(/\W/g, '_')} = ${JSON.stringify(Object.fromEntries(keys.map((k) => [k, true])))} satisfies Record<${type}, true>;`;
  const source = [
    `import type { ErrorCode, FrameErrorReason, Wire, WireLimits } from ${JSON.stringify(join(repoDir, 'web/glue/wire.js'))};`,
    exact(Object.keys(wire.errorCodes), 'ErrorCode'),
    exact(Object.keys(mod.wireFrameErrors()), 'FrameErrorReason'),
    exact(Object.keys(wire.limits), 'keyof WireLimits'),
    exact(Object.keys(wire), 'keyof Wire'),
  ].join('\n');

  const dir = mkdtempSync(join(tmpdir(), 'tether-types-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'runtime-sets.ts'), source);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        lib: ['es2022', 'dom'],
        types: [],
      },
      files: ['runtime-sets.ts'],
    }),
  );
  runTsc(['-p', join(dir, 'tsconfig.json')]);
});
