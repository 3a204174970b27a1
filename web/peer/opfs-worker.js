// The OPFS side of web/peer/storage-opfs.js, in a dedicated worker: only workers get
// FileSystemSyncAccessHandle, whose writes land in the file at once. (A main-thread writable
// stream only commits on close, so a killed page would lose everything since the last close and
// nothing would be left to resume.) One request at a time per message, answered in order.

const handles = new Map(); // id -> {h: FileSystemSyncAccessHandle, name}
let nextId = 1;
let dirPromise = null;
let folderKey = '';

// OPFS has no create-exclusive and no rename-if-absent, so every check-then-act on a name runs
// under a Web Lock named after the folder and file. OPFS belongs to the origin and so do Web
// Locks: every tab and worker that could touch this folder waits on the same lock, which makes
// the check and the act one step for all of them.
function underNameLock(name, fn) {
  if (!navigator.locks) return fn(); // no Web Locks: the narrow check-then-act window remains
  return navigator.locks.request(`tether-opfs:${folderKey}/${name}`, fn);
}

async function folder(path) {
  let d = await navigator.storage.getDirectory();
  for (const part of path.split('/').filter(Boolean))
    d = await d.getDirectoryHandle(part, { create: true });
  return d;
}

async function exists(dir, name) {
  try {
    await dir.getFileHandle(name);
    return true;
  } catch (e) {
    if (e.name === 'NotFoundError') return false;
    throw e;
  }
}

async function openSync(dir, name) {
  const fh = await dir.getFileHandle(name, { create: true });
  const h = await fh.createSyncAccessHandle();
  const id = nextId++;
  handles.set(id, { h, name, fh });
  return id;
}

async function writeTextNow(dir, name, text, exclusive) {
  if (exclusive && (await exists(dir, name))) return false;
  let id;
  try {
    id = await openSync(dir, name);
  } catch (e) {
    // Another page holds it open this instant: it is writing the same file; we lost the race.
    if (e.name === 'NoModificationAllowedError') return false;
    throw e;
  }
  const { h } = handles.get(id);
  const bytes = new TextEncoder().encode(text);
  h.truncate(0);
  h.write(bytes, { at: 0 });
  h.flush();
  h.close();
  handles.delete(id);
  return true;
}

const ops = {
  async init({ path }) {
    folderKey = path.split('/').filter(Boolean).join('/');
    dirPromise = folder(path);
    await dirPromise;
    return true;
  },
  async open({ name }) {
    return openSync(await dirPromise, name);
  },
  read({ id, offset, length }) {
    const { h } = handles.get(id);
    const buf = new Uint8Array(length);
    const n = h.read(buf, { at: offset });
    return n === length ? buf : buf.slice(0, n);
  },
  // A batch of writes, applied in order (web/peer/storage-opfs.js batches them).
  write({ id, items }) {
    const { h } = handles.get(id);
    for (const { offset, bytes } of items) {
      let done = 0;
      while (done < bytes.byteLength) done += h.write(bytes.subarray(done), { at: offset + done });
    }
    return true;
  },
  size: ({ id }) => handles.get(id).h.getSize(),
  flush({ id }) {
    handles.get(id).h.flush();
    return true;
  },
  close({ id }) {
    handles.get(id)?.h.close();
    handles.delete(id);
    return true;
  },
  async sha256({ id }) {
    const { h } = handles.get(id);
    const buf = new Uint8Array(h.getSize());
    h.read(buf, { at: 0 });
    const d = new Uint8Array(await crypto.subtle.digest('SHA-256', buf));
    return Array.from(d, (b) => b.toString(16).padStart(2, '0')).join('');
  },
  // A whole file; through the handle already open on it when there is one (a sync access handle
  // is exclusive, so a second could not be opened while the file is being served).
  async readAll({ name }) {
    for (const { h, name: n } of handles.values()) {
      if (n !== name) continue;
      const buf = new Uint8Array(h.getSize());
      h.read(buf, { at: 0 });
      return buf;
    }
    const id = await openSync(await dirPromise, name);
    try {
      return ops.read({ id, offset: 0, length: handles.get(id).h.getSize() });
    } finally {
      ops.close({ id });
    }
  },
  async readText({ name }) {
    const dir = await dirPromise;
    try {
      return await (await (await dir.getFileHandle(name)).getFile()).text();
    } catch (e) {
      if (e.name === 'NotFoundError') return null;
      throw e;
    }
  },
  async writeText({ name, text, exclusive }) {
    const dir = await dirPromise;
    if (exclusive) return underNameLock(name, () => writeTextNow(dir, name, text, true));
    return writeTextNow(dir, name, text, false);
  },
  async modifiedMs({ name }) {
    try {
      return (await (await (await dirPromise).getFileHandle(name)).getFile()).lastModified;
    } catch (e) {
      if (e.name === 'NotFoundError') return null;
      throw e;
    }
  },
  async remove({ name }) {
    const dir = await dirPromise;
    try {
      await dir.removeEntry(name);
    } catch (e) {
      if (e.name !== 'NotFoundError') throw e;
    }
    return true;
  },
  // Never overwrites: `name`, then `name (1)`, ...; the move happens with the handle closed.
  async finish({ id, finalName }) {
    const dir = await dirPromise;
    const { h, fh } = handles.get(id);
    h.flush();
    h.close();
    handles.delete(id);
    const dot = finalName.lastIndexOf('.');
    const stem = dot > 0 ? finalName.slice(0, dot) : finalName;
    const ext = dot > 0 ? finalName.slice(dot) : '';
    for (let i = 0; i < 1000; i++) {
      const name = i === 0 ? finalName : `${stem} (${i})${ext}`;
      const moved = await underNameLock(name, async () => {
        if (await exists(dir, name)) return false;
        await fh.move(name);
        return true;
      });
      if (moved) return { name, id: await openSync(dir, name) };
    }
    throw new Error(`${finalName}: 1000 files of that name already exist; clean the folder up`);
  },
};

self.onmessage = async (ev) => {
  const { seq, op, args } = ev.data;
  try {
    const result = await ops[op](args);
    // A read's bytes are a fresh ArrayBuffer: moved to the page, not copied. (The options form:
    // tsc types `self` as a Window, whose postMessage takes the transfer list only that way.)
    const transfer =
      result instanceof Uint8Array ? [/** @type {ArrayBuffer} */ (result.buffer)] : [];
    self.postMessage({ seq, ok: true, result }, { transfer });
  } catch (e) {
    self.postMessage({ seq, ok: false, error: `${e?.name ?? 'Error'}: ${e?.message ?? e}` });
  }
};
