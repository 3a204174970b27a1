// The cockpit's declarations (web/glue/cockpit-*.d.ts) as consumers see them: through the
// package's exports, under the strictest settings (tests/node/cockpit-types-usage.ts), and the
// closed sets they (and wire.d.ts) spell out equal what the WASM module reports.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { loadTetherModule } from '../../web/glue/load.js';
import { clientTables } from '../../web/glue/cockpit-cores.js';

const repoDir = fileURLToPath(new URL('../../', import.meta.url));

function tsc(args) {
  // A hang guard, not a performance assertion: spawnSync kills the child's PID after it.
  const r = spawnSync(process.execPath, [join(repoDir, 'node_modules/.bin/tsc'), ...args], {
    cwd: repoDir,
    encoding: 'utf8',
    timeout: 120_000,
    killSignal: 'SIGKILL',
  });
  assert.equal(r.error, undefined, `tsc did not run: ${r.error}`);
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
}

test('tsc: consumers of tether/cockpit-robot, cockpit-viewer and relay-cockpit type-check', () => {
  tsc(['-p', 'tests/node/tsconfig.cockpit-types.json']);
});

test('the closed sets the declarations spell out equal what the WASM module reports', async (t) => {
  const mod = await loadTetherModule();
  const tables = clientTables(mod);
  const wire = mod.wireEnums();
  // `satisfies Record<K, true>` on an object literal fails on a missing key and on an extra one.
  const exact = (keys, type) =>
    `export const runtime_${type.replace(/\W/g, '_')} = ${JSON.stringify(Object.fromEntries(keys.map((k) => [k, true])))} satisfies Record<${type}, true>;`;
  const source = [
    `import type { ViewerAction, ViewerEvent, RobotAction, RobotEvent, SendResult, SafetyCause, RobotSetupError, ClientTables } from ${JSON.stringify(join(repoDir, 'web/glue/cockpit-cores.js'))};`,
    `import type * as R from ${JSON.stringify(join(repoDir, 'web/glue/cockpit-relay.js'))};`,
    exact(mod.cockpitRelayActionKinds(), 'R.ActionKind'),
    exact(Object.keys(mod.cockpitRelayLimits()), 'keyof R.CockpitLimits'),
    exact(tables.robotSetupErrors, 'RobotSetupError'),
    exact(tables.viewerActions, "ViewerAction['kind']"),
    exact(tables.viewerEvents, "ViewerEvent['kind']"),
    exact(tables.robotActions, "RobotAction['kind']"),
    exact(tables.robotEvents, "RobotEvent['kind']"),
    exact(tables.sendResults, 'SendResult'),
    exact(tables.safetyCauses, 'SafetyCause'),
    exact(Object.keys(tables.limits), "keyof ClientTables['limits']"),
    // The wire core's enums (wire.enums), against the unions of web/glue/wire.d.ts.
    `import type * as W from ${JSON.stringify(join(repoDir, 'web/glue/wire.js'))};`,
    exact(wire.messageTypes, 'W.MessageType'),
    exact([...wire.dropReasons, 'bad_sender'], 'W.DropReason'),
    exact(wire.frameErrors, 'W.FrameErrorReason'),
    exact(wire.manifestErrors, 'W.ManifestErrorCode'),
    exact(wire.errorCodes, 'W.ErrorCode'),
    exact(wire.deliveries, 'W.Delivery'),
    exact(wire.senders, 'W.Sender'),
  ].join('\n');
  const dir = mkdtempSync(join(tmpdir(), 'tether-cockpit-types-'));
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
  tsc(['-p', join(dir, 'tsconfig.json')]);
});
