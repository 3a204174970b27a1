// A robot's client cores in real workerd (Miniflare): the edge module carries only the cockpit
// relay (wasm/module.cmake), so the `workerd` entry of `cockpit-robot` brings the cockpit module
// from a CompiledWasm import instead; the robot core made there gives its manifest back in normal
// form.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Miniflare } from 'miniflare';
import { repoDir } from './lib/fixtures.mjs';
import { workerdOptions } from './lib/edge.mjs';

let mf;
before(async () => {
  mf = new Miniflare(workerdOptions(`${repoDir}tests/e2e/workerd/cockpit_robot_worker.js`));
  await mf.ready;
});
after(async () => {
  await mf?.dispose();
});

// The timeout guards against a hung runtime only; it is not a performance check.
test(
  'workerd: cockpit-robot loads the cockpit module and makes a robot core',
  { timeout: 120_000 },
  async () => {
    const { config } = JSON.parse(
      readFileSync(new URL('../../fixtures/cockpit/clients.json', import.meta.url)),
    ).robot[0];
    const res = await mf.dispatchFetch('http://127.0.0.1/', {
      method: 'POST',
      body: JSON.stringify(config),
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.connectRobot, 'function');
    assert.deepEqual(body.modules, ['tether-cockpit']);
    assert.equal(body.relayCore, 'undefined', 'the cockpit module holds no relay');
    assert.deepEqual(
      body.manifest.channels.map((c) => [c.ch, c.dir]),
      config.manifest.channels.map((c) => [c.ch, c.dir ?? 'rx']),
    );
  },
);
