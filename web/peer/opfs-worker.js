// The OPFS side of web/peer/storage-opfs.js, in a dedicated worker: only workers get
// FileSystemSyncAccessHandle, whose writes land in the file at once. (A main-thread writable
// stream only commits on close, so a killed page would lose everything since the last close and
// nothing would be left to resume.) One request at a time per message, answered in order. One
// worker serves every folder the page opens: each call names its folder (the id `init` returned).

const handles = new Map(); // id -> {h: FileSystemSyncAccessHandle, name, fh, folder}
let nextId = 1;
const folders = new Map(); // folder id -> {dir: Promise<FileSystemDirectoryHandle>, key}
let nextFolder = 1;

function folderOf(id) {
  const f = folders.get(id);
  if (!f) throw new Error('this folder was closed; open it again with opfsFolder()');
  return f;
}

// OPFS has no create-exclusive and no rename-if-absent, so every check-then-act on a name runs
// under a Web Lock named after the folder and file. OPFS belongs to the origin and so do Web
// Locks: every tab and worker that could touch this folder waits on the same lock, which makes
// the check and the act one step for all of them.
function underNameLock(folderKey, name, fn) {
  if (!navigator.locks) return fn(); // no Web Locks: the narrow check-then-act window remains
  return navigator.locks.request(`tether-opfs:${folderKey}/${name}`, fn);
}

async function openFolder(path) {
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

async function openSync(folder, dir, name) {
  const fh = await dir.getFileHandle(name, { create: true });
  const h = await fh.createSyncAccessHandle();
  const id = nextId++;
  handles.set(id, { h, name, fh, folder });
  return id;
}

async function writeTextNow(folder, dir, name, text, exclusive) {
  if (exclusive && (await exists(dir, name))) return false;
  let id;
  try {
    id = await openSync(folder, dir, name);
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
    const dir = openFolder(path);
    await dir;
    const id = nextFolder++;
    folders.set(id, { dir, key: path.split('/').filter(Boolean).join('/') });
    return id;
  },
  // The folder's open files are closed; the worker stays for the page's other folders.
  closeFolder({ folder }) {
    for (const [id, { h, folder: f }] of handles)
      if (f === folder) {
        h.close();
        handles.delete(id);
      }
    folders.delete(folder);
    return true;
  },
  async open({ folder, name }) {
    return openSync(folder, await folderOf(folder).dir, name);
  },
  read({ id, offset, length }) {
    const { h } = handles.get(id);
    const buf = new Uint8Array(length);
    const n = h.read(buf, { at: offset });
    return n === length ? buf : buf.slice(0, n);
  },
  // A batch of writes, applied in order (web/peer/storage-opfs.js batches them): their bytes one
  // after the other in `bytes`, and (file offset, length) of each in `spans`.
  write({ id, bytes, spans }) {
    const { h } = handles.get(id);
    for (let i = 0, at = 0; i < spans.length; i += 2) {
      const offset = spans[i];
      const one = bytes.subarray(at, at + spans[i + 1]);
      at += spans[i + 1];
      let done = 0;
      while (done < one.byteLength) done += h.write(one.subarray(done), { at: offset + done });
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
  async readAll({ folder, name }) {
    for (const { h, name: n, folder: f } of handles.values()) {
      if (n !== name || f !== folder) continue;
      const buf = new Uint8Array(h.getSize());
      h.read(buf, { at: 0 });
      return buf;
    }
    const id = await openSync(folder, await folderOf(folder).dir, name);
    try {
      return ops.read({ id, offset: 0, length: handles.get(id).h.getSize() });
    } finally {
      ops.close({ id });
    }
  },
  async readText({ folder, name }) {
    const dir = await folderOf(folder).dir;
    try {
      return await (await (await dir.getFileHandle(name)).getFile()).text();
    } catch (e) {
      if (e.name === 'NotFoundError') return null;
      throw e;
    }
  },
  async writeText({ folder, name, text, exclusive }) {
    const { dir: d, key } = folderOf(folder);
    const dir = await d;
    if (exclusive)
      return underNameLock(key, name, () => writeTextNow(folder, dir, name, text, true));
    return writeTextNow(folder, dir, name, text, false);
  },
  async modifiedMs({ folder, name }) {
    try {
      return (await (await (await folderOf(folder).dir).getFileHandle(name)).getFile())
        .lastModified;
    } catch (e) {
      if (e.name === 'NotFoundError') return null;
      throw e;
    }
  },
  async remove({ folder, name }) {
    const dir = await folderOf(folder).dir;
    try {
      await dir.removeEntry(name);
    } catch (e) {
      if (e.name !== 'NotFoundError') throw e;
    }
    return true;
  },
  // Never overwrites: `name`, then `name (1)`, ...; the move happens with the handle closed.
  async finish({ folder, id, finalName }) {
    const { dir: d, key } = folderOf(folder);
    const dir = await d;
    const { h, fh } = handles.get(id);
    h.flush();
    h.close();
    handles.delete(id);
    const dot = finalName.lastIndexOf('.');
    const stem = dot > 0 ? finalName.slice(0, dot) : finalName;
    const ext = dot > 0 ? finalName.slice(dot) : '';
    for (let i = 0; i < 1000; i++) {
      const name = i === 0 ? finalName : `${stem} (${i})${ext}`;
      const moved = await underNameLock(key, name, async () => {
        if (await exists(dir, name)) return false;
        await fh.move(name);
        return true;
      });
      if (moved) return { name, id: await openSync(folder, dir, name) };
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
