// The persistent agent sidecar (agent-bus-and-swarm.md § WebRTC layers, step 4; § Delivery
// semantics; § Local state and CLI boundaries). One per state dir. It stays in the room between
// an agent's turns and answers CLI invocations on 127.0.0.1. This file joins the room and wires
// the concerns together; each lives in web/agent/sidecar/:
//   mailbox.js     incoming mail into inbox/ (deduplicated), history replays
//   outbox.js      direct messages kept in outbox/ until the transport accepts them
//   seen.js        who has ever been in the room (a send to anyone else is likely a typo)
//   link.js        the relay URL and ticket, and why we are not in the room
//   handoffs.js    confirmed handoffs, both ends, on disk
//   shares.js      shared folders both ways (shares, list-files, get-file) and files sent unasked
//   swarm.js       file swarms
//   hosted-mailbox.js  owned hosted mailboxes delivered into inbox/ and marked delivered
//   rpc-server.js  the control API the CLI calls
//
// Run by `tether agent join` as: node web/agent/sidecar.js --dir <state dir>
import fs from 'node:fs';
import path from 'node:path';
import { createRelayTransport } from '../peer/relay-transport.js';
import { bus, busLoadFailure, loadedBus, newId, useBus } from './envelope.js';
import { ensureDirs } from './store.js';
import { redact } from './redact.js';
import { files, readJson, readSecret, readTicket, releaseLock, takeLock } from './state.js';
import { WakeHook } from './wake.js';
import { Handoffs } from './sidecar/handoffs.js';
import { LinkState, roomUrl } from './sidecar/link.js';
import { Mailbox } from './sidecar/mailbox.js';
import { Outbox } from './sidecar/outbox.js';
import { RpcServer } from './sidecar/rpc-server.js';
import { SeenPeers } from './sidecar/seen.js';
import { Shares } from './sidecar/shares.js';
import { SwarmService } from './sidecar/swarm.js';
import { HostedMailboxes } from './sidecar/hosted-mailbox.js';

