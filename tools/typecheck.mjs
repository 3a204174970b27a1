// tsc --checkJs over web/ against its .d.ts files (tsconfig.json): `make lint` fails on any type
// error. tools/tsc-baseline.json is the ratchet that brought web/ to zero (errors per file a file
// could keep while checking began); it is empty now, so every error fails, and it can only shrink:
// `node tools/typecheck.mjs --update` rewrites it after errors are fixed and refuses to raise a
// count.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const BASELINE = 'tools/tsc-baseline.json';
const SHOWN_PER_FILE = 20;
const update = process.argv.includes('--update');

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
  console.error(
    `  tsc failed without a per-file error (tsconfig.json itself?):\n${run.stdout}${run.stderr}`,
  );
  process.exit(1);
}

const baseline = JSON.parse(readFileSync(BASELINE, 'utf8'));
const worse = [];
const better = [];
for (const [file, list] of errors) {
  const allowed = baseline[file] ?? 0;
  if (list.length > allowed) worse.push({ file, list, allowed });
}
for (const [file, allowed] of Object.entries(baseline)) {
  const now = errors.get(file)?.length ?? 0;
  if (now < allowed) better.push({ file, now, allowed });
}

if (update) {
  if (worse.length) {
    console.error('  refusing to raise the baseline; fix these first:');
  } else {
    const next = Object.fromEntries([...errors].map(([f, l]) => [f, l.length]).sort());
    writeFileSync(BASELINE, JSON.stringify(next, null, 2) + '\n');
    console.log(`  baseline now ${errors.size} files`);
  }
}
for (const { file, list, allowed } of worse) {
  const over = allowed ? ` (the baseline allows ${allowed})` : '';
  console.error(`  ${file}: ${list.length} type error${list.length === 1 ? '' : 's'}${over}`);
  for (const line of list.slice(0, SHOWN_PER_FILE)) console.error(`    ${line}`);
  if (list.length > SHOWN_PER_FILE) console.error(`    ... ${list.length - SHOWN_PER_FILE} more`);
}
if (worse.length) {
  console.error(
    "  fix: give the JS the types it means (JSDoc @param/@returns/@typedef, a /** @type {X} */ (cast)) or correct the .d.ts beside it (the types users read), or the code when tsc found a bug; never @ts-ignore. 'node_modules/.bin/tsc -p tsconfig.json' shows each error in full",
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
if (total === 0) console.log('  no type errors in web/');
else console.log(`  ${total} type errors left in ${errors.size} files (tools/tsc-baseline.json)`);
