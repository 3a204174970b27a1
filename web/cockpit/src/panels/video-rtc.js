// The cockpit's one recvonly RTCPeerConnection per viewer session (cockpit-wire-protocol.md
// § WebRTC video), as the viewer session core asks for it (web/glue/cockpit-viewer.js `webrtc`):
// open a fresh one and hand back its offer, apply the relay's answer, apply each relay offer (a
// pull) and hand back the answer. It keeps the received tracks by mid; video panels show the one
// whose mid the core says carries their channel. Decisions (when to open, which mid is which
// channel, live or stalled) are the core's.

// Signaling is non-trickle: a description goes out once its candidates are in it. Gathering can
// hang on a STUN or TURN server that never answers, so it is bounded; what was gathered by then
// goes out (the SFU's own candidates still let the connection form).
const GATHER_BOUND_MS = 5000;

function gathered(pc) {
  if (pc.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      pc.removeEventListener('icegatheringstatechange', check);
      resolve();
    };
    const check = () => pc.iceGatheringState === 'complete' && done();
    const timer = setTimeout(done, GATHER_BOUND_MS);
    pc.addEventListener('icegatheringstatechange', check);
  });
}

export class RtcVideo {
  #pc = null;
  #tracks = new Map(); // mid -> MediaStreamTrack
  #listeners = new Set();
  /** Called with the connection's connectionState (the session reports it to the core). */
  onState = null;

  /** A fresh recvonly connection, replacing any old one; resolves with its offer's SDP. */
  async open({ iceServers }) {
    this.close();
    const pc = new RTCPeerConnection({ iceServers, bundlePolicy: 'max-bundle' });
    this.#pc = pc;
    pc.addTransceiver('video', { direction: 'recvonly' });
    pc.ontrack = (e) => {
      if (this.#pc !== pc) return;
      this.#tracks.set(e.transceiver.mid, e.track);
      this.#notify();
    };
    pc.onconnectionstatechange = () => {
      if (this.#pc === pc) this.onState?.(pc.connectionState);
    };
    await pc.setLocalDescription();
    await gathered(pc);
    if (this.#pc !== pc) throw new Error('a newer connection replaced this one');
    return pc.localDescription.sdp;
  }

  /** The relay's answer to the offer. */
  async accept(sdp) {
    await this.#current().setRemoteDescription({ type: 'answer', sdp });
  }

  /** A relay offer (a pull): applied, and the answer's SDP handed back. */
  async answer({ sdp }) {
    const pc = this.#current();
    await pc.setRemoteDescription({ type: 'offer', sdp });
    await pc.setLocalDescription();
    await gathered(pc);
    return pc.localDescription.sdp;
  }

  /** The received track on `mid`, or null. */
  track(mid) {
    return (mid != null && this.#tracks.get(mid)) || null;
  }

  /** Runs `fn` whenever a track arrives; returns the unsubscribe. */
  subscribe(fn) {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** The connection's inbound video stats per mid: {jitterBufferMs, decodeMs, rttMs}. */
  async stats() {
    const out = new Map();
    if (!this.#pc) return out;
    const report = await this.#pc.getStats();
    let rttMs = null;
    for (const s of report.values())
      if (s.type === 'candidate-pair' && s.nominated && s.currentRoundTripTime != null)
        rttMs = s.currentRoundTripTime * 1000;
    for (const s of report.values()) {
      if (s.type !== 'inbound-rtp' || s.kind !== 'video') continue;
      out.set(s.mid, {
        jitterBufferMs: s.jitterBufferEmittedCount
          ? (s.jitterBufferDelay / s.jitterBufferEmittedCount) * 1000
          : null,
        decodeMs: s.framesDecoded ? (s.totalDecodeTime / s.framesDecoded) * 1000 : null,
        rttMs,
      });
    }
    return out;
  }

  close() {
    const pc = this.#pc;
    this.#pc = null;
    this.#tracks.clear();
    pc?.close();
    this.#notify();
  }

  #current() {
    if (!this.#pc) throw new Error('no peer connection is open');
    return this.#pc;
  }

  #notify() {
    for (const fn of this.#listeners) fn();
  }
}
