// File swarms in the sidecar: tether/swarm driven by the peer swarm glue (web/peer/swarm-glue.js)
// over the sidecar's transport. Offers are remembered in swarm-offers.json and made again after a
// restart (hashed again: the file may have changed); fetches run in the background and the CLI
// polls their progress.
import fs from 'node:fs';
import path from 'node:path';
import { loadSwarm } from '@tether-rt/tether/swarm';
import { createSwarmPeer } from '../../peer/swarm-glue.js';
import { fileSource, nodeFolder } from '../../peer/storage-node.js';
import { readJson, writeJson } from '../state.js';
import { copyVerified } from '../files.js';
import { fileType } from '../file-type.js';

/** A swarm file id: the file's SHA-256 in lowercase hex (docs/agent-bus.md § Swarms). */
export const FILE_ID_RE = /^[0-9a-f]{64}$/;

export class SwarmService {
  /** @param {{dir: string, log: (msg: string) => void}} o */
  constructor({ dir, log }) {
    this.log = log;
    this.jobs = new Map(); // fileId -> {state, result?, error?, to}
    this.progress = new Map();
    this.offersFile = path.join(dir, 'swarm-offers.json');
    this.held = new Map(); // fileId -> {path, name, size}: verified copies here (offered or fetched)
    this.peer = null;
    this.missing = null;
  }

  /** Starts the swarm peer over `transport`; without the WASM module it stays off, saying why. */
  async start(transport, identity) {
    try {
      const swarm = await loadSwarm();
      this.peer = createSwarmPeer({
        swarm,
        transport,
        identity,
        onProgress: (p) => this.progress.set(p.fileId, p),
        log: (...a) =>
          this.log(
            `swarm: ${a.map((x) => (x instanceof Error ? x.message : typeof x === 'string' ? x : JSON.stringify(x))).join(' ')}`,
          ),
      });
    } catch (err) {
      this.missing = err.message;
      return;
    }
    for (const o of readJson(this.offersFile) ?? []) {
      this.offer(o.path).then(
        (r) => !r.ok && this.log(`swarm: could not re-offer ${o.path}: ${r.error}`),
      );
    }
  }

  unavailable() {
    return { ok: false, error: `swarm is not available in this build: ${this.missing}` };
  }

  async offer(file) {
    if (!this.peer) return this.unavailable();
    let real;
    try {
      real = fs.realpathSync(file);
      if (!fs.statSync(real).isFile()) return { ok: false, error: `${file} is not a file` };
    } catch (err) {
      return { ok: false, error: `cannot offer ${file} (${err.code}); give a readable file` };
    }
    try {
      const source = await fileSource(real);
      // The type from the extension, as the public implementation offers it (file-type.js).
      const { mimeType } = fileType(path.basename(real));
      const r = await this.peer.share({ name: path.basename(real), mimeType, source });
      const list = (readJson(this.offersFile) ?? []).filter((o) => o.path !== real);
      list.push({ path: real, fileId: r.fileId });
      writeJson(this.offersFile, list);
      this.held.set(r.fileId, { path: real, name: path.basename(real), size: source.size });
      return { ok: true, fileId: r.fileId, name: path.basename(real), size: source.size };
    } catch (err) {
      return { ok: false, error: err.message };
    }
  }

  async fetch(fileId, to) {
    if (!this.peer) return this.unavailable();
    if (typeof fileId !== 'string' || !FILE_ID_RE.test(fileId))
      return {
        ok: false,
        error: 'FILE_ID is the 64 lowercase hex characters `swarm offer` printed',
      };
    const job = this.jobs.get(fileId);
    if (job && job.state === 'running')
      return {
        ok: false,
        error: `${fileId} is already being fetched by this sidecar (into ${job.to})`,
      };
    let folder;
    try {
      folder = await nodeFolder(to);
    } catch (err) {
      return { ok: false, error: `cannot download into ${to} (${err.code ?? err.message})` };
    }
    const j = { state: 'running', to };
    this.jobs.set(fileId, j);
    const have = this.held.get(fileId);
    if (have) {
      // We already hold it (we offer it, or fetched it before and now seed it): the swarm has
      // nothing to add, so the copy comes from that file, verified against the id as it is read.
      copyVerified(have.path, fileId, to, have.name).then(
        (result) =>
          Object.assign(j, { state: 'done', result: { ...result, copiedFrom: have.path } }),
        (err) => Object.assign(j, { state: 'failed', error: err.message }),
      );
      return { ok: true, fileId, copiedFrom: have.path };
    }
    this.peer.fetch(fileId, folder).then(
      (result) => {
        Object.assign(j, { state: 'done', result });
        this.held.set(fileId, {
          path: path.join(to, result.name),
          name: result.name,
          size: result.size,
        });
      },
      (err) => Object.assign(j, { state: 'failed', error: err.message }),
    );
    return { ok: true, fileId };
  }

  status(fileId) {
    const j = this.jobs.get(fileId);
    if (!j)
      return {
        ok: false,
        error: `no fetch of ${fileId} in this sidecar; start one with \`tether agent swarm fetch\``,
      };
    return {
      ok: true,
      ...j,
      progress: this.peer.progress(fileId) ?? this.progress.get(fileId) ?? null,
    };
  }

  /** Offers seen in the room, and the files we hold and offer ourselves (`ours`, `path`). */
  list() {
    if (!this.peer) return this.unavailable();
    const offers = this.peer.offers();
    for (const [id, h] of this.held)
      offers[id] = {
        ...(offers[id] ?? { name: h.name, size: h.size, offeredBy: [] }),
        ours: true,
        path: h.path,
      };
    return { ok: true, offers };
  }

  rpcHandlers() {
    return {
      'swarm-offer': (a) => this.offer(a.path),
      'swarm-fetch': (a) => this.fetch(a.fileId, a.to),
      'swarm-status': (a) => this.status(a.fileId),
      'swarm-list': () => this.list(),
    };
  }

  async close() {
    await this.peer?.close().catch(() => {});
  }
}
