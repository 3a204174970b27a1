// The persistent agent sidecar (agent-bus-and-swarm.md § WebRTC layers, step 4; § Delivery
// semantics; § Local state and CLI boundaries). One per state dir. It stays in the room between
// an agent's turns, stores incoming mail on disk, keeps direct messages in the disk outbox until
// the transport accepts them, retries handoffs until the receiver confirms storage, and answers
// CLI invocations on a 127.0.0.1 HTTP endpoint guarded by a bearer token in a 0600 file.
//
// Run by `tether agent join` as: node web/agent/sidecar.js --dir <state dir>
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createRelayTransport } from '../peer/relay-transport.js';
import {
  LIMITS,
  checkEnvelope,
  checkHandoff,
  handoffKey,
  handoffRetryDelayMs,
  historyCount,
  isTransient,
  makeEnvelope,
  newId,
  parseEnvelopeText,
  useBus,
  bus,
  recordHash,
} from './envelope.js';
import {
  ensureDirs,
  listRecords,
  nameHash,
  readRecord,
  recordName,
  stateDirs,
  writeAtomic,
} from './store.js';
import { Pulls } from './pull.js';
import { loadSwarm } from 'tether/swarm';
import { createSwarmPeer } from '../peer/swarm-glue.js';
import { fileSource, nodeFolder } from '../peer/storage-node.js';
import { files, readJson, releaseLock, takeLock, writeJson } from './state.js';
import { WakeHook } from './wake.js';

const MAX_INBOUND_TEXT = 256 * 1024; // one control message (the data-channel bound)
const MAX_MESSAGE_BYTES = 256 * 1024; // what we send: the same bound, so every transport takes it
const tooBig = (n) =>
  `the message is ${n} bytes as an envelope, over the ${MAX_MESSAGE_BYTES}-byte limit; share a file and send its path instead (tether agent share)`;
const MAX_RPC_BODY = 512 * 1024;
const HISTORY_RING = 500;
const HISTORY_WAIT_MS = 5000;
// Types a peer's message lands in the inbox as (the rest is protocol traffic handled here).
const MAIL_TYPES = new Set([
  'chat',
  'command',
  'command_response',
  'event',
  'ack',
  'skill_update',
  'file_ack',
]);
const SKILLS = ['handoff-v1'];
const VERSION = '0.1.0';

export class Sidecar {
  constructor(dir, config, { log = console.error } = {}) {
    this.dir = dir;
    this.cfg = config;
    this.log = log;
    this.dirs = ensureDirs(dir);
    this.instanceId = newId();
    this.from = {
      streamId: config.id,
      role: config.role ?? 'agent',
      name: config.name ?? config.id,
      instanceId: this.instanceId,
    };
    this.announcements = new Map(); // peer -> {payload, at}: current while its lane is open
    this.history = []; // envelopes sent and received, newest last (bounded ring)
    this.historyWaiters = new Map(); // requestId -> resolve
    this.hashes = new Set(); // record hashes in inbox + archive: a resend of a stored id is dropped
    for (const d of [this.dirs.inbox, this.dirs.archive])
      for (const n of listRecords(d)) this.hashes.add(nameHash(n));
    // Per-peer outbox index (record names, oldest first), so a flush touches only that peer's
    // backlog. Malformed records are left out here and left alone on disk.
    this.outbox = new Map();
    for (const n of listRecords(this.dirs.outbox)) {
      const rec = readRecord(this.dirs.outbox, n, 'outbox');
      if (rec) this.outboxList(rec.to).push(n);
    }
    this.handoffs = new Map(); // envelope id -> sender record
    this.handoffTimer = null;
    this.hostile = 0;
    this.dropAcks = process.env.TETHER_AGENT_TEST_DROP_HANDOFF_ACKS === '1'; // tests: force sender retries
    this.wake = config.wake
      ? new WakeHook(config.wake, { room: config.room, extraEnv: { TETHER_WAKE_DIR: dir }, log })
      : null;
    this.retryBaseMs = config.handoffRetryBaseMs ?? 1000;
    this.retryMaxMs = config.handoffRetryMaxMs ?? 30_000;
    this.loadHandoffs();
  }

