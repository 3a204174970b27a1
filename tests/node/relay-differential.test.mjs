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

import { play, rng, scenario } from './lib/relay-scenarios.mjs';

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

// The drop-in's other exports, against the reference's, over the same seeded envelopes (a tenth
// of them malformed on purpose) and a hand-picked hostile set.
test('validateEnvelope matches the reference on every seeded envelope and hostile input', () => {
  const hostile = [null, undefined, 0, 'env', [], [1], true, { ops: [] }];
  const envs = [...hostile];
  for (let seed = FIRST; seed < FIRST + Math.min(SEEDS, 500); seed++) {
    // play() fills in the room's instance nonce; any clean one will do here.
    for (const step of scenario(seed).steps)
      if (step.t === 'env')
        envs.push('instance' in step.env ? step.env : { ...step.env, instance: `g${seed}` });
  }
  let malformed = 0;
  for (const env of envs) {
    const theirs = reference.validateEnvelope(env);
    if (theirs !== null) malformed++;
    assert.equal(ours.validateEnvelope(env), theirs, JSON.stringify(env));
  }
  assert.ok(malformed > 100 && envs.length - malformed > 1000, `${malformed} of ${envs.length}`);
});

test('createRanges and recordAdmission match the reference over seeded sequences', () => {
  for (let seed = 1; seed <= 300; seed++) {
    let x = seed * 2654435761;
    const next = (n) => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return x % n;
    };
    // Initial ranges as a checkpoint may hold them: unordered, overlapping, touching.
    const initial = Array.from({ length: next(4) }, () => {
      const a = 1 + next(20);
      return [a, a + next(5)];
    });
    const mine = ours.createRanges(initial);
    const theirs = reference.createRanges(initial);
    const evidence = [ours, reference].map(() => ({ ranges: new Map(), settled: new Map() }));
    for (let i = 0; i < 40; i++) {
      const v = 1 + next(30);
      const op = next(3);
      const what = `seed ${seed} step ${i} ${op} ${v} from ${JSON.stringify(initial)}`;
      if (op === 0) assert.equal(mine.has(v), theirs.has(v), what);
      else assert.equal(mine.add(v), theirs.add(v), what);
      assert.deepEqual(mine.toJSON(), theirs.toJSON(), what);
      assert.equal(mine.max(), theirs.max(), what);
      assert.equal(mine.prefix(), theirs.prefix(), what);
      const env = { origin: `o${next(3)}`, version: 1 + next(12), hlc: { p: i, l: seed } };
      ours.recordAdmission(evidence[0], env);
      reference.recordAdmission(evidence[1], env);
      const view = (e) => ({
        ranges: [...e.ranges].map(([o, r]) => [o, r.toJSON()]),
        settled: [...e.settled],
      });
      assert.deepEqual(view(evidence[0]), view(evidence[1]), what);
    }
  }
  assert.throws(() => ours.createRanges([[1]]), /array of \[from, to\]/);
  assert.throws(
    () =>
      ours.recordAdmission(
        { ranges: new Map([['o', { has() {} }]]), settled: new Map() },
        { origin: 'o', version: 1, hlc: { p: 1, l: 0 } },
      ),
    /ranges made by createRanges/,
  );
});

test('checkEnvelope matches the reference: the same verdicts from the same policy calls', () => {
  const policies = {
    none: () => undefined,
    empty: () => ({}),
    acl: (lib, log) =>
      lib.pathPrefixAcl([
        { prefix: ['notes'], allow: () => (log.push('allow notes'), true) },
        { prefix: ['a', '*'], allow: (ctx) => (log.push('allow a'), ctx.kind !== 'agent') },
      ]),
    both: (lib, log) => ({
      canWrite: (ctx, path, room, info) => (
        log.push(['canWrite', path, room, info]),
        path.length !== 1
      ),
      validate: (op, ctx) => (log.push(['validate', op.kind, ctx.writer]), op.kind !== 'clear'),
    }),
    validate: (lib, log) => ({
      validate: (op) => (log.push(['validate', op.path]), op.next !== 2),
    }),
  };
  let checked = 0;
  let violations = 0;
  for (let seed = FIRST; seed < FIRST + Math.min(SEEDS, 300); seed++) {
    for (const step of scenario(seed).steps) {
      if (step.t !== 'env') continue;
      const env = { ...step.env, instance: 'g' };
      if (reference.validateEnvelope(env) !== null) continue;
      for (const [name, make] of Object.entries(policies)) {
        for (const ctx of [
          { writer: env.writer, kind: 'agent' },
          { writer: env.writer },
          { writer: 'x' },
        ]) {
          const logs = [[], []];
          const results = [ours, reference].map((lib, i) =>
            lib.checkEnvelope(make(lib, logs[i]), env, ctx, 'r1', { seq: 3 }),
          );
          const what = `${name} ${JSON.stringify(ctx)} ${JSON.stringify(env)}`;
          assert.deepEqual(results[0], results[1], what);
          assert.deepEqual(logs[0], logs[1], what);
          checked++;
          if (results[1]) violations++;
        }
      }
    }
  }
  assert.ok(
    checked > 1000 && violations > 100 && violations < checked,
    `${violations} of ${checked}`,
  );
});

