// The WebRTC PeerTransport (web/peer/transport.d.ts; agent-bus-and-swarm.md § WebRTC layers,
// § Surviving a network drop). One RTCPeerConnection per peer with two negotiated data channels:
// `control` (ordered, JSON envelopes) and `x-bin` (raw chunk frames). Discovery and signaling ride
// the room relay (room-relay.md § WebRTC signaling).
//
// Two cores decide everything: the room member (src/room/member.hpp: hello, welcome, roster,
// signals, reconnect with jittered backoff) under the WebSocket, and the signaling negotiation
// (src/bus/signaling.hpp: who offers, generations, renegotiation, glare, rebuilds, the open
// timeout). This file is I/O glue: it owns the WebSocket, the RTCPeerConnections and their
// channels, carries the cores' actions out and feeds every socket and connection event back in.
//
// Runs in browsers (native RTCPeerConnection / WebSocket) and in Node (pass the constructors of a
// WebRTC library and of `ws`). It makes no swarm or bus decisions.
import { createRoomMember } from '../glue/room-member.js';
import { createSignaling, signalingLimits } from '../glue/signaling.js';

/** Forwards only candidates on 127.0.0.1 (tests, benches: TOOLCHAIN.md keeps WebRTC on loopback). */
export function loopbackOnly(candidate) {
  return / 127\.0\.0\.1 /.test(candidate.candidate ?? '');
}

function bytesOf(data) {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data))
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return null;
}

/**
 * Joins `room` on the relay at `url` as `selfId` and connects to every member.
 * @param {import('./index.js').WebRtcTransportOptions} options
 * @returns {import('./index.js').WebRtcTransport}
 */
