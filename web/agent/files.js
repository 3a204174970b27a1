// Files arriving on this machine, whichever path brought them (a pull, a swarm fetch, a local
// copy of a file we already hold): never over an existing file, moved into place only complete
// and verified, and with the same mode (0666 less the umask, as any new file).
import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { safeFileName } from '../peer/storage-node.js';

/**
 * A peer-supplied file name reduced to one harmless path component the disk takes: names of up
 * to 1,024 characters arrive (agent-bus-notes.md § Sizes), cut as the swarm folder cuts them
 * (web/peer/storage-node.js).
 */
export function safeName(name) {
  const base = path.basename(String(name ?? '')).replace(/[\u0000-\u001f\u007f/\\]/g, '_');
  return base === '' || base === '.' || base === '..' || base.startsWith('.tether-part-')
    ? 'file'
    : safeFileName(base);
}

/** Moves `part` to `dir/name` without ever replacing a file: "name (1).ext" etc. when taken. */
export function placeExclusive(part, dir, name) {
  const ext = path.extname(name);
  const stem = name.slice(0, name.length - ext.length) || 'file';
  for (let i = 0; i < 1000; i++) {
    const target = path.join(dir, i === 0 ? name : `${stem} (${i})${ext}`);
    try {
      fs.linkSync(part, target);
      return target;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
  }
  throw new Error(`${dir} already holds 1000 files named like ${name}; clear some out`);
}

/**
 * Copies `src` into `dir` as `name` (never overwriting: "name (1)" etc.), hashing as it reads;
 * the copy is moved into place only if its SHA-256 is `sha256`.
 * @returns {Promise<{name: string, size: number, sha256: string, path: string}>}
 */
export async function copyVerified(src, sha256, dir, name) {
  const part = path.join(dir, `.tether-part-copy-${randomBytes(6).toString('hex')}`);
  const hash = createHash('sha256');
  let size = 0;
  try {
    await /** @type {Promise<void>} */ (
      new Promise((resolve, reject) => {
        const from = fs.createReadStream(src);
        const to = fs.createWriteStream(part, { flags: 'wx', mode: 0o666 });
        from.on('data', (c) => {
          hash.update(c);
          size += c.length;
        });
        from.on('error', reject);
        to.on('error', reject);
        to.on('finish', resolve);
        from.pipe(to);
      })
    );
    const got = hash.digest('hex');
    if (got !== sha256)
      throw new Error(
        `${src} no longer holds ${sha256} (changed or deleted since it was offered or fetched); restart the sidecar (\`tether agent leave\`, then \`join\`) to fetch it from the room again`,
      );
    const saved = placeExclusive(part, dir, safeName(name));
    return { name: path.basename(saved), size, sha256: got, path: saved };
  } catch (err) {
    if (err.code === 'ENOENT' && !fs.existsSync(src))
      throw new Error(
        `${src} is gone; restart the sidecar (\`tether agent leave\`, then \`join\`) to fetch it from the room again`,
      );
    throw err;
  } finally {
    fs.rmSync(part, { force: true });
  }
}
