// Node-side half of the wire smoke tests: reads the fixture sets from disk and checks what a
// runtime reported (see wire_smoke.js) against them, byte for byte.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runVectors } from './wire_smoke.js';

export const repoDir = fileURLToPath(new URL('../../../', import.meta.url));

export const goldenPath = join(repoDir, 'fixtures/wire/data_frames.json');
export const compatPath = join(repoDir, 'fixtures/compat/dimos-v5/data_frames.json');

export function loadSets() {
  return {
    golden: JSON.parse(readFileSync(goldenPath, 'utf8')),
    compat: JSON.parse(readFileSync(compatPath, 'utf8')),
  };
}

/** Asserts one reported round trip of a valid vector against the fixture it came from. */
export function assertRoundTrip(got, vector, where) {
  assert.ok(got, `${where}: no result reported`);
  assert.equal(got.ok, true, `${where}: decode failed: ${JSON.stringify(got.error)}`);
  assert.deepEqual(got.header, vector.header, `${where}: header`);
  assert.equal(got.payload_b64, vector.payload_b64, `${where}: payload bytes`);
  assert.equal(got.reencoded_b64, vector.frame_b64, `${where}: re-encoded frame bytes`);
}

/**
 * Node's own run of the same module over the same sets. For invalid vectors the fixture pins only
 * the reason; the whole error value (message, code to send) must also be what Node reports.
 */
export async function nodeReference(sets) {
  const { loadWire } = await import('@tether-rt/tether/wire');
  return runVectors(await loadWire(), sets);
}

/**
 * Asserts that `results` holds exactly one entry per vector of every set: valid vectors decode to
 * the fixture's header and payload and re-encode to the fixture's bytes; invalid vectors fail as
 * values with the fixture's reason and the same error value the module reports in Node
 * (`reference`).
 */
export function assertAllVectors(results, sets, reference) {
  const key = (r) => `${r.set}/${r.kind}/${r.name}`;
  const byKey = new Map(results.map((r) => [key(r), r]));
  const refByKey = new Map(reference.map((r) => [key(r), r]));
  let expected = 0;
  for (const [set, file] of Object.entries(sets)) {
    assert.ok(file.vectors.length > 0, `${set}: fixture file has no vectors`);
    for (const v of file.vectors) {
      expected++;
      const where = `${set}/${v.name}`;
      const got = byKey.get(`${set}/valid/${v.name}`);
      assertRoundTrip(got, v, where);
      assert.equal(got.sameBytes, true, `${where}: runtime's own byte comparison`);
    }
    for (const v of file.invalid ?? []) {
      expected++;
      const where = `${set}/${v.name}`;
      const got = byKey.get(`${set}/invalid/${v.name}`);
      assert.ok(got, `${where}: no result reported`);
      assert.equal(got.ok, false, `${where}: an invalid frame decoded`);
      assert.equal(got.error.reason, v.error, `${where}: error reason`);
      assert.deepEqual(
        got.error,
        refByKey.get(`${set}/invalid/${v.name}`).error,
        `${where}: error`,
      );
    }
  }
  assert.equal(results.length, expected, 'one result per vector');
}