  async start() {
    this.busCore = await useBus(); // envelopes checked by the C++ bus core when this build has it
    const url = new URL(this.cfg.relay);
    if (!url.searchParams.has('writer')) url.searchParams.set('writer', this.cfg.id);
    if (!url.searchParams.has('kind')) url.searchParams.set('kind', 'agent');
    // Node 22+ has a global WebSocket; Node 20 uses the `ws` package.
    const WebSocket = globalThis.WebSocket ?? (await import('ws')).default;
    if (this.cfg.transport === 'webrtc') {
      // Real RTCDataChannels to every member (node-datachannel), signaled through the same relay.
      const { RTCPeerConnection } = await import('node-datachannel/polyfill');
      const { createWebRtcTransport } = await import('../peer/webrtc-transport.js');
      this.transport = createWebRtcTransport({
        url: url.toString(),
        room: this.cfg.room,
        selfId: this.cfg.id,
        RTCPeerConnection,
        WebSocket,
        log: (...a) => this.log(`webrtc: ${a.map(String).join(' ')}`),
      });
    } else {
      this.transport = createRelayTransport({
        url: url.toString(),
        room: this.cfg.room,
        selfId: this.cfg.id,
        WebSocket,
        onError: (err) => this.log(err.message),
      });
    }
    this.transport.subscribe({
      open: (peer) => this.onOpen(peer),
      close: (peer) => this.announcements.delete(peer),
      text: (peer, text) => this.onText(peer, text),
      reconnect: () => this.log('relay link came back'),
    });
    this.scheduleHandoffs(0);
    await this.startSwarm();
    // Pulls need tether/bus's one-to-one transfer; without it the sidecar runs, and pull says why.
    try {
      const api = bus();
      if (!api) throw new Error('tether/bus is not built into this branch');
      this.pulls = new Pulls({
        api,
        transport: () => this.transport,
        envelope: (to, type, payload, topic) => {
          const e = makeEnvelope({ from: this.from, type, to, topic, payload });
          return e.ok
            ? { ok: true, env: e.env, text: JSON.stringify(e.env) }
            : { ok: false, error: `${e.field} ${e.detail}` };
        },
        shares: () => readJson(stateDirs(this.dir).shares) ?? {},
        log: this.log,
      });
    } catch (err) {
      this.pullsMissing = err.message;
    }
  }

  // ---- swarm (tether/swarm driven by the peer engineer's glue over our transport) ----------------

  async startSwarm() {
    this.swarmJobs = new Map(); // fileId -> {state, result?, error?, to}
    this.swarmProgress = new Map();
    this.swarmOffersFile = path.join(this.dir, 'swarm-offers.json');
    try {
      const swarm = await loadSwarm();
      this.swarm = createSwarmPeer({
        swarm,
        transport: this.transport,
        identity: { role: this.from.role, name: this.from.name, instanceId: this.instanceId },
        onProgress: (p) => this.swarmProgress.set(p.fileId, p),
        log: (...a) =>
          this.log(
            `swarm: ${a.map((x) => (x instanceof Error ? x.message : typeof x === 'string' ? x : JSON.stringify(x))).join(' ')}`,
          ),
      });
    } catch (err) {
      this.swarmMissing = err.message;
      return;
    }
    // Files offered before a restart are offered again (hashed again: the file may have changed).
    for (const o of readJson(this.swarmOffersFile) ?? []) {
      this.swarmOffer(o.path).then(
        (r) => !r.ok && this.log(`swarm: could not re-offer ${o.path}: ${r.error}`),
      );
    }
  }

