// A raw viewer link for tests and benchmarks that speak the cockpit protocol by hand over real
// WebTransport: exact messages in, every message and frame out, and a pause that stops reading
// (a frozen tab). It decides nothing; the cockpit's real viewer client is web/glue/cockpit-viewer.js.
import { oneShot, readStream } from '../../../web/glue/cockpit-transport.js';

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
