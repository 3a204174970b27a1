// A browser swarm peer for tests and benches: the real WebRTC transport, the swarm glue, OPFS part
// files and the progress view, driven from Playwright through window.peerApi.
import { loadSwarm } from '/web/glue/swarm.js';
import { createWebRtcTransport, loopbackOnly } from '/web/peer/webrtc-transport.js';
import { bytesSource, createSwarmPeer, sha256HexAsync } from '/web/peer/swarm-glue.js';
import { opfsFolder } from '/web/peer/storage-opfs.js';
import { createProgressView } from '/web/peer/progress-view.js';
import { makeBytes } from '/tests/e2e/lib/peer_bytes.js';

let transport = null;
let peer = null;
const folders = new Map();
const results = new Map(); // fileId -> {ok, result|error}
const view = createProgressView(document.getElementById('progress'));
const lastProgress = new Map();

async function folder(path) {
  if (!folders.has(path)) folders.set(path, await opfsFolder(path));
  return folders.get(path);
}

window.peerApi = {
  async start({ url, room, id, seed, session }) {
    document.getElementById('who').textContent = id;
    const swarm = await loadSwarm();
    transport = createWebRtcTransport({ url, room, selfId: id, candidateFilter: loopbackOnly });
    peer = createSwarmPeer({
      swarm,
      transport,
      seed,
      session,
      onProgress: (p) => {
        lastProgress.set(p.fileId, p);
        view.update(p);
      },
    });
    await transport.ready;
    return true;
  },
  openPeers: () => transport.openPeers(),
  async share({ name, size, seed, chunkSize }) {
    const { fileId } = await peer.share({
      name,
      source: bytesSource(makeBytes(size, seed)),
      chunkSize,
    });
    return fileId;
  },
  /** Starts a download; its outcome is read with result(). */
  startFetch(fileId, path) {
    results.delete(fileId);
    const startedAt = performance.now();
    folder(path)
      .then((f) => peer.fetch(fileId, f))
      .then(
        (result) => results.set(fileId, { ok: true, result, ms: performance.now() - startedAt }),
        (e) => results.set(fileId, { ok: false, error: String(e?.message ?? e) }),
      );
    return true;
  },
  result: (fileId) => results.get(fileId) ?? null,
  progress: (fileId) => peer.progress(fileId) ?? lastProgress.get(fileId) ?? null,
  have: (fileId) => peer.status(fileId)?.have ?? 0,
  status: (fileId) => peer.status(fileId),
  stats: () => peer.stats(),
  transportStats: () => transport.stats(),
  receivedIndexes: (fileId) => peer.receivedIndexes(fileId),
  resumedIndexes: (fileId) => peer.resumedIndexes(fileId),
  /** SHA-256 of a saved file, computed here from the OPFS bytes. */
  async digestSaved(path, name) {
    return sha256HexAsync(await (await folder(path)).readAll(name));
  },
  /**
   * A read-modify-write of a counter file under the folder's mutual exclusion, holding it for
   * `holdMs` between the read and the write: run from two pages at once, the second must see the
   * first's write. Returns what this page read.
   */
  async counterUnderLock(path, name, holdMs) {
    const f = await folder(path);
    return f.exclusively(name, async () => {
      const before = await f.readText(name);
      await new Promise((r) => setTimeout(r, holdMs));
      await f.writeText(name, String(Number(before ?? 0) + 1));
      return before;
    });
  },
  readText: async (path, name) => (await folder(path)).readText(name),
  /** The progress view's bars as the page shows them. */
  bars: () =>
    [...document.querySelectorAll('.tether-transfer')].map((s) => ({
      fileId: s.dataset.fileId,
      state: s.dataset.state,
      value: s.querySelector('.tether-transfer-bar').value,
      max: s.querySelector('.tether-transfer-bar').max,
      peers: [...s.querySelectorAll('tr')].map((r) => r.dataset.peer),
    })),
  dropSignaling: () => transport.dropSignaling(),
  blackhole: (p) => transport.blackhole(p),
  // Bench: raw binary-lane throughput, frames paced by bufferedAmount and `drain` alone.
  rawSend(to, total, frameBytes) {
    const frame = new Uint8Array(frameBytes); // all zeros: no swarm frame, the glue ignores it
    let sent = 0;
    return new Promise((resolve) => {
      const pump = () => {
        while (sent < total && transport.bufferedAmount(to) < 4 << 20) {
          if (!transport.sendBinary(to, frame)) break;
          sent += frameBytes;
        }
        if (sent >= total) {
          off();
          resolve(sent);
        }
      };
      const off = transport.subscribe({ drain: (p) => p === to && pump() });
      pump();
    });
  },
  rawReceiver() {
    const r = { bytes: 0, first: 0, last: 0 };
    window.rawStats = r;
    transport.subscribe({
      binary(_p, b) {
        const t = performance.now();
        if (!r.bytes) r.first = t;
        r.bytes += b.byteLength;
        r.last = t;
      },
    });
    return true;
  },
  rawStats: () => window.rawStats,
  async close() {
    await peer.close();
    await transport.close();
  },
};
window.peerApiReady = true;
