// tsc --checkJs over web/ against its .d.ts files (tsconfig.json), as a ratchet: a file listed in
// tools/tsc-baseline.json may keep at most the errors it had when checking began; every other file
// must have none. `node tools/typecheck.mjs --update` rewrites the baseline after errors are fixed
// (it refuses to raise a count); `--init` started it.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const BASELINE = 'tools/tsc-baseline.json';
const update = process.argv.includes('--update');
// --init takes today's errors as the baseline: only for starting the ratchet, never to hide one.
const init = process.argv.includes('--init');

const run = spawnSync('node_modules/.bin/tsc', ['-p', 'tsconfig.json', '--pretty', 'false'], {
  encoding: 'utf8',
  maxBuffer: 64 << 20,
});
if (run.error) {
  console.error(`  tsc did not run (${run.error.message}): run 'make setup' to install it`);
  process.exit(1);
}
const errors = new Map(); // file -> [first lines of its errors]
for (const line of run.stdout.split('\n')) {
  const m = /^(.+?)\(\d+,\d+\): error TS\d+/.exec(line);
  if (!m) continue;
  if (!errors.has(m[1])) errors.set(m[1], []);
  errors.get(m[1]).push(line);
}
if (run.status !== 0 && errors.size === 0) {
  console.error(`  tsc failed without a per-file error:\n${run.stdout}${run.stderr}`);
  process.exit(1);
}

const baseline = JSON.parse(readFileSync(BASELINE, 'utf8'));
const worse = [];
const better = [];
for (const [file, list] of errors) {
  const allowed = baseline[file] ?? 0;
  if (list.length > allowed && !init) worse.push({ file, list, allowed });
}
for (const [file, allowed] of Object.entries(baseline)) {
  const now = errors.get(file)?.length ?? 0;
  if (now < allowed) better.push({ file, now, allowed });
}

if (update || init) {
  if (worse.length) {
    console.error('  refusing to raise the baseline; fix these first:');
  } else {
    const next = Object.fromEntries([...errors].map(([f, l]) => [f, l.length]).sort());
    writeFileSync(BASELINE, JSON.stringify(next, null, 2) + '\n');
    console.log(
      `  baseline now ${errors.size} files, ${run.stdout.match(/error TS/g)?.length ?? 0} errors`,
    );
  }
}
for (const { file, list, allowed } of worse) {
  console.error(`  ${file}: ${list.length} type errors (allowed ${allowed})`);
  for (const line of list.slice(0, 8)) console.error(`    ${line}`);
}
if (worse.length) {
  console.error(
    '  fix: correct the JS or its .d.ts (the types users read), then run make lint again',
  );
  process.exit(1);
}
if (!update && better.length) {
  const files = better.map((b) => `${b.file} (${b.allowed} -> ${b.now})`).join(', ');
  console.log(
    `  fewer type errors than the baseline in ${files}: run 'node tools/typecheck.mjs --update'`,
  );
}
const total = [...errors.values()].reduce((n, l) => n + l.length, 0);
console.log(`  ${total} known type errors left in ${errors.size} files (tools/tsc-baseline.json)`);