  async swarmOffer(file) {
    if (!this.swarm)
      return { ok: false, error: `swarm is not available in this build: ${this.swarmMissing}` };
    let real;
    try {
      real = fs.realpathSync(file);
      if (!fs.statSync(real).isFile()) return { ok: false, error: `${file} is not a file` };
    } catch (err) {
      return { ok: false, error: `cannot offer ${file} (${err.code}); give a readable file` };
    }
    try {
      const source = await fileSource(real);
      const r = await this.swarm.share({ name: path.basename(real), source });
      const list = (readJson(this.swarmOffersFile) ?? []).filter((o) => o.path !== real);
      list.push({ path: real, fileId: r.fileId });
      writeJson(this.swarmOffersFile, list);
      return { ok: true, fileId: r.fileId, name: path.basename(real), size: source.size };
    } catch (err) {
      return { ok: false, error: err.message };
    }
  }

  async swarmFetch(fileId, to) {
    if (!this.swarm)
      return { ok: false, error: `swarm is not available in this build: ${this.swarmMissing}` };
    if (typeof fileId !== 'string' || !/^[0-9a-f]{64}$/.test(fileId))
      return {
        ok: false,
        error: 'FILE_ID is the 64 lowercase hex characters `swarm offer` printed',
      };
    const job = this.swarmJobs.get(fileId);
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
    this.swarmJobs.set(fileId, j);
    this.swarm.fetch(fileId, folder).then(
      (result) => Object.assign(j, { state: 'done', result }),
      (err) => Object.assign(j, { state: 'failed', error: err.message }),
    );
    return { ok: true, fileId };
  }

  swarmStatus(fileId) {
    const j = this.swarmJobs?.get(fileId);
    if (!j)
      return {
        ok: false,
        error: `no fetch of ${fileId} in this sidecar; start one with \`tether agent swarm fetch\``,
      };
    return {
      ok: true,
      ...j,
      progress: this.swarm.progress(fileId) ?? this.swarmProgress.get(fileId) ?? null,
    };
  }

  // ---- transport events -------------------------------------------------------------------

  onOpen(peer) {
    this.announcements.delete(peer); // a reopened lane needs a fresh announcement
    const a = makeEnvelope({
      from: this.from,
      type: 'announce',
      to: peer,
      payload: {
        skills: SKILLS,
        status: 'online',
        version: VERSION,
        topics: [],
        agent: { runtime: 'node', summary: this.cfg.name ?? this.cfg.id },
      },
    });
    if (a.ok) this.transport.send(peer, JSON.stringify(a.env));
    this.flushOutbox(peer);
  }

