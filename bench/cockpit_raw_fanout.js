// The physical limit of bench/cockpit.bench.mjs: a bare Deno WebTransport fan-out server in its own
// process, as the relay is, with no core, no driver and no protocol. A robot session (/robot) sends
// data frames; every frame goes to every viewer session (/viewer) on one persistent server-opened
// unidirectional stream per viewer, the stream shape the relay uses for a reliable channel
// (workaround 11). The robot may send on one persistent bidirectional stream (the cheapest
// ingress) or, as the protocol's robots do, on a one-shot bidirectional stream per frame
// (workaround 1); the server takes either. It counts bytes (workaround 2: no FIN is waited for)
// and forwards each frame whole, so frames from concurrent one-shot streams never interleave, and
// a viewer's write waits for the previous one on that stream as the relay's writes do.
// The WebSocket twin does the same over /ws/robot and /ws/viewer, one frame per message.
// Run: deno run -A --unstable-net bench/cockpit_raw_fanout.js; prints
// "raw fan-out ready: <WebTransport port> <sha-256 hex> <WebSocket port>".
import { listenWebTransport, makeCertificate } from '../web/host/cert.js';

globalThis.addEventListener('unhandledrejection', (e) => e.preventDefault());

const PREFIX = 8; // u32 header length, u32 payload length (cockpit-wire-protocol.md § Framing)
const cert = await makeCertificate();
const { hex } = cert;
// The relay's own listener and stream credit, for the same one-shot streams.
const { endpoint, listener } = listenWebTransport({ cert, streamCredit: true });
/** @type {Set<WritableStreamDefaultWriter>} */
const viewers = new Set();

function forward(frame) {
  for (const w of viewers) w.write(frame).catch(() => viewers.delete(w));
}

// Splits a byte stream into whole frames by their prefixes; `oneShot` stops after the first.
async function readFrames(readable, oneShot) {
  const reader = readable.getReader();
  let buf = new Uint8Array(0);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf = buf.length ? concat(buf, value) : value;
      for (;;) {
        if (buf.length < PREFIX) break;
        const dv = new DataView(buf.buffer, buf.byteOffset, PREFIX);
        const n = PREFIX + dv.getUint32(0, true) + dv.getUint32(4, true);
        if (buf.length < n) break;
        forward(buf.subarray(0, n));
        buf = buf.subarray(n);
        if (oneShot) {
          reader.cancel().catch(() => {}); // STOP_SENDING, as the relay does once the frame is in
          return;
        }
      }
    }
  } catch {
    // a reset stream
  }
}

function concat(a, b) {
  const c = new Uint8Array(a.length + b.length);
  c.set(a);
  c.set(b, a.length);
  return c;
}

async function serve(wt) {
  await wt.ready;
  const path = new URL(wt.url).pathname;
  if (path === '/viewer') {
    const w = (await wt.createUnidirectionalStream()).getWriter();
    viewers.add(w);
    wt.closed.catch(() => {}).finally(() => viewers.delete(w));
    return;
  }
  // /robot?oneshot=1: a stream per frame; otherwise one persistent stream.
  const oneShot = new URL(wt.url).searchParams.get('oneshot') === '1';
  const r = wt.incomingBidirectionalStreams.getReader();
  for (;;) {
    const { value, done } = await r.read();
    if (done) return;
    value.writable.abort(0).catch(() => {}); // never written on (workaround 3), as in the relay
    readFrames(value.readable, oneShot);
  }
}

// The WebSocket twin: /ws/robot messages (one data frame each) go to every /ws/viewer socket.
/** @type {Set<WebSocket>} */
const wsViewers = new Set();
const server = Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: () => {} }, (req) => {
  const path = new URL(req.url).pathname;
  const { socket, response } = Deno.upgradeWebSocket(req);
  socket.binaryType = 'arraybuffer';
  if (path === '/ws/viewer') {
    socket.onopen = () => wsViewers.add(socket);
    socket.onclose = () => wsViewers.delete(socket);
  } else {
    socket.onmessage = (e) => {
      for (const v of wsViewers) if (v.readyState === 1) v.send(e.data);
    };
  }
  return response;
});

(async () => {
  for await (const incoming of listener) {
    incoming
      .accept()
      .then((conn) => Deno.upgradeWebTransport(conn))
      .then(serve)
      .catch(() => {});
  }
})();
console.log(`raw fan-out ready: ${endpoint.addr.port} ${hex} ${server.addr.port}`);
