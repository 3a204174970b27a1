// Differential test of tether/relay against the reference relay, @mmstack/mesh-protocol@0.9.1
// (the room-relay spec). Seeded scenarios (tests/node/lib/relay-scenarios.mjs) drive both
// relays through identical steps; every message each connection receives and every observer call
// must match, with instance nonces replaced by their order of appearance. A divergence names the
// seed and the first differing step. TETHER_DIFF_SEEDS=N runs N seeds (default 2000),
// TETHER_DIFF_FIRST=S starts at seed S.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as reference from '@mmstack/mesh-protocol';
import * as ours from '@tether-rt/tether/relay';

import { play, scenario } from './lib/relay-scenarios.mjs';

const SEEDS = Number(process.env.TETHER_DIFF_SEEDS ?? 2000);
const FIRST = Number(process.env.TETHER_DIFF_FIRST ?? 1);

function firstDifference(a, b) {
  const x = JSON.parse(a);
  const y = JSON.parse(b);
  const streams = new Set([...x.logs, ...y.logs].map(([name]) => name));
  for (const name of [...streams].sort()) {
    const log = x.logs.find(([n]) => n === name)?.[1] ?? [];
    const other = y.logs.find(([n]) => n === name)?.[1] ?? [];
    for (let k = 0; k < Math.max(log.length, other.length); k++) {
      if (JSON.stringify(log[k]) !== JSON.stringify(other[k])) {
        return `connection/room ${name}, message ${k} of this step:\n  ours:      ${JSON.stringify(log[k])}\n  reference: ${JSON.stringify(other[k])}`;
      }
    }
  }
  for (let k = 0; k < Math.max(x.calls.length, y.calls.length); k++) {
    if (JSON.stringify(x.calls[k]) !== JSON.stringify(y.calls[k])) {
      return `observer call ${k}:\n  ours:      ${JSON.stringify(x.calls[k])}\n  reference: ${JSON.stringify(y.calls[k])}`;
    }
  }
  return 'records differ in shape';
}

test(`tether/relay matches the reference over ${SEEDS} seeded scenarios`, async () => {
  let steps = 0;
  for (let seed = FIRST; seed < FIRST + SEEDS; seed++) {
    const script = scenario(seed);
    const mine = await play(ours, script);
    const theirs = await play(reference, script);
    steps += script.steps.length;
    for (let i = 0; i < mine.length; i++) {
      if (mine[i] !== theirs[i]) {
        assert.fail(
          `seed ${seed} diverges at step ${i} ${JSON.stringify(script.steps[i])}\n` +
            `options ${JSON.stringify(script.options)}\n${firstDifference(mine[i], theirs[i])}\n` +
            `reproduce: TETHER_DIFF_FIRST=${seed} TETHER_DIFF_SEEDS=1 node --test tests/node/relay-differential.test.mjs`,
        );
      }
    }
  }
  assert.ok(steps > SEEDS * 30);
});
