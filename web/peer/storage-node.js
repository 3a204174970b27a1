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

/** A file name from a peer, reduced to one safe path component. */
export function safeFileName(name) {
  const base = basename(String(name).replace(/\\/g, '/'))
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim();
  return base === '' || base === '.' || base === '..' ? 'download.bin' : base.slice(0, 255);
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
