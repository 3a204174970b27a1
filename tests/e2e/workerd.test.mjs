// workerd smoke test: the one WASM module loads in real workerd (through Miniflare) from a
// CompiledWasm import, and the worker round-trips every golden and compat data frame POSTed to it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Miniflare } from 'miniflare';
import { fromBase64 } from './lib/wire_smoke.js';
import { assertRoundTrip, loadSets, nodeReference, repoDir } from './lib/fixtures.mjs';
import { workerdOptions } from './lib/edge.mjs';

let mf;

before(async () => {
  mf = new Miniflare(workerdOptions(`${repoDir}tests/e2e/workerd/wire_worker.js`));
  await mf.ready;
});

after(async () => {
  await mf?.dispose();
});

async function post(frame) {
  const res = await mf.dispatchFetch('http://127.0.0.1/', { method: 'POST', body: frame });
  return { status: res.status, body: await res.json() };
}

// Timeouts guard against a hung runtime only; they are not performance checks.
test(
  'workerd: tether.wasm loads from a CompiledWasm import and round-trips every vector',
  { timeout: 120_000 },
  async () => {
    for (const [set, file] of Object.entries(loadSets())) {
      for (const v of file.vectors) {
        const { status, body } = await post(fromBase64(v.frame_b64));
        assert.equal(status, 200, `${set}/${v.name}: ${JSON.stringify(body)}`);
        assert.equal(body.runtime, 'workerd');
        assert.equal(body.wasmIsModule, true);
        assertRoundTrip(body, v, `${set}/${v.name}`);
        assert.equal(body.sameBytes, true, `${set}/${v.name}: worker's own byte comparison`);
      }
    }
  },
);

test(
  'workerd: a refused frame comes back as the codec error value, not a crash',
  { timeout: 120_000 },
  async () => {
    const sets = loadSets();
    const reference = await nodeReference(sets);
    for (const v of sets.golden.invalid) {
      const { status, body } = await post(fromBase64(v.frame_b64));
      assert.equal(status, 422, `${v.name}: ${JSON.stringify(body)}`);
      assert.equal(body.ok, false);
      assert.equal(body.error.reason, v.error, v.name);
      const expected = reference.find(
        (r) => r.kind === 'invalid' && r.name === v.name && r.set === 'golden',
      );
      assert.deepEqual(body.error, expected.error, v.name);
    }
    // The worker survived every refusal: a valid frame still decodes in the same isolate.
    const good = sets.golden.vectors[0];
    const { status, body } = await post(fromBase64(good.frame_b64));
    assert.equal(status, 200);
    assertRoundTrip(body, good, `golden/${good.name} after refusals`);
  },
);