export function createWebRtcTransport(options) {
  const {
    url,
    room,
    selfId,
    RTCPeerConnection: PC = globalThis.RTCPeerConnection,
    WebSocket: WS = globalThis.WebSocket,
    rtcConfig = { iceServers: [] },
    candidateFilter = () => true,
    policyVersion = 1,
    log = () => {},
  } = options;
  if (!PC) throw new TypeError('no RTCPeerConnection: pass one (in Node, from a WebRTC library)');
  if (!WS) throw new TypeError('no WebSocket: pass one (in Node 20, the `ws` package)');
  // Used as the platform's own: a library's (node-datachannel/polyfill, ws) has their shape.
  const PeerConnection = /** @type {typeof globalThis.RTCPeerConnection} */ (PC);
  const Socket = /** @type {typeof globalThis.WebSocket} */ (WS);
  // The channels, their bounds and the redial bounds are the signaling core's
  // (src/bus/signaling.hpp).
  const L = signalingLimits();
  const CONTROL_ID = L.controlChannelId;
  const BINARY_ID = L.binaryChannelId;
  const DEFAULT_MAX_MESSAGE = L.defaultChannelMessageBytes;
  // A send is refused above this much queued data: the caller keeps the message (transport.d.ts).
  const CONTROL_BUFFER_LIMIT = L.controlBufferLimit;
  const BINARY_BUFFER_LIMIT = L.binaryBufferLimit;
  // The binary lane's low-water mark: `drain` fires when the queue falls below it.
  const BINARY_LOW_WATER = L.binaryLowWater;

  const handlers = new Set();
  const emit = (name, ...args) => {
    for (const h of handlers) {
      try {
        h[name]?.(...args);
      } catch (e) {
        log('handler', name, e);
      }
    }
  };
  /** @type {Map<string, {pc: any, gen: string, control: any, binary: any, maxMessage: number, blackhole?: boolean}>} */
  const conns = new Map(); // peer -> the current generation's connection
  let roster = [];
  let ws = null;
  let closed = false;
  let resolveReady;
  const ready = new Promise((r) => (resolveReady = r));

  // ---- the room: one WebSocket under the member core --------------------------------------
  const member = createRoomMember(
    {
      room,
      selfId,
      policyVersion,
      reconnectMinMs: L.reconnectMinMs,
      reconnectMaxMs: L.reconnectMaxMs,
    },
    {
      dial,
      transmit(frame) {
        try {
          ws?.send(frame.text());
        } catch (e) {
          log('signal send failed', e);
        }
      },
      hangUp() {
        const sock = ws;
        ws = null;
        try {
          sock?.close();
        } catch {}
      },
      event(e) {
        switch (e.kind) {
          case 'joined':
            signaling.welcome(e.members);
            resolveReady();
            break;
          case 'member':
          case 'left':
            signaling.roster(member.roster());
            break;
          case 'signal':
            signaling.signal(e.origin, e.text);
            break;
          case 'down':
            signaling.signalingDown();
            break;
          case 'refused':
            log('relay refused us', e.reason, e.text);
            break;
        }
      },
    },
  );

  function dial() {
    if (closed) return;
    let sock;
    try {
      sock = new Socket(url);
    } catch (e) {
      log('dial failed', e);
      member.linkClosed();
      return;
    }
    ws = sock;
    sock.onopen = () => {
      if (ws === sock) member.linkOpen();
    };
    sock.onmessage = (e) => {
      if (ws === sock) member.linkMessage(typeof e.data === 'string' ? e.data : String(e.data));
    };
    sock.onclose = () => {
      if (ws !== sock) return;
      ws = null;
      member.linkClosed();
    };
    sock.onerror = () => {};
  }

  // ---- the connections, under the signaling core -------------------------------------------
  const signaling = createSignaling(
    { selfId },
    {
      perform(a) {
        switch (a.kind) {
          case 'signal':
            member.sendSignal(a.peer, a.data);
            break;
          case 'create':
            create(a.peer, a.gen);
            break;
          case 'offer':
            withConn(a, async (c) => {
              await c.pc.setLocalDescription(await c.pc.createOffer());
              return c.pc.localDescription.sdp;
            });
            break;
          case 'answer':
            withConn(a, async (c) => {
              await c.pc.setRemoteDescription({ type: 'offer', sdp: a.sdp });
              await c.pc.setLocalDescription(await c.pc.createAnswer());
              return c.pc.localDescription.sdp;
            });
            break;
          case 'accept': {
            const c = current(a.peer, a.gen);
            if (!c) break;
            c.pc.setRemoteDescription({ type: 'answer', sdp: a.sdp }).then(
              () => signaling.remoteSet(a.peer, a.gen),
              (e) => {
                log('answer rejected', a.peer, e);
                signaling.failed(a.peer, a.gen);
              },
            );
            break;
          }
          case 'candidate': {
            const c = current(a.peer, a.gen);
            if (c && candidateFilter(a.candidate))
              c.pc.addIceCandidate(a.candidate).catch(() => {});
            break;
          }
          case 'close':
            teardown(a.peer, a.gen);
            break;
        }
      },
      event(e) {
        switch (e.kind) {
          case 'open':
            emit('open', e.peer);
            break;
          case 'close':
            emit('close', e.peer);
            break;
          case 'roster':
            roster = e.roster;
            emit('roster', roster.slice());
            break;
          case 'reconnect':
            emit('reconnect');
            break;
          case 'signaling-down':
            emit('signalingDown');
            break;
        }
      },
    },
  );

  const current = (peer, gen) => {
    const c = conns.get(peer);
    return c && c.gen === gen ? c : null;
  };

  // Runs one step of a negotiation (an offer or an answer) and reports its description or failure.
  function withConn(a, step) {
    const c = current(a.peer, a.gen);
    if (!c) return;
    step(c).then(
      (sdp) => signaling.description(a.peer, a.gen, sdp),
      (e) => {
        log(`${a.kind} failed`, a.peer, e);
        signaling.failed(a.peer, a.gen);
      },
    );
  }

  function teardown(peer, gen) {
    const c = current(peer, gen);
    if (!c) return;
    conns.delete(peer);
    for (const ch of [c.control, c.binary]) {
      if (!ch) continue;
      ch.onopen = ch.onclose = ch.onmessage = ch.onbufferedamountlow = null;
      try {
        ch.close();
      } catch {}
    }
    c.pc.onicecandidate = c.pc.onconnectionstatechange = null;
    try {
      c.pc.close();
    } catch {}
  }

  function create(peer, gen) {
    const pc = new PeerConnection(rtcConfig);
    const c = { pc, gen, control: null, binary: null, maxMessage: 0 };
    conns.set(peer, c);
    const live = () => conns.get(peer) === c;
    pc.onicecandidate = (e) => {
      const cand = e.candidate;
      if (!live() || !cand || !cand.candidate || !candidateFilter(cand)) return;
      signaling.localCandidate(peer, gen, cand);
    };
    pc.onconnectionstatechange = () => {
      if (!live()) return;
      log('connection', peer, pc.connectionState);
      signaling.connectionState(peer, gen, pc.connectionState);
    };
    c.control = pc.createDataChannel(L.controlChannelLabel, {
      negotiated: true,
      id: CONTROL_ID,
      ordered: true,
    });
    c.binary = pc.createDataChannel(L.binaryChannelLabel, {
      negotiated: true,
      id: BINARY_ID,
      ordered: true,
    });
    c.binary.binaryType = 'arraybuffer';
    c.control.binaryType = 'arraybuffer';
    c.binary.bufferedAmountLowThreshold = BINARY_LOW_WATER;
    // `open` waits for both lanes: both are negotiated on one SCTP association, and a peer
    // reported open before its x-bin lane would be planned as one without it.
    const maybeOpen = () => {
      if (live() && c.control.readyState === 'open' && c.binary.readyState === 'open')
        signaling.channelsOpen(peer, gen);
    };
    c.control.onopen = maybeOpen;
    c.binary.onopen = maybeOpen;
    c.control.onclose = () => {
      if (live()) signaling.channelClosed(peer, gen);
    };
    c.control.onmessage = (e) => {
      if (live() && typeof e.data === 'string') emit('text', peer, e.data);
      // Binary on the control lane is nobody's protocol: ignored.
    };
    c.binary.onmessage = (e) => {
      if (!live() || c.blackhole) return;
      const b = bytesOf(e.data);
      if (b) emit('binary', peer, b);
    };
    c.binary.onbufferedamountlow = () => {
      if (live() && signaling.isOpen(peer)) emit('drain', peer);
    };
  }

  function lane(peer, which) {
    const c = conns.get(peer);
    if (!c || !signaling.isOpen(peer)) return null;
    const ch = c[which];
    return ch && ch.readyState === 'open' ? ch : null;
  }

  member.start();

  return {
    selfId,
    ready,
    openPeers: () => [...conns.keys()].filter((p) => signaling.isOpen(p)),
    roster: () => roster.slice(),
    send(peer, text) {
      const ch = lane(peer, 'control');
      if (!ch || ch.bufferedAmount > CONTROL_BUFFER_LIMIT) return false;
      if (
        text.length * 3 > this.maxMessageSize(peer) &&
        new TextEncoder().encode(text).length > this.maxMessageSize(peer)
      )
        return false;
      try {
        ch.send(text);
        return true;
      } catch {
        return false;
      }
    },
    // RTCDataChannel.send copies what it queues: the swarm glue frames every chunk in one reused
    // buffer (transport.d.ts § copiesBinary).
    copiesBinary: true,
    sendBinary(peer, bytes) {
      const ch = lane(peer, 'binary');
      if (
        !ch ||
        ch.bufferedAmount > BINARY_BUFFER_LIMIT ||
        bytes.byteLength > this.maxMessageSize(peer)
      )
        return false;
      try {
        ch.send(bytes);
        return true;
      } catch {
        return false;
      }
    },
    bufferedAmount(peer) {
      const c = conns.get(peer);
      return c?.binary ? c.binary.bufferedAmount : 0;
    },
    hasBinary: (peer) => lane(peer, 'binary') !== null,
    /** The negotiated SCTP message limit with `peer` (65,536 when unknown). */
    maxMessageSize(peer) {
      const c = conns.get(peer);
      if (c?.maxMessage) return c.maxMessage;
      // Read once the lanes are open (the SCTP association has negotiated it by then) and kept:
      // the getter goes through RTCSctpTransport and cost 5% of a downloader's main thread when
      // every send read it (bench/README.md § Swarm 1 -> 1).
      const n = c?.pc.sctp?.maxMessageSize;
      if (!(typeof n === 'number' && n > 0 && Number.isFinite(n))) return DEFAULT_MAX_MESSAGE;
      if (c.binary?.readyState === 'open') c.maxMessage = n;
      return n;
    },
    signalingUp: () => signaling.signalingUp(),
    /** Tears down and rebuilds the connection to `peer`; held while signaling is down. */
    rebuild(peer) {
      signaling.rebuild(peer);
    },
    /**
     * Fault injection for tests: from now on, binary frames from `peer` on the current connection
     * are silently dropped while every channel still reports open: the dead path of § Surviving
     * a network drop that only the swarm's misses can notice. A rebuild clears it.
     */
    blackhole(peer) {
      const c = conns.get(peer);
      if (c) c.blackhole = true;
      return !!c;
    },
    /** Drops our signaling socket (tests: a signaling outage from our side). */
    dropSignaling() {
      ws?.close();
    },
    stats: () => {
      const s = signaling.stats();
      return { ...s, peers: conns.size };
    },
    subscribe(h) {
      handlers.add(h);
      return () => handlers.delete(h);
    },
    async close() {
      closed = true;
      signaling.close();
      member.close();
    },
  };
}
