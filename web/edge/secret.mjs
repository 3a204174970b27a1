// Puts a secret on one of the edge Workers with the pinned wrangler, the way a real deploy runs it
// (web/edge/deploy.mjs: wrangler's own CLI on this Node, in your environment; `npx wrangler`
// would need Node 22). README.md § Deploy at the edge.
//
//   node web/edge/secret.mjs NAME [--config FILE] [other wrangler arguments]
//   make edge-secret NAME=... [CONFIG=FILE]
// wrangler asks for the value on the terminal, or reads it from stdin when piped
// (`openssl rand -hex 32 | make edge-secret NAME=TICKET_SECRET`). Without --config the secret goes
// to the Worker that reads it (SECRETS below).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EDGE_WORKERS } from './workers.mjs';
import { LOGIN_HINT, repoDir, runWranglerAsUser } from './wrangler-cli.mjs';

/** Each secret an edge Worker reads, and the config of that Worker. */
export const SECRETS = Object.freeze({
  TICKET_SECRET: 'web/edge/wrangler.toml', // the rooms Worker: the secret tickets are minted with
  COCKPIT_AUTH: 'web/edge/cockpit.wrangler.toml', // the cockpit relay's auth JSON (as --auth)
  COCKPIT_RTC: 'web/edge/cockpit.wrangler.toml', // Cloudflare Realtime's ids (as --rtc-file)
});

const usage =
  'usage: node web/edge/secret.mjs NAME [--config FILE]  (or make edge-secret NAME=... [CONFIG=FILE]); ' +
  `NAME is one of ${Object.keys(SECRETS).join(', ')}, or any name with --config`;

const args = process.argv.slice(2);
let config = null;
for (const flag of ['--config', '-c']) {
  const at = args.indexOf(flag);
  if (at >= 0) [, config] = args.splice(at, 2);
}
const name = args.shift();
if (config === undefined) {
  console.error(`tether edge secret: --config needs a FILE; ${usage}`);
  process.exit(2);
}
if (!name || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
  console.error(`tether edge secret: ${name ? `not a secret name: ${name}; ` : ''}${usage}`);
  process.exit(2);
}
const home = Object.hasOwn(SECRETS, name) ? SECRETS[/** @type {keyof SECRETS} */ (name)] : null;
if (!config && !home) {
  console.error(
    `tether edge secret: no Worker reads ${name}; name its config with --config FILE. ${usage}`,
  );
  process.exit(2);
}
// A --config path is the caller's (from where they ran this); the defaults are the repository's.
const file = config ? resolve(config) : join(repoDir, /** @type {string} */ (home));
config ??= /** @type {string} */ (home);
if (!existsSync(file)) {
  console.error(
    `tether edge secret: no wrangler config ${file} (the edge Workers' configs: ` +
      `${EDGE_WORKERS.map((w) => w.config).join(', ')})`,
  );
  process.exit(2);
}
if (home && join(repoDir, home) !== file)
  console.error(
    `tether edge secret: warning: ${name} is read by the Worker of ${home}, not ${config}`,
  );

console.log(`tether edge secret: wrangler secret put ${name} -c ${config}`);
const code = await runWranglerAsUser(['secret', 'put', name, '-c', file, ...args]);
if (code !== 0)
  console.error(
    `tether edge secret: wrangler secret put ${name} -c ${config} failed (exit ${code}). ` +
      `${LOGIN_HINT} Is the Worker deployed (make edge-deploy)?`,
  );
process.exit(code);
