// Deploys the edge, every Worker (web/edge/workers.mjs) in the order their bindings need: the
// mailbox and cockpit relay Workers, then the rooms Worker, the public front door that binds them.
// One command for the whole edge (README.md § Deploy at the edge), with the pinned wrangler
// (web/edge/wrangler-cli.mjs); needs `make wasm cockpit` first (`make edge-deploy` runs both).
//
//   node web/edge/deploy.mjs [--dry-run --outdir DIR]   (any other arguments go to each deploy)
// With --dry-run nothing is uploaded: each Worker is bundled into DIR/<name> and its size printed,
// offline. A real deploy runs wrangler in your own environment, so it uses your login
// (`node node_modules/wrangler/wrangler-dist/cli.js login`) or CLOUDFLARE_API_TOKEN and
// CLOUDFLARE_ACCOUNT_ID, and may ask you things on the terminal.
import { join, resolve } from 'node:path';
import { EDGE_WORKERS, dryRun, uploadLine } from './workers.mjs';
import { LOGIN_HINT, runWranglerAsUser } from './wrangler-cli.mjs';

const args = process.argv.slice(2);
const at = args.indexOf('--outdir');
const outdir = at >= 0 ? resolve(args.splice(at, 2)[1]) : null;
const dry = args.includes('--dry-run');

if (dry) {
  if (!outdir) {
    console.error(
      'tether edge deploy: --dry-run needs --outdir DIR (each Worker bundles into DIR/<name>)',
    );
    process.exit(2);
  }
  for (const w of EDGE_WORKERS) console.log(uploadLine(await dryRun(w, join(outdir, w.name))));
  process.exit(0);
}

for (const [i, w] of EDGE_WORKERS.entries()) {
  console.log(`tether edge deploy: ${i + 1}/${EDGE_WORKERS.length} ${w.name} (${w.config})`);
  const code = await runWranglerAsUser(['deploy', '-c', w.config, ...args]);
  if (code !== 0) {
    const left = EDGE_WORKERS.slice(i + 1).map((o) => o.name);
    console.error(
      `tether edge deploy: wrangler deploy -c ${w.config} failed (exit ${code}); ` +
        (left.length ? `not deployed: ${left.join(', ')}. ` : '') +
        `Fix what wrangler said above and run this again: deploying a Worker again is safe. ${LOGIN_HINT}`,
    );
    process.exit(code);
  }
}
console.log('tether edge deploy: every Worker is deployed; the rooms Worker serves every route');
