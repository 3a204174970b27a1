// The peer envelope as the agent sidecar and CLI use it: built here (ids, our identity), checked
// by the bus core (`tether/bus`, src/bus: agent-bus-and-swarm.md § Untrusted wire input), plus the
// record-name hashes of § Compatibility ("inbox filenames hash sender identity and message ID").
// Every bound and the envelope version come from the core (`bus().limits`, `envelopeVersion`).
import { createHash, randomBytes } from 'node:crypto';

let busApi = null;
let loadError = null;

/** Loads tether/bus (the WASM module) once; returns whether it loaded. */
export async function useBus() {
  if (busApi) return true;
  try {
    const { loadBus } = await import('@tether-rt/tether/bus');
    busApi = await loadBus();
  } catch (err) {
    busApi = null;
    loadError = err;
  }
  return busApi !== null;
}

/**
 * Why tether/bus did not load, and the fix: in a checkout of the repository the module is built
 * by `make wasm`; from an installed package it ships built, so the cause is the Node version or
 * a broken install.
 */
export function busLoadFailure() {
  const cause = loadError ? `: ${loadError.message ?? loadError}` : '';
  const [major, minor] = process.versions.node.split('.').map(Number);
  const fix =
    major < 20 || (major === 20 && minor < 16)
      ? `this is Node ${process.versions.node}; tether needs Node 20.16 or newer`
      : new URL(import.meta.url).pathname.includes('/node_modules/')
        ? 'reinstall the package (npm ci, or npm install @tether-rt/tether)'
        : 'build it with `make wasm` (or `make build`) in the repository';
  return `tether/bus (the WASM module) could not be loaded${cause}; ${fix}`;
}

/** The loaded bus API, or null before useBus(). */
export function bus() {
  return busApi;
}

/** The loaded bus API; throws, naming the fix, when it could not be loaded. */
export function loadedBus() {
  if (!busApi)
    throw new Error(`tether/bus is not loaded: call useBus() first (${busLoadFailure()})`);
  return busApi;
}

export function newId() {
  // Ids are pasted into command lines (`receipt PEER ID`), where a leading '-' reads as a flag:
  // draw again (one id in 64 starts with '-'; each draw is as random as the first).
  for (;;) {
    const id = randomBytes(loadedBus().limits.idRandomBytes).toString('base64url');
    if (id[0] !== '-') return id;
  }
}

/** Checks an envelope object with the bus core: {ok: true, env} or {ok: false, field, detail}. */
export function checkEnvelope(e) {
  const r = loadedBus().serializeEnvelope(e);
  return r.ok
    ? { ok: true, env: e }
    : { ok: false, field: r.field, detail: `${r.code}: ${r.detail}` };
}

export function makeEnvelope({
  from,
  type,
  to = null,
  topic = null,
  payload,
  ts = Date.now(),
  id = newId(),
}) {
  const env = { v: loadedBus().envelopeVersion, id, type, from, to, topic, ts, payload };
  const c = checkEnvelope(env);
  if (!c.ok) return { ok: false, field: c.field, detail: c.detail };
  return { ok: true, env };
}

/** A stored handoff record's payload has the shape the CLI shows (the bus checked the rest). */
export function handoffShapeOk(env) {
  const p = env.payload;
  return (
    !!p && typeof p === 'object' && typeof p.request === 'string' && Number.isFinite(p.expiresAt)
  );
}

/** Receiver marker name: sender stream id, sender instance id, message id (the dedup key). */
export function handoffKey(env) {
  return sha256hex(`${env.from.streamId}\u0000${env.from.instanceId}\u0000${env.id}`).slice(0, 40);
}

export function sha256hex(s) {
  return createHash('sha256').update(s).digest('hex');
}

/** A record's file name part: hash of sender identity and message id (§ Compatibility). */
export function recordHash(env) {
  return sha256hex(`${env.from?.streamId}\u0000${env.from?.instanceId}\u0000${env.id}`).slice(
    0,
    32,
  );
}
