// A download folder in the browser's origin-private file system for the swarm glue
// (agent-bus-and-swarm.md § Resume: part files survive a page reload). The file I/O runs in
// web/peer/opfs-worker.js, where synchronous access handles write straight into the file.

const SAFE = (name) => {
  const base = String(name)
    .replace(/\\/g, '/')
    .split('/')
    .pop()
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim();
  if (base === '' || base === '.' || base === '..') return 'download.bin';
  // Peers offer names of up to 1,024 characters (agent-bus-notes.md § Sizes): cut to 255 UTF-16
  // units, whole code points only, so a surrogate pair is never split into an invalid name.
  let out = '';
  for (const c of base) {
    if (out.length + c.length > 255) break;
    out += c;
  }
  return out;
};

/**
 * Opens the OPFS folder `path` ('downloads', 'a/b') as a swarm download folder.
 * @param {string} path
 */
export async function opfsFolder(path) {
  const worker = new Worker(new URL('./opfs-worker.js', import.meta.url), { type: 'module' });
  const pending = new Map();
  let seq = 0;
  worker.onmessage = (ev) => {
    const { seq: s, ok, result, error } = ev.data;
    const p = pending.get(s);
    pending.delete(s);
    if (ok) p.resolve(result);
    else p.reject(new Error(`OPFS: ${error}`));
  };
  worker.onerror = (ev) => {
    for (const p of pending.values()) p.reject(new Error(`OPFS worker failed: ${ev.message}`));
    pending.clear();
  };
  const call = (op, args = {}, transfer = []) =>
    new Promise((resolve, reject) => {
      const s = ++seq;
      pending.set(s, { resolve, reject });
      worker.postMessage({ seq: s, op, args }, transfer);
    });
  await call('init', { path });

  const handleOf = (id) => ({
    read: (offset, length) => call('read', { id, offset, length }),
    // A copy is transferred: the caller keeps its bytes.
    write: (offset, bytes) => {
      const copy = bytes.slice();
      return call('write', { id, offset, bytes: copy }, [copy.buffer]);
    },
    size: () => call('size', { id }),
    flush: () => call('flush', { id }),
    sha256: () => call('sha256', { id }),
    close: () => call('close', { id }),
  });

  return {
    key: `opfs:/${path.split('/').filter(Boolean).join('/')}`,
    readText: (name) => call('readText', { name: SAFE(name) }),
    writeText: (name, text, { exclusive = false } = {}) =>
      call('writeText', { name: SAFE(name), text, exclusive }),
    remove: (name) => call('remove', { name: SAFE(name) }),
    modifiedMs: (name) => call('modifiedMs', { name: SAFE(name) }),
    /**
     * Runs `fn` while holding a Web Lock on `name` in this folder: a read-decide-write on a lock
     * file is one step for every tab and worker of the origin (OPFS's own scope). Distinct from
     * the worker's per-operation locks, so the worker can still take those meanwhile.
     */
    exclusively: (name, fn) =>
      globalThis.navigator?.locks
        ? navigator.locks.request(`tether-download:${path}/${SAFE(name)}`, fn)
        : fn(),
    openFile: async (name) => {
      const id = await call('open', { name: SAFE(name) });
      return { id, ...handleOf(id) };
    },
    async finish(handle, _partName, finalName) {
      const { name, id } = await call('finish', { id: handle.id, finalName: SAFE(finalName) });
      return { name, handle: { id, ...handleOf(id) } };
    },
    /** Reads a whole file (tests, small files). */
    readAll: (name) => call('readAll', { name: SAFE(name) }),
    close: () => worker.terminate(),
  };
}
