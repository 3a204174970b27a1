// The cockpit's link to a relay: WebTransport when the relay offers it, WebSocket otherwise
// (cockpit-wire-v7-notes.md § Endpoints). Bytes only: every frame and message is encoded,
// decoded and validated by the wire core; this file moves bytes and reconnects with backoff.

const BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000];

function hexToBytes(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/**
 * @typedef {{ state: string, transport?: string, detail?: string, attempt?: number }} LinkState
 */
export class RelayLink {
  #wire;
  #info;
  #handlers;
  #session = null;
  #closed = false;
  #attempt = 0;
  #timer = null;

  /**
   * @param {object} wire the `tether/wire` API
   * @param {{version: number, wtUrl?: string, certHash?: string, wsUrl: string}} info /api/info
   * @param {{onState(s: LinkState): void, onMessage(m: object): void, onFrame(f: object): void, onDrop(d: object): void}} handlers
   */
  constructor(wire, info, handlers) {
    this.#wire = wire;
    this.#info = info;
    this.#handlers = handlers;
  }

  start() {
    this.#connect();
  }

  get transport() {
    return this.#session?.kind ?? null;
  }

  /** Sends a viewer message on the control stream (or as an @control frame over WebSocket). */
  sendControl(message) {
    return this.#session?.sendControl(message) ?? false;
  }

  /** Sends an encoded data frame (a published value) to the relay. */
  sendFrame(bytes) {
    return this.#session?.sendFrame(bytes) ?? false;
  }

  /** Sends a viewer message as a datagram (teleop), or on the WebSocket lane. */
  sendDatagram(message) {
    return this.#session?.sendDatagram(message) ?? false;
  }

  close() {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#session?.close();
  }

  async #connect() {
    if (this.#closed) return;
    const useWt = this.#info.wtUrl && typeof WebTransport !== 'undefined';
    const kind = useWt ? 'webtransport' : 'websocket';
    this.#handlers.onState({ state: 'connecting', transport: kind, attempt: this.#attempt });
    try {
      const session = useWt
        ? await openWebTransport(this.#wire, this.#info, this.#handlers)
        : await openWebSocket(this.#wire, this.#info, this.#handlers);
      if (this.#closed) return session.close();
      this.#session = session;
      this.#attempt = 0;
      this.#handlers.onState({ state: 'open', transport: kind });
      const reason = await session.closed;
      this.#session = null;
      this.#retry(reason);
    } catch (e) {
      this.#retry(String(e?.message ?? e));
    }
  }

  #retry(detail) {
    if (this.#closed) return;
    const delay = BACKOFF_MS[Math.min(this.#attempt, BACKOFF_MS.length - 1)];
    this.#attempt++;
    this.#handlers.onState({ state: 'reconnecting', detail, attempt: this.#attempt, delayMs: delay });
    this.#timer = setTimeout(() => this.#connect(), delay);
  }
}

async function openWebTransport(wire, info, handlers) {
  const wt = new WebTransport(`${info.wtUrl}/viewer`, {
    serverCertificateHashes: info.certHash ? [{ algorithm: 'sha-256', value: hexToBytes(info.certHash) }] : undefined,
  });
  await wt.ready;
  const control = await wt.createBidirectionalStream();
  const writer = control.writable.getWriter();
  const datagrams = wt.datagrams.writable.getWriter();
  const encoder = new TextEncoder();

  // Viewer control stream: length-prefixed JSON in both directions.
  const reader = new wire.ControlStream('relay');
  (async () => {
    const r = control.readable.getReader();
    for (;;) {
      const { value, done } = await r.read();
      if (done) break;
      const { messages, error } = reader.push(value);
      for (const m of messages) (m.ok ? handlers.onMessage(m.message) : handlers.onDrop(m.drop));
      if (error) {
        handlers.onDrop({ reason: error.reason, detail: error.message });
        wt.close({ closeCode: 1, reason: 'corrupt control stream' });
        break;
      }
    }
  })().catch(() => {});

  // Relay-opened unidirectional streams carry data frames: one per latest frame (reset after),
  // or a persistent packed stream per reliable channel. Each stream gets its own decoder, so a
  // corrupt or reset stream fails alone (workaround 12: a reset ends a stream).
  (async () => {
    const incoming = wt.incomingUnidirectionalStreams.getReader();
    for (;;) {
      const { value: stream, done } = await incoming.read();
      if (done) break;
      readFrames(wire, stream, handlers);
    }
  })().catch(() => {});

  return {
    kind: 'webtransport',
    closed: wt.closed.then(
      (i) => i?.reason || 'closed',
      (e) => String(e?.message ?? e),
    ),
    sendControl(message) {
      const r = wire.encodeControlFrame(message, 'viewer');
      if (!r.ok) return false;
      writer.write(r.bytes).catch(() => {});
      return true;
    },
    sendDatagram(message) {
      const r = wire.encodeMessage(message, 'viewer');
      if (!r.ok) return false;
      datagrams.write(encoder.encode(r.json)).catch(() => {});
      return true;
    },
    // One frame per one-shot bidirectional stream: Deno never delivers client-opened
    // unidirectional streams (cockpit-wire-protocol.md, workaround 1).
    sendFrame(bytes) {
      wt.createBidirectionalStream()
        .then(async (s) => {
          const w = s.writable.getWriter();
          await w.write(bytes);
          await w.close();
        })
        .catch(() => {});
      return true;
    },
    close() {
      try {
        wt.close();
      } catch {
        /* already closed */
      }
    },
  };
}

async function readFrames(wire, stream, handlers) {
  const decoder = new wire.DataFrameStream();
  const r = stream.getReader();
  try {
    for (;;) {
      const { value, done } = await r.read();
      if (done) break;
      const { frames, error } = decoder.push(value);
      for (const f of frames) handlers.onFrame(f);
      if (error) {
        handlers.onDrop({ reason: error.reason, detail: error.message });
        r.cancel().catch(() => {});
        break;
      }
    }
  } catch {
    // A reset stream: a stale latest frame dropped by design.
  } finally {
    decoder.close();
  }
}

function openWebSocket(wire, info, handlers) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${info.wsUrl}/ws/viewer`);
    ws.binaryType = 'arraybuffer';
    let seq = 0;
    let resolveClosed;
    const closed = new Promise((r) => (resolveClosed = r));
    const encoder = new TextEncoder();
    // Over a WebSocket every message is one data frame; control messages ride @control frames.
    const sendControlFrame = (message) => {
      const r = wire.encodeMessage(message, 'viewer');
      if (!r.ok) return false;
      const frame = wire.encodeDataFrame(
        { ch: '@control', seq: seq++, ts: Date.now() / 1000, delivery: 'reliable' },
        encoder.encode(r.json),
      );
      if (!frame.ok || ws.readyState !== WebSocket.OPEN) return false;
      ws.send(frame.bytes);
      return true;
    };
    ws.onopen = () =>
      resolve({
        kind: 'websocket',
        closed,
        sendControl: sendControlFrame,
        sendDatagram: sendControlFrame,
        sendFrame(bytes) {
          if (ws.readyState !== WebSocket.OPEN) return false;
          ws.send(bytes);
          return true;
        },
        close: () => ws.close(),
      });
    ws.onerror = () => reject(new Error(`WebSocket to ${info.wsUrl} failed`));
    ws.onclose = (e) => resolveClosed(e.reason || `closed (${e.code})`);
    ws.onmessage = (e) => {
      const r = wire.decodeDataFrame(new Uint8Array(e.data));
      if (!r.ok) return handlers.onDrop({ reason: r.error.reason, detail: r.error.message });
      if (r.header.ch === '@control') {
        const m = wire.parseMessage(r.payload, 'relay');
        return m.ok ? handlers.onMessage(m.message) : handlers.onDrop(m.drop);
      }
      handlers.onFrame(r);
    };
  });
}