  onText(peer, text) {
    if (text.length > MAX_INBOUND_TEXT) return this.refuse(peer, 'oversized message');
    const c = parseEnvelopeText(text);
    if (!c.ok) return this.refuse(peer, `bad envelope: ${c.field} ${c.detail}`);
    const env = c.env;
    // The connection is bound to its room origin: nobody sends as another peer.
    if (env.from.streamId !== peer) return this.refuse(peer, `claims to be '${env.from.streamId}'`);
    if (env.to !== null && env.to !== undefined && env.to !== this.cfg.id)
      return this.refuse(peer, 'addressed to someone else');
    switch (env.type) {
      case 'announce':
        if (env.payload && typeof env.payload === 'object') {
          this.announcements.set(peer, { payload: env.payload, at: Date.now(), from: env.from });
          if (this.canHandoff(peer)) {
            // A fresh handoff-v1 announcement: retry that peer's pending handoffs now.
            for (const r of this.handoffs.values())
              if (r.envelope.to === peer && r.state === 'pending') r.nextAttemptAt = 0;
            this.scheduleHandoffs(0);
          }
        }
        return;
      case 'ping':
        this.sendTransient(peer, 'pong', { id: env.id });
        return;
      case 'history_request':
        return this.answerHistory(peer, env);
      case 'history_replay': {
        const w = this.historyWaiters.get(env.payload?.requestId);
        if (w && w.peer === peer) w.resolve(env.payload);
        return;
      }
      case 'handoff':
        return this.receiveHandoff(peer, env);
      case 'ack':
        if (env.payload && env.payload.forType === 'handoff') return this.handoffAck(peer, env);
        return this.storeMail(env);
      case 'command':
        if (env.payload?.command === 'share.pull') {
          if (this.pulls)
            this.pulls
              .serve(peer, env)
              .catch((err) => this.log(`serving a pull failed: ${err.stack ?? err}`));
          else
            this.sendTransient(peer, 'command_response', {
              messageId: env.id,
              ok: false,
              error: 'this peer cannot serve pulls (its build lacks tether/bus)',
            });
          return;
        }
        return this.storeMail(env);
      case 'command_response':
        if (this.pulls?.response(peer, env)) return;
        return this.storeMail(env);
      case 'file_offer':
        return this.pulls?.offer(peer, env);
      case 'file_chunk':
        return this.pulls?.chunk(peer, env);
      case 'file_complete':
        return this.pulls?.complete(peer, env);
      default:
        if (MAIL_TYPES.has(env.type)) return this.storeMail(env);
        return; // transient or unknown to this sidecar: ignored, never an error for the room
    }
  }

  refuse(peer, why) {
    this.hostile++;
    // Logged, but boundedly: a hostile peer must not be able to fill the disk through our log.
    if (this.hostile <= 100 || this.hostile % 1000 === 0)
      this.log(`refused a message from ${peer}: ${why} (${this.hostile} refused so far)`);
  }

  remember(env) {
    if (
      isTransient(env.type) ||
      env.type === 'announce' ||
      env.type.startsWith('history_') ||
      env.type === 'ping' ||
      env.type === 'pong'
    )
      return;
    this.history.push(env);
    if (this.history.length > HISTORY_RING)
      this.history.splice(0, this.history.length - HISTORY_RING);
  }

  sendTransient(peer, type, payload) {
    const e = makeEnvelope({ from: this.from, type, to: peer, payload });
    return e.ok && this.transport.send(peer, JSON.stringify(e.env));
  }

  // ---- inbox ------------------------------------------------------------------------------

  /** Stores one envelope in the inbox unless a record of it is already there or archived. */
  storeMail(env) {
    const h = recordHash(env);
    if (this.hashes.has(h)) return false;
    const rec = { v: 1, kind: 'inbox', receivedAt: Date.now(), envelope: env };
    writeAtomic(path.join(this.dirs.inbox, recordName(env)), JSON.stringify(rec));
    this.hashes.add(h);
    this.remember(env);
    this.wake?.trigger();
    return true;
  }

  // ---- outbox: direct messages stay on disk until the transport accepts them ---------------

  enqueueDirect(to, type, payload, topic = null) {
    const e = makeEnvelope({ from: this.from, type, to, topic, payload });
    if (!e.ok) return { ok: false, error: `cannot build the message: ${e.field} ${e.detail}` };
    // A message no transport would ever accept must not sit at the head of a peer's backlog.
    const size = Buffer.byteLength(JSON.stringify(e.env));
    if (size > MAX_MESSAGE_BYTES) return { ok: false, error: tooBig(size) };
    const name = recordName(e.env);
    writeAtomic(
      path.join(this.dirs.outbox, name),
      JSON.stringify({
        v: 1,
        kind: 'outbox',
        to,
        type,
        id: e.env.id,
        queuedAt: Date.now(),
        envelope: e.env,
      }),
    );
    const list = this.outboxList(to);
    list.push(name);
    this.flushOutbox(to);
    return { ok: true, id: e.env.id, state: list.includes(name) ? 'queued' : 'sent' };
  }

  outboxList(peer) {
    let l = this.outbox.get(peer);
    if (!l) this.outbox.set(peer, (l = []));
    return l;
  }

