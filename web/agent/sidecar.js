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
import { LIMITS, bus, handoffKey, makeEnvelope, newId, recordHash, useBus } from './envelope.js';
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
import { InboxFiles } from './inbox-files.js';
import { answerShareCommand } from './share-commands.js';
import { loadSwarm } from '@tether-rt/tether/swarm';
import { createSwarmPeer } from '../peer/swarm-glue.js';
import { fileSource, nodeFolder } from '../peer/storage-node.js';
import { files, readJson, releaseLock, takeLock, writeJson } from './state.js';
import { WakeHook } from './wake.js';

const MAX_INBOUND_TEXT = 256 * 1024; // one control message (the data-channel bound)
const MAX_RPC_BODY = 512 * 1024;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const HISTORY_WAIT_MS = 5000;
const HISTORY_QUIET_MS = 300; // replays are sent back to back: this long without one ends the wait
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
    this.replayed = []; // history replays arriving for a pending `history` call
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
    this.hostile = 0;
    this.dropAcks = process.env.TETHER_AGENT_TEST_DROP_HANDOFF_ACKS === '1'; // tests: force sender retries
    this.wake = config.wake
      ? new WakeHook(config.wake, { room: config.room, extraEnv: { TETHER_WAKE_DIR: dir }, log })
      : null;
    this.loadHandoffs();
  }

  async start() {
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
        // node-datachannel's bindAddress: pin the local interface (tests pin 127.0.0.1).
        rtcConfig: {
          iceServers: [],
          ...(this.cfg.webrtcBind ? { bindAddress: this.cfg.webrtcBind } : {}),
        },
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
    // The bus core (tether/bus) owns the envelope rules: parsing and binding every incoming message
    // to its stream, announcements (handoff-v1), history replay, and both ends of a confirmed
    // handoff with its retry schedule. The sidecar owns what is on disk.
    this.bus = bus().createBus({
      self: this.from,
      transport: this.transport,
      // Peer ids are relay origins, which the relay keeps unique: the bus refuses an envelope
      // whose from.streamId is not the peer it arrived from.
      peerIdsAreStreams: true,
      acceptHandoffs: true,
      announce: {
        skills: [],
        status: 'online',
        version: VERSION,
        topics: [],
        agent: {
          runtime: 'node',
          summary: this.cfg.name ?? this.cfg.id,
          // Our shares by name, as the public implementation announces them (list-files, get-file).
          shares: Object.keys(readJson(stateDirs(this.dir).shares) ?? {}).map((name) => ({ name })),
        },
      },
      message: (env, info) => this.onMessage(env, info),
      rejected: (err, peer) => this.refuse(peer, `${err.code} at ${err.field}: ${err.detail}`),
      handoff: (h) => this.receiveHandoff(h),
      handoffStored: (h) => this.handoffDone(h, 'stored'),
      handoffExpired: (h) => this.handoffDone(h, 'expired'),
      // Direct messages leave from the disk outbox whenever the bus sees a peer's lane open.
      peer: (p) => p.open && this.flushOutbox(p.streamId ?? p.peer),
    });
    for (const peer of this.transport.openPeers()) this.flushOutbox(peer);
    if (!this.dropAcks) this.bus.rememberHandoffs(this.storedHandoffKeys());
    this.resumeHandoffs();
    await this.startSwarm();
    // Pulls need tether/bus's one-to-one transfer; without it the sidecar runs, and pull says why.
    try {
      const api = bus();
      if (!api) throw new Error('tether/bus is not built into this branch');
      // One receiver for pulls and unasked files: the receive caps hold across both.
      const receiver = api.createFileReceiver();
      this.pulls = new Pulls({
        api,
        receiver,
        respond: (env, outcome) => this.bus.respond(env, outcome),
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
      this.inboxFiles = new InboxFiles({
        api,
        receiver,
        dir: path.join(this.dir, 'downloads'),
        // The disk outbox: a refusal is kept until the transport takes it.
        send: (peer, type, payload) => this.enqueueDirect(peer, type, payload),
        store: (env, received) => this.storeMail(env, null, received),
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

  // ---- incoming (already parsed, bound and checked by the bus) ------------------------------

  onMessage(env, info) {
    if (env.from.streamId === this.cfg.id) return; // our own, replayed back to us
    switch (env.type) {
      case 'command':
        // shares, list-files and get-file are answered here (web/agent/share-commands.js).
        if (this.shareCommand(info.peer, env)) return;
        return this.storeMail(env, info);
      case 'command_response':
        if (this.pulls?.response(info.peer, env)) return;
        return this.storeMail(env, info);
      // A file answering one of our pulls is the pull's; any other is the inbox's to take or refuse.
      case 'file_offer':
        return this.pulls?.offer(info.peer, env) || this.inboxFiles?.offer(info.peer, env);
      case 'file_chunk':
        return this.pulls?.chunk(info.peer, env) || this.inboxFiles?.chunk(info.peer, env);
      case 'file_complete':
        return this.pulls?.complete(info.peer, env) || this.inboxFiles?.complete(info.peer, env);
      case 'ack':
        if (env.payload?.forType === 'handoff') return; // the bus correlates handoff receipts
        return this.storeMail(env, info);
      default:
        if (MAIL_TYPES.has(env.type)) return this.storeMail(env, info);
        return; // announce, swarm traffic (the swarm glue's), pings: not mail
    }
  }

  shareCommand(peer, env) {
    return answerShareCommand(
      {
        api: bus(),
        respond: (e, outcome) => this.bus.respond(e, outcome),
        shares: () => readJson(stateDirs(this.dir).shares) ?? {},
        pulls: this.pulls,
        about: { room: this.cfg.room, identity: this.from },
        log: this.log,
      },
      peer,
      env,
    );
  }

  refuse(peer, why) {
    this.hostile++;
    // Logged, but boundedly: a hostile peer must not be able to fill the disk through our log.
    if (this.hostile <= 100 || this.hostile % 1000 === 0)
      this.log(`refused a message from ${peer}: ${why} (${this.hostile} refused so far)`);
  }

  // ---- inbox ------------------------------------------------------------------------------

  /**
   * Stores one envelope in the inbox unless a record of it is already there or archived.
   * `received`: for a file a peer sent us unasked, where it was saved (web/agent/inbox-files.js).
   */
  storeMail(env, info, received = null) {
    if (info?.replayed) this.replayed.push(env);
    const h = recordHash(env);
    if (this.hashes.has(h)) return false;
    const rec = {
      v: 1,
      kind: 'inbox',
      receivedAt: Date.now(),
      replayed: !!info?.replayed,
      envelope: env,
      ...(received ? { received } : {}),
    };
    writeAtomic(path.join(this.dirs.inbox, recordName(env)), JSON.stringify(rec));
    this.hashes.add(h);
    this.wake?.trigger();
    return true;
  }

  // ---- outbox: direct messages stay on disk until the transport accepts them ---------------

  enqueueDirect(to, type, payload, topic = null) {
    const e = makeEnvelope({ from: this.from, type, to, topic, payload });
    if (!e.ok) return { ok: false, error: `cannot send: ${e.detail}` };
    // The bus refuses an envelope over its size bound here (too_large), so a message no transport
    // would take never sits at the head of a peer's backlog.
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
    // Only to a peer the bus holds open (src/bus/bus.hpp, Reachability): a peer the room roster
    // dropped may still have a channel that looks open for seconds (a closed tab), and what the
    // transport accepts there is lost.
    if (!this.bus || !this.reachable(peer)) return 0;
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
      // In our history for `peer` to replay, and correlated when it acks (the bus's own sends do
      // both; this one left from disk with the id it was given when queued).
      this.bus.noteSent(rec.envelope);
      list.shift();
      try {
        fs.unlinkSync(path.join(this.dirs.outbox, name));
      } catch {}
      sent++;
    }
    if (list && !list.length) this.outbox.delete(peer);
    return sent;
  }

  reachable(peer) {
    return this.bus.isOpen(peer);
  }

  broadcast(type, payload, topic = null) {
    const r = this.bus.broadcast(type, payload, { topic });
    if (!r.ok)
      return { ok: false, error: `cannot broadcast: ${r.code} at ${r.field}: ${r.detail}` };
    return { ok: true, id: r.id, delivered: r.sentTo, missed: r.rejectedBy };
  }

  // ---- history ---------------------------------------------------------------------------

  /**
   * Asks `peer` to replay recent messages (the bus caps and filters them). Replays we have not
   * seen arrive as mail and land in the inbox; the reply lists them.
   */
  async requestHistory(peer, count) {
    const start = this.replayed.length;
    const r = this.bus.requestHistory(peer, count);
    if (!r.ok) return { ok: false, error: `cannot ask '${peer}' for history: ${r.detail}` };
    if (r.status !== 'sent')
      return { ok: false, error: `'${peer}' is not reachable now; see \`tether agent peers\`` };
    // A replay is one history_replay per message, sent back to back: wait for the first, then
    // until none has come for a moment, or give up quietly (a replay of nothing new is nothing).
    for (let i = 0; i < HISTORY_WAIT_MS / 50 && this.replayed.length === start; i++)
      await sleep(50);
    for (let seen = -1, i = 0; seen !== this.replayed.length && i < HISTORY_WAIT_MS / 50; i++) {
      seen = this.replayed.length;
      await sleep(HISTORY_QUIET_MS);
    }
    const got = this.replayed.splice(start);
    return { ok: true, replayed: got };
  }

  // ---- handoffs: sender (the bus retries; the sidecar keeps the record on disk) --------------

  loadHandoffs() {
    for (const n of fs.readdirSync(this.dirs.handoffsOut)) {
      if (!n.endsWith('.json')) continue;
      const rec = readJson(path.join(this.dirs.handoffsOut, n));
      if (
        !rec ||
        rec.kind !== 'handoff-sent' ||
        !rec.envelope ||
        typeof rec.envelope.id !== 'string'
      )
        continue;
      rec.file = path.join(this.dirs.handoffsOut, n);
      this.handoffs.set(rec.envelope.id, rec);
    }
  }

  saveHandoff(rec) {
    const { file, ...body } = rec;
    writeAtomic(file, JSON.stringify(body));
  }

  /** After a restart: the bus retries each pending handoff with its original envelope. */
  resumeHandoffs() {
    for (const rec of this.handoffs.values()) {
      if (rec.state !== 'pending') continue;
      if (Date.now() >= rec.envelope.payload.expiresAt) {
        this.handoffDone({ id: rec.envelope.id, attempts: rec.sends ?? 0 }, 'expired');
        continue;
      }
      const r = this.bus.resumeHandoff(rec.envelope);
      if (!r.ok) this.log(`handoff ${rec.envelope.id} cannot be resumed: ${r.code} ${r.detail}`);
    }
  }

  createHandoff(to, request, expiresInMs) {
    const r = this.bus.handoff(to, request, { ttlMs: expiresInMs });
    if (!r.ok) {
      if (r.code === 'handoff_unsupported')
        return {
          ok: false,
          error: `'${to}' has no current handoff-v1 announcement (offline, restarting, or not a tether agent); check \`tether agent peers\` and try again when it is online`,
        };
      return { ok: false, error: `cannot hand off: ${r.code} at ${r.field}: ${r.detail}` };
    }
    const env = r.handoff.envelope;
    const rec = {
      v: 1,
      kind: 'handoff-sent',
      state: 'pending',
      createdAt: Date.now(),
      envelope: env,
      sends: r.handoff.attempts,
      file: path.join(this.dirs.handoffsOut, `${recordHash(env)}.json`),
    };
    // Kept on disk first thing: a restart resumes the same envelope (same id and instance).
    this.saveHandoff(rec);
    this.handoffs.set(env.id, rec);
    return { ok: true, id: env.id, expiresAt: env.payload.expiresAt };
  }

  handoffDone(h, state) {
    const rec = this.handoffs.get(h.id);
    if (!rec || rec.state !== 'pending') return;
    rec.state = state;
    rec.sends = Math.max(rec.sends ?? 0, h.attempts ?? 0);
    rec[state === 'stored' ? 'storedAt' : 'expiredAt'] = Date.now();
    this.saveHandoff(rec);
    if (state === 'expired') this.log(`handoff ${h.id} to ${rec.envelope.to} expired unconfirmed`);
  }

  // ---- handoffs: receiver -----------------------------------------------------------------

  /** A new handoff from the bus: store it, mark it, and only then let the bus ack it. */
  receiveHandoff(h) {
    const env = h.envelope;
    const marker = path.join(this.dirs.handoffsIn, `${handoffKey(env)}.json`);
    if (!fs.existsSync(marker)) {
      // Store first (unless an earlier life stored it and died before the marker), then mark.
      if (!this.hashes.has(recordHash(env))) this.storeMail(env, { peer: h.peer });
      try {
        writeAtomic(
          marker,
          JSON.stringify({
            v: 1,
            kind: 'handoff-received',
            busKey: h.key,
            id: env.id,
            from: env.from,
            storedAt: Date.now(),
            expiresAt: h.expiresAt,
          }),
          { exclusive: true },
        );
      } catch (err) {
        if (err.code !== 'EEXIST') throw err;
      }
    }
    if (this.dropAcks) return;
    this.bus.confirmHandoff(h.key);
  }

  /** Keys stored in earlier lives: their retries are re-acked by the bus without redelivery. */
  storedHandoffKeys() {
    const keys = [];
    for (const n of fs.readdirSync(this.dirs.handoffsIn)) {
      const m = n.endsWith('.json') ? readJson(path.join(this.dirs.handoffsIn, n)) : null;
      if (m?.kind === 'handoff-received' && typeof m.busKey === 'string') keys.push(m.busKey);
    }
    return keys;
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
      swarm: !!this.swarm,
      wake: this.wake ? { ...this.wake.config, stats: { ...this.wake.stats } } : null,
    };
  }

  peers() {
    const byStream = new Map();
    for (const p of this.bus.peers()) {
      const id = p.streamId ?? p.peer;
      const prev = byStream.get(id);
      if (prev && prev.open && !p.open) continue;
      const ann = p.announce && typeof p.announce === 'object' ? p.announce : {};
      byStream.set(id, {
        id,
        open: p.open,
        name: p.identity?.name ?? null,
        role: p.identity?.role ?? null,
        skills: Array.isArray(ann.skills) ? ann.skills : [],
        status: ann.status ?? null,
        handoff: p.handoff,
        queued: p.queued,
      });
    }
    for (const r of this.transport.roster())
      if (!byStream.has(r))
        byStream.set(r, {
          id: r,
          open: false,
          name: null,
          role: null,
          skills: [],
          status: null,
          handoff: false,
          queued: 0,
        });
    return [...byStream.values()];
  }

  handoffList() {
    const attempts = new Map(this.bus.pendingHandoffs().map((h) => [h.id, h.attempts]));
    return [...this.handoffs.values()].map((r) => ({
      id: r.envelope.id,
      to: r.envelope.to,
      state: r.state,
      sends: Math.max(r.sends ?? 0, attempts.get(r.envelope.id) ?? 0),
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
        return this.requestHistory(a.peer, a.count);
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
    this.bus?.close();
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
    // Records on disk and envelopes on the wire are checked by the bus core: load it first.
    if (!(await useBus()))
      throw new Error('tether/bus could not be loaded; build it with `make wasm`');
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
