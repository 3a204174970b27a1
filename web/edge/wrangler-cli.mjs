// How this repository runs its pinned wrangler (package.json devDependencies, the lockfile holds
// the exact version) without the network: `make edge-dev` (web/edge/dev.mjs) and the deploy dry
// run in `make test` (tests/package/wrangler.test.mjs) both start it through here.
//
// It runs wrangler's bundled CLI (wrangler-dist/cli.js) with this Node rather than through
// `npx wrangler`: the npm launcher (bin/wrangler.js) refuses any Node before 22, and this
// project's machines run Node 20, on which the CLI itself does `deploy --dry-run` and `dev`.
// Where you deploy, with Node 22 or newer, `npx wrangler` runs the same pinned version.
import { fileURLToPath } from 'node:url';

export const repoDir = fileURLToPath(new URL('../../', import.meta.url));
export const wranglerCli = fileURLToPath(
  new URL('../../node_modules/wrangler/wrangler-dist/cli.js', import.meta.url),
);

/** What keeps wrangler offline and quiet (no metrics, no Request.cf fetch, no banner, no prompts). */
export const OFFLINE_ENV = Object.freeze({
  WRANGLER_SEND_METRICS: 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  WRANGLER_HIDE_BANNER: 'true',
  CI: 'true',
});

/**
 * The command line for `wrangler <args>`: [executable, argv], to pass to spawn or execFile with
 * `env: wranglerEnv(extra)`.
 * @param {string[]} args
 * @returns {[string, string[]]}
 */
export function wranglerCommand(args) {
  return [process.execPath, ['--no-warnings', wranglerCli, ...args]];
}

/** @param {Record<string, string>} [extra] */
export function wranglerEnv(extra = {}) {
  return { ...process.env, ...OFFLINE_ENV, ...extra };
}
