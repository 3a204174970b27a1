// Which WASM module holds which cockpit binding (wasm/module.cmake): the cockpit relay Worker's
// module (tether-cockpit-relay) hosts the cockpit relay and carries none of its client cores (viewer, robot, teleop safety); the cockpit
// module carries the clients and no relay; the full module both. And each glue finds its binding
// when the cockpit relay and cockpit modules are both registered. Its own file: registering a module is
// global to the process, and node --test runs each file in one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import edgeFactory, { tetherModule as edgeModule } from '../../build/wasm/tether-cockpit-relay.mjs';
import cockpitFactory, { tetherModule as cockpitModule } from '../../build/wasm/tether-cockpit.mjs';
import { tetherModule as fullModule } from '../../build/wasm/tether.mjs';
import { loadTetherModule, registerTetherModule } from '../../web/glue/load.js';
import { loadCockpitRelay } from '../../web/glue/cockpit-relay.js';
import { createRobotCore } from '../../web/glue/cockpit-cores.js';

const holds = (m) => ['cockpit_relay', 'cockpit_clients'].map((b) => m.bindings.includes(b));

test("the cockpit relay Worker's module holds the cockpit relay only, the cockpit module the clients only", () => {
  assert.deepEqual(holds(edgeModule), [true, false]);
  assert.deepEqual(holds(cockpitModule), [false, true]);
  assert.deepEqual(holds(fullModule), [true, true]);
});

test('each cockpit glue loads the registered module that holds its binding', async () => {
  registerTetherModule({
    ...edgeModule,
    factory: edgeFactory,
    wasmUrl: () => new URL('../../build/wasm/tether-cockpit-relay.wasm', import.meta.url),
  });
  registerTetherModule({
    ...cockpitModule,
    factory: cockpitFactory,
    wasmUrl: () => new URL('../../build/wasm/tether-cockpit.wasm', import.meta.url),
  });
  const edge = await loadTetherModule({}, 'cockpit_relay');
  assert.equal(typeof edge.CockpitRelayCore, 'function');
  for (const core of ['CockpitViewerCore', 'CockpitRobotCore', 'CockpitSafetyCore'])
    assert.equal(edge[core], undefined, `${core} is not in the cockpit relay Worker module`);
  assert.equal(edge.cockpitClientTables, undefined);

  const clients = await loadTetherModule({}, 'cockpit_clients');
  assert.notEqual(clients, edge);
  assert.equal(typeof clients.CockpitRobotCore, 'function');
  assert.equal(typeof clients.CockpitViewerCore, 'function');
  assert.equal(clients.CockpitRelayCore, undefined, 'the relay is not in the cockpit module');

  // The glue works on the module it found: a relay core counts sessions, a robot core gives its
  // manifest back in normal form.
  const relay = await loadCockpitRelay();
  assert.equal(relay.sessionCount(), 0);
  const robot = createRobotCore(clients, {
    id: 'r1',
    name: 'one',
    model: 'test',
    manifest: { version: 1, channels: [{ ch: 'status', encoding: 'json.v1' }] },
  });
  assert.equal(robot.manifest.channels[0].dir, 'rx', 'the manifest comes back in normal form');
  robot.dispose();
});
