// The shared-folder commands a peer may send us (agent-bus-notes.md § Bus messages), answered as
// the public implementation answers them, so a ninja-p2p agent can browse and fetch our shares:
//
//   command {command: 'shares'}                        -> command_response {shares: [{name}]}
//   command {command: 'list-files', args: {share, path?}} -> command_response {share, path, entries, truncated}
//   command {command: 'get-file', args: {share, path}}  -> file_offer, file_chunk..., file_complete,
//                                                          then command_response {transferId, ...}
//
// The bus core says which envelopes these are and checks their arguments (parseShareCommand);
// the folders are read here with the real-path containment of share.js; pull.js sends files.
import { listShareLevel } from './share.js';

/** The share called `name` (matched case-insensitively, as the public implementation does). */
export function findShare(shares, name) {
  const want = String(name).toLowerCase();
  for (const [n, dir] of Object.entries(shares ?? {}))
    if (n.toLowerCase() === want) return { name: n, dir };
  return null;
}

/**
 * Answers `env` when it is a share command; returns whether it was one (then it is not mail).
 * @param {object} o
 * @param {import('../glue/bus.d.ts').BusApi} o.api
 * @param {(env: object, outcome: {result?: unknown} | {error: string}) => unknown} o.respond
 * @param {() => Record<string, string>} o.shares name -> folder
 * @param {{serve(peer: string, env: object, cmd: {share: string, path: string}): Promise<unknown>} | null} o.pulls
 * @param {{room?: string, identity?: object}} [o.about] what `shares` names us by
 * @param {(line: string) => void} [o.log]
 */
export function answerShareCommand(
  { api, respond, shares, pulls, about = {}, log = () => {} },
  peer,
  env,
) {
  const cmd = api.parseShareCommand(env);
  if (cmd === null) return false;
  if (cmd.ok === false) {
    respond(env, { error: cmd.detail });
    return true;
  }
  const all = shares();
  if (cmd.command === 'shares') {
    respond(env, {
      result: {
        ...about,
        shares: Object.keys(all)
          .sort()
          .map((name) => ({ name })),
      },
    });
    return true;
  }
  const share = findShare(all, cmd.share);
  if (!share) {
    respond(env, { error: `unknown share: ${cmd.share}` });
    return true;
  }
  if (cmd.command === 'list-files') {
    const listing = listShareLevel(api, share.dir, share.name, cmd.path);
    respond(env, 'error' in listing ? { error: listing.error } : { result: listing });
    return true;
  }
  if (!pulls) {
    respond(env, { error: 'this agent cannot send files (tether/bus is not built into it)' });
    return true;
  }
  pulls
    .serve(peer, env, { share: share.name, path: cmd.path })
    .catch((err) => log(`serving ${share.name}/${cmd.path} failed: ${err.stack ?? err}`));
  return true;
}