  /**
   * Sends `peer`'s backlog in order and removes each record only once the transport accepted it;
   * the first refusal stops the flush and keeps the rest in order. Malformed records are skipped
   * and stay on disk. Other peers' records are not touched: a blocked peer blocks nobody else.
   */
  flushOutbox(peer) {
    const list = this.outbox.get(peer);
    let sent = 0;
    while (list && list.length) {
      const name = list[0];
      const rec = readRecord(this.dirs.outbox, name, 'outbox');
      if (!rec || rec.to !== peer) {
        list.shift(); // damaged or removed on disk since: skipped, left as it is
        continue;
      }
      if (!this.transport.send(peer, JSON.stringify(rec.envelope))) break;
      list.shift();
      try {
        fs.unlinkSync(path.join(this.dirs.outbox, name));
      } catch {}
      this.remember(rec.envelope);
      sent++;
    }
    if (list && !list.length) this.outbox.delete(peer);
    return sent;
  }

  broadcast(type, payload, topic = null) {
    const e = makeEnvelope({ from: this.from, type, to: null, topic, payload });
    if (!e.ok) return { ok: false, error: `cannot build the message: ${e.field} ${e.detail}` };
    const text = JSON.stringify(e.env);
    if (Buffer.byteLength(text) > MAX_MESSAGE_BYTES)
      return { ok: false, error: tooBig(Buffer.byteLength(text)) };
    const delivered = [];
    const missed = [];
    for (const p of this.transport.roster())
      (this.transport.send(p, text) ? delivered : missed).push(p);
    this.remember(e.env);
    return { ok: true, id: e.env.id, delivered, missed };
  }

  // ---- history ----------------------------------------------------------------------------

  answerHistory(peer, env) {
    const n = historyCount(env.payload?.count);
    // Broadcasts plus messages to or by the requester; other peers' directs never leave.
    const mine = this.history.filter(
      (e) => e.to === null || e.to === undefined || e.to === peer || e.from.streamId === peer,
    );
    const messages = mine.slice(-n);
    this.sendTransient(peer, 'history_replay', { requestId: env.id, messages });
  }

