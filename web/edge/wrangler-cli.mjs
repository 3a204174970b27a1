// How this repository runs its pinned wrangler (package.json devDependencies, the lockfile holds
// the exact version) without the network: `make edge-dev` (web/edge/dev.mjs) and the deploy dry
// run in `make test` (tests/package/wrangler.test.mjs) both start it through here.
//
// It runs wrangler's bundled CLI (wrangler-dist/cli.js) with this Node rather than through
// `npx wrangler`: the npm launcher (bin/wrangler.js) refuses any Node before 22, and this
// project's machines run Node 20, on which the CLI itself does `deploy --dry-run` and `dev`.
// Where you deploy, with Node 22 or newer, `npx wrangler` runs the same pinned version.
//
// Two ways to run it: offline (wranglerEnv: `dev`, `deploy --dry-run`, the tests), and as the user
// (runWranglerAsUser: a real deploy, `secret put`), which talks to their Cloudflare account and
// so keeps their environment: their login or CLOUDFLARE_API_TOKEN, and prompts on their terminal.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const repoDir = fileURLToPath(new URL('../../', import.meta.url));
export const wranglerCli = fileURLToPath(
  new URL('../../node_modules/wrangler/wrangler-dist/cli.js', import.meta.url),
);

/**
 * What keeps wrangler offline and quiet (no metrics, no Request.cf fetch, no banner, no prompts):
 * for the offline runs only, since with CI=true wrangler cannot log in.
 */
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

/** What a run as the user says when wrangler failed: how to log in. */
export const LOGIN_HINT =
  'Not logged in? `node node_modules/wrangler/wrangler-dist/cli.js login`, or set ' +
  'CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID.';

/**
 * Runs `wrangler <args>` as the user would from their shell, for what reaches their Cloudflare
 * account: their own environment (no OFFLINE_ENV, so wrangler may prompt, use the login that
 * `wrangler login` stored, or CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID), on their terminal.
 * Resolves with wrangler's exit code.
 * @param {string[]} args
 * @returns {Promise<number>}
 */
export function runWranglerAsUser(args) {
  if (!existsSync(wranglerCli)) {
    console.error(`tether: ${wranglerCli} is missing: run \`make setup\` (npm ci) first`);
    return Promise.resolve(1);
  }
  const [cmd, argv] = wranglerCommand(args);
  return new Promise((done) => {
    const child = spawn(cmd, argv, { cwd: repoDir, stdio: 'inherit' });
    child.once('error', (e) => {
      console.error(`tether: could not start wrangler: ${e.message}`);
      done(1);
    });
    child.once('exit', (c) => done(c ?? 1));
  });
}
