// An in-memory PeerTransport network for the bus tests: every endpoint implements
// web/peer/transport.d.ts exactly (boolean send results, open/close/text/roster events), and the
// test steps delivery explicitly, so runs are deterministic and need no timers. Links can be
// "connected but not open" (peerConnected before dataChannelOpen) and can reject sends, which is
// what the bus must survive. The real WebRTC transport is tested end to end in tests/e2e/.
export class LoopNet {
  constructor() {
    this.endpoints = new Map();
    this.links = new Map(); // "a|b" (sorted) -> { open }
    this.inflight = [];
  }
  key(a, b) {
    return a < b ? `${a}|${b}` : `${b}|${a}`;
  }
  endpoint(id) {
    const ep = new LoopEndpoint(this, id);
    this.endpoints.set(id, ep);
    return ep;
  }
  /** Both peers see each other in the roster; the channel is not open yet. */
  connect(a, b) {
    this.links.set(this.key(a, b), { open: false });
    for (const id of [a, b]) this.endpoints.get(id).fire('roster', this.roster(id));
  }
  roster(id, { all = false } = {}) {
    const out = [];
    for (const [k, link] of this.links) {
      if (link.hiddenFrom?.has(id) && !all) continue;
      const [x, y] = k.split('|');
      if (x === id) out.push(y);
      else if (y === id) out.push(x);
    }
    return out;
  }
  /**
   * The relay tells `a` that member `b` left, while the channel stays as it was: alive (b's
   * signaling blipped) or, with `dead`, still "open" but carrying nothing (b's tab closed and the
   * channel has not timed out yet).
   */
  unlist(a, b, { dead = false } = {}) {
    const link = this.links.get(this.key(a, b));
    (link.hiddenFrom ??= new Set()).add(a);
    link.dead = dead;
    this.endpoints.get(a).fire('roster', this.roster(a));
  }
  /** `b` is back on `a`'s roster; the channel is untouched. */
  relist(a, b) {
    this.links.get(this.key(a, b)).hiddenFrom?.delete(a);
    this.endpoints.get(a).fire('roster', this.roster(a));
  }
  open(a, b) {
    this.links.get(this.key(a, b)).open = true;
    this.endpoints.get(a).fire('open', b);
    this.endpoints.get(b).fire('open', a);
  }
  close(a, b) {
    this.links.get(this.key(a, b)).open = false;
    this.endpoints.get(a).fire('close', b);
    this.endpoints.get(b).fire('close', a);
  }
  isOpen(a, b) {
    return this.links.get(this.key(a, b))?.open === true;
  }
  /** Delivers everything in flight, including what the deliveries cause. Returns messages moved. */
  deliver(limit = 10000) {
    let n = 0;
    while (this.inflight.length > 0 && n < limit) {
      const { from, to, text } = this.inflight.shift();
      n++;
      if (!this.isOpen(from, to) || this.links.get(this.key(from, to)).dead) continue; // lost
      this.endpoints.get(to).fire('text', from, text);
    }
    return n;
  }
}

export class LoopEndpoint {
  constructor(net, id) {
    this.net = net;
    this.selfId = id;
    this.handlers = [];
    this.rejectNext = 0; // the next N sends return false (e.g. closed meanwhile)
    this.sent = []; // every accepted {to, text}
  }
  fire(kind, ...args) {
    for (const h of this.handlers.slice()) h[kind]?.(...args);
  }
  openPeers() {
    return this.net
      .roster(this.selfId, { all: true })
      .filter((p) => this.net.isOpen(this.selfId, p));
  }
  roster() {
    return this.net.roster(this.selfId);
  }
  send(peer, text) {
    if (this.rejectNext > 0) {
      this.rejectNext--;
      return false;
    }
    if (!this.net.isOpen(this.selfId, peer)) return false;
    this.sent.push({ to: peer, text });
    this.net.inflight.push({ from: this.selfId, to: peer, text });
    return true;
  }
  sendBinary() {
    return false;
  }
  bufferedAmount() {
    return 0;
  }
  hasBinary() {
    return false;
  }
  subscribe(h) {
    this.handlers.push(h);
    return () => {
      this.handlers = this.handlers.filter((x) => x !== h);
    };
  }
  async close() {}
}
