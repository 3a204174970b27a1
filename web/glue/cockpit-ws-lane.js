// The WebSocket lane of the cockpit relay (cockpit-wire-v7-notes.md § Endpoints: every message is
// one binary data frame), shared by every host that serves /ws/robot and /ws/viewer: the Deno relay
// (web/host/relay.js) and the edge Durable Object (web/edge/cockpit.js). The core decides; this
// carries its actions out on WebSocket-shaped objects (send, bufferedAmount, readyState, close) and
// feeds what the sockets report back in through the host's driver (web/glue/driver.js).

const OPEN = 1; // WebSocket.OPEN, the same number in every runtime
const DRAIN_POLL_MS = 10; // how often a full socket is checked for room (no drain event exists)

// workerd has no `bufferedAmount` on server WebSockets (cloudflare/workerd#988): there the lane
// reports every write done at once and the core, made with webSocketBufferedAmount: false, paces
// the socket itself by the pongs its client has acknowledged (the edge's slow-reader rule). Deno
// and browsers report it, and the lane waits for the socket to drain.
const buffered = (ws) => ws.bufferedAmount ?? 0;

/**
 * @param {import('./cockpit-relay.d.ts').CockpitRelay} core
 * @param {import('./driver.d.ts').Driver} driver  the host's driver of `core`
 * @param {{highWater?: number}} [options]  `highWater` bounds what one socket buffers for a viewer
 *   before latest frames are superseded in place by the core (the core's own bound by default).
 */
export function createWsLane(
  core,
  driver,
  { highWater = core.limits.webSocketHighWaterBytes } = {},
) {
  const sessions = new Map(); // session id -> lane session

  // Runs fn once the socket has room (a transport fact the core is told as a result).
  function whenDrained(s, fn) {
    if (buffered(s.ws) <= highWater) return queueMicrotask(fn);
    const t = setInterval(() => {
      if (s.closed) return clearInterval(t);
      if (buffered(s.ws) <= highWater) {
        clearInterval(t);
        fn();
      }
    }, DRAIN_POLL_MS);
  }

  return {
    sessions,

    /**
     * Opens a core session for a socket that is already open. Returns the handlers the host wires
     * to the socket's events, or null when the relay is full (the socket is then closed 1013).
     */
    accept(ws, role) {
      const id = driver.input((now) => core.handleSessionOpen(role, 'websocket', now));
      if (!id) {
        ws.close(1013, 'relay full: try again later');
        return null;
      }
      const s = { id, role, ws, out: new Set(), closed: false };
      sessions.set(id, s);
      return {
        session: s,
        message(data) {
          if (s.closed) return;
          // Text messages are not frames: the core would refuse them anyway, so drop them here.
          if (typeof data === 'string') return;
          const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
          driver.input((now) => core.handleWsMessage(id, bytes, now));
        },
        closed() {
          if (s.closed) return;
          s.closed = true;
          sessions.delete(id);
          driver.input((now) => core.handleSessionClosed(id, now));
        },
      };
    },

    /** Carries out one core action for a session of this lane. */
    perform(s, a) {
      const ws = s.ws;
      const send = (bytes) => {
        if (ws.readyState === OPEN) ws.send(bytes);
      };
      switch (a.kind) {
        case 'send_datagram':
        case 'write_control':
          send(a.bytes);
          return;
        case 'open_carrier':
          return; // the socket is the carrier
        case 'open_stream':
          // A stream "opens" once the socket has drained below the high-water mark, so latest
          // frames held meanwhile are superseded in place by the core (latest = newest pending).
          s.out.add(a.stream);
          whenDrained(s, () => {
            if (s.out.has(a.stream)) driver.input((now) => core.handleStreamOpened(a.stream, now));
          });
          return;
        case 'write_carrier':
        case 'write_stream':
          send(a.bytes);
          // A write completes when the socket drains, so the core's caps bound what it buffers.
          whenDrained(s, () => driver.input((now) => core.handleWriteDone(a.stream, now)));
          return;
        case 'reset_stream':
          s.out.delete(a.stream);
          return;
        case 'close_session':
          s.closed = true;
          sessions.delete(s.id);
          try {
            ws.close(a.code ? 4000 : 1000, (a.reason ?? '').slice(0, 100));
          } catch {}
          return;
      }
    },
  };
}
