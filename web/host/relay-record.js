// Server-side recording for the self-hosted relay (--record DIR; docs/cockpit-recording.md
// § Recording on the relay). The recorder is a viewer of this relay, over its own loopback
// WebSocket lane, run by the same viewer core the cockpit runs (web/glue/cockpit-viewer.js): it
// watches every robot the relay lists, subscribes to each one's rx channels and writes what
// arrives through the cockpit's own MCAP recording (web/cockpit/src/record/recording.js), so a
// relay file and a browser file map channels the same way. No protocol decision is made here.
//
// Files are named <robot>-<start time>.mcap, rotated when one passes `fileBytes` or `fileMs`,
// and the oldest of this recorder's files are deleted while the folder holds more than
// `keepBytes`. close() ends every file (last chunk, indexes, summary), fsyncs and closes it: a
// file closed that way validates. A recorder killed outright leaves a file without its summary
// whose records up to the last chunk written read with a streaming MCAP reader (the indexed
// reader needs the summary); `chunkBytes` bounds what such a kill loses.
import { connectViewer } from '../glue/cockpit-viewer.js';
import { createDecode } from '../glue/decode.js';
import { McapRecording } from '../cockpit/src/record/recording.js';

export const DEFAULT_FILE_MIB = 256;
export const DEFAULT_FILE_MINUTES = 60;
export const DEFAULT_KEEP_MIB = 4096;
export const DEFAULT_CHUNK_KIB = 1024;
const MIB = 1024 * 1024; // sizes are plain numbers: 4 GiB overflows the 32-bit shift operators
// What this recorder names its files: <robot>-<ISO time with - for : and .>.mcap.
// Frames held while a rotation opens the next file; past this they are dropped and counted.
const MAX_PENDING_BYTES = 16 * 1024 * 1024;
const FILE_NAME = /^.+-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z(-\d+)?\.mcap$/;

/** An IWritable over a Deno file: every byte written, in order. */
class FileWritable {
  #pos = 0n;
  constructor(file) {
    this.file = file;
  }
  async write(buffer) {
    let done = 0;
    while (done < buffer.byteLength) done += await this.file.write(buffer.subarray(done));
    this.#pos += BigInt(buffer.byteLength);
  }
  position() {
    return this.#pos;
  }
}

/** A robot id as a file name part: letters, digits, dot, dash and underscore survive. */
const safeName = (id) =>
  String(id)
    .replace(/[^\w.-]/g, '_')
    .slice(0, 64) || 'robot';

/**
 * Starts recording every robot of the relay at `info` (its /api/info with the WebSocket URL).
 * @param {{mod: object, wire: object, info: object, dir: string, token?: string|null,
 *   fileBytes?: number, fileMs?: number, keepBytes?: number, chunkBytes?: number,
 *   log?: (line: string) => void}} o
 */