// Types a peer's message lands in the inbox as (the rest is protocol traffic handled here). A
// skill_update is not mail: it changes the peer's announce, which `peers` shows (docs/agent-bus.md
// § The agent command line), and the public implementation keeps it out of the inbox too.
const MAIL_TYPES = new Set(['chat', 'command', 'command_response', 'event', 'ack']);
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
    this.hostile = 0;
    this.wake = config.wake
      ? new WakeHook(config.wake, { room: config.room, extraEnv: { TETHER_WAKE_DIR: dir }, log })
      : null;
    this.mailbox = new Mailbox({ dirs: this.dirs, onNewMail: () => this.wake?.trigger() });
    this.seen = new SeenPeers({ dir });
    this.outbox = new Outbox({
      dirs: this.dirs,
      from: this.from,
      whyNotNow: (peer) => this.whyNotNow(peer),
    });
    this.handoffs = new Handoffs({
      dirs: this.dirs,
      mailbox: this.mailbox,
      log,
      dropAcks: process.env.TETHER_AGENT_TEST_DROP_HANDOFF_ACKS === '1', // tests: force sender retries
    });
    this.shares = new Shares({
      dir,
      from: this.from,
      log,
      whyNotNow: (peer) => this.whyNotNow(peer),
    });
    this.swarm = new SwarmService({ dir, log });
    this.hosted = new HostedMailboxes({ dir, self: config.id, mailbox: this.mailbox, log });
    // The concerns that answer the CLI or claim incoming envelopes (receive() returning true),
    // asked in this order. A new concern joins this list.
    /** @type {{receive?(env: object, info: object): boolean, rpcHandlers?(): object}[]} */
    this.parts = [this.shares, this.handoffs, this.swarm, this.outbox, this.hosted];
    this.rpc = new RpcServer({ dir, log });
    for (const part of [this, ...this.parts]) this.rpc.add(part.rpcHandlers?.() ?? {});
  }

  async start() {
    this.transport = await this.openTransport();
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
          shares: this.shares.announced(),
        },
      },
      message: (env, info) => this.onMessage(env, info),
      rejected: (err, peer) => this.refuse(peer, `${err.code} at ${err.field}: ${err.detail}`),
      ...this.handoffs.busHandlers(),
      // Direct messages leave from the disk outbox whenever the bus sees a peer's lane open.
      peer: (p) => p.open && this.outbox.flush(p.streamId ?? p.peer),
    });
    this.seen.note(this.transport.roster());
    this.transport.subscribe({ roster: (ids) => this.seen.note(ids) });
    this.outbox.attach(this.bus, this.transport);
    this.handoffs.attach(this.bus);
    await this.swarm.start(this.transport, {
      role: this.from.role,
      name: this.from.name,
      instanceId: this.instanceId,
    });
    this.shares.start(bus(), this.transport, {
      bus: this.bus,
      outbox: this.outbox,
      mailbox: this.mailbox,
      room: this.cfg.room,
    });
    await this.rpc.listen();
    this.hosted.start();
  }

  async openTransport() {
    const url = new URL(
      roomUrl(this.cfg.relay, this.cfg.room, { ticket: readTicket(this.dir), id: this.cfg.id }),
    );
    this.link = new LinkState({ url: url.toString(), room: this.cfg.room, log: this.log });
    // The `ws` package, not Node's global WebSocket: only it shows a refused upgrade's HTTP
    // status and body, which is how the relay says why (wrong path, bad ticket).
    const WebSocket = (await import('ws')).default;
    if (this.cfg.transport === 'webrtc') {
      // Real RTCDataChannels to every member (node-datachannel), signaled through the same relay.
      const { RTCPeerConnection } = await import('node-datachannel/polyfill');
      const { createWebRtcTransport } = await import('../peer/webrtc-transport.js');
      return createWebRtcTransport({
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
    }
    const secret = readSecret(this.dir);
    const t = createRelayTransport({
      url: url.toString(),
      room: this.cfg.room,
      selfId: this.cfg.id,
      WebSocket,
      // --transport http: the same frames over POST and a long-poll (docs/agent-bus.md).
      ...(this.cfg.transport === 'http' ? { transport: 'http' } : {}),
      // Sealed end to end when the state dir holds a room secret (docs/agent-bus.md).
      ...(secret ? { secret } : {}),
      // A refused sealed frame (err.code: wrong-secret, tampered, replay...) is a peer's or the
      // relay's doing: logged boundedly, like any hostile input.
      onError: (/** @type {Error & {code?: string, peer?: string}} */ err) =>
        err.code ? this.refuse(err.peer, err.message) : this.log(err.message),
      onFailure: (f) => this.link.failed(f),
    });
    t.ready.then(
      () => this.link.joined(),
      () => {},
    );
    t.subscribe({ reconnect: () => this.link.joined() });
    return t;
  }

  // ---- incoming (already parsed, bound and checked by the bus) ------------------------------

  onMessage(env, info) {
    if (env.from.streamId === this.cfg.id) return; // our own, replayed back to us
    for (const part of this.parts) if (part.receive?.(env, info)) return;
    if (MAIL_TYPES.has(env.type)) this.mailbox.store(env, info);
    // announce, swarm traffic (the swarm glue's), pings: not mail
  }

  refuse(peer, why) {
    this.hostile++;
    // Logged, but boundedly: a hostile peer must not be able to fill the disk through our log.
    if (this.hostile <= 100 || this.hostile % 1000 === 0)
      this.log(`refused a message from ${peer}: ${why} (${this.hostile} refused so far)`);
  }

  // ---- the room, as the CLI sees it -----------------------------------------------------------

  status() {
    const t = this.transport;
    // The relay transport (webrtc is DTLS between the peers: never sealed, so null).
    const relay = t && 'encrypted' in t ? t : null;
    return {
      id: this.cfg.id,
      room: this.cfg.room,
      relay: this.cfg.relay,
      pid: process.pid,
      instanceId: this.instanceId,
      transport: this.cfg.transport ?? 'relay',
      // webrtc: DTLS between the peers; relay and http: sealed only with a room secret.
      encrypted: relay ? relay.encrypted : null,
      sealed: relay ? relay.stats.sealed : null,
      connected: this.isConnected(),
      link: this.link?.status() ?? null,
      roster: t ? t.roster() : [],
      hostile: this.hostile,
      swarm: !!this.swarm.peer,
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

  isConnected() {
    const t = this.transport;
    return !!t && ('isConnected' in t ? t.isConnected() : t.signalingUp());
  }

  /**
   * Why a direct message to `peer` cannot leave now (our own link first: a peer is never blamed
   * for our outage), or null when nothing stands in its way.
   */
  whyNotNow(peer) {
    if (!this.isConnected()) {
      const f = this.link?.failure;
      return `this sidecar is not connected to the relay (${f ? f.message : 'reconnecting'}); see \`tether agent status\``;
    }
    if (!this.transport.roster().includes(peer))
      return `'${peer}' is not in room '${this.cfg.room}' now`;
    if (!this.bus.isOpen(peer)) return `'${peer}' is in the room but not ready for messages yet`;
    return null;
  }

  broadcast(type, payload, topic = null) {
    const r = this.bus.broadcast(type, payload, { topic });
    if (!r.ok)
      return { ok: false, error: `cannot broadcast: ${r.code} at ${r.field}: ${r.detail}` };
    return { ok: true, id: r.id, delivered: r.sentTo, missed: r.rejectedBy };
  }

  rpcHandlers() {
    return {
      status: () => ({ ok: true, ...this.status() }),
      peers: () => ({ ok: true, peers: this.peers() }),
      send: (a) => {
        const type = a.type ?? 'chat';
        // Which types may be sent by hand is the bus core's (kDirectSendTypes).
        const sendTypes = loadedBus().directSendTypes;
        if (!sendTypes.includes(type)) {
          return {
            ok: false,
            error: `--type must be ${sendTypes.slice(0, -1).join(', ')} or ${sendTypes.at(-1)} (got '${type}')`,
          };
        }
        if (a.to === this.cfg.id)
          return {
            ok: false,
            error: 'that is our own id; name another peer (see `tether agent peers`)',
          };
        // The MCP send refuses a name nobody has used in this room unless told it will join (the
        // caller words the fix); the CLI queues it and warns.
        if (a.refuseUnseen && !this.seen.has(a.to)) {
          const seen = this.seen.names().slice(-20);
          return {
            ok: false,
            unknownPeer: true,
            seen,
            error: `nobody named '${a.to}' has been in room '${this.cfg.room}' since this agent joined it${seen.length ? ` (seen: ${seen.join(', ')})` : ''}`,
          };
        }
        const r = this.outbox.enqueue(a.to, type, a.payload, a.topic ?? null);
        // A name nobody has used in this room is most likely a typo: say so, with the names seen.
        if (r.ok && !this.seen.has(a.to))
          Object.assign(r, { unknownPeer: true, seen: this.seen.names().slice(-20) });
        return r;
      },
      broadcast: (a) => this.broadcast(a.type ?? 'chat', a.payload, a.topic ?? null),
      history: (a) => this.mailbox.requestHistory(this.bus, a.peer, a.count),
      leave: () => {
        setImmediate(() => this.stop(0));
        return { ok: true, pid: process.pid };
      },
    };
  }

  async stop(code) {
    if (this.stopping) return;
    this.stopping = true;
    this.bus?.close();
    this.wake?.close();
    this.hosted.close();
    await this.swarm.close();
    try {
      await this.transport?.close();
    } catch {}
    this.rpc.close();
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
  // Every line passes redact(): the log never holds a ticket or a token.
  const log = (msg) => console.error(`${new Date().toISOString()} ${redact(msg)}`);
  const cfg = readJson(files(dir).config);
  if (!cfg) {
    log(`no config in ${files(dir).config}; start the sidecar with \`tether agent join\``);
    process.exit(2);
  }
  takeLock(dir);
  let s;
  try {
    // Records on disk and envelopes on the wire are checked by the bus core: load it first.
    if (!(await useBus())) throw new Error(busLoadFailure());
    s = new Sidecar(dir, cfg, { log });
    process.on('SIGTERM', () => s.stop(0));
    process.on('SIGINT', () => s.stop(0));
    await s.start();
  } catch (err) {
    releaseLock(dir);
    throw err;
  }
  log(`sidecar ${process.pid} for '${cfg.id}' in room '${cfg.room}' via ${cfg.relay}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(redact(err.stack ?? String(err)));
    process.exit(1);
  });
}
