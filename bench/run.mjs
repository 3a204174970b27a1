// `make bench`: runs every bench/*.bench.mjs in turn, each in its own Node process (so one
// benchmark's heap and JIT state cannot colour the next), and fails if any of them fails.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
let failed = 0;
for (const file of readdirSync(dir).filter((f) => f.endsWith('.bench.mjs')).sort()) {
  console.log(`\n[bench] ${file}`);
  const r = spawnSync(process.execPath, [fileURLToPath(new URL(file, import.meta.url)), ...process.argv.slice(2)], { stdio: 'inherit' });
  if (r.status !== 0) {
    failed++;
    console.error(`[bench] ${file} failed (${r.status ?? r.signal})`);
  }
}
process.exit(failed ? 1 : 0);
