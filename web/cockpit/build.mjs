// Bundles the cockpit with esbuild into build/cockpit/: cockpit.js (app + glue + the module's JS),
// tether.wasm beside it, index.html and cockpit.css. Prints what it shipped.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = join(here, '../..');
const out = join(root, 'build/cockpit');
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(here, 'src/main.js')],
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  outfile: join(out, 'cockpit.js'),
  logLevel: 'warning',
});
copyFileSync(join(root, 'build/wasm/tether.wasm'), join(out, 'tether.wasm'));
copyFileSync(join(here, 'index.html'), join(out, 'index.html'));
copyFileSync(join(here, 'cockpit.css'), join(out, 'cockpit.css'));
const kib = (f) => (statSync(join(out, f)).size / 1024).toFixed(0);
console.log(`[build] cockpit: cockpit.js ${kib('cockpit.js')} KiB + tether.wasm ${kib('tether.wasm')} KiB -> build/cockpit/`);
