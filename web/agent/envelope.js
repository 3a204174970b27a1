// The peer envelope as the agent sidecar needs it (agent-bus-and-swarm.md § Untrusted wire input,
// § Local state and CLI boundaries; shapes from agent-bus-notes.md § The envelope).
//
// Interim: the bus core (`tether/bus`, C++ in src/, branch issue-bus) owns envelope validation,
// handoff validation and the retry schedule. Until it is merged into this branch these checks
// live here, behind exactly the functions the sidecar calls, so swapping them for tether/bus is a
// change to this file alone.
import { createHash, randomBytes } from 'node:crypto';

export const LIMITS = Object.freeze({
  id: 128,
  type: 64,
  streamId: 128,
  role: 64,
  name: 256,
  instanceId: 128,
  to: 128,
  topic: 256,
  handoffRequestBytes: 32_000,
  handoffMaxLifetimeMs: 24 * 60 * 60 * 1000,
  historyMax: 200,
  historyDefault: 50,
});

export const TYPES = new Set([
  'chat',
  'announce',
  'skill_update',
  'command',
  'command_response',
  'file_offer',
  'file_chunk',
  'file_complete',
  'file_ack',
  'event',
  'ping',
  'pong',
  'ack',
  'history_replay',
  'history_request',
  'handoff',
  'swarm_offer',
  'swarm_manifest_request',
  'swarm_manifest_page',
  'swarm_announce',
  'swarm_request',
  'swarm_chunk',
  'swarm_have',
]);

/** Never queued for offline peers, never kept in history (agent-bus-notes.md). */
export function isTransient(type) {
  return (
    type === 'file_offer' ||
    type === 'file_chunk' ||
    type === 'file_complete' ||
    type.startsWith('swarm_')
  );
}

export function newId() {
  return randomBytes(12).toString('base64url');
}

const CONTROL = /[\u0000]/;

function boundedString(v, max) {
  return typeof v === 'string' && v.length > 0 && v.length <= max && !CONTROL.test(v);
}

let busApi = null;

/**
 * Loads tether/bus (the C++ bus core) if this build has it; from then on envelopes are checked by
 * the core. Returns whether it is in use.
 */
export async function useBus() {
  try {
    const { loadBus } = await import('tether/bus');
    busApi = await loadBus();
  } catch {
    busApi = null;
  }
  return busApi !== null;
}

export function bus() {
  return busApi;
}

/** Parses and checks one untrusted envelope text: {ok: true, env} or {ok: false, field, detail}. */
export function parseEnvelopeText(text) {
  if (busApi) {
    const r = busApi.parseEnvelope(text);
    return r.ok
      ? { ok: true, env: r.envelope }
      : { ok: false, field: r.field, detail: `${r.code}: ${r.detail}` };
  }
  let obj;
  try {
    obj = JSON.parse(text);
  } catch {
    return { ok: false, field: '', detail: 'not JSON' };
  }
  return checkEnvelope(obj);
}

/**
 * Checks an untrusted envelope (parsed JSON). Returns {ok: true, env} or {ok: false, field, detail}.
 */
export function checkEnvelope(e) {
  if (busApi) {
    const r = busApi.serializeEnvelope(e);
    return r.ok
      ? { ok: true, env: e }
      : { ok: false, field: r.field, detail: `${r.code}: ${r.detail}` };
  }
  return checkEnvelopeLocal(e);
}

function checkEnvelopeLocal(e) {
  const bad = (field, detail) => ({ ok: false, field, detail });
  if (!e || typeof e !== 'object' || Array.isArray(e))
    return bad('', 'an envelope is a JSON object');
  if (e.v !== 1) return bad('v', 'version must be 1');
  if (!boundedString(e.id, LIMITS.id))
    return bad('id', `id must be a non-empty string of at most ${LIMITS.id} characters`);
  if (!boundedString(e.type, LIMITS.type))
    return bad('type', `type must be a non-empty string of at most ${LIMITS.type} characters`);
  const f = e.from;
  if (!f || typeof f !== 'object' || Array.isArray(f)) return bad('from', 'from must be an object');
  if (!boundedString(f.streamId, LIMITS.streamId))
    return bad('from.streamId', `at most ${LIMITS.streamId} characters`);
  if (f.role !== undefined && !boundedString(f.role, LIMITS.role))
    return bad('from.role', `at most ${LIMITS.role} characters`);
  if (f.name !== undefined && !boundedString(f.name, LIMITS.name))
    return bad('from.name', `at most ${LIMITS.name} characters`);
  if (!boundedString(f.instanceId, LIMITS.instanceId))
    return bad('from.instanceId', `at most ${LIMITS.instanceId} characters`);
  if (e.to !== null && e.to !== undefined && !boundedString(e.to, LIMITS.to))
    return bad('to', `to must be null or at most ${LIMITS.to} characters`);
  if (e.topic !== null && e.topic !== undefined && !boundedString(e.topic, LIMITS.topic))
    return bad('topic', `topic must be null or at most ${LIMITS.topic} characters`);
  if (typeof e.ts !== 'number' || !Number.isFinite(e.ts))
    return bad('ts', 'ts must be a finite number (Unix ms)');
  if (!('payload' in e)) return bad('payload', 'payload is required');
  return { ok: true, env: e };
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
  const env = { v: 1, id, type, from, to, topic, ts, payload };
  const c = checkEnvelope(env);
  if (!c.ok) return { ok: false, field: c.field, detail: c.detail };
  return { ok: true, env };
}

/** Validates a handoff envelope (§ Local state and CLI boundaries). */
export function checkHandoff(env) {
  const bad = (detail) => ({ ok: false, detail });
  if (env.type !== 'handoff') return bad('type must be handoff');
  if (typeof env.to !== 'string' || !env.to) return bad('a handoff needs a direct recipient');
  if (env.topic !== null) return bad('a handoff has a null topic');
  const p = env.payload;
  if (!p || typeof p !== 'object' || typeof p.request !== 'string' || !p.request)
    return bad('payload.request must be a non-empty string');
  if (Buffer.byteLength(JSON.stringify(p.request)) > LIMITS.handoffRequestBytes) {
    return bad(
      `payload.request is over ${LIMITS.handoffRequestBytes} UTF-8 bytes as a JSON string`,
    );
  }
  if (typeof p.expiresAt !== 'number' || !Number.isFinite(p.expiresAt))
    return bad('payload.expiresAt must be Unix ms');
  if (p.expiresAt > env.ts + LIMITS.handoffMaxLifetimeMs)
    return bad('payload.expiresAt is more than 24 h after the envelope timestamp');
  if (p.expiresAt <= env.ts) return bad('payload.expiresAt is not after the envelope timestamp');
  return { ok: true };
}

/** Receiver dedup key: sender stream id, sender instance id, message id. */
export function handoffKey(env) {
  return sha256hex(`${env.from.streamId}\u0000${env.from.instanceId}\u0000${env.id}`).slice(0, 40);
}

/** Retry delay after `attempt` failed tries: 1 s doubling to 30 s (bus retry schedule, interim). */
export function handoffRetryDelayMs(attempt, baseMs = 1000, maxMs = 30_000) {
  return Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 16));
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

/** History request count rule: invalid or non-positive means 50, capped at 200. */
export function historyCount(n) {
  if (!Number.isInteger(n) || n <= 0) return LIMITS.historyDefault;
  return Math.min(n, LIMITS.historyMax);
}
