// Clients of the cockpit relay: WebTransport for any runtime that has it (browsers, Deno), and the
// robot's WebSocket twin for relays that serve no WebTransport (the edge):
// the robot leg and the viewer leg of cockpit-wire-protocol.md § Transport per leg. Framing and
// message validation come from the wire core (web/glue/wire.js); this file only moves bytes.

/** serverCertificateHashes for the relay's hex SHA-256 (its certificate is made at start-up). */
export function pinnedHashes(hex) {
  const value = new Uint8Array(hex.match(/../g).map((h) => parseInt(h, 16)));
  return [{ algorithm: 'sha-256', value }];
}

/** GET /api/info of a relay at http://host:port. */
export async function relayInfo(httpUrl = globalThis.location?.origin) {
  const res = await fetch(new URL('/api/info', httpUrl));
  if (!res.ok) throw new Error(`tether: ${httpUrl}/api/info answered ${res.status}`);
  return res.json();
}

/** A WebTransport session pinned to the relay's certificate (workaround 6: 127.0.0.1 URLs). */
export async function openWebTransport(info, path) {
  const wt = new WebTransport(`${info.wtUrl}${path}`, {
    serverCertificateHashes: pinnedHashes(info.certHash),
  });
  await wt.ready;
  return wt;
}

async function readStream(readable, onChunk) {
  const reader = readable.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      onChunk(value);
    }
  } catch {
    // reset: the decoder reports a partial frame on finish
  }
}

// Sends bytes on a fresh one-shot bidirectional stream (workaround 1) and never reads its receive
// half (workaround 3: the relay never writes there). Deno's close() sends FIN lazily
// (workaround 2); the relay counts bytes, so that is harmless.
async function oneShot(wt, bytes) {
  const s = await wt.createBidirectionalStream();
  s.readable.cancel().catch(() => {});
  const w = s.writable.getWriter();
  await w.write(bytes);
  w.close().catch(() => {});
}

/**
 * The robot leg: hello on a one-shot stream resent until the welcome datagram, datagrams in,
 * the relay's carrier in, channel data out on one-shot streams.
 */
export class RobotLink {
  constructor(wire, wt, { onDatagram, onCarrier, onClose } = {}) {
    this.wire = wire;
    this.wt = wt;
    this.onDatagram = onDatagram ?? (() => {});
    this.onCarrier = onCarrier ?? (() => {});
    this.welcomed = false;
    this.error = null;
    this.controlSeq = 0;
    this.closed = wt.closed.then(
      (info) => info,
      (e) => ({ reason: String(e?.message ?? e) }),
    );
    this.closed.then((info) => {
      this.isClosed = info ?? {};
      onClose?.(info);
    });
    this.dgWriter = wt.datagrams.writable.getWriter();
    this.#readDatagrams();
    this.#readCarrier();
  }

  async #readDatagrams() {
    await readStream(this.wt.datagrams.readable, (bytes) => {
      const r = this.wire.parseMessage(bytes, 'relay');
      if (!r.ok) return;
      if (r.type === 'welcome') this.welcomed = true;
      if (r.type === 'error') this.error = r.message;
      this.onDatagram(r.message);
    });
  }

  async #readCarrier() {
    const reader = this.wt.incomingUnidirectionalStreams.getReader();
    const { value, done } = await reader.read().catch(() => ({ done: true }));
    if (done) return;
    const decoder = new this.wire.DataFrameStream();
    await readStream(value, (chunk) => {
      const { frames, error } = decoder.push(chunk);
      for (const f of frames) {
        if (f.header.ch === '@control') {
          const r = this.wire.parseMessage(f.payload, 'relay');
          if (r.ok) this.onCarrier({ control: r.message });
        } else {
          this.onCarrier({ header: f.header, payload: f.payload });
        }
      }
      // A corrupt carrier fails the session (workaround 3): reconnecting re-baselines it.
      if (error) this.wt.close({ closeCode: 1, reason: `carrier: ${error.reason}` });
    });
  }

  /** Sends hello until the welcome arrives (or an error does); resolves to welcome or error. */
  async hello(message, { everyMs = 250, timeoutMs = 10000 } = {}) {
    const frame = this.controlFrame(message);
    const deadline = Date.now() + timeoutMs;
    while (!this.welcomed && !this.error && !this.isClosed && Date.now() < deadline) {
      await oneShot(this.wt, frame).catch(() => {});
      await new Promise((r) => setTimeout(r, everyMs));
    }
    if (this.error)
      throw Object.assign(
        new Error(`relay refused the robot: ${this.error.code}: ${this.error.message}`),
        { code: this.error.code },
      );
    if (this.isClosed)
      throw new Error(`the relay closed the session before welcome: ${this.isClosed.reason ?? ''}`);
    if (!this.welcomed) throw new Error('no welcome from the relay within 10 s');
  }

  controlFrame(message) {
    const text = this.wire.encodeMessage(message, 'robot');
    if (!text.ok) throw new Error(`invalid robot message: ${text.drop.detail}`);
    const r = this.wire.encodeDataFrame(
      { ch: '@control', seq: this.controlSeq++, ts: Date.now() / 1000, delivery: 'reliable' },
      new TextEncoder().encode(text.json),
    );
    if (!r.ok) throw new Error(r.error.message);
    return r.bytes;
  }

  /** An @control message (pub_ack, pub_nack, ...) on its own stream. */
  sendControl(message) {
    return oneShot(this.wt, this.controlFrame(message));
  }

  /** One channel frame on its own stream. */
  sendFrame(header, payload) {
    const r = this.wire.encodeDataFrame(header, payload);
    if (!r.ok) throw new Error(r.error.message);
    return oneShot(this.wt, r.bytes);
  }

  datagram(message) {
    const r = this.wire.encodeDatagram(message, 'robot');
    if (r.ok) this.dgWriter.write(r.bytes).catch(() => {});
  }

  /** Closes the session; resolves once it is closed (so a process may exit without leaving a
   * session for the relay's idle timeout to find), or after `waitMs`. */
  close(waitMs = 1000) {
    try {
      this.wt.close();
    } catch {}
    return Promise.race([this.closed, new Promise((r) => setTimeout(r, waitMs))]);
  }
}

