// bench/targets.mjs, the table at the end of `make bench`: a bench that records targets but
// recorded none in this run (it skipped itself, or stopped before its figures) is named as
// NOT RECORDED and counted as missed, never just left out of the table.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const table = (lines) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tether-targets-'));
  const file = path.join(dir, 'targets.jsonl');
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  try {
    return execFileSync(process.execPath, ['bench/targets.mjs'], {
      env: { ...process.env, TETHER_BENCH_TARGETS: file },
      encoding: 'utf8',
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

const benchesWithTargets = fs
  .readdirSync('bench')
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => fs.readFileSync(path.join('bench', f), 'utf8').includes('./lib/targets.mjs'));

test('a bench that recorded no target is named and counted as missed', () => {
  assert.ok(benchesWithTargets.includes('bus.bench.mjs') && benchesWithTargets.length > 2);
  const out = table([
    {
      bench: 'bus.bench.mjs',
      row: 'bus receive chat',
      figure: 1.2,
      target: '>= 1',
      met: true,
      unit: 'x',
    },
  ]);
  assert.match(out, new RegExp(`1 of ${benchesWithTargets.length} met`));
  assert.match(out, /bus receive chat\s+1\.20x\s+>= 1\s+met/);
  assert.doesNotMatch(out, /bus\.bench\.mjs\s+-\s+NOT RECORDED/);
  for (const f of benchesWithTargets.filter((b) => b !== 'bus.bench.mjs'))
    assert.match(out, new RegExp(`${f.replace('.', '\\.')}\\s+-\\s+NOT RECORDED`), f);
});

test('every bench recorded: no NOT RECORDED line', () => {
  const out = table(
    benchesWithTargets.map((bench) => ({
      bench,
      row: bench,
      figure: 2,
      target: '>= 1',
      met: true,
      unit: 'x',
    })),
  );
  assert.doesNotMatch(out, /NOT RECORDED/);
  assert.match(out, new RegExp(`${benchesWithTargets.length} of ${benchesWithTargets.length} met`));
});