export async function startRelayRecorder({
  mod,
  wire,
  info,
  dir,
  token = null,
  fileBytes = DEFAULT_FILE_MIB * MIB,
  fileMs = DEFAULT_FILE_MINUTES * 60_000,
  keepBytes = DEFAULT_KEEP_MIB * MIB,
  chunkBytes = DEFAULT_CHUNK_KIB * 1024,
  log = console.log,
}) {
  await Deno.mkdir(dir, { recursive: true });
  log(
    `tether relay: recording every robot to ${dir} (a new file each ${fileBytes / 1024} KiB or ` +
      `${fileMs / 60_000} min, at most ${keepBytes / 1024} KiB kept)`,
  );
  const decode = createDecode(mod);
  const wsInfo = { ...info, wtUrl: undefined }; // the WebSocket twin: one lane, no certificate
  const robots = new Map(); // robot id -> its recorder
  const open = new Set(); // paths of the files being written
  let closing = false;
  // File opens, rotations, closes and the folder's trim run one at a time, in order.
  let ops = Promise.resolve();
  const serial = (fn) => (ops = ops.then(fn, fn));

  const lister = connectViewer(mod, wire, wsInfo, {
    token,
    event(e) {
      if (e.kind !== 'robots' || closing) return;
      const listed = new Set(e.robots.map((r) => r.id));
      for (const r of e.robots) if (!robots.has(r.id)) robots.set(r.id, robotRecorder(r.id));
      for (const [id, r] of robots)
        if (!listed.has(id)) {
          robots.delete(id);
          r.stop();
        }
    },
  });
  lister.start();

  function robotRecorder(robotId) {
    let file = null; // the file frames go to: {recording, fh, path, opened}
    let manifest = null;
    let channels = [];
    let watching = false;
    let stopped = false; // the robot left: no new file for it
    // While the next file opens, frames wait here (copied, bounded) and then fill it, and the
    // ones after it if they overflow: a rotation loses none, and a file that is full takes no more.
    let pending = null; // [{frame, at}] or null
    let pendingBytes = 0;
    let droppedWhileOpening = 0;
    const full = (f) => f.recording.bytes >= fileBytes || Date.now() - f.opened >= fileMs;
    const rotate = () => {
      if (pending) return; // a rotation is under way; it takes these frames too
      pending = [];
      serial(async () => {
        let done = 0; // frames of `pending` moved into a file
        for (;;) {
          await finish(file);
          await openFile();
          if (!file) {
            droppedWhileOpening += pending.length - done;
            break;
          }
          while (done < pending.length && !full(file)) {
            const { frame, at } = pending[done++];
            file.recording.add(frame, at);
          }
          if (done === pending.length) break;
        }
        pending = null;
        pendingBytes = 0;
      });
    };
    const viewer = connectViewer(mod, wire, wsInfo, {
      token,
      event(e) {
        if (e.kind === 'robots' && !watching && e.robots.some((r) => r.id === robotId)) {
          watching = true;
          viewer.watch(robotId);
        } else if (e.kind === 'manifest' && e.manifest) {
          manifest = e.manifest;
          channels = manifest.channels
            .filter((c) => c.dir !== 'tx' && decode.encodingKind(c.encoding) !== 'track')
            .map((c) => c.ch);
          viewer.want(channels);
          rotate();
        }
      },
      frame(f) {
        if (pending) {
          if (pendingBytes + f.payload.length > MAX_PENDING_BYTES) droppedWhileOpening++;
          else {
            pending.push({
              frame: { header: f.header, payload: f.payload.slice() },
              at: Date.now(),
            });
            pendingBytes += f.payload.length;
          }
          return;
        }
        if (!file) return;
        file.recording.add(f, Date.now());
        if (full(file)) rotate();
      },
    });
    viewer.start();

    async function openFile() {
      if (closing || stopped || !manifest) return;
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      let path = `${dir}/${safeName(robotId)}-${stamp}.mcap`;
      for (let n = 1; await exists(path); n++)
        path = `${dir}/${safeName(robotId)}-${stamp}-${n}.mcap`;
      let fh = null;
      try {
        fh = await Deno.open(path, { write: true, createNew: true });
        const recording = await McapRecording.start({
          writable: new FileWritable(fh),
          manifest,
          robotId,
          channels,
          wire,
          decode,
          library: 'tether relay --record (@mcap/core)',
          chunkSize: chunkBytes,
        });
        file = { fh, path, opened: Date.now(), recording };
      } catch (e) {
        fh?.close();
        log(`tether relay: cannot record ${robotId} to ${path} (${e.message}); check ${dir}`);
        return;
      }
      open.add(path);
      log(`tether relay: recording ${robotId} to ${path}`);
      await trim();
    }

    // Ends a file: what is queued, the last chunk, indexes and summary; then fsync and close.
    async function finish(f) {
      if (!f) return;
      if (file === f) file = null;
      let problem = null;
      try {
        await f.recording.end();
        await f.fh.sync();
      } catch (e) {
        problem = e;
      }
      f.fh.close();
      open.delete(f.path);
      const r = f.recording;
      log(
        problem
          ? `tether relay: recording ${f.path} failed (${problem.message}); the disk may be full: free space in ${dir}`
          : `tether relay: closed ${f.path}: ${r.messages} messages, ${(r.bytes / 1048576).toFixed(1)} MiB` +
              (r.dropped ? `, ${r.dropped} dropped (the disk was behind)` : ''),
      );
    }

    return {
      status() {
        if (!file) return null;
        const dropped = file.recording.dropped + droppedWhileOpening;
        return `${robotId} ${file.recording.messages} messages${dropped ? ` (${dropped} dropped)` : ''}`;
      },
      stop() {
        stopped = true;
        viewer.close();
        return serial(() => finish(file));
      },
    };
  }

  // Deletes this recorder's oldest files (never one still being written) while the folder holds
  // more than keepBytes of them.
  async function trim() {
    const files = [];
    for await (const e of Deno.readDir(dir)) {
      if (!e.isFile || !FILE_NAME.test(e.name)) continue;
      const path = `${dir}/${e.name}`;
      const st = await Deno.stat(path).catch(() => null);
      if (st) files.push({ path, size: st.size, mtime: st.mtime?.getTime() ?? 0 });
    }
    files.sort((a, b) => a.mtime - b.mtime);
    let total = files.reduce((n, f) => n + f.size, 0);
    for (const f of files) {
      if (total <= keepBytes) break;
      if (open.has(f.path)) continue;
      await Deno.remove(f.path).catch(() => {});
      total -= f.size;
      log(`tether relay: deleted ${f.path} to keep ${dir} under ${keepBytes / 1024} KiB`);
    }
  }

  const ticker = setInterval(() => {
    const parts = [...robots.values()].map((r) => r.status()).filter(Boolean);
    if (parts.length) log(`tether relay: recording ${parts.join(', ')}`);
  }, 10_000);

  return {
    /** Ends every file cleanly (indexes, summary, fsync, close). */
    async close() {
      closing = true;
      clearInterval(ticker);
      lister.close();
      await Promise.all([...robots.values()].map((r) => r.stop()));
      robots.clear();
      await ops;
    },
  };
}

async function exists(path) {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