  requestHistory(peer, count) {
    const e = makeEnvelope({
      from: this.from,
      type: 'history_request',
      to: peer,
      payload: { count },
    });
    if (!e.ok) return Promise.resolve({ ok: false, error: e.detail });
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.historyWaiters.delete(e.env.id);
        resolve({
          ok: false,
          error: `no history reply from '${peer}' within ${HISTORY_WAIT_MS / 1000} s; check \`tether agent peers\` that it is online`,
        });
      }, HISTORY_WAIT_MS);
      this.historyWaiters.set(e.env.id, {
        peer,
        resolve: (payload) => {
          clearTimeout(timer);
          this.historyWaiters.delete(e.env.id);
          const msgs = Array.isArray(payload?.messages)
            ? payload.messages.filter((m) => checkEnvelope(m).ok)
            : [];
          resolve({ ok: true, messages: msgs });
        },
      });
      if (!this.transport.send(peer, JSON.stringify(e.env))) {
        clearTimeout(timer);
        this.historyWaiters.delete(e.env.id);
        resolve({ ok: false, error: `'${peer}' is not reachable now; see \`tether agent peers\`` });
      }
    });
  }

  // ---- handoffs: sender ---------------------------------------------------------------------

  loadHandoffs() {
    for (const n of fs.readdirSync(this.dirs.handoffsOut)) {
      if (!n.endsWith('.json')) continue;
      const rec = readJson(path.join(this.dirs.handoffsOut, n));
      if (
        !rec ||
        rec.kind !== 'handoff-sent' ||
        !checkEnvelope(rec.envelope).ok ||
        !checkHandoff(rec.envelope).ok
      )
        continue;
      rec.file = path.join(this.dirs.handoffsOut, n);
      rec.attempts = 0; // a restart retries promptly
      rec.nextAttemptAt = 0;
      this.handoffs.set(rec.envelope.id, rec);
    }
  }

  saveHandoff(rec) {
    const { file, ...body } = rec;
    writeAtomic(file, JSON.stringify(body));
  }

  canHandoff(peer) {
    const a = this.announcements.get(peer);
    return !!a && Array.isArray(a.payload.skills) && a.payload.skills.includes('handoff-v1');
  }

  createHandoff(to, request, expiresInMs) {
    const ts = Date.now();
    const e = makeEnvelope({
      from: this.from,
      type: 'handoff',
      to,
      topic: null,
      ts,
      payload: { request, expiresAt: ts + expiresInMs },
    });
    if (!e.ok) return { ok: false, error: `cannot build the handoff: ${e.field} ${e.detail}` };
    const h = checkHandoff(e.env);
    if (!h.ok) return { ok: false, error: `cannot hand off: ${h.detail}` };
    const rec = {
      v: 1,
      kind: 'handoff-sent',
      state: 'pending',
      createdAt: ts,
      envelope: e.env,
      sends: 0,
      attempts: 0,
      nextAttemptAt: 0,
    };
    // The sender keeps the envelope as first created (same id, same instance) for every retry.
    rec.file = path.join(this.dirs.handoffsOut, `${recordHash(e.env)}.json`);
    this.saveHandoff(rec);
    this.handoffs.set(e.env.id, rec);
    this.scheduleHandoffs(0);
    return {
      ok: true,
      id: e.env.id,
      expiresAt: e.env.payload.expiresAt,
      peerReady: this.canHandoff(to),
    };
  }

  scheduleHandoffs(delayMs) {
    if (this.handoffTimer) clearTimeout(this.handoffTimer);
    this.handoffTimer = setTimeout(() => this.handoffTick(), Math.max(0, delayMs));
  }

  handoffTick() {
    this.handoffTimer = null;
    const now = Date.now();
    let next = Infinity;
    for (const rec of this.handoffs.values()) {
      if (rec.state !== 'pending') continue;
      const env = rec.envelope;
      if (now >= env.payload.expiresAt) {
        rec.state = 'expired';
        rec.expiredAt = now;
        this.saveHandoff(rec);
        this.log(`handoff ${env.id} to ${env.to} expired unconfirmed after ${rec.sends} sends`);
        continue;
      }
      if (now >= rec.nextAttemptAt) {
        if (
          this.transport &&
          this.canHandoff(env.to) &&
          this.transport.send(env.to, JSON.stringify(env))
        ) {
          rec.sends++;
          rec.lastSentAt = now;
          this.saveHandoff(rec);
        }
        rec.nextAttemptAt =
          now + handoffRetryDelayMs(rec.attempts++, this.retryBaseMs, this.retryMaxMs);
      }
      next = Math.min(next, rec.nextAttemptAt, env.payload.expiresAt);
    }
    if (next !== Infinity) this.scheduleHandoffs(next - Date.now());
  }

  handoffAck(peer, env) {
    const p = env.payload;
    const rec = this.handoffs.get(p.messageId);
    // Correlate by request id, our original instance, and the peer the handoff went to.
    if (
      !rec ||
      rec.envelope.to !== peer ||
      p.senderInstanceId !== rec.envelope.from.instanceId ||
      p.receipt !== 'stored'
    )
      return;
    if (rec.state !== 'pending') return;
    rec.state = 'stored';
    rec.storedAt = Date.now();
    this.saveHandoff(rec);
  }

  // ---- handoffs: receiver -------------------------------------------------------------------

  receiveHandoff(peer, env) {
    const h = checkHandoff(env);
    if (!h.ok || env.to !== this.cfg.id)
      return this.refuse(peer, `bad handoff: ${h.detail ?? 'not addressed to us'}`);
    if (Date.now() >= env.payload.expiresAt)
      return this.log(`handoff ${env.id} from ${peer} arrived expired; not stored`);
    const key = handoffKey(env);
    const marker = path.join(this.dirs.handoffsIn, `${key}.json`);
    if (!fs.existsSync(marker)) {
      // Store first (unless an earlier life stored it and died before the marker), then mark.
      if (!this.hashes.has(recordHash(env))) this.storeMail(env);
      try {
        writeAtomic(
          marker,
          JSON.stringify({
            v: 1,
            kind: 'handoff-received',
            key,
            id: env.id,
            from: env.from,
            storedAt: Date.now(),
            expiresAt: env.payload.expiresAt,
          }),
          { exclusive: true },
        );
      } catch (err) {
        if (err.code !== 'EEXIST') throw err;
      }
    }
    if (this.dropAcks) return;
    // Ack only after storage: the record and its marker are on disk now.
    this.sendTransient(peer, 'ack', {
      messageId: env.id,
      senderInstanceId: env.from.instanceId,
      forType: 'handoff',
      receipt: 'stored',
    });
  }

  // ---- control API ------------------------------------------------------------------------

  status() {
    const t = this.transport;
    return {
      id: this.cfg.id,
      room: this.cfg.room,
      relay: this.cfg.relay,
      pid: process.pid,
      instanceId: this.instanceId,
      transport: this.cfg.transport ?? 'relay',
      connected: !!t && (t.isConnected ? t.isConnected() : t.signalingUp()),
      roster: t ? t.roster() : [],
      hostile: this.hostile,
      busCore: this.busCore,
      swarm: !!this.swarm,
      wake: this.wake ? { ...this.wake.config, stats: { ...this.wake.stats } } : null,
    };
  }

  peers() {
    const open = new Set(this.transport.openPeers());
    return this.transport.roster().map((p) => {
      const a = this.announcements.get(p);
      return {
        id: p,
        open: open.has(p),
        name: a?.from?.name ?? null,
        role: a?.from?.role ?? null,
        skills: Array.isArray(a?.payload?.skills) ? a.payload.skills : [],
        status: a?.payload?.status ?? null,
        announcedAt: a?.at ?? null,
      };
    });
  }

  handoffList() {
    return [...this.handoffs.values()].map((r) => ({
      id: r.envelope.id,
      to: r.envelope.to,
      state: r.state,
      sends: r.sends,
      createdAt: r.createdAt,
      expiresAt: r.envelope.payload.expiresAt,
      storedAt: r.storedAt ?? null,
      expiredAt: r.expiredAt ?? null,
    }));
  }

  async rpc(cmd, a) {
    switch (cmd) {
      case 'status':
        return { ok: true, ...this.status() };
      case 'peers':
        return { ok: true, peers: this.peers() };
      case 'send': {
        const type = a.type ?? 'chat';
        if (!['chat', 'command', 'command_response', 'event', 'ack'].includes(type)) {
          return {
            ok: false,
            error: `--type must be chat, command, command_response, event or ack (got '${type}')`,
          };
        }
        if (a.to === this.cfg.id)
          return {
            ok: false,
            error: 'that is our own id; name another peer (see `tether agent peers`)',
          };
        return this.enqueueDirect(a.to, type, a.payload, a.topic ?? null);
      }
      case 'broadcast':
        return this.broadcast(a.type ?? 'chat', a.payload, a.topic ?? null);
      case 'history':
        return this.requestHistory(a.peer, historyCount(a.count));
      case 'handoff':
        return this.createHandoff(a.to, a.request, a.expiresInMs);
      case 'handoffs':
        return { ok: true, handoffs: this.handoffList() };
      case 'pull':
        if (!this.pulls)
          return { ok: false, error: `pull is not available in this build: ${this.pullsMissing}` };
        return this.pulls.start(a.peer, a.share, a.path, a.to);
      case 'pull-status':
        if (!this.pulls) return { ok: false, error: 'pull is not available in this build' };
        return this.pulls.status(a.id);
      case 'swarm-offer':
        return this.swarmOffer(a.path);
      case 'swarm-fetch':
        return this.swarmFetch(a.fileId, a.to);
      case 'swarm-status':
        return this.swarmStatus(a.fileId);
      case 'swarm-list':
        if (!this.swarm)
          return { ok: false, error: `swarm is not available in this build: ${this.swarmMissing}` };
        return { ok: true, offers: this.swarm.offers() };
      case 'leave':
        setImmediate(() => this.stop(0));
        return { ok: true, pid: process.pid };
      default:
        return { ok: false, error: `unknown command '${cmd}'` };
    }
  }

  async listen() {
    const token = randomBytes(24).toString('base64url');
    const want = Buffer.from(`Bearer ${token}`);
    this.server = http.createServer((req, res) => {
      const reply = (code, obj) => {
        res.writeHead(code, { 'content-type': 'application/json' });
        res.end(JSON.stringify(obj));
      };
      const got = Buffer.from(String(req.headers.authorization ?? ''));
      if (got.length !== want.length || !timingSafeEqual(got, want))
        return reply(401, { ok: false, error: 'bad token' });
      if (req.method !== 'POST' || req.url !== '/rpc')
        return reply(404, { ok: false, error: 'POST /rpc only' });
      const chunks = [];
      let size = 0;
      req.on('data', (c) => {
        size += c.length;
        if (size > MAX_RPC_BODY) req.destroy();
        else chunks.push(c);
      });
      req.on('end', async () => {
        let body;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return reply(400, { ok: false, error: 'body must be JSON {cmd, args}' });
        }
        try {
          reply(200, await this.rpc(String(body.cmd), body.args ?? {}));
        } catch (err) {
          this.log(`rpc ${body.cmd} failed: ${err.stack ?? err}`);
          reply(500, {
            ok: false,
            error: `the sidecar failed: ${err.message}; see ${files(this.dir).log}`,
          });
        }
      });
    });
    await new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', resolve);
    });
    writeJson(files(this.dir).endpoint, {
      port: this.server.address().port,
      token,
      pid: process.pid,
    });
  }

  async stop(code) {
    if (this.stopping) return;
    this.stopping = true;
    if (this.handoffTimer) clearTimeout(this.handoffTimer);
    this.wake?.close();
    await this.swarm?.close().catch(() => {});
    try {
      await this.transport?.close();
    } catch {}
    this.server?.close();
    try {
      fs.unlinkSync(files(this.dir).endpoint);
    } catch {}
    releaseLock(this.dir);
    process.exit(code);
  }
}

async function main() {
  const i = process.argv.indexOf('--dir');
  if (i < 0 || !process.argv[i + 1]) {
    console.error(
      'usage: node web/agent/sidecar.js --dir <state dir> (normally started by `tether agent join`)',
    );
    process.exit(2);
  }
  const dir = path.resolve(process.argv[i + 1]);
  const log = (msg) => console.error(`${new Date().toISOString()} ${msg}`);
  const cfg = readJson(files(dir).config);
  if (!cfg) {
    log(`no config in ${files(dir).config}; start the sidecar with \`tether agent join\``);
    process.exit(2);
  }
  takeLock(dir);
  let s;
  try {
    s = new Sidecar(dir, cfg, { log });
    process.on('SIGTERM', () => s.stop(0));
    process.on('SIGINT', () => s.stop(0));
    await s.start();
    await s.listen();
  } catch (err) {
    releaseLock(dir);
    throw err;
  }
  log(`sidecar ${process.pid} for '${cfg.id}' in room '${cfg.room}' via ${cfg.relay}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err.stack ?? String(err));
    process.exit(1);
  });
}

export { LIMITS };
