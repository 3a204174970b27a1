// The viewer session on top of a RelayLink: hello, the robot list, watching a robot, keeping
// exactly the wanted channels subscribed, the teleop lease, and round-trip time from pings
// (cockpit-wire-v7-notes.md § Message set). State changes are published to one listener.

const PING_INTERVAL_MS = 2000;

export class ViewerSession {
  #link;
  #token;
  #listener;
  #wanted = new Set();
  #subscribed = new Set();
  #pingTimer = null;
  #pingSent = new Map();
  #pingN = 0;

  state = {
    link: { state: 'idle' },
    welcomed: false,
    robots: [],
    robotId: null,
    manifest: null,
    teleop: 'idle', // idle | requesting | held | refused
    rttMs: null,
    lastError: null,
    drops: 0,
  };

  /** @param {(state: object, event?: object) => void} listener */
  constructor({ token, listener }) {
    this.#token = token;
    this.#listener = listener;
  }

  attach(link) {
    this.#link = link;
  }

  // --- events from the link ---------------------------------------------------------------------
  onLinkState(s) {
    const wasOpen = this.state.link.state === 'open';
    this.state.link = s;
    if (s.state === 'open') {
      this.state.welcomed = false;
      const hello = { t: 'hello', v: 7, role: 'viewer' };
      if (this.#token) hello.token = this.#token;
      this.#link.sendControl(hello);
    } else if (wasOpen) {
      // A new session starts from nothing: subscriptions and the lease died with the old one.
      this.#subscribed.clear();
      this.state.teleop = 'idle';
      clearInterval(this.#pingTimer);
    }
    this.#emit({ type: 'link' });
  }

  onMessage(m) {
    switch (m.t) {
      case 'welcome':
        this.state.welcomed = true;
        this.#startPings();
        if (this.state.robotId) this.watch(this.state.robotId);
        break;
      case 'robots':
        this.state.robots = m.robots;
        break;
      case 'manifest':
        if (m.robotId !== this.state.robotId) return;
        this.state.manifest = m.manifest ?? null;
        this.#subscribed.clear();
        this.#syncSubs();
        break;
      case 'teleop_started':
        this.state.teleop = 'held';
        break;
      case 'teleop_stop':
        this.state.teleop = 'idle';
        break;
      case 'pong': {
        const sent = this.#pingSent.get(m.n);
        if (sent !== undefined) {
          this.state.rttMs = performance.now() - sent;
          this.#pingSent.delete(m.n);
        }
        break;
      }
      case 'error':
        this.state.lastError = { code: m.code, message: m.message, at: Date.now() };
        if (m.code === 'teleop_held') this.state.teleop = 'refused';
        if (m.code === 'robot_disconnected' || m.code === 'unknown_robot') this.#subscribed.clear();
        break;
      default:
        break;
    }
    this.#emit({ type: 'message', message: m });
  }

  onDrop(drop) {
    this.state.drops++;
    this.#emit({ type: 'drop', drop });
  }

  // --- operator actions ---------------------------------------------------------------------------
  watch(robotId) {
    if (robotId !== this.state.robotId) {
      this.state.manifest = null;
      this.state.teleop = 'idle';
    }
    this.state.robotId = robotId;
    this.#subscribed.clear();
    if (this.state.welcomed) this.#link.sendControl({ t: 'watch', robotId });
    this.#emit({ type: 'watch' });
  }

  /** The channels the visible panels (and open raw views) need; the session diffs sub/unsub. */
  want(channels) {
    this.#wanted = new Set(channels);
    this.#syncSubs();
  }

  teleopStart() {
    this.state.teleop = 'requesting';
    this.#link.sendControl({ t: 'teleop_start' });
    this.#emit({ type: 'teleop' });
  }

  teleopStop() {
    if (this.state.teleop === 'held' || this.state.teleop === 'requesting') {
      this.#link.sendControl({ t: 'teleop_stop' });
    }
    this.state.teleop = 'idle';
    this.#emit({ type: 'teleop' });
  }

  /** Teleop commands go as datagrams; the relay forwards only the lease holder's. */
  sendTeleop(message) {
    return this.#link.sendDatagram(message);
  }

  sendControl(message) {
    return this.#link.sendControl(message);
  }

  #syncSubs() {
    if (!this.state.welcomed || !this.state.manifest) return;
    const declared = new Set(this.state.manifest.channels.filter((c) => c.dir === 'rx').map((c) => c.ch));
    for (const ch of this.#wanted) {
      if (declared.has(ch) && !this.#subscribed.has(ch)) {
        this.#link.sendControl({ t: 'sub', ch });
        this.#subscribed.add(ch);
      }
    }
    for (const ch of [...this.#subscribed]) {
      if (!this.#wanted.has(ch)) {
        this.#link.sendControl({ t: 'unsub', ch });
        this.#subscribed.delete(ch);
      }
    }
  }

  #startPings() {
    clearInterval(this.#pingTimer);
    const ping = () => {
      const n = ++this.#pingN;
      this.#pingSent.set(n, performance.now());
      if (this.#pingSent.size > 8) this.#pingSent.delete(this.#pingSent.keys().next().value);
      this.#link.sendControl({ t: 'ping', n, ts: Date.now() / 1000 });
    };
    ping();
    this.#pingTimer = setInterval(ping, PING_INTERVAL_MS);
  }

  #emit(event) {
    this.#listener(this.state, event);
  }
}
