// The WebRTC PeerTransport (web/peer/transport.d.ts; agent-bus-and-swarm.md § WebRTC layers,
// § Surviving a network drop). One RTCPeerConnection per peer with two negotiated data channels:
// `control` (ordered, JSON envelopes) and `x-bin` (raw chunk frames). Discovery and signaling ride
// the room relay (room-relay.md § WebRTC signaling): the welcome's `members` and `member` events
// are the roster, and offer/answer/ICE travel as `signal` messages.
//
// Runs in browsers (native RTCPeerConnection / WebSocket) and in Node (pass the constructors of a
// WebRTC library and of `ws`). This is I/O glue: it makes no swarm or bus decisions.
//
// Glare: only the peer with the lower id offers; the other asks it to (`{k:'renegotiate'}`), so
// two offers never cross. Each offer carries a generation; answers and candidates of an older
// generation are ignored, so a rebuild never mixes with the connection it replaces.

const CONTROL_ID = 0; // negotiated channel ids: both ends create them, no ondatachannel race
const BINARY_ID = 1;
const DEFAULT_MAX_MESSAGE = 65_536; // every implementation must accept this (RFC 8841)
// A send is refused above this much queued data: the caller keeps the message (transport.d.ts).
const CONTROL_BUFFER_LIMIT = 8 << 20;
const BINARY_BUFFER_LIMIT = 16 << 20;
// The binary lane's low-water mark: `drain` fires when the queue falls below it.
const BINARY_LOW_WATER = 1 << 20;
const OPEN_TIMEOUT_MS = 10_000; // a negotiation not open by then is started again
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;
const SIGNAL_PROTO = 3; // mesh-protocol version the room relay speaks (relay.d.ts)
// An id or room is a room origin; bound it like an envelope's streamId (agent-bus-notes.md).
const MAX_ID = 128;

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
 * @param {import('./webrtc-transport.d.ts').WebRtcTransportOptions} options
 * @returns {import('./webrtc-transport.d.ts').WebRtcTransport}
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
  if (typeof selfId !== 'string' || selfId.length === 0 || selfId.length > MAX_ID)
    throw new TypeError(`selfId must be a non-empty string of at most ${MAX_ID} characters`);
  if (typeof room !== 'string' || room.length === 0)
    throw new TypeError('room must be a non-empty string');
  if (!PC) throw new TypeError('no RTCPeerConnection: pass one (in Node, from a WebRTC library)');
  if (!WS) throw new TypeError('no WebSocket: pass one (in Node 20, the `ws` package)');

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
  const instance = Math.random().toString(36).slice(2, 10); // distinguishes our generations
  let genCounter = 0;
  /** @type {Map<string, {pc: any, gen: string, control: any, binary: any, open: boolean, offerer: boolean, pending: any[]}>} */
  const peers = new Map();
  let roster = [];
  let ws = null;
  let closed = false;
  let signalingUp = false;
  let everWelcomed = false;
  let backoff = RECONNECT_MIN_MS;
  let reconnectTimer = null;
  const pendingRebuilds = new Set(); // asked for while signaling was down
  const stats = { offers: 0, answers: 0, rebuilds: 0, signalingReconnects: 0, refusedSignals: 0 };
  let resolveReady;
  const ready = new Promise((r) => (resolveReady = r));

  function signal(to, data) {
    if (!signalingUp) return false;
    try {
      ws.send(JSON.stringify({ t: 'signal', room, to, data }));
      return true;
    } catch {
      return false;
    }
  }

  function teardown(peer) {
    const st = peers.get(peer);
    if (!st) return;
    peers.delete(peer);
    clearTimeout(st.openTimer);
    const wasOpen = st.open;
    st.open = false;
    for (const ch of [st.control, st.binary]) {
      if (!ch) continue;
      ch.onopen = ch.onclose = ch.onmessage = ch.onbufferedamountlow = null;
      try {
        ch.close();
      } catch {}
    }
    st.pc.onicecandidate = st.pc.onconnectionstatechange = null;
    try {
      st.pc.close();
    } catch {}
    if (wasOpen) emit('close', peer);
  }

  function makeConnection(peer, gen, offerer) {
    teardown(peer);
    const pc = new PC(rtcConfig);
    const st = { pc, gen, control: null, binary: null, open: false, offerer, pending: [] };
    peers.set(peer, st);
    pc.onicecandidate = (e) => {
      const c = e.candidate;
      if (!c || !c.candidate || !candidateFilter(c)) return;
      signal(peer, {
        k: 'ice',
        gen,
        c: { candidate: c.candidate, sdpMid: c.sdpMid, sdpMLineIndex: c.sdpMLineIndex },
      });
    };
    pc.onconnectionstatechange = () => {
      if (peers.get(peer) !== st) return;
      if (pc.connectionState === 'failed' || pc.connectionState === 'closed') {
        log('connection', peer, pc.connectionState);
        teardown(peer);
        // A failed path is rebuilt by the offerer when signaling can carry it.
        if (roster.includes(peer)) requestRebuild(peer);
      }
    };
    st.control = pc.createDataChannel('control', {
      negotiated: true,
      id: CONTROL_ID,
      ordered: true,
    });
    st.binary = pc.createDataChannel('x-bin', { negotiated: true, id: BINARY_ID, ordered: true });
    st.binary.binaryType = 'arraybuffer';
    st.control.binaryType = 'arraybuffer';
    st.binary.bufferedAmountLowThreshold = BINARY_LOW_WATER;
    // A connection that never opens (a signal lost while the other side's signaling was down)
    // is asked for again.
    st.openTimer = setTimeout(() => {
      if (peers.get(peer) === st && !st.open && roster.includes(peer)) {
        log('connection did not open; asking again', peer);
        connect(peer);
      }
    }, OPEN_TIMEOUT_MS);
    // `open` waits for both lanes: both are negotiated on one SCTP association, and a peer
    // reported open before its x-bin lane would be planned as one without it (base64 chunks on
    // the control lane for the whole transfer).
    const maybeOpen = () => {
      if (peers.get(peer) !== st || st.open) return;
      if (st.control.readyState !== 'open' || st.binary.readyState !== 'open') return;
      st.open = true;
      clearTimeout(st.openTimer);
      emit('open', peer);
    };
    st.control.onopen = maybeOpen;
    st.binary.onopen = maybeOpen;
    st.control.onclose = () => {
      if (peers.get(peer) !== st || !st.open) return;
      st.open = false;
      emit('close', peer);
    };
    st.control.onmessage = (e) => {
      if (peers.get(peer) !== st) return;
      if (typeof e.data === 'string') emit('text', peer, e.data);
      // Binary on the control lane is nobody's protocol: ignored.
    };
    st.binary.onmessage = (e) => {
      if (peers.get(peer) !== st || st.blackhole) return;
      const b = bytesOf(e.data);
      if (b) emit('binary', peer, b);
    };
    st.binary.onbufferedamountlow = () => {
      if (peers.get(peer) === st && st.open) emit('drain', peer);
    };
    return st;
  }

  async function offer(peer) {
    const gen = `${instance}.${++genCounter}`;
    const st = makeConnection(peer, gen, true);
    stats.offers++;
    try {
      await st.pc.setLocalDescription(await st.pc.createOffer());
      if (peers.get(peer) !== st) return;
      signal(peer, { k: 'offer', gen, sdp: st.pc.localDescription.sdp });
    } catch (e) {
      log('offer failed', peer, e);
      if (peers.get(peer) === st) teardown(peer);
    }
  }

  async function answer(peer, gen, sdp) {
    const st = makeConnection(peer, gen, false);
    stats.answers++;
    try {
      await st.pc.setRemoteDescription({ type: 'offer', sdp });
      await st.pc.setLocalDescription(await st.pc.createAnswer());
      if (peers.get(peer) !== st) return;
      signal(peer, { k: 'answer', gen, sdp: st.pc.localDescription.sdp });
      for (const c of st.pending.splice(0)) await st.pc.addIceCandidate(c).catch(() => {});
    } catch (e) {
      log('answer failed', peer, e);
      if (peers.get(peer) === st) teardown(peer);
    }
  }

  const weOffer = (peer) => selfId < peer;

  /** (Re)establishes the connection to `peer` from whichever side offers. */
  function connect(peer) {
    if (!signalingUp) {
      pendingRebuilds.add(peer);
      return;
    }
    if (weOffer(peer)) offer(peer);
    else {
      teardown(peer);
      signal(peer, { k: 'renegotiate' });
    }
  }

  function requestRebuild(peer) {
    stats.rebuilds++;
    connect(peer);
  }

  async function onSignal(from, data) {
    if (typeof from !== 'string' || !data || typeof data !== 'object' || from === selfId) {
      stats.refusedSignals++;
      return;
    }
    const gen = typeof data.gen === 'string' && data.gen.length <= 64 ? data.gen : null;
    switch (data.k) {
      case 'offer':
        // Only the lower id offers; an offer from a higher id is a confused or hostile peer.
        if (weOffer(from) || !gen || typeof data.sdp !== 'string') break;
        await answer(from, gen, data.sdp);
        return;
      case 'answer': {
        const st = peers.get(from);
        if (!st || !st.offerer || st.gen !== gen || typeof data.sdp !== 'string') break;
        try {
          await st.pc.setRemoteDescription({ type: 'answer', sdp: data.sdp });
          for (const c of st.pending.splice(0)) await st.pc.addIceCandidate(c).catch(() => {});
        } catch (e) {
          log('answer rejected', from, e);
        }
        return;
      }
      case 'ice': {
        const st = peers.get(from);
        const c = data.c;
        if (!st || st.gen !== gen || !c || typeof c.candidate !== 'string') break;
        const init = {
          candidate: c.candidate,
          sdpMid: c.sdpMid ?? null,
          sdpMLineIndex: c.sdpMLineIndex ?? null,
        };
        if (!candidateFilter(init)) return;
        if (!st.pc.remoteDescription) st.pending.push(init);
        else await st.pc.addIceCandidate(init).catch(() => {});
        return;
      }
      case 'renegotiate':
        if (!weOffer(from)) break;
        await offer(from);
        return;
    }
    stats.refusedSignals++;
  }

  function setRoster(list) {
    roster = list.filter((m) => typeof m === 'string' && m !== selfId && m.length <= MAX_ID);
    emit('roster', roster.slice());
  }

  function healthy(peer) {
    const st = peers.get(peer);
    return (
      !!st && st.open && st.pc.connectionState !== 'failed' && st.pc.connectionState !== 'closed'
    );
  }

  function onServer(text) {
    let m;
    try {
      m = JSON.parse(text);
    } catch {
      return;
    }
    if (!m || m.room !== room) return;
    if (m.t === 'welcome') {
      signalingUp = true;
      backoff = RECONNECT_MIN_MS;
      setRoster(Array.isArray(m.members) ? m.members : []);
      // § Surviving a network drop: the "already viewed" set is cleared on every welcome. Each
      // member is looked at afresh: a healthy connection is kept, anything else is rebuilt.
      const again = new Set(pendingRebuilds);
      pendingRebuilds.clear();
      for (const p of roster) if (!healthy(p) || again.has(p)) connect(p);
      if (everWelcomed) {
        stats.signalingReconnects++;
        emit('reconnect');
      }
      everWelcomed = true;
      resolveReady();
    } else if (m.t === 'member' && typeof m.origin === 'string' && m.origin !== selfId) {
      if (m.gone) {
        // The member's signaling left. Its data path may still be alive (a signaling blip): keep
        // a working connection; a dead one is noticed by the channel or the swarm's misses.
        setRoster(roster.filter((p) => p !== m.origin));
      } else if (!roster.includes(m.origin)) {
        // The joiner initiates (its welcome lists us): a restarted process has no connection
        // state and asks afresh, while a member whose signaling merely blipped keeps a working
        // connection. Negotiating from both sides here would replace connections mid-transfer.
        setRoster([...roster, m.origin]);
      }
    } else if (m.t === 'signal') {
      onSignal(m.from, m.data);
    } else if (m.t === 'reject') {
      log('relay rejected us', m.reason);
    }
  }

  function dial() {
    if (closed) return;
    reconnectTimer = null;
    let sock;
    try {
      sock = new WS(url);
    } catch (e) {
      log('dial failed', e);
      return scheduleReconnect();
    }
    ws = sock;
    sock.onopen = () => {
      sock.send(
        JSON.stringify({ t: 'hello', room, origin: selfId, proto: SIGNAL_PROTO, policyVersion }),
      );
    };
    sock.onmessage = (e) => {
      if (ws === sock) onServer(typeof e.data === 'string' ? e.data : String(e.data));
    };
    sock.onclose = () => {
      if (ws !== sock) return;
      ws = null;
      if (signalingUp) {
        signalingUp = false;
        emit('signalingDown');
      }
      scheduleReconnect();
    };
    sock.onerror = () => {};
  }

  function scheduleReconnect() {
    if (closed || reconnectTimer) return;
    reconnectTimer = setTimeout(dial, backoff);
    backoff = Math.min(RECONNECT_MAX_MS, backoff * 2);
  }

  dial();

  function lane(peer, which) {
    const st = peers.get(peer);
    if (!st || !st.open) return null;
    const ch = st[which];
    return ch && ch.readyState === 'open' ? ch : null;
  }

  return {
    selfId,
    ready,
    openPeers: () => [...peers.entries()].filter(([, st]) => st.open).map(([p]) => p),
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
      const st = peers.get(peer);
      return st?.binary ? st.binary.bufferedAmount : 0;
    },
    hasBinary: (peer) => lane(peer, 'binary') !== null,
    /** The negotiated SCTP message limit with `peer` (65,536 when unknown). */
    maxMessageSize(peer) {
      const n = peers.get(peer)?.pc.sctp?.maxMessageSize;
      return typeof n === 'number' && n > 0 && Number.isFinite(n) ? n : DEFAULT_MAX_MESSAGE;
    },
    signalingUp: () => signalingUp,
    /** Tears down and rebuilds the connection to `peer`; held while signaling is down. */
    rebuild(peer) {
      requestRebuild(peer);
    },
    /**
     * Fault injection for tests: from now on, binary frames from `peer` on the current connection
     * are silently dropped while every channel still reports open: the dead path of § Surviving
     * a network drop that only the swarm's misses can notice. A rebuild clears it.
     */
    blackhole(peer) {
      const st = peers.get(peer);
      if (st) st.blackhole = true;
      return !!st;
    },
    /** Drops our signaling socket (tests: a signaling outage from our side). */
    dropSignaling() {
      ws?.close();
    },
    stats: () => ({ ...stats, peers: peers.size }),
    subscribe(h) {
      handlers.add(h);
      return () => handlers.delete(h);
    },
    async close() {
      closed = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      for (const p of [...peers.keys()]) teardown(p);
      const sock = ws;
      ws = null;
      signalingUp = false;
      try {
        sock?.close();
      } catch {}
    },
  };
}
