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

// A batch of writes goes to the worker at this many chunks (1 MiB of the default 64 KiB), or this
// long after its first write (at 20 MB/s, about 16 chunks); see handleOf. Waiting longer only
// delays when a verified chunk reaches the disk (a crash loses at most that long of chunks, which
// the resume pass fetches again); every flush, read or close posts the batch at once.
const WRITE_BATCH = 16;
const WRITE_WAIT_MS = 50;
// A batch's bytes are copied into one buffer, not a new one per chunk: twice what the last batch
// held, at most this much (a buffer is zeroed when made, so one far too big costs its size).
const BATCH_BYTES = 1 << 20;

// One worker for every folder of the page, started with the first folder and ended with the last
// one's close(). A worker per folder cost its start-up (a thread, an isolate, the module) on every
// folder opened: in the peer bench, which opens a folder per download, that was a fifth to a third
// of the swarm's CPU per MB above the raw lane (bench/README.md § Swarm 1 -> 1).
let shared = null;

function sharedWorker() {
  if (shared) {
    shared.users++;
    return shared;
  }
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
  const self = {
    users: 1,
    call,
    release() {
      if (--self.users > 0) return;
      worker.terminate();
      for (const p of pending.values()) p.reject(new Error('OPFS: every folder was closed'));
      pending.clear();
      if (shared === self) shared = null;
    },
  };
  shared = self;
  return self;
}

/**
 * Opens the OPFS folder `path` ('downloads', 'a/b') as a swarm download folder.
 * @param {string} path
 */
export async function opfsFolder(path) {
  const w = sharedWorker();
  let folder;
  try {
    folder = await w.call('init', { path });
  } catch (e) {
    w.release();
    throw e;
  }
  // Every call names its folder: the worker holds each folder's directory and handles apart.
  const call = (op, args = {}, transfer = []) => w.call(op, { folder, ...args }, transfer);
  let closed = false;

  // Writes go to the worker in batches: a batch leaves once WRITE_BATCH writes are queued, its
  // buffer is full, or WRITE_WAIT_MS after its first write, whichever comes first. Every message is
  // a structured clone, a task on both threads, a wake-up of the worker and a reply; sent while
  // none was in flight, as before, a download at tens of MB/s still sent one per chunk, because the
  // worker was always done before the next chunk arrived (postMessage 13-15% of a downloader's
  // main thread, bench/README.md § Swarm 1 -> 1). The bytes of a batch are copied into one buffer,
  // which is transferred with the (offset, length) of each write: one allocation and one transfer
  // per batch, where a copy per chunk (`slice`, its own 64 KiB ArrayBuffer) cost 4.6% more. Every
  // other call on the handle posts the queued writes first, so the worker still sees the calls in
  // the order they were made.
  const handleOf = (id) => {
    /** @type {{resolve: (v: unknown) => void, reject: (e: unknown) => void}[]} */
    let waiters = [];
    /** @type {number[]} (file offset, length) per queued write, in order */
    let spans = [];
    /** @type {Uint8Array | null} */
    let buffer = null;
    let used = 0;
    let nextSize = 0;
    /** @type {ReturnType<typeof setTimeout> | null} */
    let timer = null;
    const post = () => {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      if (!waiters.length) return;
      const batch = waiters;
      const bytes = /** @type {Uint8Array} */ (buffer).subarray(0, used);
      const args = { id, bytes, spans: Float64Array.from(spans) };
      waiters = [];
      spans = [];
      buffer = null;
      nextSize = Math.min(BATCH_BYTES, 2 * used);
      used = 0;
      call('write', args, [bytes.buffer]).then(
        (r) => {
          for (const w of batch) w.resolve(r);
        },
        (e) => {
          for (const w of batch) w.reject(e);
        },
      );
    };
    const ordered = (op, args) => {
      post();
      return call(op, { id, ...args });
    };
    return {
      read: (offset, length) => ordered('read', { offset, length }),
      // A copy is transferred: the caller keeps its bytes, and may change them once this returns.
      write: (offset, bytes) =>
        new Promise((resolve, reject) => {
          if (buffer && used + bytes.byteLength > buffer.length) post();
          if (!buffer) buffer = new Uint8Array(Math.max(nextSize, 2 * bytes.byteLength));
          buffer.set(bytes, used);
          used += bytes.byteLength;
          spans.push(offset, bytes.byteLength);
          waiters.push({ resolve, reject });
          if (waiters.length >= WRITE_BATCH) post();
          else if (timer === null) timer = setTimeout(post, WRITE_WAIT_MS);
        }),
      size: () => ordered('size'),
      flush: () => ordered('flush'),
      sha256: () => ordered('sha256'),
      close: () => ordered('close'),
    };
  };

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
    /** Closes this folder's files; the worker ends with the page's last open folder. */
    close() {
      if (closed) return;
      closed = true;
      // The worker answers in order, so the close lands after every call made before it.
      call('closeFolder').then(
        () => w.release(),
        () => w.release(),
      );
    },
  };
}