// createRegisterStore: both stores fold the same seeded envelopes, settle against the settled
// record the relay would keep (and against partial and arbitrary ones), reload their own
// checkpoints and reset; after every step their checkpoints, epochs and covers must agree.
test('createRegisterStore matches the reference over seeded envelopes, settles and reloads', () => {
  let compared = 0;
  let collected = 0;
  for (let seed = FIRST; seed < FIRST + Math.min(SEEDS, 150); seed++) {
    const r = rng(seed * 7919);
    const envs = scenario(seed)
      .steps.filter((s) => s.t === 'env')
      .map((s) => ({ ...s.env, instance: 'g', writer: 'w' }))
      .filter((env) => reference.validateEnvelope(env) === null);
    let stores = [ours.createRegisterStore(), reference.createRegisterStore()];
    const evidence = { ranges: new Map(), settled: new Map() };
    const paths = new Map();
    const dots = [];
    const compare = (what) => {
      const [a, b] = stores.map((s) => s.checkpoint());
      assert.deepEqual(a, b, `seed ${seed} ${what}: checkpoints`);
      for (const path of paths.values())
        assert.equal(stores[0].maxEpoch(path), stores[1].maxEpoch(path), `${what} ${path}`);
      for (const path of paths.values())
        for (const dot of dots.slice(-6))
          assert.equal(
            stores[0].covers(path, dot),
            stores[1].covers(path, dot),
            `seed ${seed} ${what}: covers ${JSON.stringify([path, dot])}`,
          );
      compared++;
    };
    for (const [i, env] of envs.entries()) {
      for (const op of env.ops) {
        paths.set(JSON.stringify(op.path), op.path);
        for (const c of op.cites ?? []) dots.push(c);
      }
      dots.push({ origin: env.origin, hlc: env.hlc });
      for (const s of stores) s.ingest(env);
      reference.recordAdmission(evidence, env);
      compare(`ingest ${i}`);
      const roll = r.next();
      if (roll < 0.35) {
        const before = JSON.stringify(stores[1].checkpoint());
        const settled = Object.fromEntries(evidence.settled);
        for (const s of stores) s.settle(settled);
        if (JSON.stringify(stores[1].checkpoint()) !== before) collected++;
        compare(`settle ${i} ${JSON.stringify(settled)}`);
      } else if (roll < 0.45) {
        // A partial record, and a stamp beyond anything admitted: only named origins move.
        const [origin] = r.pick([...evidence.settled]) ?? ['o1'];
        const settled = { [origin]: r.chance(0.5) ? { p: 1e9, l: 0 } : env.hlc };
        for (const s of stores) s.settle(settled);
        compare(`partial settle ${i} ${JSON.stringify(settled)}`);
      } else if (roll < 0.55) {
        const checkpoint = stores[1].checkpoint();
        stores = [ours.createRegisterStore(), reference.createRegisterStore()];
        for (const s of stores) s.load(checkpoint);
        compare(`reload ${i}`);
        for (const s of stores) s.load(checkpoint);
        compare(`load again ${i}`);
      } else if (roll < 0.58) {
        for (const s of stores) s.reset();
        compare(`reset ${i}`);
      }
    }
  }
  assert.ok(compared > 1000 && collected > 40, `${compared} compared, ${collected} collected`);
});

test('createRegisterStore refuses bad input by name and changes nothing', () => {
  const store = ours.createRegisterStore();
  const env = {
    proto: 3,
    instance: 'g',
    origin: 'o1',
    writer: 'w',
    version: 1,
    hlc: { p: 5, l: 0 },
    policyVersion: 0,
    ops: [{ kind: 'set', path: ['a'], next: 1, cites: [], epoch: 2 }],
  };
  store.ingest(env);
  const before = JSON.stringify(store.checkpoint());
  assert.throws(() => store.ingest({ ...env, hlc: 'x' }), /well-formed envelope .*hlc/);
  assert.throws(() => store.ingest(null), /well-formed envelope/);
  assert.throws(() => store.load([{ path: 'a', siblings: [] }]), /what checkpoint\(\) returns/);
  assert.throws(() => store.load({}), /what checkpoint\(\) returns/);
  assert.throws(() => store.settle({ o1: { p: 'x' } }), /origin to \{p, l\}/);
  assert.throws(() => store.settle([]), /origin to \{p, l\}/);
  assert.throws(() => store.maxEpoch('a'), /path \(an array\)/);
  assert.throws(() => store.covers(['a'], { origin: 'o1' }), /dot \{origin, hlc/);
  assert.equal(JSON.stringify(store.checkpoint()), before);
  assert.equal(store.maxEpoch(['a']), 2);
  assert.equal(store.covers(['a'], { origin: 'o1', hlc: { p: 5, l: 0 } }), true);
  assert.equal(store.covers(['a'], { origin: 'o1', hlc: { p: 5, l: 1 } }), false);
});
