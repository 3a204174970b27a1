// Shared folders (agent-bus-and-swarm.md § Security boundary): a listing applies the same
// real-path containment rule as a pull. Links that stay inside the share are usable (directory
// links too); broken, inaccessible or escaping entries are omitted, and the listing goes on.
// The bounds, the share-name rule and the list-files answer's shape are the bus core's
// (src/bus/shares.hpp, limits.hpp); what is read here is the folder.
import fs from 'node:fs';
import path from 'node:path';
import { loadedBus } from './envelope.js';

function inside(root, real) {
  return real === root || real.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

/**
 * Resolves `rel` inside the share rooted at `root` (already a real path). Returns the real path,
 * or {error} when it escapes, is broken or cannot be read. This is the pull rule too.
 */
export function resolveInShare(root, rel) {
  if (typeof rel !== 'string' || rel.includes('\u0000')) return { error: 'bad path' };
  const joined = path.resolve(root, '.' + path.sep + rel);
  if (!inside(root, joined)) return { error: `'${rel}' is outside the share` };
  let real;
  try {
    real = fs.realpathSync(joined);
  } catch (err) {
    return {
      error:
        err.code === 'ENOENT'
          ? `'${rel}' does not exist (or is a broken link)`
          : `'${rel}' cannot be read (${err.code})`,
    };
  }
  if (!inside(root, real)) return { error: `'${rel}' leads outside the share` };
  return { real };
}

/**
 * Lists a share recursively from `sub`. Returns {entries: [{path, type, size}], omitted:
 * [{path, reason}], truncated}. Never throws for a bad entry: it is omitted with its reason.
 */
export function listShare(rootDir, sub = '') {
  const { shareListMaxEntries, shareListMaxDepth } = loadedBus().limits;
  let root;
  try {
    root = fs.realpathSync(rootDir);
  } catch (err) {
    return {
      error: `the share folder ${rootDir} cannot be opened (${err.code}); re-add it with \`tether agent share add\``,
    };
  }
  const start = resolveInShare(root, sub);
  if (start.error) return { error: start.error };
  const entries = [];
  const omitted = [];
  let truncated = false;
  const seen = new Set(); // real dirs walked: directory links cannot loop
  const walk = (realDir, relDir, depth) => {
    if (seen.has(realDir)) return;
    seen.add(realDir);
    let names;
    try {
      names = fs.readdirSync(realDir).sort();
    } catch (err) {
      omitted.push({ path: relDir || '.', reason: `cannot be read (${err.code})` });
      return;
    }
    for (const n of names) {
      if (entries.length >= shareListMaxEntries) {
        truncated = true;
        return;
      }
      const rel = relDir ? `${relDir}/${n}` : n;
      let real;
      try {
        real = fs.realpathSync(path.join(realDir, n));
      } catch (err) {
        omitted.push({
          path: rel,
          reason: err.code === 'ENOENT' ? 'broken link' : `cannot be resolved (${err.code})`,
        });
        continue;
      }
      if (!inside(root, real)) {
        omitted.push({ path: rel, reason: 'leads outside the share' });
        continue;
      }
      let st;
      try {
        st = fs.statSync(real);
      } catch (err) {
        omitted.push({ path: rel, reason: `cannot be read (${err.code})` });
        continue;
      }
      if (st.isDirectory()) {
        try {
          fs.accessSync(real, fs.constants.R_OK | fs.constants.X_OK);
        } catch (err) {
          omitted.push({ path: rel, reason: `cannot be read (${err.code})` });
          continue;
        }
        entries.push({ path: rel, type: 'dir' });
        if (depth < shareListMaxDepth) walk(real, rel, depth + 1);
      } else if (st.isFile()) {
        try {
          fs.accessSync(real, fs.constants.R_OK);
        } catch (err) {
          omitted.push({ path: rel, reason: `cannot be read (${err.code})` });
          continue;
        }
        entries.push({ path: rel, type: 'file', size: st.size });
      } else {
        omitted.push({ path: rel, reason: 'not a regular file or folder' });
      }
    }
  };
  // The start's ancestors count as walked: a link back up (e.g. to '..') is listed, not re-entered.
  for (let p = path.dirname(start.real); inside(root, p) && p !== start.real; p = path.dirname(p)) {
    seen.add(p);
    if (p === root) break;
  }
  walk(start.real, sub.replace(/^\/+|\/+$/g, ''), 0);
  return { root, entries, omitted, truncated };
}

/**
 * One level of a share for the `list-files {share, path?}` command: the children of `rel` that
 * stay inside the share, read here (escaping, broken or unreadable ones are left out and counted
 * in `omitted`, never fatal), and the answer built by the bus core (`listFilesResult`: the public
 * implementation's shape, order and cap).
 * @param {import('../glue/bus.d.ts').BusApi} api
 */
export function listShareLevel(api, rootDir, share, rel = '') {
  let root;
  try {
    root = fs.realpathSync(rootDir);
  } catch (err) {
    return { error: `share '${share}' is not available (${err.code})` };
  }
  // `rel` as the bus core read it (parseShareCommand: share_path in src/bus/shares.hpp).
  const start = resolveInShare(root, rel);
  if (start.error) return { error: start.error };
  let names;
  try {
    if (!fs.statSync(start.real).isDirectory()) return { error: `'${rel}' is not a folder` };
    names = fs.readdirSync(start.real);
  } catch (err) {
    return { error: `'${rel || '.'}' cannot be read (${err.code})` };
  }
  const entries = [];
  let omitted = 0;
  for (const name of names) {
    const at = name.isWellFormed() ? resolveInShare(root, rel ? `${rel}/${name}` : name) : null;
    let st = null;
    try {
      if (at && !at.error) st = fs.statSync(at.real);
    } catch {}
    if (!st || (!st.isDirectory() && !st.isFile())) {
      omitted++;
      continue;
    }
    entries.push({ name, dir: st.isDirectory(), size: st.isFile() ? st.size : 0 });
  }
  return api.listFilesResult(share, rel, entries, omitted);
}
