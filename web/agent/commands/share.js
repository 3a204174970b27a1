// `tether agent share ...`: the folders this agent lets peers pull from (shares.json in the state
// dir; listings apply the pull's real-path containment: web/agent/share.js).
import fs from 'node:fs';
import { stateDirs } from '../store.js';
import { readJson, writeJson } from '../state.js';
import { listShare } from '../share.js';
import { loadedBus } from '../envelope.js';
import { fail, usage } from '../cli/context.js';

function load(dir) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = stateDirs(dir).shares;
  return { file, shares: readJson(file) ?? {} };
}

function known(shares, name) {
  if (!(name in shares)) fail(`no share named '${name}'; see \`tether agent share list\``);
  return shares[name];
}

export default {
  name: 'share',
  summary: 'folders peers may pull files from',
  defaultSub: 'list',
  subcommands: [
    {
      name: 'add',
      usage: 'NAME DIR',
      summary: 'share DIR as NAME',
      run({ dir, pos, out }) {
        const [name, arg] = pos;
        if (!loadedBus().validShareName(name))
          usage(
            `share add NAME DIR: NAME is letters, digits, ".", "_" or "-" (at most ${loadedBus().limits.maxShareNameChars}), and not "." or ".."`,
          );
        if (!arg) usage('share add NAME DIR: give the folder to share');
        let real;
        try {
          real = fs.realpathSync(arg);
        } catch (err) {
          fail(`cannot share ${arg}: ${err.code === 'ENOENT' ? 'it does not exist' : err.code}`);
        }
        if (!fs.statSync(real).isDirectory()) fail(`cannot share ${arg}: it is not a folder`);
        const { file, shares } = load(dir);
        shares[name] = real;
        writeJson(file, shares);
        out({ ok: true, name, path: real }, `sharing ${real} as '${name}'`);
      },
    },
    {
      name: 'rm',
      usage: 'NAME',
      summary: 'stop sharing NAME',
      run({ dir, pos, out }) {
        const [name] = pos;
        const { file, shares } = load(dir);
        known(shares, name);
        delete shares[name];
        writeJson(file, shares);
        out({ ok: true, name }, `stopped sharing '${name}'`);
      },
    },
    {
      name: 'list',
      usage: '',
      summary: 'our shares and their folders',
      run({ dir, out }) {
        const { shares } = load(dir);
        out(
          { ok: true, shares },
          Object.entries(shares)
            .map(([n, p]) => `${n}\t${p}`)
            .join('\n') || '(no shares)',
        );
      },
    },
    {
      name: 'ls',
      usage: 'NAME [SUBPATH]',
      summary: 'what peers see in a share (escaping, broken and unreadable links omitted)',
      run({ dir, pos, out }) {
        const [name, sub] = pos;
        const { shares } = load(dir);
        const r = listShare(known(shares, name), sub ?? '');
        if (r.error) fail(r.error);
        out(
          { ok: true, name, ...r },
          [
            ...r.entries.map((e) => (e.type === 'dir' ? `${e.path}/` : `${e.path}\t${e.size}`)),
            ...(r.omitted.length
              ? [
                  `(${r.omitted.length} entr${r.omitted.length === 1 ? 'y' : 'ies'} omitted: ${r.omitted.map((o) => `${o.path}: ${o.reason}`).join('; ')})`,
                ]
              : []),
          ].join('\n'),
        );
      },
    },
  ],
};
