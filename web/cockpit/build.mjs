// Bundles the cockpit with esbuild into build/cockpit/: cockpit.js (app + glue + the cockpit
// module's JS), chunks/ (what loads later: three.js with the 3D map), tether-cockpit.wasm beside
// it (the module with only the cockpit's bindings, wasm/module.cmake), index.html and cockpit.css.
// Prints what the first load fetches.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = join(here, '../..');
const out = join(root, 'build/cockpit');
rmSync(join(out, 'chunks'), { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: { cockpit: join(here, 'src/main.js') },
  bundle: true,
  format: 'esm',
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  outdir: out,
  logLevel: 'warning',
  metafile: true,
  // Stylesheets a lazily loaded panel brings (uPlot's) are injected by that panel as text.
  loader: { '.css': 'text' },
});
copyFileSync(join(root, 'build/wasm/tether-cockpit.wasm'), join(out, 'tether-cockpit.wasm'));
copyFileSync(join(here, 'index.html'), join(out, 'index.html'));
copyFileSync(join(here, 'cockpit.css'), join(out, 'cockpit.css'));
const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
const gz = (f) => gzipSync(readFileSync(join(out, f)), { level: 9 }).length;
// The first load: the entry, the chunks it imports statically, and the module's .wasm.
const outputs = result.metafile.outputs;
const entry = Object.keys(outputs).find((f) => outputs[f].entryPoint);
const first = [
  entry,
  ...outputs[entry].imports.filter((i) => i.kind === 'import-statement').map((i) => i.path),
]
  .map((f) => relative(out, resolve(f)))
  .concat('tether-cockpit.wasm');
console.log(
  `[build] cockpit: first load ${first.map((f) => `${f} ${kib(statSync(join(out, f)).size)}`).join(' + ')} ` +
    `(${kib(first.reduce((n, f) => n + gz(f), 0))} gzip); 3D map in chunks/ -> build/cockpit/`,
);
