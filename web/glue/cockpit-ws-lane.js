// The WebSocket lane of the cockpit relay (cockpit-wire-v7-notes.md § Endpoints: every message is
// one binary data frame), shared by every host that serves /ws/robot and /ws/viewer: the Deno relay
// (web/host/relay.js) and the edge Worker (web/edge/cockpit-object.js). The core decides; this
// carries its actions out on WebSocket-shaped objects (send, bufferedAmount, readyState, close).

const OPEN = 1; // WebSocket.OPEN, the same number in every runtime

// workerd has no `bufferedAmount` on server WebSockets (cloudflare/workerd#988): there the lane
// cannot see a slow reader, every send is handed to the runtime at once, and the core's reliable
// caps are the only bound. Deno and browsers report it.
const buffered = (ws) => ws.bufferedAmount ?? 0;

/**
 * @param {object} core  tether/relay-cockpit's core
 * @param {{now: () => number, pump: () => void, highWater?: number, onSession?: (s: object) => void}} options
 *   `pump` runs the host's action loop; `highWater` bounds what one socket buffers for a viewer
 *   before latest frames are superseded in place by the core.
 */
export function createWsLane(core, { now, pump, highWater = 1 << 20 }) {
  const sessions = new Map(); // session id -> lane session

  function whenDrained(s, fn) {
    if (buffered(s.ws) <= highWater) return queueMicrotask(fn);
    const t = setInterval(() => {
      if (s.closed) return clearInterval(t);
      if (buffered(s.ws) <= highWater) {
        clearInterval(t);
        fn();
      }
    }, 10);
  }

  return {
    sessions,

    /**
     * Opens a core session for a socket that is already open. Returns the handlers the host wires
     * to the socket's events, or null when the relay is full (the socket is then closed 1013).
     */
    accept(ws, role) {
      const id = core.openSession(role, 'websocket', now());
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
          core.wsMessage(id, data instanceof Uint8Array ? data : new Uint8Array(data), now());
          pump();
        },
        closed() {
          if (s.closed) return;
          s.closed = true;
          sessions.delete(id);
          core.sessionClosed(id, now());
          pump();
        },
      };
    },

    /** Carries out one core action for a session of this lane. */
    apply(s, a) {
      const ws = s.ws;
      const send = (bytes) => {
        if (ws.readyState === OPEN) ws.send(bytes);
      };
      switch (a.kind) {
        case 'send_datagram':
        case 'write_control':
          send(a.bytes);
          return;
        case 'write_carrier':
          if (buffered(ws) > core.limits.maxCarrierBacklogBytes) {
            core.carrierFailed(s.id, now());
            pump();
            return;
          }
          send(a.bytes);
          return;
        case 'open_stream':
          // A stream "opens" once the socket has drained below the high-water mark, so latest
          // frames held meanwhile are superseded in place by the core (latest = newest pending).
          s.out.add(a.stream);
          whenDrained(s, () => {
            if (!s.out.has(a.stream)) return;
            core.streamOpened(a.stream, now());
            pump();
          });
          return;
        case 'write_stream':
          send(a.bytes);
          // A write completes when the socket drains, so the reliable caps bound what it buffers.
          whenDrained(s, () => {
            core.writeDone(a.stream, now());
            pump();
          });
          return;
        case 'reset_stream':
        case 'finish_stream':
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
