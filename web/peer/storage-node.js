// A download folder on disk for the swarm glue in Node (agent-bus-and-swarm.md § Resume,
// § Concurrent downloads of the same file, § Simple one-to-one transfer: "never overwrite a file,
// and make the final move exclusive"). Part and lock files sit in the destination folder itself,
// so the final move is a same-filesystem link.
import { createHash } from 'node:crypto';
import {
  link,
  mkdir,
  open,
  readFile,
  realpath,
  rm,
  stat,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { basename, extname, join } from 'node:path';

const MAX_NAME_TRIES = 1000;
// `exclusively`: a process holds `<name>.mutex` only for a read-decide-write of a small file, so
// one older than this belongs to a process that died inside it. Waiters poll for it.
const MUTEX_STALE_MS = 10_000;
const MUTEX_POLL_MS = 10;
const MUTEX_WAIT_MS = 30_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Disks take file names of at most 255 bytes (ext4, APFS; NTFS counts 255 UTF-16 units). Peers
// may offer names of up to 1,024 characters (agent-bus-notes.md § Sizes), so a long one is cut
// to this many UTF-8 bytes, keeping its extension, with room for the " (999)" finish() may add.
const MAX_NAME_BYTES = 240;
const MAX_EXT_BYTES = 32;
const utf8Length = (s) => Buffer.byteLength(s, 'utf8');

/** A file name from a peer, reduced to one safe path component the disk takes. */
export function safeFileName(name) {
  const base = basename(String(name).replace(/\\/g, '/'))
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim();
  if (base === '' || base === '.' || base === '..') return 'download.bin';
  if (utf8Length(base) <= MAX_NAME_BYTES) return base;
  let ext = extname(base);
  if (utf8Length(ext) > MAX_EXT_BYTES) ext = '';
  // Whole code points only: a surrogate pair is never split.
  const stem = [...base.slice(0, base.length - ext.length)];
  let bytes = utf8Length(ext);
  let keep = 0;
  while (keep < stem.length && bytes + utf8Length(stem[keep]) <= MAX_NAME_BYTES)
    bytes += utf8Length(stem[keep++]);
  return stem.slice(0, keep).join('') + ext;
}

/** Opens `dir` (created if missing) as a swarm download folder. */
export async function nodeFolder(dir) {
  await mkdir(dir, { recursive: true });
  const root = await realpath(dir);
  const at = (name) => join(root, safeFileName(name));

  function handleOf(fh) {
    return {
      async read(offset, length) {
        const buf = Buffer.alloc(length);
        const { bytesRead } = await fh.read(buf, 0, length, offset);
        return new Uint8Array(buf.buffer, buf.byteOffset, bytesRead);
      },
      async write(offset, bytes) {
        let done = 0;
        while (done < bytes.byteLength) {
          const { bytesWritten } = await fh.write(
            bytes,
            done,
            bytes.byteLength - done,
            offset + done,
          );
          done += bytesWritten;
        }
      },
      size: async () => (await fh.stat()).size,
      flush: () => fh.sync(),
      async sha256() {
        const h = createHash('sha256');
        const buf = Buffer.alloc(1 << 20);
        for (let off = 0; ;) {
          const { bytesRead } = await fh.read(buf, 0, buf.length, off);
          if (bytesRead === 0) break;
          h.update(buf.subarray(0, bytesRead));
          off += bytesRead;
        }
        return h.digest('hex');
      },
      close: () => fh.close(),
    };
  }

  return {
    key: root,
    path: root,
    async readText(name) {
      try {
        return await readFile(at(name), 'utf8');
      } catch (e) {
        if (e.code === 'ENOENT') return null;
        throw e;
      }
    },
    async writeText(name, text, { exclusive = false } = {}) {
      try {
        await writeFile(at(name), text, { flag: exclusive ? 'wx' : 'w' });
        return true;
      } catch (e) {
        if (e.code === 'EEXIST') return false;
        throw e;
      }
    },
    remove: (name) => rm(at(name), { force: true }),
    /**
     * Runs `fn` while holding `<name>.mutex`, created exclusively (`wx`): a lock file's read,
     * decision and write are then one step for every process using this folder, so two agents that
     * find the same stale download lock cannot both take it over. The mutex of a process that died
     * holding it is removed after MUTEX_STALE_MS; two waiters removing the same dead mutex at once
     * is the one window left, and it needs a crash inside `fn` first.
     */
    async exclusively(name, fn) {
      const mutex = at(`${safeFileName(name)}.mutex`);
      const deadline = Date.now() + MUTEX_WAIT_MS;
      for (;;) {
        try {
          await writeFile(mutex, `${process.pid}\n`, { flag: 'wx' });
          break;
        } catch (e) {
          if (e.code !== 'EEXIST') throw e;
        }
        const held = await stat(mutex).catch(() => null);
        if (held && Date.now() - held.mtimeMs > MUTEX_STALE_MS) {
          await rm(mutex, { force: true });
          continue;
        }
        if (Date.now() > deadline)
          throw new Error(
            `${mutex} has been held for over ${MUTEX_WAIT_MS / 1000} s; another process is stuck in it. Stop it, or delete the file if no tether process uses ${root}`,
          );
        await sleep(MUTEX_POLL_MS);
      }
      try {
        return await fn();
      } finally {
        await rm(mutex, { force: true });
      }
    },
    async modifiedMs(name) {
      try {
        return (await stat(at(name))).mtimeMs;
      } catch (e) {
        if (e.code === 'ENOENT') return null;
        throw e;
      }
    },
    async openFile(name) {
      const p = at(name);
      let fh;
      try {
        fh = await open(p, 'r+');
      } catch (e) {
        if (e.code !== 'ENOENT') throw e;
        fh = await open(p, 'w+');
      }
      return handleOf(fh);
    },
    /**
     * Moves the part file into place under `finalName`, never over an existing file: `name`,
     * then `name (1)`, ... link() fails when the target exists, which makes the move exclusive.
     */
    async finish(handle, partName, finalName) {
      const wanted = safeFileName(finalName);
      const ext = extname(wanted);
      const stem = wanted.slice(0, wanted.length - ext.length);
      for (let i = 0; i < MAX_NAME_TRIES; i++) {
        const name = i === 0 ? wanted : `${stem} (${i})${ext}`;
        try {
          await link(at(partName), join(root, name));
        } catch (e) {
          if (e.code === 'EEXIST') continue;
          throw e;
        }
        await unlink(at(partName));
        return { name, path: join(root, name), handle }; // the open handle now reads the final file
      }
      throw new Error(
        `${wanted}: ${MAX_NAME_TRIES} files of that name already exist in ${root}; clean the folder up`,
      );
    },
  };
}

/** A seeding source over a file on disk. */
export async function fileSource(path) {
  const fh = await open(path, 'r');
  const { size } = await fh.stat();
  const h = {
    size,
    async read(offset, length) {
      const buf = Buffer.alloc(length);
      const { bytesRead } = await fh.read(buf, 0, length, offset);
      return new Uint8Array(buf.buffer, buf.byteOffset, bytesRead);
    },
    async sha256() {
      const hash = createHash('sha256');
      const buf = Buffer.alloc(1 << 20);
      for (let off = 0; off < size;) {
        const { bytesRead } = await fh.read(buf, 0, buf.length, off);
        if (bytesRead === 0) break;
        hash.update(buf.subarray(0, bytesRead));
        off += bytesRead;
      }
      return hash.digest('hex');
    },
    close: () => fh.close(),
  };
  return h;
}
