// Transport helpers the cockpit's clients share (cockpit-wire-protocol.md § Transport per leg):
// finding the relay (/api/info), a pinned WebTransport session, a WebSocket to a /ws/ twin,
// reading a stream, and one-shot streams. Bytes only: the robot and viewer sessions
// (web/glue/cockpit-robot.js, cockpit-viewer.js) decide what goes on them.

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

/** Reads a stream to its end, handing each chunk over; a reset ends it like FIN. */
export async function readStream(readable, onChunk) {
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
export async function oneShot(wt, bytes) {
  const s = await wt.createBidirectionalStream();
  s.readable.cancel().catch(() => {});
  const w = s.writable.getWriter();
  await w.write(bytes);
  w.close().catch(() => {});
}

/**
 * Carries out a client core's `connect` action: opens a transport with `open()` (which resolves to
 * a link with a `lane` and a `closed` promise of the reason), tells the core it is connected, and
 * later that it ended. `holder.link` is the current link; the end of one already replaced is not
 * reported.
 */
export async function runLink(driver, core, holder, open) {
  let opened;
  try {
    opened = await open();
  } catch (e) {
    driver.input((now) => core.handleDisconnected(String(e?.message ?? e), now));
    return;
  }
  holder.link = opened;
  driver.input((now) => core.handleConnected(opened.lane, now));
  opened.closed.then((detail) => {
    if (holder.link !== opened) return;
    holder.link = null;
    driver.input((now) => core.handleDisconnected(detail, now));
  });
}

/** A WebSocket to the relay's `/ws/<role>` twin, open and set to binary (the edge serves no
 * WebTransport: `/api/info` then has no `wtUrl`). */
export function openWebSocket(info, role, WebSocketImpl = globalThis.WebSocket) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocketImpl(`${info.wsUrl}/ws/${role}`);
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => resolve(ws);
    ws.onerror = () =>
      reject(
        new Error(`tether: the WebSocket to ${info.wsUrl}/ws/${role} failed; is the relay up?`),
      );
  });
}