/** A WebSocket to the relay's `/ws/<role>` twin, open and set to binary (the edge serves no
 * WebTransport: `/api/info` then has no `wtUrl`). */
export function openWebSocket(info, role) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${info.wsUrl}/ws/${role}`);
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => resolve(ws);
    ws.onerror = () =>
      reject(
        new Error(`tether: the WebSocket to ${info.wsUrl}/ws/${role} failed; is the relay up?`),
      );
  });
}

/**
 * The robot leg over a WebSocket (v7 notes § Endpoints): every message is one data frame, and
 * control messages and datagrams both ride `@control` frames. Same surface as RobotLink: `subs`
 * snapshots and relayed publishes go to onCarrier, every other relay message to onDatagram.
 */
export class RobotWsLink {
  constructor(wire, ws, { onDatagram, onCarrier, onClose } = {}) {
    this.wire = wire;
    this.ws = ws;
    this.onDatagram = onDatagram ?? (() => {});
    this.onCarrier = onCarrier ?? (() => {});
    this.welcomed = false;
    this.error = null;
    this.controlSeq = 0;
    this.closed = new Promise((resolve) => {
      ws.addEventListener('close', (e) => resolve({ closeCode: e.code, reason: e.reason }));
    });
    this.closed.then((info) => {
      this.isClosed = info;
      onClose?.(info);
    });
    ws.addEventListener('message', (e) => this.#onMessage(e.data));
  }

  #onMessage(data) {
    if (typeof data === 'string') return;
    const r = this.wire.decodeDataFrame(new Uint8Array(data));
    if (!r.ok) return; // one corrupt message is dropped alone
    if (r.header.ch !== '@control') return this.onCarrier({ header: r.header, payload: r.payload });
    const m = this.wire.parseMessage(r.payload, 'relay');
    if (!m.ok) return;
    if (m.type === 'welcome') this.welcomed = true;
    if (m.type === 'error') this.error = m.message;
    if (m.type === 'subs') this.onCarrier({ control: m.message });
    else this.onDatagram(m.message);
  }

  #send(bytes) {
    if (this.ws.readyState !== 1)
      throw new Error('tether: the relay WebSocket is closed; reconnect');
    this.ws.send(bytes);
  }

  /** Sends hello once (a WebSocket is reliable) and resolves at the welcome, or throws the error. */
  async hello(message, { timeoutMs = 10000 } = {}) {
    this.#send(this.controlFrame(message));
    const deadline = Date.now() + timeoutMs;
    while (!this.welcomed && !this.error && !this.isClosed && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    if (this.error)
      throw Object.assign(
        new Error(`relay refused the robot: ${this.error.code}: ${this.error.message}`),
        { code: this.error.code },
      );
    if (this.isClosed)
      throw new Error(
        `the relay closed the WebSocket before welcome: ${this.isClosed.reason ?? ''}`,
      );
    if (!this.welcomed) throw new Error(`no welcome from the relay within ${timeoutMs / 1000} s`);
  }

  controlFrame(message) {
    return RobotLink.prototype.controlFrame.call(this, message);
  }

  async sendControl(message) {
    this.#send(this.controlFrame(message));
  }

  async sendFrame(header, payload) {
    const r = this.wire.encodeDataFrame(header, payload);
    if (!r.ok) throw new Error(r.error.message);
    this.#send(r.bytes);
  }

  datagram(message) {
    try {
      this.#send(this.controlFrame(message));
    } catch {}
  }

  close(waitMs = 1000) {
    try {
      this.ws.close(1000, 'robot leaving');
    } catch {}
    return Promise.race([this.closed, new Promise((r) => setTimeout(r, waitMs))]);
  }
}

/**
 * The viewer leg: one bidirectional control stream, frames on relay-opened unidirectional streams
 * (a latest stream ends in RESET, which ends its read), teleop as datagrams, publishes on one-shot
 * streams.
 */
export class ViewerLink {
  constructor(wire, wt, { onMessage, onFrame, onClose } = {}) {
    this.wire = wire;
    this.wt = wt;
    this.onMessage = onMessage ?? (() => {});
    this.onFrame = onFrame ?? (() => {});
    this.messages = [];
    this.waiters = [];
    this.paused = null; // a promise that holds every stream read while set
    this.closed = wt.closed.then(
      (info) => info,
      (e) => ({ reason: String(e?.message ?? e) }),
    );
    this.closed.then((info) => onClose?.(info));
    this.dgWriter = wt.datagrams.writable.getWriter();
    this.ready = this.#openControl();
    this.#readStreams();
  }

  async #openControl() {
    const s = await this.wt.createBidirectionalStream();
    this.controlWriter = s.writable.getWriter();
    const decoder = new this.wire.ControlStream('relay');
    readStream(s.readable, (chunk) => {
      const { messages } = decoder.push(chunk);
      for (const r of messages) {
        if (!r.ok) continue;
        this.messages.push(r.message);
        this.onMessage(r.message);
        this.waiters = this.waiters.filter((w) => !w(r.message));
      }
    });
  }

  async #readStreams() {
    const reader = this.wt.incomingUnidirectionalStreams.getReader();
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ done: true }));
      if (done) return;
      this.#readFrames(value);
    }
  }

  async #readFrames(readable) {
    const decoder = new this.wire.DataFrameStream();
    const reader = readable.getReader();
    try {
      for (;;) {
        if (this.paused) await this.paused;
        const { value, done } = await reader.read();
        if (done) break;
        const { frames, error } = decoder.push(value);
        for (const f of frames) this.onFrame(f.header, f.payload);
        if (error) break;
      }
    } catch {
      // RESET ends a latest stream (workaround 12); a partial frame is dropped by design.
    } finally {
      decoder.close();
    }
  }

  /** Stops reading every stream until resume() (a frozen tab). */
  pause() {
    this.paused ??= new Promise((r) => (this.resumeNow = r));
  }
  resume() {
    const r = this.resumeNow;
    this.paused = null;
    r?.();
  }

  async send(message) {
    await this.ready;
    const r = this.wire.encodeControlFrame(message, 'viewer');
    if (!r.ok) throw new Error(`invalid viewer message: ${r.drop?.detail ?? r.error?.message}`);
    await this.controlWriter.write(r.bytes);
  }

  /** Resolves with the first message (already received or to come) that `match` accepts. */
  waitFor(match, timeoutMs = 10000) {
    const seen = this.messages.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const t = setTimeout(
        () => reject(new Error('timed out waiting for a relay message')),
        timeoutMs,
      );
      this.waiters.push((m) => {
        if (!match(m)) return false;
        clearTimeout(t);
        resolve(m);
        return true;
      });
    });
  }

  datagram(message) {
    const r = this.wire.encodeDatagram(message, 'viewer');
    if (r.ok) this.dgWriter.write(r.bytes).catch(() => {});
  }

  async publish(ch, id, payload, seq = 0) {
    const r = this.wire.encodeDataFrame(
      { ch, seq, ts: Date.now() / 1000, delivery: 'reliable', meta: { id } },
      payload,
    );
    if (!r.ok) throw new Error(r.error.message);
    await oneShot(this.wt, r.bytes);
  }

  /** Closes the session; resolves once it is closed (so a process may exit without leaving a
   * session for the relay's idle timeout to find), or after `waitMs`. */
  close(waitMs = 1000) {
    try {
      this.wt.close();
    } catch {}
    return Promise.race([this.closed, new Promise((r) => setTimeout(r, waitMs))]);
  }
}
